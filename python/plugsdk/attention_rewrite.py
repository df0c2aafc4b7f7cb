"""Attention kept as one op, whatever kernel torch would pick for it (a pass over Dynamo's graph).

torch's scaled_dot_product_attention chooses its kernel while AOT autograd traces it. On CUDA
the fused kernels decline some calls -- BERT's under bf16 autocast, whose mask is f32 -- and
those trace into the math path, which upcasts q, k and v to f32: two f32 bmm and a softmax
(session 17's BERT profile: 24 f32 SIMT GEMMs, 0.37 ms of its 2.0 ms a call). The op is
CompositeImplicit, so no decomposition table sees it before that choice. This pass rewrites
each call in Dynamo's graph (no dropout, no grouped-query heads) into `attention`, which under
tracing emits the one attention op the core lowers (its arguments cast as CUDA autocast casts
them for this op), and runs torch's own op on real tensors (an eager fallback runs the
rewritten graph). Without autocast, a mask of another dtype keeps it: the core adds it to the
f32 scores as it is."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import is_fake

aten = torch.ops.aten

_TARGETS = {F.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention}


def _autocast(tensors, device: str):
    """The tensors as autocast would hand them to scaled_dot_product_attention on `device`
    (CUDA's policy lists it as lower_precision_fp: every floating argument, the mask too, in
    the autocast dtype), or None when autocast is on for a device whose policy is not known
    here (torch's own op then traces)."""
    if not torch.is_autocast_enabled(device):
        return tensors
    if device != "cuda":
        return None
    dt = torch.get_autocast_dtype(device)
    return [t.to(dt) if t is not None and t.is_floating_point() else t for t in tensors]


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False,
              **kwargs):
    """scaled_dot_product_attention as the core's attention op while traced, torch's otherwise
    (F.scaled_dot_product_attention's parameters, in its order)."""
    if is_fake(query) and not dropout_p and not enable_gqa and not kwargs:
        args = _autocast([query, key, value, attn_mask], query.device.type)
        if args is not None:
            q, k, v, m = args
            if m is not None and m.dtype == torch.bool:
                # as torch's own entry converts it before any kernel: 0 where kept, -inf where not
                m = torch.zeros_like(m, dtype=q.dtype).masked_fill(m.logical_not(), float("-inf"))
            return aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, is_causal, attn_mask=m,
                                                                     scale=scale)[0]
    if enable_gqa:
        kwargs["enable_gqa"] = enable_gqa
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale, **kwargs)


def _constant(node, index, name, default):
    return node.kwargs.get(name, node.args[index] if len(node.args) > index else default)


def rewrite(gm: torch.fx.GraphModule) -> int:
    """Points every attention call without dropout or grouped-query heads at `attention`;
    returns how many."""
    n = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in _TARGETS:
            continue
        dropout = _constant(node, 4, "dropout_p", 0.0)
        gqa = _constant(node, 7, "enable_gqa", False)
        if not isinstance(dropout, (int, float)) or dropout or gqa is not False:
            continue
        node.target = attention
        n += 1
    if n:
        gm.recompile()
    return n
