"""Torch-oracle cases for the nn family: matrix products, convolution, pooling, norms,
softmax, attention, dropout and losses (float64 inputs unless an integer path is tested)."""
from __future__ import annotations

import torch

from oracle import Case, Raw, T

A = torch.ops.aten
CASES = []


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- matrix products -----------------------------------------------------------------
add("aten.mm", [T("f64", [3, 4]), T("f64", [4, 5])], {}, lambda a, b: A.mm.default(a, b))
add("aten.mm", [T("i64", [3, 4]), T("i64", [4, 2])], {}, lambda a, b: A.mm.default(a, b), id="i64")
add("aten.mm", [T("i32", [2, 3], low=-1000, high=1000), T("i32", [3, 2], low=-1000, high=1000)], {},
    lambda a, b: A.mm.default(a, b), id="i32")
add("aten.mm", [T("f64", [2, 0]), T("f64", [0, 3])], {}, lambda a, b: A.mm.default(a, b), id="empty_inner")
add("aten.bmm", [T("f64", [2, 3, 4]), T("f64", [2, 4, 5])], {}, lambda a, b: A.bmm.default(a, b))
add("aten.addmm", [T("f64", [5]), T("f64", [3, 4]), T("f64", [4, 5])], {},
    lambda s, a, b: A.addmm.default(s, a, b))
add("aten.addmm", [T("f64", [3, 1]), T("f64", [3, 4]), T("f64", [4, 5])], {"beta": 0.5, "alpha": -2.0},
    lambda s, a, b: A.addmm.default(s, a, b, beta=0.5, alpha=-2.0), id="beta_alpha")
add("aten.addmm", [T("f64", [1], values=[float("nan")]), T("f64", [2, 2]), T("f64", [2, 2])], {"beta": 0},
    lambda s, a, b: A.addmm.default(s, a, b, beta=0), id="beta0_nan_self")
add("aten.addmm", [T("i64", [2]), T("i64", [2, 3]), T("i64", [3, 2])], {"beta": 2, "alpha": 3},
    lambda s, a, b: A.addmm.default(s, a, b, beta=2, alpha=3), id="i64")
add("aten.baddbmm", [T("f64", [1, 3, 1]), T("f64", [2, 3, 4]), T("f64", [2, 4, 5])], {"beta": 1.5, "alpha": 0.5},
    lambda s, a, b: A.baddbmm.default(s, a, b, beta=1.5, alpha=0.5))
add("aten.dot", [T("f64", [7]), T("f64", [7])], {}, lambda a, b: A.dot.default(a, b))
add("aten.dot", [T("i64", [7]), T("i64", [7])], {}, lambda a, b: A.dot.default(a, b), id="i64")
add("aten.mv", [T("f64", [3, 4]), T("f64", [4])], {}, lambda a, b: A.mv.default(a, b))


# ---- convolution ---------------------------------------------------------------------
def conv(inp, w, bias, stride, padding, dilation, transposed=False, output_padding=(0,), groups=1, id=""):
    attrs = {"stride": list(stride), "padding": list(padding), "dilation": list(dilation),
             "transposed": transposed, "output_padding": list(output_padding), "groups": groups}
    add("aten.convolution", [inp, w, bias], attrs,
        lambda x, wt, b: A.convolution.default(x, wt, b, list(stride), list(padding), list(dilation), transposed,
                                               list(output_padding), groups), id=id)


conv(T("f64", [2, 3, 7, 6]), T("f64", [4, 3, 3, 3]), T("f64", [4]), [1, 1], [0, 0], [1, 1], id="2d")
conv(T("f64", [1, 4, 9, 8]), T("f64", [6, 2, 3, 2]), None, [2, 1], [1, 0], [1, 2], groups=2, id="2d_groups_stride_pad_dil")
conv(T("f64", [2, 3, 10]), T("f64", [5, 3, 4]), T("f64", [5]), [3], [2], [2], id="1d")
conv(T("f64", [1, 2, 4, 5, 3]), T("f64", [3, 2, 2, 3, 2]), None, [1, 2, 1], [1, 1, 0], [1, 1, 1], id="3d")
conv(T("f64", [2, 4, 3, 3]), T("f64", [4, 3, 3, 3]), T("f64", [6]), [2, 2], [1, 1], [1, 1], transposed=True,
     output_padding=[1, 1], groups=2, id="2d_transposed_groups")
