"""Torch-oracle cases for the backward family: activation, softmax, loss, embedding, norm,
convolution and pooling gradients, compared with torch.ops.aten.<op>_backward on float64 inputs.

ATen's `bool[3] output_mask` is an int list of 0/1 here; plugsdk always computes all three
outputs, so outputs torch leaves undefined (None) are skipped."""
from __future__ import annotations

import torch

from oracle import Case, Raw, T

A = torch.ops.aten
CASES = []

F32_TOL = {"rtol": 1e-5, "atol": 1e-6}


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


def shape_of(fn, *shapes):
    """Output shape(s) of a forward op on zero tensors of the given shapes (for grad_output)."""
    out = fn(*[torch.zeros(s, dtype=torch.float64) for s in shapes])
    return [list(o.shape) for o in out] if isinstance(out, (tuple, list)) else list(out.shape)


# ---- activations -------------------------------------------------------------------------
SPECIAL = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 0.5, -3.0, 20.0, -20.0, 1e-8]

add("aten.threshold_backward", [T("f64", [3, 4]), T("f64", [3, 4])], {"threshold": 0.0},
    lambda g, x: A.threshold_backward(g, x, 0.0))
add("aten.threshold_backward", [T("f64", [3, 1]), T("f64", [4])], {"threshold": 0.25},
    lambda g, x: A.threshold_backward(g, x, 0.25), id="broadcast")
add("aten.threshold_backward", [T("f64", [12]), T("f64", [12], values=SPECIAL)], {"threshold": 0},
    lambda g, x: A.threshold_backward(g, x, 0), id="special")
add("aten.threshold_backward", [T("i64", [2, 5]), T("i32", [2, 5], values=[-2, -1, 0, 1, 2, 3, 0, 0, 5, -5])],
    {"threshold": 1}, lambda g, x: A.threshold_backward(g, x, 1), id="int")
add("aten.threshold_backward", [T("i64", [4]), T("i64", [4], values=[-1, 0, 1, 2])], {"threshold": -0.5},
    lambda g, x: A.threshold_backward(g, x, -0.5), id="int_float_threshold")
add("aten.threshold_backward", [T("f32", [3, 4]), T("f64", [4])], {"threshold": 0.1},
    lambda g, x: A.threshold_backward(g, x, 0.1), id="promote")
add("aten.threshold_backward", [T("f32", [6]), T("f32", [6], values=[0.1, 0.2, -0.1, 0.1, 1.0, 0.0])],
    {"threshold": 0.1}, lambda g, x: A.threshold_backward(g, x, 0.1), id="f32_threshold_rounding")

for approx in ["none", "tanh"]:
    add("aten.gelu_backward", [T("f64", [4, 5]), T("f64", [4, 5], low=-4, high=4)], {"approximate": approx},
        lambda g, x, a=approx: A.gelu_backward(g, x, approximate=a), id=approx)
    add("aten.gelu_backward", [T("f64", [12]), T("f64", [12], values=SPECIAL)], {"approximate": approx},
        lambda g, x, a=approx: A.gelu_backward(g, x, approximate=a), id=approx + "_special")
add("aten.gelu_backward", [T("f64", [3, 4]), T("f64", [4])], {},
    lambda g, x: A.gelu_backward(g, x), id="broadcast_default")

for op in ["tanh_backward", "sigmoid_backward"]:
    add("aten." + op, [T("f64", [3, 4]), T("f64", [3, 4], low=-1, high=1)], {},
        lambda g, y, o=op: getattr(A, o)(g, y))
    add("aten." + op, [T("f64", [3, 1]), T("f64", [4], low=-1, high=1)], {},
        lambda g, y, o=op: getattr(A, o)(g, y), id="broadcast")
    add("aten." + op, [T("f32", [5]), T("f64", [5], low=-1, high=1)], {},
        lambda g, y, o=op: getattr(A, o)(g, y), id="promote")
add("aten.silu_backward", [T("f64", [3, 4]), T("f64", [3, 4], low=-6, high=6)], {},
    lambda g, x: A.silu_backward(g, x))
