"""torch.compile(backend="plugsdk") on CUDA tensors queues its launches on torch's current stream
(ABI 1.2 stream_import): eager work before and after a compiled call is ordered with it without
any synchronize, on the default stream and on a side stream; a run whose kernels can fail (an
integer division) still reports the error. Needs a GPU and the cuda plugin: skipped without them
(CI); run on the GPU machine through tools/device_cuda_python.sh."""
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


def test_an_integer_division_by_zero_is_still_reported():
    f = _compiled(lambda a, b: torch.div(a, b, rounding_mode="floor") + 1)
    a = torch.arange(1, 9, device="cuda", dtype=torch.int64)
    b = torch.tensor([1, 2, 0, 4, 1, 2, 3, 4], device="cuda", dtype=torch.int64)
    with pytest.raises(Exception, match="division by zero"):
        f(a, b)
        torch.cuda.synchronize()


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
