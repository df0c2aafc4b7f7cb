"""torch.compile(backend="plugsdk", mode="reduce-overhead") on CUDA tensors: inference graphs
are recorded into CUDA graphs on a signature's second call and replayed after
(python/plugsdk/cuda_graphs.py). Checked against eager on fresh inputs every call: inputs
copied into the recording's static tensors, parameters read in place, a replaced parameter
(the call runs unrecorded), held outputs never overwritten, a second signature, library
calls (cuBLASLt matmuls) and a convolution inside the recording. Needs a GPU and the cuda
plugin: skipped without them (CI); run on the GPU machine through tools/device_cuda_python.sh."""
import pytest
import torch

import plugsdk

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = torch.nn.Linear(16 * 12 * 12, 200)
        self.fc2 = torch.nn.Linear(200, 50)

    def forward(self, x):
        y = torch.relu(self.conv(x)).flatten(1)
        return torch.softmax(self.fc2(torch.nn.functional.gelu(self.fc1(y))), dim=-1)


def _counts():
    info = plugsdk.cache_info()
    return info["cuda_graph_replays"], info["cuda_graph_unrecorded_calls"]


def _setup():
    torch.backends.cudnn.allow_tf32 = False  # eager's convolution in f32, as plugsdk's
    torch._dynamo.reset()
    plugsdk.reset_cache_info()
    torch.manual_seed(0)
    net = Net().cuda().eval()
    f = torch.compile(net, backend="plugsdk", options={"device": "cuda", "mode": "reduce-overhead"})
    return net, f


def _check(got, want):
    torch.testing.assert_close(got, want, rtol=2e-4, atol=2e-5)


@torch.no_grad()
def test_replays_match_eager_on_fresh_inputs():
    net, f = _setup()
    for i in range(6):
        x = torch.randn(4, 8, 12, 12, device="cuda")
        got = f(x)
        _check(got, net(x))
        del got
    replays, _ = _counts()
    assert replays >= 5, f"expected every call after the first to replay, got {replays} replays"


@torch.no_grad()
def test_held_outputs_are_never_overwritten():
    net, f = _setup()
    held = []
    for i in range(6):
        x = torch.randn(4, 8, 12, 12, device="cuda")
        got = f(x)
        held.append((got[1:], net(x)[1:]))  # a view of the output keeps its storage
        del got
    # The recordings alternate between two sets of outputs; a set with a live view is not
    # replayed over (those calls run unrecorded), so every result is still what it was.
    replays, unrecorded = _counts()
    assert replays == 2 and unrecorded == 3, (replays, unrecorded)
    for got, want in held:
        _check(got, want)
    # `out = f(x)` in a loop holds only the previous call's outputs: every call replays.
    held.clear()
    out = None
    for i in range(4):
        x = torch.randn(4, 8, 12, 12, device="cuda")
        out = f(x)
        _check(out, net(x))
    assert _counts()[0] == 2 + 4


@torch.no_grad()
def test_a_replaced_parameter_runs_unrecorded_and_stays_correct():
    net, f = _setup()
    x = torch.randn(4, 8, 12, 12, device="cuda")
    for _ in range(3):
        _check(f(x), net(x))
    net.fc2.weight = torch.nn.Parameter(torch.randn_like(net.fc2.weight))  # new memory
    for _ in range(2):
        _check(f(x), net(x))


@torch.no_grad()
def test_a_second_signature_gets_its_own_recording():
    net, f = _setup()
    for batch in (4, 2, 4, 2, 4, 2):
        x = torch.randn(batch, 8, 12, 12, device="cuda")
        _check(f(x), net(x))
    replays, _ = _counts()
    assert replays >= 2, f"expected replays for both signatures, got {replays}"


@torch.no_grad()
def test_replays_order_with_eager_work_on_a_side_stream():
    net, f = _setup()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        outs, wants = [], []
        for i in range(5):
            x = torch.full((4, 8, 12, 12), float(i), device="cuda")
            x.add_(torch.randn_like(x))
            outs.append(f(x) * 2.0)
            wants.append(net(x) * 2.0)
    stream.synchronize()
    for got, want in zip(outs, wants):
        _check(got, want)
    replays, _ = _counts()
    assert replays >= 3
