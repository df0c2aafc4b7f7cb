"""attention_rewrite.py: scaled_dot_product_attention calls in Dynamo's graph become the one
attention op the core lowers, whatever kernel torch would have picked (on CUDA, BERT's
attention under bf16 autocast traced into torch's f32 math path). Checked on CPU: which calls
are rewritten, that real tensors still run torch's op, and that a compiled call with a mask
of another dtype lowers to the attention op and matches torch in float64."""

import torch
import torch.nn.functional as F

import plugsdk  # noqa: F401 (registers the backend)
from plugsdk import attention_rewrite as ar


class Attn(torch.nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = dropout

    def forward(self, q, k, v, m):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, dropout_p=self.dropout) * 2


def _qkvm(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 4, 16, 32, generator=g).to(dtype) for _ in range(3))
    m = torch.randn(2, 1, 1, 16, generator=g)  # f32, whatever q is
    return q, k, v, m


def test_calls_without_dropout_are_rewritten():
    gm = torch.fx.symbolic_trace(Attn())
    assert ar.rewrite(gm) == 1
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is ar.attention
    gm = torch.fx.symbolic_trace(Attn(dropout=0.1))
    assert ar.rewrite(gm) == 0  # dropout's randomness stays torch's


class Gqa(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def test_grouped_query_heads_stay_torchs():
    gm = torch.fx.symbolic_trace(Gqa())
    assert ar.rewrite(gm) == 0


def test_real_tensors_still_run_torchs_op():
    q, k, v, m = _qkvm()
    got = ar.attention(q, k, v, attn_mask=m)
    assert torch.equal(got, F.scaled_dot_product_attention(q, k, v, attn_mask=m))


def test_a_bf16_call_with_an_f32_mask_compiles_to_the_attention_op(tmp_path):
    q, k, v, m = _qkvm(torch.bfloat16, seed=1)
    torch._dynamo.reset()
    f = torch.compile(Attn(), backend="plugsdk", options={"dump_dir": str(tmp_path)})
    with torch.no_grad():
        got = f(q, k, v, m)
    want = Attn()(q.double(), k.double(), v.double(), m.double())
    torch.testing.assert_close(got.double(), want, rtol=2e-2, atol=2e-2)  # bf16 inputs and result
    aten = "".join(f.read_text() for f in tmp_path.glob("*.aten.pgraph"))
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in aten, aten
    assert "bmm" not in aten and "softmax" not in aten, aten
    assert "f32[2, 1, 1, 16]" in aten, aten  # the mask kept its dtype


def test_a_bool_mask_is_converted_as_torch_converts_it(tmp_path):
    """GPT-2's and BERT's masks are bool: torch turns one into 0 / -inf of the query's dtype
    before any kernel, and so does the rewrite (the core's attention op takes float masks)."""
    q, k, v, _ = _qkvm(seed=3)
    m = torch.rand(2, 1, 16, 16, generator=torch.Generator().manual_seed(4)) > 0.3
    m[..., 0] = True  # no row fully masked
    torch._dynamo.reset()
    f = torch.compile(Attn(), backend="plugsdk", options={"dump_dir": str(tmp_path)})
    with torch.no_grad():
        got = f(q, k, v, m)
    torch.testing.assert_close(got, Attn()(q, k, v, m), rtol=1e-5, atol=1e-5)
    aten = "".join(f.read_text() for f in tmp_path.glob("*.aten.pgraph"))
    assert "aten._scaled_dot_product_flash_attention_for_cpu" in aten, aten