add("aten.silu_backward", [T("f64", [12]), T("f64", [12], values=SPECIAL)], {},
    lambda g, x: A.silu_backward(g, x), id="special")

add("aten.hardtanh_backward", [T("f64", [3, 4]), T("f64", [3, 4])], {"min_val": -0.5, "max_val": 0.5},
    lambda g, x: A.hardtanh_backward(g, x, -0.5, 0.5))
add("aten.hardtanh_backward", [T("f64", [12]), T("f64", [12], values=SPECIAL)], {"min_val": -1, "max_val": 1},
    lambda g, x: A.hardtanh_backward(g, x, -1, 1), id="special_bounds")
add("aten.hardtanh_backward", [T("f64", [2, 1]), T("f64", [3])], {"min_val": 0.0, "max_val": 6.0},
    lambda g, x: A.hardtanh_backward(g, x, 0.0, 6.0), id="relu6_broadcast")

add("aten.leaky_relu_backward", [T("f64", [3, 4]), T("f64", [3, 4])], {"negative_slope": 0.2, "self_is_result": False},
    lambda g, x: A.leaky_relu_backward(g, x, 0.2, False))
add("aten.leaky_relu_backward", [T("f64", [12]), T("f64", [12], values=SPECIAL)],
    {"negative_slope": 0.01, "self_is_result": True},
    lambda g, x: A.leaky_relu_backward(g, x, 0.01, True), id="self_is_result_special")

# ---- softmax -----------------------------------------------------------------------------
for op in ["_softmax_backward_data", "_log_softmax_backward_data"]:
    for shape, dim in [([3, 5], 1), ([3, 5], 0), ([2, 3, 4], -1), ([2, 3, 4], 1), ([], 0), ([0, 4], 1)]:
        add("aten." + op, [T("f64", shape), T("f64", shape, low=-2, high=0)],
            {"dim": dim, "input_dtype": Raw("f64")},
            lambda g, y, o=op, d=dim: getattr(A, o)(g, y, d, torch.float64), id=f"{shape}_dim{dim}")
    add("aten." + op, [T("f32", [4, 6]), T("f32", [4, 6], low=-2, high=0)], {"dim": 1, "input_dtype": Raw("f32")},
        lambda g, y, o=op: getattr(A, o)(g, y, 1, torch.float32), id="f32", **F32_TOL)

# ---- embedding ---------------------------------------------------------------------------
EMB = {"num_weights": 7, "padding_idx": -1, "scale_grad_by_freq": False}
add("aten.embedding_dense_backward", [T("f64", [2, 3, 4]), T("i64", [2, 3], low=0, high=7)], EMB,
    lambda g, i: A.embedding_dense_backward(g, i, 7, -1, False))
add("aten.embedding_dense_backward", [T("f64", [2, 5, 4]), T("i64", [2, 5], values=[1, 2, 1, 0, 1, 3, 3, 1, 2, 0])],
    dict(EMB, padding_idx=1), lambda g, i: A.embedding_dense_backward(g, i, 7, 1, False), id="padding_idx")
add("aten.embedding_dense_backward", [T("f64", [2, 5, 4]), T("i64", [2, 5], values=[1, 2, 1, 0, 1, 3, 3, 1, 2, 0])],
    dict(EMB, scale_grad_by_freq=True), lambda g, i: A.embedding_dense_backward(g, i, 7, -1, True), id="scale_by_freq")
add("aten.embedding_dense_backward", [T("f64", [6, 3]), T("i32", [6], low=0, high=4)],
    dict(EMB, num_weights=4, padding_idx=0, scale_grad_by_freq=True),
    lambda g, i: A.embedding_dense_backward(g, i, 4, 0, True), id="i32_pad_freq")

