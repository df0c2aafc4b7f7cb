"""ABI 1.9 recordings on CUDA in torch.compile's default mode: a run on torch's stream is
recorded into a CUDA graph when its tensors' addresses came within the last few runs, and replayed
after that (core/plugin/run_recordings.h). Replays must read and write memory as it is at the
replay (new inputs at the same address, outputs the caller hands in), order with eager work on
the caller's stream, keep training steps right step after step (the forward's saved tensors,
the backward's gradients), and never run for other addresses. Needs a GPU and the cuda
plugin: skipped without them (CI); run on the GPU machine through tools/device_cuda_python.sh."""
import pytest
import torch

import plugsdk

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")


def _compiled(fn, **options):
    torch._dynamo.reset()
    return torch.compile(fn, backend="plugsdk", options={"device": "cuda", **options})


def _counts(programs):
    total = {"recorded": 0, "replayed": 0}
    for p in programs:
        c = p.recording_counts
        total["recorded"] += c["recorded"]
        total["replayed"] += c["replayed"]
    return total


def _inference_program(x):
    graphs = [g for g in plugsdk.runtime._functions if g.imported_count]
    assert graphs, "no compiled graph ran with its tensors in place"
    artifact, reason, _ = graphs[-1].select([x])
    assert artifact is not None, reason
    return artifact


def _body(x):
    return torch.relu(torch.sin(x) * 2.0 + 1.0).sum(dim=-1) + x.mean()


def test_replays_read_the_inputs_as_they_are_at_the_replay():
    f = _compiled(_body)
    x = torch.randn(512, 1024, device="cuda")
    for i in range(6):
        x.copy_(torch.randn_like(x) + i)  # same address, new contents
        got = f(x)
        torch.testing.assert_close(got, _body(x), rtol=1e-4, atol=1e-3)
    c = _counts([_inference_program(x)])
    # the second call with these addresses was recorded; the calls after it replayed (an
    # output the caching allocator put elsewhere is a new key, so not every call need)
    assert c["recorded"] >= 1, c
    assert c["replayed"] >= 1, c


def test_other_addresses_never_replay_a_recording():
    f = _compiled(_body)
    xs = [torch.randn(256, 512, device="cuda") for _ in range(6)]
    for _ in range(3):
        for x in xs:  # each tensor its own key, none within the last four calls'
            torch.testing.assert_close(f(x), _body(x), rtol=1e-4, atol=1e-3)
    c = _counts([_inference_program(xs[0])])
    assert c["recorded"] == 0, c
    assert c["replayed"] == 0, c


@pytest.mark.parametrize("side_stream", [False, True])
def test_replays_order_with_eager_work_on_the_callers_stream(side_stream):
    f = _compiled(_body)
    n = 1 << 11
    stream = torch.cuda.Stream() if side_stream else torch.cuda.current_stream()
    with torch.cuda.stream(stream):
        x = torch.empty(n, n, device="cuda")
        noise = torch.empty(n, n, device="cuda")
        # results kept in memory allocated up front, so the calls' own addresses come again
        outs = torch.empty(6, n, device="cuda")
        wants = torch.empty(6, n, device="cuda")
        for i in range(6):
            # written just before the call, read just after, on the same stream, no sync
            x.fill_(float(i))
            x.add_(noise.normal_())
            torch.mul(f(x), 3.0, out=outs[i])
            torch.mul(_body(x), 3.0, out=wants[i])
    stream.synchronize()
    torch.testing.assert_close(outs, wants, rtol=1e-4, atol=1e-2)
    assert _counts([_inference_program(x)])["replayed"] >= 1


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean(dim=(2, 3)))


def _step(model, x, target):
    loss = torch.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    return loss.detach()


@pytest.mark.parametrize("record", ["on", "off"])
def test_training_steps_match_eager_step_after_step(record):
    torch.manual_seed(0)
    eager = _Net().cuda().train()
    mine = _Net().cuda().train()
    mine.load_state_dict(eager.state_dict())
    compiled = _compiled(mine, backend_options=f"record={record}")
    x = torch.randn(8, 3, 16, 16, device="cuda")
    target = torch.randint(0, 10, (8,), device="cuda")
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_m = torch.optim.SGD(mine.parameters(), lr=0.1)
    for step in range(12):
        x.copy_(torch.randn_like(x))  # the same input tensor, new data
        opt_e.zero_grad(set_to_none=False)
        opt_m.zero_grad(set_to_none=False)
        want = _step(eager, x, target)
        got = _step(compiled, x, target)
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-4, msg=f"loss, step {step}")
        for (name, pe), pm in zip(eager.named_parameters(), mine.parameters()):
            torch.testing.assert_close(pm.grad, pe.grad, rtol=1e-3, atol=1e-4, msg=f"{name}.grad, step {step}")
        torch.testing.assert_close(mine.bn.running_mean, eager.bn.running_mean, rtol=1e-4, atol=1e-5)
        opt_e.step()
        opt_m.step()
    programs = []
    for g in list(plugsdk.runtime._functions):
        for art in getattr(g, "_training_memo", {}).values():
            programs.append(art)
            if art.backward is not None and art.backward.has_program:
                programs.append(art.backward)
    assert programs, "no training artifact ran"
    c = _counts(programs)
    if record == "on":
        # once the caching allocator's pattern repeats, steps replay (eager's steps interleave
        # their own allocations, so the pattern takes a few steps to settle)
        assert c["replayed"] >= 1, c
    else:
        assert c == {"recorded": 0, "replayed": 0}, c
