"""Fused matmul epilogues on CUDA (backends/cuda/library/matmul.h): linear layers whose
pointwise tail cuBLASLt computes inside its GEMM (bias, relu, the tanh GELU, a residual added
before the activation) and tails it does not (the erf GELU, a residual after the
activation, sigmoid) run as their own kernel over the accumulator. Each is checked against
eager in f32 and under bf16 autocast, with the epilogue computed three ways (option
epilogue=native, kernel, off) that must agree. Needs a GPU and the cuda plugin: skipped without
them (CI); run on the GPU machine through tools/device_cuda_python.sh."""
import pytest
import torch

import plugsdk  # noqa: F401 (registers the backend)
from cuda_epilogue_runs import run_profiled

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")

F = torch.nn.functional


class Tail(torch.nn.Module):
    def __init__(self, tail):
        super().__init__()
        self.fc = torch.nn.Linear(96, 80, bias=tail != "stored")
        self.tail = tail

    def forward(self, x, r):
        y = self.fc(x)
        if self.tail == "stored":  # the product itself is an output too: computed into its buffer
            return y, torch.relu(y)
        if self.tail == "bias":
            return y
        if self.tail == "relu":
            return torch.relu(y)
        if self.tail == "gelu_tanh":
            return F.gelu(y, approximate="tanh")
        if self.tail == "gelu_erf":
            return F.gelu(y)
        if self.tail == "residual_relu":
            return torch.relu(y + r)
        if self.tail == "relu_residual":
            return torch.relu(y) + r
        if self.tail == "sigmoid":
            return torch.sigmoid(y)
        raise ValueError(self.tail)


TAILS = ["bias", "relu", "gelu_tanh", "gelu_erf", "residual_relu", "relu_residual", "sigmoid", "stored"]
NATIVE = {"bias", "relu", "gelu_tanh", "residual_relu"}  # cuBLASLt computes these inside the GEMM


def _run(tail, mode, dtype, dump):
    torch._dynamo.reset()
    torch.manual_seed(0)
    net = Tail(tail).cuda()
    x = torch.randn(130, 96, device="cuda")  # 130 rows: not a multiple of any tile
    r = torch.randn(130, 80, device="cuda")
    # The second call's kernels: an epilogue cuBLASLt computes launches none of plugsdk's own.
    return run_profiled(net, (x, r), f"epilogue={mode}", dtype, dump)


def _check_log(tail, mode, log):
    if mode == "off":
        assert "epilogue" not in log, log
    elif mode == "native" and tail in NATIVE:
        assert "epilogue in cuBLASLt" in log, log
    else:
        assert "epilogue kernel" in log, log


def _check_launched(tail, mode, launched, dtype):
    """An epilogue cuBLASLt computes launches no epilogue kernel of plugsdk's: in f32 none of
    its kernels at all; under autocast the casts of the weight and input, and the bias's
    conversion (named through the dump, so the names are known to resolve) when the result is
    bf16."""
    if mode != "native" or tail not in NATIVE:
        return
    # Only kernels this case compiled count: an entry no dump of this case names is a record
    # CUPTI delivered late from an earlier case (seen on the H100 when the convolution file
    # ran first: 'plugsdk_<hash>' in a bf16 case whose own kernels all resolved).
    launched = [n for n in launched if not n.startswith("plugsdk_")]
    if dtype == torch.float32:
        assert launched == [], launched
    else:
        assert not [n for n in launched if "epilogue" in n], launched


@pytest.mark.parametrize("tail", TAILS)
def test_f32_tails_match_eager_every_way(tail, tmp_path):
    torch.backends.cuda.matmul.allow_tf32 = False
    results = {}
    for mode in ("native", "kernel", "off"):
        got, want, log, launched = _run(tail, mode, torch.float32, tmp_path / mode)
        _check_log(tail, mode, log)
        _check_launched(tail, mode, launched, torch.float32)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=lambda m: f"{tail} epilogue={mode}: {m}")
        results[mode] = got
    torch.testing.assert_close(results["native"], results["off"], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tail", TAILS)
def test_bf16_autocast_tails_match_eager(tail, tmp_path):
    for mode in ("native", "kernel"):
        got, want, log, launched = _run(tail, mode, torch.bfloat16, tmp_path / mode)
        _check_log(tail, mode, log)
        _check_launched(tail, mode, launched, torch.bfloat16)
        # Under autocast the bias is an f32 parameter cast to bf16: cuBLASLt takes no f32 bias
        # on a bf16 result, so the native path converts it first (the bias_cast kernel). With
        # the f32 residual the result is f32, and so is the bias cuBLASLt reads: no conversion.
        if mode == "native" and tail in NATIVE - {"residual_relu"}:
            assert "bias_cast" in launched, launched
        # bf16 results: a few ulps (2^-8 relative) of the largest value.
        tol = 3 * 2 ** -8 * max(1.0, want.abs().max().item())
        assert (got - want).abs().max().item() <= tol, f"{tail} epilogue={mode}"