# ---- losses ------------------------------------------------------------------------------
NLL_TARGET = [1, -100, 3, 0, 3]
for red in [0, 1, 2]:
    gshape = [5] if red == 0 else []
    for weighted in [False, True]:
        add("aten.nll_loss_backward",
            [T("f64", gshape), T("f64", [5, 4]), T("i64", [5], values=NLL_TARGET),
             T("f64", [4], low=0.1, high=2) if weighted else None, T("f64", [], low=0.5, high=3)],
            {"reduction": red, "ignore_index": -100},
            lambda g, s, t, w, tw, r=red: A.nll_loss_backward(g, s, t, w, r, -100, tw),
            id=f"red{red}" + ("_weight" if weighted else ""))
add("aten.nll_loss_backward", [T("f64", []), T("f64", [4]), T("i64", [], values=[2]), None, T("f64", [], low=1, high=2)],
    {"reduction": 1, "ignore_index": 0}, lambda g, s, t, w, tw: A.nll_loss_backward(g, s, t, w, 1, 0, tw), id="1d")
add("aten.nll_loss_backward", [T("f64", []), T("f64", [3, 4]), T("i64", [3], values=[2, 2, 1]), None, T("f64", [])],
    {"reduction": 1, "ignore_index": 2}, lambda g, s, t, w, tw: A.nll_loss_backward(g, s, t, w, 1, 2, tw),
    id="ignore_index_2")

for red in [0, 1, 2]:
    gshape = [3, 4] if red == 0 else []
    add("aten.mse_loss_backward", [T("f64", gshape), T("f64", [3, 4]), T("f64", [3, 4])], {"reduction": red},
        lambda g, x, t, r=red: A.mse_loss_backward(g, x, t, r), id=f"red{red}")
add("aten.mse_loss_backward", [T("f64", []), T("f64", [3, 1]), T("f64", [4])], {"reduction": 1},
    lambda g, x, t: A.mse_loss_backward(g, x, t, 1), id="broadcast")
add("aten.mse_loss_backward", [T("i64", []), T("i64", [2]), T("i64", [2])], {"reduction": 1},
    lambda g, x, t: A.mse_loss_backward(g, x, t, 1), id="i64")


# ---- native_layer_norm_backward ----------------------------------------------------------
def layer_norm(x_shape, norm, weight=True, bias=True, id=""):
    lead = x_shape[:len(x_shape) - len(norm)]
    stat = lead + [1] * len(norm)
    mask = [1, int(weight), int(bias)]
    add("aten.native_layer_norm_backward",
        [T("f64", x_shape), T("f64", x_shape), T("f64", stat), T("f64", stat, low=0.5, high=2),
         T("f64", norm) if weight else None, T("f64", norm) if bias else None],
        {"normalized_shape": norm, "output_mask": mask},
        lambda g, x, m, r, w, b: A.native_layer_norm_backward(g, x, norm, m, r, w, b, [bool(v) for v in mask]),
        id=id, num_outputs=3, skip_outputs=[i for i in range(3) if not mask[i]])


layer_norm([2, 3, 8], [8], id="last_dim")
layer_norm([4, 3, 5], [3, 5], id="two_dims")
layer_norm([6, 16], [16], weight=True, bias=False, id="no_bias")
layer_norm([3, 7], [7], weight=False, bias=False, id="no_affine")
layer_norm([0, 4], [4], id="empty_rows")


# ---- native_batch_norm_backward ----------------------------------------------------------
def batch_norm(x_shape, train, weight=True, id=""):
    c = [x_shape[1]]
    mask = [1, int(weight), int(weight)]
    add("aten.native_batch_norm_backward",
        [T("f64", x_shape), T("f64", x_shape), T("f64", c) if weight else None, T("f64", c),
         T("f64", c, low=0.5, high=2), T("f64", c) if train else None, T("f64", c, low=0.5, high=2) if train else None],
        {"train": train, "eps": 1e-5, "output_mask": mask},
        lambda g, x, w, rm, rv, sm, si: A.native_batch_norm_backward(g, x, w, rm, rv, sm, si, train, 1e-5,
                                                                    [bool(v) for v in mask]),
        id=id, num_outputs=3, skip_outputs=[i for i in range(3) if not mask[i]])