conv(T("f64", [1, 2, 5]), T("f64", [2, 3, 3]), None, [3], [1], [2], transposed=True, output_padding=[1],
     id="1d_transposed_dil")
conv(T("i64", [1, 2, 5, 5]), T("i64", [3, 2, 2, 2]), None, [1, 1], [1, 1], [1, 1], id="i64")
conv(T("f64", [0, 3, 5, 5]), T("f64", [2, 3, 3, 3]), None, [1, 1], [0, 0], [1, 1], id="empty_batch")


# ---- pooling -------------------------------------------------------------------------
def maxpool(inp, k, stride=(), padding=(0, 0), dilation=(1, 1), ceil=False, id=""):
    attrs = {"kernel_size": list(k), "stride": list(stride), "padding": list(padding), "dilation": list(dilation),
             "ceil_mode": ceil}
    add("aten.max_pool2d_with_indices", [inp], attrs,
        lambda x: A.max_pool2d_with_indices.default(x, list(k), list(stride), list(padding), list(dilation), ceil),
        num_outputs=2, id=id)


maxpool(T("f64", [2, 3, 8, 8]), [2, 2], id="basic")
maxpool(T("f64", [1, 2, 9, 7]), [3, 3], [2, 2], [1, 1], id="resnet_stem")
maxpool(T("f64", [2, 7, 7]), [3, 2], [2, 2], [1, 1], [2, 1], ceil=True, id="dilation_ceil")
maxpool(T("f64", [1, 1, 5, 5]), [2, 2], [2, 2], ceil=True, id="ceil")
maxpool(T("i64", [1, 2, 6, 6], low=-50, high=50), [2, 3], [2, 3], id="i64")


def avgpool(inp, k, stride=(), padding=(0, 0), ceil=False, include=True, div=None, id=""):
    attrs = {"kernel_size": list(k), "stride": list(stride), "padding": list(padding), "ceil_mode": ceil,
             "count_include_pad": include, "divisor_override": div}
    add("aten.avg_pool2d", [inp], attrs,
        lambda x: A.avg_pool2d.default(x, list(k), list(stride), list(padding), ceil, include, div), id=id)


avgpool(T("f64", [2, 3, 8, 8]), [2, 2], id="basic")
avgpool(T("f64", [1, 2, 7, 6]), [3, 3], [2, 2], [1, 1], ceil=True, id="pad_ceil")
avgpool(T("f64", [1, 2, 7, 6]), [3, 2], [2, 1], [1, 1], include=False, id="exclude_pad")
avgpool(T("f64", [2, 5, 5]), [2, 2], [2, 2], [1, 1], ceil=True, div=3, id="divisor_override")
avgpool(T("i64", [1, 2, 6, 6], low=-100, high=100), [2, 3], [2, 2], [1, 1], id="i64")

for shape, out in [([2, 3, 7, 5], [1, 1]), ([1, 3, 7, 5], [3, 2]), ([2, 5, 4], [7, 6]), ([1, 2, 6, 6], [3, 3])]:
    add("aten._adaptive_avg_pool2d", [T("f64", shape)], {"output_size": out},
        lambda x, out=out: A._adaptive_avg_pool2d.default(x, out), id=f"{shape}->{out}")


# ---- normalization -------------------------------------------------------------------
add("aten._native_batch_norm_legit_no_training",
    [T("f64", [2, 3, 4, 5]), T("f64", [3]), T("f64", [3]), T("f64", [3]), T("f64", [3], low=0.5, high=2.0)],
    {"momentum": 0.1, "eps": 1e-5},
    lambda x, w, b, rm, rv: A._native_batch_norm_legit_no_training.default(x, w, b, rm, rv, 0.1, 1e-5), num_outputs=3)
add("aten._native_batch_norm_legit_no_training",
    [T("f64", [4, 3]), None, None, T("f64", [3]), T("f64", [3], low=0.5, high=2.0)], {"momentum": 0.1, "eps": 0.01},
    lambda x, w, b, rm, rv: A._native_batch_norm_legit_no_training.default(x, w, b, rm, rv, 0.1, 0.01),
    num_outputs=3, id="2d_no_affine")
for training in (True, False):
    add("aten._native_batch_norm_legit_functional",
        [T("f64", [3, 2, 4, 4]), T("f64", [2]), T("f64", [2]), T("f64", [2]), T("f64", [2], low=0.5, high=2.0)],
        {"training": training, "momentum": 0.1, "eps": 1e-5},
        lambda x, w, b, rm, rv, t=training: A._native_batch_norm_legit_functional.default(x, w, b, rm, rv, t, 0.1, 1e-5),
        num_outputs=5, id=f"training={training}")
