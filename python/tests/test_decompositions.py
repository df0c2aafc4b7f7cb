"""The rewrites of decompositions.py that CPU runs can check: the CUDA attention variants
(torch picks them when it traces scaled_dot_product_attention on CUDA tensors) give the
attention the core lowers, and lift_fresh_copy is a copy. Run on CPU tensors against
torch's own scaled_dot_product_attention."""
import math

import pytest
import torch
import torch.nn.functional as F

from plugsdk import decompositions as d


def _qkv(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(2, 3, 5, 8, generator=g) for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True])
def test_cuda_attention_variants_are_sdpa(causal):
    q, k, v = _qkv()
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    outs = [d.cudnn_attention(q, k, v, None, True, 0.0, causal),
            d.flash_attention(q, k, v, 0.0, causal),
            d.efficient_attention(q, k, v, None, True, 0.0, causal)]
    assert [len(o) for o in outs] == [9, 9, 4]  # the ops' output arity
    for o in outs:
        torch.testing.assert_close(o[0], want)
    assert outs[0][4] == 5 and outs[0][5] == 5  # max_q, max_k


def test_cuda_attention_with_a_bias_and_a_scale():
    q, k, v = _qkv(1)
    bias = torch.randn(2, 3, 5, 5)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.5 / math.sqrt(8))
    got = d.cudnn_attention(q, k, v, bias, False, 0.0, False, scale=0.5 / math.sqrt(8))[0]
    torch.testing.assert_close(got, want)


def test_dropout_keeps_the_op():
    q, k, v = _qkv()
    assert d.efficient_attention(q, k, v, None, False, 0.1, False) is NotImplemented


def test_lift_fresh_copy_is_a_copy():
    x = torch.arange(6.0)
    y = d.lift_fresh_copy(x)
    assert torch.equal(x, y) and y.data_ptr() != x.data_ptr()


def test_the_table_rewrites_them():
    t = d.table(set(), lambda op: str(op))
    for op in (torch.ops.aten._scaled_dot_product_cudnn_attention.default,
               torch.ops.aten._scaled_dot_product_flash_attention.default,
               torch.ops.aten._scaled_dot_product_efficient_attention.default,
               torch.ops.aten.lift_fresh_copy.default):
        assert op in t


def test_lift_fresh_copy_is_imported_as_clone():
    from plugsdk import fx_import
    assert fx_import.op_name(torch.ops.aten.lift_fresh_copy.default) == "aten.clone"


def test_a_constant_tensor_in_traced_code_compiles_without_fallback():
    import torch._dynamo
    torch._dynamo.reset()

    def f(x):
        return x * torch.tensor([1.0, 2.0, 3.0])

    x = torch.randn(4, 3)
    c = torch.compile(f, backend="plugsdk", options={"fallback": False})
    torch.testing.assert_close(c(x), f(x))


def test_unused_batch_norm_stats_are_declared_empty():
    """torch's CUDA batch norm fills the eval-mode stats that its CPU kernel leaves empty;
    the import declares them as the core defines them when nothing reads them."""
    import torch.fx
    from plugsdk import fx_import

    g = torch.fx.Graph()
    x, w, b, m, v = (g.placeholder(n) for n in "xwbmv")
    bn = g.call_function(torch.ops.aten._native_batch_norm_legit_no_training.default, (x, w, b, m, v, 0.1, 1e-5))
    out = g.call_function(__import__("operator").getitem, (bn, 0))
    g.output((out,))
    vals = {"x": torch.randn(2, 4, 3, 3), "w": torch.randn(4), "b": torch.randn(4), "m": torch.randn(4),
            "v": torch.rand(4) + 0.5}
    for node in g.nodes:
        if node.op == "placeholder":
            node.meta["val"] = vals[node.name]
    bn.meta["val"] = (torch.empty(2, 4, 3, 3), torch.empty(4), torch.empty(4))  # as on CUDA
    out.meta["val"] = bn.meta["val"][0]
    text = fx_import.to_pgraph(torch.fx.GraphModule(torch.nn.Module(), g), "bn").text
    assert ": f32[2, 4, 3, 3], f32[0], f32[0]" in text, text
