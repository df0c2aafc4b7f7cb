"""Torch-oracle cases for the library prims: batched matmul (floats, wrapping integers, K = 0),
N-d convolution and transposed convolution with stride / padding / dilation / groups, and
sdpa against a float64 softmax formula (prim_refs.sdpa: masks, causal, fully masked rows,
dropout through our generator) with its logsumexp output."""
from __future__ import annotations

import torch
import torch.nn.functional as F

import prim_refs as R
from oracle import Case, Raw, T

CASES = []
F32 = dict(rtol=1e-5, atol=1e-5)
F16 = dict(rtol=2e-3, atol=2e-3)


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- matmul -------------------------------------------------------------------------------
def matmul(a, b, id="", **kw):
    add("prims.matmul", [a, b], {}, torch.matmul, id=id, **kw)


matmul(T("f64", [3, 4]), T("f64", [4, 5]))
matmul(T("f64", [2, 3, 4]), T("f64", [2, 4, 2]), id="batched")
matmul(T("f64", [2, 1, 3, 4]), T("f64", [2, 1, 4, 3]), id="rank4")
matmul(T("f64", [3, 0]), T("f64", [0, 2]), id="k0_zeros")
matmul(T("f64", [0, 3]), T("f64", [3, 2]), id="m0")
matmul(T("i64", [2, 3], values=[2 ** 62, 3, 1, -1, 5, 7]), T("i64", [3, 2], values=[4, 1, 1, 2, 3, 3]), id="i64_wraps")
matmul(T("i32", [3, 4]), T("i32", [4, 2]), id="i32")
matmul(T("f32", [4, 8]), T("f32", [8, 3]), id="f32", **F32)
matmul(T("f16", [2, 4, 16]), T("f16", [2, 16, 3]), id="f16", **F16)
matmul(T("f64", [2, 2], values=[float("inf"), 1.0, 0.0, float("nan")]), T("f64", [2, 2], values=[1.0, 0.0, 0.0, 1.0]),
       id="nan_inf")
# ABI 1.2: f16 (or bf16: no numpy inputs here) operands with the f32 accumulator as the
# result, unrounded (attention's scores).
add("prims.matmul", [T("f16", [2, 8, 64]), T("f16", [2, 64, 5])], {"dtype": Raw("f32")},
    lambda a, b: torch.matmul(a.double(), b.double()).float(), id="f16_to_f32", **F32)


# ---- convolution --------------------------------------------------------------------------
def conv(x, w, stride, padding, dilation, groups=1, transposed=False, output_padding=None, id="", **kw):
    nd = len(x.shape) - 2
    output_padding = output_padding or [0] * nd
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "transposed": transposed,
             "output_padding": output_padding, "groups": groups}

    def fn(a, b):
        if transposed:
            f = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
            return f(a, b, None, stride, padding, output_padding, groups, dilation)
        return [F.conv1d, F.conv2d, F.conv3d][nd - 1](a, b, None, stride, padding, dilation, groups)
    add("prims.convolution", [x, w], attrs, fn, id=id, **kw)


conv(T("f64", [2, 3, 6, 7]), T("f64", [4, 3, 3, 2]), [1, 1], [0, 0], [1, 1])
conv(T("f64", [1, 2, 9, 8]), T("f64", [4, 2, 3, 3]), [2, 3], [1, 2], [1, 1], id="stride_padding")
conv(T("f64", [1, 4, 9, 9]), T("f64", [6, 2, 3, 3]), [1, 1], [2, 2], [2, 2], groups=2, id="dilation_groups")
conv(T("f64", [2, 3, 10]), T("f64", [6, 1, 4]), [2], [1], [1], groups=3, id="1d_depthwise")
conv(T("f64", [1, 2, 4, 5, 3]), T("f64", [3, 2, 2, 3, 1]), [1, 2, 1], [1, 0, 0], [1, 1, 2], id="3d")
conv(T("f64", [2, 4, 3, 4]), T("f64", [4, 3, 3, 3]), [2, 2], [1, 0], [1, 1], transposed=True,
     output_padding=[1, 0], id="transposed")
conv(T("f64", [1, 4, 5]), T("f64", [4, 1, 3]), [3], [1], [2], groups=2, transposed=True, output_padding=[2],
     id="transposed_1d_groups_dilation")
conv(T("f32", [1, 3, 8, 8]), T("f32", [5, 3, 3, 3]), [1, 1], [1, 1], [1, 1], id="f32", **F32)


# ---- sdpa: (out, logsumexp) ---------------------------------------------------------------
def sdpa(q, k, v, mask=None, causal=False, scale=None, dropout_p=0.0, seed=0, id="", **kw):
    attrs = {"is_causal": causal, "scale": scale, "dropout_p": dropout_p, "seed": seed}
    add("prims.sdpa", [q, k, v, mask], attrs,
        lambda q_, k_, v_, m_: R.sdpa(q_, k_, v_, m_, causal, scale, dropout_p, seed), num_outputs=2, id=id, **kw)