add("aten._native_batch_norm_legit.no_stats", [T("f64", [3, 2, 5]), T("f64", [2]), None],
    {"training": True, "momentum": 0.1, "eps": 1e-5},
    lambda x, w, b: A._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5), num_outputs=3)
add("aten.native_batch_norm", [T("f64", [4, 3, 6]), T("f64", [3]), T("f64", [3]), None, None],
    {"training": True, "momentum": 0.1, "eps": 1e-5},
    lambda x, w, b, rm, rv: A.native_batch_norm.default(x, w, b, rm, rv, True, 0.1, 1e-5), num_outputs=3, id="training")
add("aten.native_batch_norm",
    [T("f64", [4, 3, 6]), None, T("f64", [3]), T("f64", [3]), T("f64", [3], low=0.5, high=2.0)],
    {"training": False, "momentum": 0.1, "eps": 1e-3},
    lambda x, w, b, rm, rv: A.native_batch_norm.default(x, w, b, rm, rv, False, 0.1, 1e-3), num_outputs=3, id="eval")

add("aten.native_layer_norm", [T("f64", [2, 5, 8]), T("f64", [8]), T("f64", [8])],
    {"normalized_shape": [8], "eps": 1e-5},
    lambda x, w, b: A.native_layer_norm.default(x, [8], w, b, 1e-5), num_outputs=3)
add("aten.native_layer_norm", [T("f64", [3, 4, 5]), None, None], {"normalized_shape": [4, 5], "eps": 1e-6},
    lambda x, w, b: A.native_layer_norm.default(x, [4, 5], w, b, 1e-6), num_outputs=3, id="2_dims_no_affine")
add("aten.native_group_norm", [T("f64", [2, 6, 3, 4]), T("f64", [6]), T("f64", [6])],
    {"N": 2, "C": 6, "HxW": 12, "group": 3, "eps": 1e-5},
    lambda x, w, b: A.native_group_norm.default(x, w, b, 2, 6, 12, 3, 1e-5), num_outputs=3)
add("aten.native_group_norm", [T("f64", [3, 4]), None, None], {"N": 3, "C": 4, "HxW": 1, "group": 2, "eps": 1e-5},
    lambda x, w, b: A.native_group_norm.default(x, w, b, 3, 4, 1, 2, 1e-5), num_outputs=3, id="no_spatial")

for op in ("_softmax", "_log_softmax"):
    fn = getattr(A, op).default
    add(f"aten.{op}", [T("f64", [3, 4, 5])], {"dim": -1, "half_to_float": False},
        lambda x, fn=fn: fn(x, -1, False))
    add(f"aten.{op}", [T("f64", [3, 4, 5])], {"dim": 1, "half_to_float": False},
        lambda x, fn=fn: fn(x, 1, False), id="dim1")
    add(f"aten.{op}", [T("f64", [2, 3], values=[1000, 0, -1000, float("-inf"), 0, float("-inf")])],
        {"dim": 1, "half_to_float": False}, lambda x, fn=fn: fn(x, 1, False), id="extreme")
    add(f"aten.{op}", [T("f64", [2, 2], values=[float("-inf"), float("-inf"), float("nan"), 1.0])],
        {"dim": 1, "half_to_float": False}, lambda x, fn=fn: fn(x, 1, False), id="nan_rows")
    add(f"aten.{op}", [T("f32", [4, 6])], {"dim": 0, "half_to_float": False},
        lambda x, fn=fn: fn(x, 0, False), id="f32", rtol=1e-5, atol=1e-6)

NINF, NAN = float("-inf"), float("nan")
SS = A._safe_softmax.default
add("aten._safe_softmax", [T("f64", [3, 4, 5])], {"dim": -1}, lambda x: SS(x, -1))
add("aten._safe_softmax", [T("f64", [3, 4], values=[NINF] * 4 + [0, NINF, 1, 2] + [NAN, NINF, NINF, NINF])],
    {"dim": 1}, lambda x: SS(x, 1), id="masked_rows")
add("aten._safe_softmax", [T("f64", [2, 3, 2], values=[NINF, 0, NINF, 1, NINF, 2, 3, NINF, 4, NINF, 5, NINF])],
    {"dim": 1}, lambda x: SS(x, 1), id="masked_columns_dim1")