batch_norm([4, 3, 5, 5], True, id="train_2d")
batch_norm([4, 3, 5, 5], False, id="eval_2d")
batch_norm([8, 5], True, id="train_1d_no_spatial")
batch_norm([2, 4, 6], True, weight=False, id="train_no_weight")


# ---- convolution_backward ----------------------------------------------------------------
def conv(x_shape, w_shape, stride, padding, dilation, transposed=False, output_padding=None, groups=1, bias=True, id=""):
    output_padding = output_padding or [0] * len(stride)
    y = shape_of(lambda x, w: A.convolution(x, w, None, stride, padding, dilation, transposed, output_padding, groups),
                 x_shape, w_shape)
    bias_sizes = [y[1]] if bias else None
    add("aten.convolution_backward", [T("f64", y), T("f64", x_shape), T("f64", w_shape)],
        {"bias_sizes": bias_sizes, "stride": stride, "padding": padding, "dilation": dilation,
         "transposed": transposed, "output_padding": output_padding, "groups": groups, "output_mask": [1, 1, 1]},
        lambda g, x, w: A.convolution_backward(g, x, w, bias_sizes, stride, padding, dilation, transposed,
                                               output_padding, groups, [True, True, True]),
        id=id, num_outputs=3)


conv([2, 3, 7, 6], [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], id="2d")
conv([2, 4, 7, 6], [6, 2, 3, 3], [2, 1], [1, 0], [1, 2], groups=2, id="2d_groups_stride_pad_dil")
conv([1, 3, 8, 8], [3, 1, 3, 3], [2, 2], [1, 1], [1, 1], groups=3, bias=False, id="depthwise_nobias")
conv([2, 3, 10], [5, 3, 4], [3], [2], [2], id="1d")
conv([1, 2, 4, 5, 3], [3, 2, 2, 3, 2], [1, 2, 1], [1, 1, 0], [1, 1, 1], id="3d")
conv([2, 4, 3, 3], [4, 3, 3, 3], [2, 2], [1, 1], [1, 1], transposed=True, output_padding=[1, 1], groups=2,
     id="2d_transposed_groups")
conv([1, 2, 5], [2, 3, 3], [3], [1], [2], transposed=True, output_padding=[1], id="1d_transposed_dil")
conv([1, 64, 14, 14], [64, 64, 3, 3], [1, 1], [1, 1], [1, 1], id="resnet_block_size")


# ---- pooling -----------------------------------------------------------------------------
def max_pool(x_shape, k, s, p, d, ceil, id=""):
    gen = torch.Generator().manual_seed(len(CASES))
    out, ind = A.max_pool2d_with_indices(torch.randn(x_shape, generator=gen, dtype=torch.float64), k, s, p, d, ceil)
    add("aten.max_pool2d_with_indices_backward",
        [T("f64", list(out.shape)), T("f64", x_shape), T("i64", list(ind.shape), values=ind.flatten().tolist())],
        {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil},
        lambda g, x, i: A.max_pool2d_with_indices_backward(g, x, k, s, p, d, ceil, i), id=id)


max_pool([2, 3, 8, 8], [3, 3], [2, 2], [1, 1], [1, 1], False, id="resnet_stem")
max_pool([2, 3, 7, 7], [3, 2], [2, 2], [1, 1], [1, 1], True, id="ceil")
max_pool([3, 9, 9], [2, 2], [1, 1], [0, 1], [2, 2], False, id="3d_dilated_overlap")
max_pool([1, 2, 6, 6], [2, 2], [], [0, 0], [1, 1], False, id="stride_default")


def avg_pool(x_shape, k, s, p, ceil, cip, div, id=""):
    y = shape_of(lambda x: A.avg_pool2d(x, k, s, p, ceil, cip, div), x_shape)
    add("aten.avg_pool2d_backward", [T("f64", y), T("f64", x_shape)],
        {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip,
         "divisor_override": div},
        lambda g, x: A.avg_pool2d_backward(g, x, k, s, p, ceil, cip, div), id=id)


