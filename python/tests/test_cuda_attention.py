"""Attention on CUDA kept as one op (python/plugsdk/attention_rewrite.py): BERT's case, bf16
autocast with a mask torch's fused kernels decline, used to trace into torch's f32 math path
(q, k, v upcast to f32, bmm, _safe_softmax). Needs a GPU and the cuda plugin: skipped without
them (CI); run on the GPU machine through tools/device_cuda_python.sh."""
import pytest
import torch
import torch.nn.functional as F

import plugsdk  # noqa: F401 (registers the backend)


class Attn(torch.nn.Module):
    def forward(self, q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m) * 2


def _qkvm(seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 4, 16, 32, generator=g) for _ in range(3))
    return q, k, v, torch.randn(2, 1, 1, 16, generator=g)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs this)")
@pytest.mark.parametrize("mask", ["f32", "bool"])
def test_on_cuda_under_autocast_no_f32_math_path(mask, tmp_path):
    """bf16 autocast with an f32 mask, and with a bool one (BERT's and GPT-2's under
    transformers: torch traced BERT's into the math path)."""
    q, k, v, m = (t.cuda() for t in _qkvm(2))
    if mask == "bool":
        m = torch.rand(2, 1, 16, 16, device="cuda") > 0.3
        m[..., 0] = True  # no row fully masked
    torch._dynamo.reset()
    f = torch.compile(Attn(), backend="plugsdk", options={"device": "cuda", "dump_dir": str(tmp_path)})
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        got = f(q, k, v, m)
        want = Attn()(q, k, v, m)
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)
    assert got.dtype == want.dtype == torch.bfloat16  # autocast's dtype, as eager
    aten = "".join(f.read_text() for f in tmp_path.glob("*.aten.pgraph"))
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in aten, aten
    assert "bmm" not in aten and "softmax" not in aten, aten