add("aten._safe_softmax", [T("f32", [4, 6])], {"dim": 0, "dtype": Raw("f64")},
    lambda x: SS(x, 0, torch.float64), id="f32_to_f64")
add("aten._safe_softmax", [T("f64", [2, 3], values=[-1e300, -1e300, NINF, NINF, NINF, NINF])],
    {"dim": 1, "dtype": Raw("f32")}, lambda x: SS(x, 1, torch.float32), id="f64_to_f32_overflow", rtol=1e-6)
add("aten._safe_softmax", [T("i64", [2, 5])], {"dim": 1, "dtype": Raw("f64")},
    lambda x: SS(x, 1, torch.float64), id="i64_to_f64")
add("aten._safe_softmax", [T("f64", [], values=NINF)], {"dim": 0}, lambda x: SS(x, 0), id="scalar_ninf")


# ---- attention -----------------------------------------------------------------------
def sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False, id=""):
    attrs = {"is_causal": causal, "scale": scale, "enable_gqa": gqa}
    add("aten.scaled_dot_product_attention", [q, k, v, mask], attrs,
        lambda q_, k_, v_, m_: A.scaled_dot_product_attention.default(q_, k_, v_, m_, 0.0, causal, scale=scale,
                                                                      enable_gqa=gqa), id=id)


sdpa(T("f64", [2, 3, 5, 8]), T("f64", [2, 3, 6, 8]), T("f64", [2, 3, 6, 4]), id="basic")
sdpa(T("f64", [2, 2, 5, 8]), T("f64", [2, 2, 5, 8]), T("f64", [2, 2, 5, 8]), causal=True, id="causal")
sdpa(T("f64", [2, 2, 6, 4]), T("f64", [2, 2, 4, 4]), T("f64", [2, 2, 4, 3]), causal=True, id="causal_L_gt_S")
sdpa(T("f64", [2, 2, 4, 8]), T("f64", [2, 2, 6, 8]), T("f64", [2, 2, 6, 8]), mask=T("bool", [4, 6]), id="bool_mask")
sdpa(T("f64", [1, 2, 3, 4]), T("f64", [1, 2, 3, 4]), T("f64", [1, 2, 3, 4]),
     mask=T("bool", [3, 3], values=[False, False, False, True, False, True, True, True, True]), id="fully_masked_row")
sdpa(T("f64", [2, 2, 4, 8]), T("f64", [2, 2, 6, 8]), T("f64", [2, 2, 6, 8]), mask=T("f64", [2, 1, 4, 6]),
     scale=0.3, id="float_mask_scale")
sdpa(T("f64", [3, 4, 8]), T("f64", [3, 5, 8]), T("f64", [3, 5, 2]), id="3d")
sdpa(T("f64", [2, 4, 3, 8]), T("f64", [2, 2, 5, 8]), T("f64", [2, 2, 5, 6]), gqa=True, id="gqa")


def flash(q, k, v, mask=None, causal=False, scale=None, id="", **kw):
    add("aten._scaled_dot_product_flash_attention_for_cpu", [q, k, v, mask],
        {"dropout_p": 0.0, "is_causal": causal, "scale": scale},
        lambda q_, k_, v_, m_: A._scaled_dot_product_flash_attention_for_cpu.default(
            q_, k_, v_, 0.0, causal, attn_mask=m_, scale=scale), num_outputs=2, id=id, **kw)


flash(T("f64", [2, 3, 5, 8]), T("f64", [2, 3, 6, 8]), T("f64", [2, 3, 6, 8]), id="basic")
flash(T("f64", [2, 2, 7, 4]), T("f64", [2, 2, 7, 4]), T("f64", [2, 2, 7, 4]), causal=True, id="causal")
flash(T("f64", [1, 2, 6, 4]), T("f64", [1, 2, 4, 4]), T("f64", [1, 2, 4, 4]), causal=True, id="causal_L_gt_S")
flash(T("f64", [1, 2, 4, 4]), T("f64", [1, 2, 6, 4]), T("f64", [1, 2, 6, 4]), causal=True, id="causal_L_lt_S")
flash(T("f64", [2, 2, 5, 8]), T("f64", [2, 2, 6, 8]), T("f64", [2, 2, 6, 8]), mask=T("f64", [5, 6]), scale=0.3,
      id="mask_2d_scale")
