"""torch.compile(backend="plugsdk") on CUDA tensors queues its launches on torch's current stream
(ABI 1.2 stream_import): eager work before and after a compiled call is ordered with it without
any synchronize, on the default stream and on a side stream. A run whose kernels can fail (a
gather's bounds CHECK, an integer division) does not wait either (ABI 1.3
async_stream_failures): a failure is a device-side assert naming the kernel and the check, as
torch's own kernels raise it, which kills the process's CUDA context (so those cases run in a
child process). Needs a GPU and the cuda plugin: skipped without them (CI); run on the GPU
machine through tools/device_cuda_python.sh."""
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import plugsdk

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")


def _compiled(fn):
    torch._dynamo.reset()
    return torch.compile(fn, backend="plugsdk", options={"device": "cuda"})


def _body(x):
    return torch.relu(torch.sin(x) * 2.0 + 1.0).sum(dim=-1)


@pytest.mark.parametrize("side_stream", [False, True])
def test_eager_work_around_a_compiled_call_is_ordered_without_syncs(side_stream):
    f = _compiled(_body)
    n = 1 << 12
    stream = torch.cuda.Stream() if side_stream else torch.cuda.current_stream()
    with torch.cuda.stream(stream):
        outs, wants = [], []
        for i in range(4):
            # Written on this stream just before the call, read on it just after: a launch on
            # another stream (or before the write) would read stale or unwritten memory.
            x = torch.full((n, n), float(i), device="cuda")
            x.add_(torch.randn(n, n, device="cuda"))
            y = f(x)
            outs.append(y * 3.0)
            wants.append(_body(x) * 3.0)
    stream.synchronize()
    for got, want in zip(outs, wants):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-2)


def test_runs_queue_on_the_imported_stream():
    f = _compiled(_body)
    x = torch.randn(1024, 1024, device="cuda")
    f(x)
    graphs = [g for g in plugsdk.runtime._functions if g.imported_count]
    assert graphs, "no compiled graph ran with its tensors in place"
    artifact, reason, _ = graphs[-1].select([x])
    assert artifact is not None, reason
    assert artifact.imports_streams


def test_runs_that_can_fail_are_queued_without_waiting(monkeypatch):
    f = _compiled(lambda w, i: torch.nn.functional.embedding(i, w) * 2.0)
    w = torch.randn(100, 64, device="cuda")
    i = torch.randint(0, 100, (8, 16), device="cuda")
    torch.testing.assert_close(f(w, i), torch.nn.functional.embedding(i, w) * 2.0)
    rt = plugsdk.runtime
    runs = []

    def run_timed(program, ins, outs, in_strides=None):
        assert program.imports_streams
        d = program.run_timed([rt._tensor_tuple(t) for t in ins], [rt._tensor_tuple(t) for t in outs],
                              stream=rt._native_stream(torch.cuda.current_stream()))
        runs.append(d)
        return d["imported"], d["copied"]

    monkeypatch.setattr(rt, "run_program", run_timed)
    got = f(w, i)
    torch.cuda.synchronize()
    torch.testing.assert_close(got, torch.nn.functional.embedding(i, w) * 2.0)
    # The gather's bounds CHECK makes the kernel one that can fail; the run still returns queued.
    assert runs and runs[-1]["kernels"] >= 1 and not runs[-1]["waited"], runs


FAILING = {
    "embedding": ("torch.nn.functional.embedding(b, a.float().reshape(8, 1))",
                  "an index along dim 0 is out of range [0, 8)"),
    "division": ("torch.div(a, b, rounding_mode='floor') + 1", "integer division by zero (ZeroDivisionError)"),
}


@pytest.mark.parametrize("case", sorted(FAILING))
def test_a_failing_kernel_is_a_device_side_assert_naming_the_check(case):
    expr, message = FAILING[case]
    child = textwrap.dedent(f"""
        import torch, plugsdk
        f = torch.compile(lambda a, b: {expr}, backend="plugsdk", options={{"device": "cuda"}})
        a = torch.arange(1, 9, device="cuda", dtype=torch.int64)
        b = torch.tensor([1, 2, 0, 4, 1, 2, 3, 4], device="cuda", dtype=torch.int64)
        if "{case}" == "embedding":
            b[2] = 8
        f(a, b)
        torch.cuda.synchronize()
        print("no error")
    """)
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "no error" not in out, out[-3000:]
    assert re.search("Assertion `[^`]*" + re.escape(message) + "` failed", out), out[-3000:]
    assert "kernel @" in out and "device-side assert" in out, out[-3000:]


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