sdpa(T("f64", [2, 3, 5, 8]), T("f64", [2, 3, 6, 8]), T("f64", [2, 3, 6, 4]), id="basic")
sdpa(T("f64", [4, 3]), T("f64", [6, 3]), T("f64", [6, 2]), scale=0.3, id="rank2_scale")
sdpa(T("f64", [2, 5, 4]), T("f64", [2, 5, 4]), T("f64", [2, 5, 4]), causal=True, id="causal")
sdpa(T("f64", [1, 6, 4]), T("f64", [1, 3, 4]), T("f64", [1, 3, 2]), causal=True, id="causal_L_gt_S_top_left")
sdpa(T("f64", [2, 4, 3]), T("f64", [2, 5, 3]), T("f64", [2, 5, 3]), mask=T("bool", [2, 4, 5]), id="bool_mask")
sdpa(T("f64", [1, 3, 2]), T("f64", [1, 3, 2]), T("f64", [1, 3, 2]),
     mask=T("bool", [1, 3, 3], values=[True, False, True, False, False, False, True, True, True]),
     id="fully_masked_row_zero")
sdpa(T("f64", [2, 4, 3]), T("f64", [2, 5, 3]), T("f64", [2, 5, 3]), mask=T("f64", [2, 4, 5]), id="float_mask")
sdpa(T("f64", [2, 4, 3]), T("f64", [2, 5, 3]), T("f64", [2, 5, 2]), dropout_p=0.4, seed=11, id="dropout")
sdpa(T("f32", [2, 4, 8]), T("f32", [2, 6, 8]), T("f32", [2, 6, 8]), id="f32", **F32)
sdpa(T("f16", [1, 4, 8]), T("f16", [1, 4, 8]), T("f16", [1, 4, 8]), causal=True, id="f16", **F16)
# Half precision with heads (batch dims flattened), a mask and S = 5, 6 (keys padded to 8 where
# matmul is kept with an f32 result).
sdpa(T("f16", [2, 3, 5, 8]), T("f16", [2, 3, 6, 8]), T("f16", [2, 3, 6, 4]), mask=T("bool", [2, 3, 5, 6]),
     id="f16_heads_bool_mask", **F16)
sdpa(T("f16", [2, 2, 3, 8]), T("f16", [2, 2, 5, 8]), T("f16", [2, 2, 5, 8]), mask=T("f16", [2, 2, 3, 5]),
     id="f16_heads_float_mask", **F16)


# ---- sdpa_backward: (dq, dk, dv) ----------------------------------------------------------
# The inputs are made here so that out and logsumexp are the forward's (the prim's contract:
# its expansion reads them); torch differentiates prim_refs.sdpa in float64.
def sdpa_backward(dtype, qs, ks, vs, mask=None, causal=False, scale=None, dropout_p=0.0, seed=0, id="", **kw):
    gen = torch.Generator().manual_seed(len(CASES))
    q, k, v = (torch.randn(s, generator=gen, dtype=torch.float64) for s in (qs, ks, vs))
    m = None
    if mask == "bool":
        m = torch.rand(qs[:-1] + [ks[-2]], generator=gen) < 0.7
        m[..., 0] = True  # no fully masked row (torch's where() would make NaN gradients there)
    elif mask == "float":
        m = torch.randn(qs[:-1] + [ks[-2]], generator=gen, dtype=torch.float64)
    out, lse = R.sdpa(q, k, v, m, causal, scale, dropout_p, seed)
    g = torch.randn(list(out.shape), generator=gen, dtype=torch.float64)

    def t(x, dt=dtype):
        return T(dt, list(x.shape), values=x.flatten().tolist())

    lse_dtype = "f64" if dtype == "f64" else "f32"
    mask_t = None if m is None else t(m, "bool" if mask == "bool" else dtype)

    def grads(g_, q_, k_, v_, o_, l_, m_):
        qd, kd, vd = (x.double().requires_grad_() for x in (q_, k_, v_))
        o2, _ = R.sdpa(qd, kd, vd, m_, causal, scale, dropout_p, seed)
        dq, dk, dv = torch.autograd.grad(o2, (qd, kd, vd), g_.double())
        return dq.to(q_.dtype), dk.to(k_.dtype), dv.to(v_.dtype)

    attrs = {"is_causal": causal, "scale": scale, "dropout_p": dropout_p, "seed": seed}
    add("prims.sdpa_backward", [t(g), t(q), t(k), t(v), t(out), t(lse, lse_dtype), mask_t], attrs, grads,
        num_outputs=3, id=id, **kw)


sdpa_backward("f64", [2, 3, 5, 8], [2, 3, 6, 8], [2, 3, 6, 4], id="basic")
sdpa_backward("f64", [4, 3], [6, 3], [6, 2], scale=0.3, id="rank2_scale")
sdpa_backward("f64", [2, 5, 4], [2, 5, 4], [2, 5, 4], causal=True, id="causal")
sdpa_backward("f64", [1, 6, 4], [1, 3, 4], [1, 3, 2], causal=True, id="causal_L_gt_S")
sdpa_backward("f64", [2, 4, 3], [2, 5, 3], [2, 5, 3], mask="bool", id="bool_mask")
sdpa_backward("f64", [2, 4, 3], [2, 5, 3], [2, 5, 3], mask="float", id="float_mask")
sdpa_backward("f64", [2, 4, 3], [2, 5, 3], [2, 5, 2], dropout_p=0.4, seed=11, id="dropout")
sdpa_backward("f32", [2, 4, 8], [2, 6, 8], [2, 6, 8], id="f32", **F32)
# Half precision with heads and S = 6 (keys padded to 8 where matmul is kept with an f32 result).
sdpa_backward("f16", [2, 3, 5, 8], [2, 3, 6, 8], [2, 3, 6, 8], causal=True, id="f16_heads_causal",
              rtol=2e-2, atol=2e-2)