flash(T("f64", [2, 3, 4, 8]), T("f64", [2, 3, 6, 8]), T("f64", [2, 3, 6, 8]), mask=T("f32", [2, 1, 4, 6]),
      id="mask_4d_f32")
flash(T("f64", [2, 3, 4, 8]), T("f64", [2, 3, 6, 8]), T("f64", [2, 3, 6, 8]), mask=T("f64", [1, 3, 1, 6]),
      causal=True, id="mask_rows_broadcast_causal")
flash(T("f64", [1, 2, 3, 4]), T("f64", [1, 2, 4, 4]), T("f64", [1, 2, 4, 4]),
      mask=T("f64", [3, 4], values=[0, NINF, 1, 2] + [NINF] * 4 + [0.5, 0, NINF, 0]), id="fully_masked_row")
flash(T("f32", [2, 2, 5, 8]), T("f32", [2, 2, 6, 8]), T("f32", [2, 2, 6, 8]), mask=T("f32", [5, 6]), id="f32",
      rtol=1e-5, atol=1e-6)


# ---- dropout -------------------------------------------------------------------------
add("aten.native_dropout", [T("f64", [4, 5])], {"p": 0.5, "train": False},
    lambda x: A.native_dropout.default(x, 0.5, False), num_outputs=2, id="eval")
add("aten.native_dropout", [T("f64", [4, 5])], {"p": 0.0, "train": True},
    lambda x: A.native_dropout.default(x, 0.0, True), num_outputs=2, id="p0")
add("aten.native_dropout", [T("f64", [4, 5])], {"p": 1.0, "train": None},
    lambda x: A.native_dropout.default(x, 1.0, None), num_outputs=2, id="p1")
# p = 0.3: the mask is our own seeded generator, so only shapes and dtypes are compared.
add("aten.native_dropout", [T("f64", [4, 5])], {"p": 0.3, "train": True, "seed": 3},
    lambda x: A.native_dropout.default(x, 0.3, True), num_outputs=2, skip_outputs=(0, 1), id="random")


# ---- losses --------------------------------------------------------------------------
def nll(inp, target, weight, reduction, ignore=-100, id=""):
    add("aten.nll_loss_forward", [inp, target, weight], {"reduction": reduction, "ignore_index": ignore},
        lambda x, t, w: A.nll_loss_forward.default(x, t, w, reduction, ignore), num_outputs=2, id=id)


for red in (0, 1, 2):
    nll(T("f64", [6, 5]), T("i64", [6], low=0, high=5), None, red, id=f"r{red}")
    nll(T("f64", [6, 5]), T("i64", [6], values=[0, 4, 2, 2, 1, 3]), T("f64", [5], low=0.1, high=2.0), red, ignore=2,
        id=f"weight_ignore_r{red}")
# (The runner's np.ascontiguousarray turns a 0-d input into shape [1]: reshape it back.)
add("aten.nll_loss_forward", [T("f64", [5]), T("i64", [], values=[3]), None], {"reduction": 1, "ignore_index": -100},
    lambda x, t, w: A.nll_loss_forward.default(x, t.reshape(()), w, 1, -100), num_outputs=2, id="1d")
nll(T("f64", [3, 4]), T("i64", [3], values=[1, 1, 1]), None, 1, ignore=1, id="all_ignored")

for red in (0, 1, 2):
    add("aten.mse_loss", [T("f64", [3, 4]), T("f64", [4])], {"reduction": red},
        lambda a, b, red=red: A.mse_loss.default(a, b, red), id=f"r{red}")
add("aten.mse_loss", [T("f32", [5]), T("f64", [5])], {"reduction": 1},
    lambda a, b: A.mse_loss.default(a, b, 1), id="mixed_dtype")

for red in (0, 1, 2):
    add("aten.binary_cross_entropy",
        [T("f64", [3, 4], low=0.01, high=0.99), T("f64", [3, 4], low=0.0, high=1.0), T("f64", [4], low=0.5, high=2.0)],
        {"reduction": red}, lambda x, t, w, red=red: A.binary_cross_entropy.default(x, t, w, red), id=f"r{red}")
add("aten.binary_cross_entropy",
    [T("f64", [4], values=[0.0, 1.0, 0.5, 1e-300]), T("f64", [4], values=[1.0, 0.0, 0.25, 0.0]), None],
    {"reduction": 0}, lambda x, t, w: A.binary_cross_entropy.default(x, t, w, 0), id="clamped_logs")