for ceil in [False, True]:
    for cip in [False, True]:
        avg_pool([2, 3, 7, 7], [3, 2], [2, 3], [1, 1], ceil, cip, None, id=f"ceil{int(ceil)}_cip{int(cip)}")
avg_pool([2, 3, 7, 7], [3, 3], [2, 2], [1, 1], True, False, 5, id="divisor_override")
avg_pool([3, 6, 6], [2], [], [0], False, True, None, id="3d_stride_default")


def adaptive(x_shape, out_hw, id=""):
    y = shape_of(lambda x: A._adaptive_avg_pool2d(x, out_hw), x_shape)
    add("aten._adaptive_avg_pool2d_backward", [T("f64", y), T("f64", x_shape)], {},
        lambda g, x: A._adaptive_avg_pool2d_backward(g, x), id=id)


adaptive([2, 3, 7, 7], [1, 1], id="global")
adaptive([2, 3, 7, 7], [3, 2], id="uneven")
adaptive([3, 5, 4], [9, 6], id="3d_upsample")


# ---- dropout, select, slice --------------------------------------------------------------
add("aten.native_dropout_backward", [T("f64", [3, 4]), T("bool", [3, 4])], {"scale": 1.25},
    lambda g, m: A.native_dropout_backward(g, m, 1.25))
add("aten.native_dropout_backward", [T("f64", [4], values=[1.0, float("nan"), float("inf"), -2.0]),
                                     T("bool", [4], values=[True, False, False, True])], {"scale": 2.0},
    lambda g, m: A.native_dropout_backward(g, m, 2.0), id="nan_inf_dropped")

add("aten.select_backward", [T("f64", [2, 4])], {"input_sizes": [2, 3, 4], "dim": 1, "index": -1},
    lambda g: A.select_backward(g, [2, 3, 4], 1, -1))
add("aten.select_backward", [T("i64", [3])], {"input_sizes": [2, 3], "dim": 0, "index": 1},
    lambda g: A.select_backward(g, [2, 3], 0, 1), id="i64")

INT64_MAX = 2**63 - 1
for start, end, step in [(1, INT64_MAX, 1), (-3, INT64_MAX, 2), (0, 4, 3), (-100, 2, 1), (4, 2, 1)]:
    length = len(range(5)[start:end:step])
    add("aten.slice_backward", [T("f64", [2, length, 3])],
        {"input_sizes": [2, 5, 3], "dim": 1, "start": start, "end": end, "step": step},
        lambda g, s=start, e=end, st=step: A.slice_backward(g, [2, 5, 3], 1, s, e, st), id=f"{start}_{end}_{step}")


# ---- _scaled_dot_product_flash_attention_for_cpu_backward --------------------------------
def flash(b, h, l, s, e, causal, mask=None, scale=None, id=""):
    gen = torch.Generator().manual_seed(len(CASES))
    q, k, v = (torch.randn(shape, generator=gen, dtype=torch.float64) for shape in ([b, h, l, e], [b, h, s, e], [b, h, s, e]))
    m = None if mask is None else torch.randn(mask, generator=gen, dtype=torch.float64)
    out, lse = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=m, scale=scale)

    def lit(t):
        return T("f64", list(t.shape), values=t.flatten().tolist())

    add("aten._scaled_dot_product_flash_attention_for_cpu_backward",
        [T("f64", [b, h, l, e]), lit(q), lit(k), lit(v), lit(out), lit(lse), None if m is None else lit(m)],
        {"dropout_p": 0.0, "is_causal": causal, "scale": scale},
        lambda go, q_, k_, v_, o_, lse_, m_: A._scaled_dot_product_flash_attention_for_cpu_backward(
            go, q_, k_, v_, o_, lse_, 0.0, causal, attn_mask=m_, scale=scale),
        id=id, num_outputs=3)


flash(2, 3, 5, 6, 4, False, id="plain")
flash(2, 3, 7, 7, 8, True, id="causal")
flash(1, 2, 5, 6, 4, True, id="causal_rectangular")
flash(2, 2, 4, 5, 3, False, mask=[4, 5], scale=0.3, id="float_mask_scale")
