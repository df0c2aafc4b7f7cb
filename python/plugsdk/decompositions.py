"""Torch-level decompositions applied while AOT autograd traces, for ops the core has no
lowering for:

- torch's core-ATen decompositions (torch._decomp.core_aten_decompositions) of every op the
  core lacks (hardswish, hardsigmoid, ...), so they arrive as ops it lowers;
- the fused inference fast paths of nn.MultiheadAttention and nn.TransformerEncoderLayer
  (aten._native_multi_head_attention, aten._transformer_encoder_layer_fwd), which torch has
  no decomposition for, rewritten into linear / scaled_dot_product_attention / layer_norm;
- the attention kernels torch picks for CUDA tensors when it traces scaled_dot_product_attention
  (cudnn, flash, memory-efficient), rewritten into the one attention op the core lowers
  (aten._scaled_dot_product_flash_attention_for_cpu: despite its name, the math of every
  variant, on any device), their RNG and sequence outputs as empty placeholders;
- aten.lift_fresh_copy (a constant tensor in the traced code) as a clone, where tracing
  leaves it to the table (functionalization makes it later; fx_import.SAME_AS then imports
  it as aten.clone).

An op still missing after this falls back to eager torch in its own partition (backend.py)."""
from __future__ import annotations

import math
from typing import Callable, Dict, Set

import torch
import torch.nn.functional as F

aten = torch.ops.aten


def _project(x, w, b):
    return F.linear(x, w, b)


def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                                mask_type=None):
    """aten._native_multi_head_attention (batch-first [B, T, D] inputs)."""
    if mask is not None or need_weights:
        return NotImplemented  # the op stays, and runs in eager torch
    b, t, d = query.shape
    dh = d // num_head
    if query is key and key is value:
        q, k, v = _project(query, qkv_weight, qkv_bias).split(d, dim=-1)
    else:
        wq, wk, wv = qkv_weight.split(d, dim=0)
        bq, bk, bv = qkv_bias.split(d, dim=0)
        q, k, v = _project(query, wq, bq), _project(key, wk, bk), _project(value, wv, bv)
    q, k, v = (y.reshape(y.shape[0], y.shape[1], num_head, dh).transpose(1, 2) for y in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, scale=1.0 / math.sqrt(dh))
    y = y.transpose(1, 2).reshape(b, t, d)
    return _project(y, proj_weight, proj_bias), torch.empty(0, dtype=query.dtype, device=query.device)


def transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                  use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
                                  norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                                  mask_type=None):
    """aten._transformer_encoder_layer_fwd: nn.TransformerEncoderLayer's inference fast path."""
    if mask is not None:
        return NotImplemented

    def norm(x, w, b):
        return F.layer_norm(x, (embed_dim,), w, b, eps)

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    x = native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                    need_weights=False)[0]
    x = x + src
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    h = F.linear(x, ffn_weight_1, ffn_bias_1)
    h = F.gelu(h) if use_gelu else F.relu(h)
    x = F.linear(h, ffn_weight_2, ffn_bias_2) + residual
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return x


def _attention(query, key, value, attn_bias, dropout_p, is_causal, scale):
    if dropout_p:
        return NotImplemented
    return aten._scaled_dot_product_flash_attention_for_cpu(query, key, value, 0.0, is_causal, attn_mask=attn_bias,
                                                             scale=scale)


def _empty(like):
    return torch.empty(0, dtype=torch.int64, device=like.device)


def _nine(r, query, key):
    """The cudnn and flash variants' outputs: (output, logsumexp, cum_seq_q, cum_seq_k, max_q,
    max_k, two RNG tensors, debug_attn_mask), all but the first two placeholders."""
    if r is NotImplemented:
        return r
    out, lse = r
    e = _empty(query)
    return out, lse, e, e, query.shape[2], key.shape[2], e, e, torch.empty(0, dtype=query.dtype, device=query.device)


def cudnn_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
                    return_debug_mask=False, *, scale=None):
    """aten._scaled_dot_product_cudnn_attention -> (output, logsumexp, cum_seq_q, cum_seq_k,
    max_q, max_k, philox_seed, philox_offset, debug_attn_mask)."""
    return _nine(_attention(query, key, value, attn_bias, dropout_p, is_causal, scale), query, key)


def flash_attention(query, key, value, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    """aten._scaled_dot_product_flash_attention -> (output, logsumexp, cum_seq_q, cum_seq_k,
    max_q, max_k, rng_state, unused, debug_attn_mask)."""
    return _nine(_attention(query, key, value, None, dropout_p, is_causal, scale), query, key)


def efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *,
                        scale=None):
    """aten._scaled_dot_product_efficient_attention -> (output, log_sumexp, philox_seed, philox_offset)."""
    r = _attention(query, key, value, attn_bias, dropout_p, is_causal, scale)
    if r is NotImplemented:
        return r
    out, lse = r
    e = _empty(query)
    return out, lse, e, e


def lift_fresh_copy(x):
    return aten.clone(x)


FAST_PATHS: Dict[object, Callable] = {
    aten._native_multi_head_attention.default: native_multi_head_attention,
    aten._transformer_encoder_layer_fwd.default: transformer_encoder_layer_fwd,
    aten._scaled_dot_product_cudnn_attention.default: cudnn_attention,
    aten._scaled_dot_product_flash_attention.default: flash_attention,
    aten._scaled_dot_product_efficient_attention.default: efficient_attention,
    aten.lift_fresh_copy.default: lift_fresh_copy,
}


def table(supported: Set[str], op_name: Callable[[object], str]) -> Dict[object, Callable]:
    """The decomposition table for AOT autograd: only ops outside `supported` (the core's
    own lowering is kept wherever it has one)."""
    from torch._decomp import core_aten_decompositions
    out = {op: fn for op, fn in core_aten_decompositions().items()
           if isinstance(op, torch._ops.OpOverload) and op_name(op) not in supported}
    out.update(FAST_PATHS)
    return out
