"""Torch-oracle cases for the pointwise family: unary math and activations, binary arithmetic
with every promotion tier (tensors, zero-dim tensors, scalars), division / remainder modes,
pow, comparisons, logical and bitwise ops, where, clamp, masked_fill, _to_copy, lerp, addcmul.

float64 inputs are compared at the default tolerance; float32 / float16 results (integer
inputs promoted to the default float, or reduced-precision inputs) at that precision, since
the reference computes in float64 and torch in the narrower type."""
from __future__ import annotations

import torch

from oracle import Case, Raw, T

A = torch.ops.aten
CASES = []
NAN, INF = float("nan"), float("inf")
SPECIALS = [0.0, -0.0, NAN, INF, -INF, 1.5, -2.5, 0.5]
F32 = dict(rtol=1e-6, atol=1e-6)
F16 = dict(rtol=2e-3, atol=1e-3)


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


def op(name):
    """torch.ops.aten.<name> ('abs' -> A.abs.default, 'add.Tensor' -> A.add.Tensor)."""
    base, _, overload = name.partition(".")
    return getattr(getattr(A, base), overload or "default")


def unary(name, inputs, attrs=None, id="", **kw):
    attrs = attrs or {}
    fn = op(name)
    add("aten." + name, inputs, attrs, lambda x: fn(x, **attrs), id=id, **kw)


def binary(name, inputs, attrs=None, id="", **kw):
    attrs = attrs or {}
    fn = op(name)
    if len(inputs) == 2:
        add("aten." + name, inputs, attrs, lambda a, b: fn(a, b, **attrs), id=id, **kw)
    else:  # .Scalar overloads: the scalar operand is an attribute ("other" / "exponent")
        add("aten." + name, inputs, attrs, lambda a: fn(a, **attrs), id=id, **kw)


# ---- unary math: integer inputs promote to f32 --------------------------------------------
DOMAINS = {
    "exp": (-3, 3), "expm1": (-3, 3), "log": (0.1, 10), "log2": (0.1, 10), "log10": (0.1, 10),
    "log1p": (-0.9, 5), "sqrt": (0, 10), "rsqrt": (0.1, 10), "sin": (-5, 5), "cos": (-5, 5),
    "tan": (-1.5, 1.5), "asin": (-1, 1), "acos": (-1, 1), "atan": (-5, 5), "sinh": (-3, 3),
    "cosh": (-3, 3), "tanh": (-3, 3), "asinh": (-5, 5), "acosh": (1, 10), "atanh": (-0.99, 0.99),
    "sigmoid": (-6, 6), "erf": (-3, 3), "reciprocal": (0.2, 5),
}
for name, (lo, hi) in DOMAINS.items():
    unary(name, [T("f64", [3, 4], low=lo, high=hi)])
    unary(name, [T("f64", [8], values=SPECIALS)], id="specials")
    unary(name, [T("i32", [5], low=-3, high=4)], id="i32_to_f32", **F32)
unary("exp", [T("bool", [4])], id="bool_to_f32", **F32)
unary("sin", [T("f32", [2, 3])], id="f32", **F32)
unary("sqrt", [T("f16", [6], low=0, high=4)], id="f16", **F16)
unary("tanh", [T("u8", [4], low=0, high=5)], id="u8", **F32)

# ---- same-dtype unary ops --------------------------------------------------------------
ROUNDING = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -0.0, 2.4999, NAN, -INF]
for name in ["abs", "neg", "floor", "ceil", "round", "trunc", "sign", "relu"]:
    unary(name, [T("f64", [3, 4], low=-5, high=5)])
    unary(name, [T("f64", [8], values=SPECIALS)], id="specials")
    unary(name, [T("i32", [6], values=[-2147483648, -7, -1, 0, 1, 2147483647])], id="i32_extremes")
for name in ["round", "floor", "ceil", "trunc"]:
    unary(name, [T("f64", [10], values=ROUNDING)], id="halves")
    unary(name, [T("f32", [10], values=ROUNDING)], id="halves_f32")
unary("abs", [T("i64", [2], values=[-9223372036854775808, -5])], id="i64_min")
unary("neg", [T("u8", [3], values=[0, 1, 255])], id="u8_wraps")
unary("neg", [T("i8", [3], values=[-128, 127, 0])], id="i8_wraps")
unary("sign", [T("bool", [4])], id="bool")
unary("relu", [T("f16", [6])], id="f16", **F16)

# ---- activations -----------------------------------------------------------------------
unary("gelu", [T("f64", [4, 5])])
unary("gelu", [T("f64", [8], values=SPECIALS)], id="specials")
unary("gelu", [T("f64", [4, 5])], {"approximate": "tanh"}, id="tanh")
unary("gelu", [T("f64", [8], values=SPECIALS)], {"approximate": "tanh"}, id="tanh_specials")
unary("gelu", [T("f32", [16])], id="f32", **F32)
unary("silu", [T("f64", [4, 5], low=-8, high=8)])
unary("silu", [T("f64", [8], values=SPECIALS)], id="specials")
unary("hardtanh", [T("f64", [4, 5], low=-3, high=3)])
unary("hardtanh", [T("f64", [8], values=SPECIALS)], {"min_val": -0.5, "max_val": 2.0}, id="specials")
unary("hardtanh", [T("f64", [6], low=-3, high=3)], {"min_val": 2.0, "max_val": 1.0}, id="min_above_max")
unary("hardtanh", [T("i32", [8])], {"min_val": -1.5, "max_val": 2.5}, id="i32_float_bounds")
unary("hardtanh", [T("u8", [6], low=0, high=9)], {"min_val": 2, "max_val": 5}, id="u8")
unary("leaky_relu", [T("f64", [4, 5])])
unary("leaky_relu", [T("f64", [8], values=SPECIALS)], {"negative_slope": -0.5}, id="specials")
unary("leaky_relu", [T("f32", [10])], {"negative_slope": 0.2}, id="f32", **F32)

# ---- predicates and bitwise_not ------------------------------------------------------------
for name in ["logical_not", "isnan", "isinf"]:
    unary(name, [T("f64", [8], values=SPECIALS)])
    unary(name, [T("i32", [5], values=[0, 1, -1, 7, 0])], id="i32")
unary("logical_not", [T("bool", [5])], id="bool")
unary("isinf", [T("f16", [4], values=[INF, -INF, 65504.0, NAN])], id="f16")
unary("bitwise_not", [T("i32", [6])])
unary("bitwise_not", [T("u8", [4], values=[0, 5, 200, 255])], id="u8")
unary("bitwise_not", [T("bool", [4], values=[True, False, True, False])], id="bool")
unary("bitwise_not", [T("i64", [2], values=[-9223372036854775808, 0])], id="i64")

# ---- add / sub / rsub / mul ------------------------------------------------------------
binary("add.Tensor", [T("f64", [3, 1]), T("f64", [4])], {"alpha": 2})
binary("add.Tensor", [T("f64", [2, 3]), T("f64", [2, 3])], {"alpha": -0.5}, id="float_alpha")
binary("add.Tensor", [T("i32", [4], values=[2147483647, -2147483648, 5, 0]), T("i32", [4], values=[1, -1, 7, 0])],
       {}, id="i32_wraps")
binary("add.Tensor", [T("i32", [2, 3]), T("f32", [3])], {}, id="i32_f32", **F32)
binary("add.Tensor", [T("u8", [4], low=0, high=250), T("i8", [4])], {}, id="u8_i8_to_i16")
binary("add.Tensor", [T("bool", [5]), T("bool", [5])], {"alpha": True}, id="bool_bool")
binary("add.Tensor", [T("i32", [3]), T("f64", [])], {}, id="zero_dim_f64")
binary("add.Tensor", [T("f16", [4]), T("f64", [])], {}, id="f16_zero_dim_f64", **F16)
binary("add.Tensor", [T("i64", [3]), T("i32", [])], {"alpha": 3}, id="zero_dim_same_category")
binary("add.Tensor", [T("f64", [0, 3]), T("f64", [3])], {}, id="empty")
binary("add.Scalar", [T("i32", [5])], {"other": 2.5}, id="int_float_scalar", **F32)
binary("add.Scalar", [T("u8", [3], values=[0, 200, 255])], {"other": 300}, id="u8_wraps_scalar")
binary("add.Scalar", [T("bool", [4])], {"other": 2}, id="bool_int_scalar")
binary("add.Scalar", [T("f64", [2, 2])], {"other": 1.5, "alpha": 2}, id="alpha")
binary("sub.Tensor", [T("f64", [2, 3]), T("f64", [2, 1])])
binary("sub.Tensor", [T("i64", [2], values=[-9223372036854775808, 5]), T("i64", [2], values=[1, 7])], {"alpha": 2},
       id="i64_wraps")
binary("sub.Scalar", [T("i32", [4])], {"other": 10, "alpha": 2}, id="int")
binary("sub.Scalar", [T("f64", [4])], {"other": 0.25}, id="float")
binary("rsub.Scalar", [T("f64", [2, 2])], {"other": 10, "alpha": 3})
binary("rsub.Scalar", [T("i32", [4])], {"other": 1.5}, id="int_float_other", **F32)
binary("mul.Tensor", [T("f64", [2, 1, 3]), T("f64", [4, 1])])
binary("mul.Tensor", [T("i8", [3], values=[100, -128, 7]), T("i8", [3], values=[3, -1, -9])], {}, id="i8_wraps")
binary("mul.Tensor", [T("bool", [4]), T("f32", [4])], {}, id="bool_f32")
binary("mul.Scalar", [T("f64", [3])], {"other": -0.0}, id="neg_zero")
binary("mul.Scalar", [T("i64", [3])], {"other": True}, id="bool_scalar")

# 16-bit floats: add / sub / remainder / pow cast a scalar to f16 (1.0004 -> 1.0), mul and div
# keep it in float32; both give exact f16 results here, so compare tightly.
H = dict(rtol=1e-6, atol=0)
binary("add.Scalar", [T("f16", [2], values=[0.5, 1000.0])], {"other": 1.0004}, id="f16_scalar_cast", **H)
binary("sub.Scalar", [T("f16", [2], values=[0.5, 1000.0])], {"other": 1.0004}, id="f16_scalar_cast", **H)
binary("add.Tensor", [T("f16", [2], values=[0.0, 0.0]), T("f16", [2], values=[1000.0, 3.0])], {"alpha": 1.0004},
       id="f16_alpha_cast", **H)
binary("mul.Scalar", [T("f16", [2], values=[1000.0, 3.0])], {"other": 1.0004}, id="f16_scalar_f32", **H)
binary("mul.Tensor", [T("f16", [2], values=[1000.0, 3.0]), T("f64", [], values=[1.0004])], id="f16_zero_dim_f32", **H)
binary("div.Scalar", [T("f16", [2], values=[1000.0, 3.0])], {"other": 1.0004}, id="f16_scalar_f32", **H)
binary("div.Tensor_mode", [T("f16", [2], values=[1000.0, 3.0]), T("f64", [], values=[1.0004])],
       {"rounding_mode": "floor"}, id="f16_zero_dim_f32", **H)
binary("remainder.Scalar", [T("f16", [2], values=[1000.0, 3.0])], {"other": 1.0004}, id="f16_scalar_cast", **H)
binary("pow.Tensor_Scalar", [T("f16", [2], values=[1000.0, 3.0])], {"exponent": 1.0004}, id="f16_scalar_cast", **H)

# ---- division ------------------------------------------------------------------------
DIV_A = [7.0, -7.0, 7.0, -7.0, 0.0, 1.0, 5.0, -1.0, 1.0, -1.0, 0.0, INF, NAN, 1e300]
DIV_B = [2.0, 2.0, -2.0, -2.0, -1.0, -INF, INF, 3.0, 0.0, 0.0, 0.0, 2.0, 1.0, 1e-300]
binary("div.Tensor", [T("f64", [3, 4]), T("f64", [4])])
binary("div.Tensor", [T("f64", [14], values=DIV_A), T("f64", [14], values=DIV_B)], id="specials")
binary("div.Tensor", [T("i32", [5], values=[7, -7, 1, 0, -3]), T("i32", [5], values=[2, 2, 0, 0, 4])], id="int_to_f32",
       **F32)
for mode in [None, "trunc", "floor"]:
    mid = mode or "none"
    binary("div.Tensor_mode", [T("f64", [3, 4]), T("f64", [3, 4])], {"rounding_mode": mode}, id=mid)
    binary("div.Tensor_mode", [T("f64", [14], values=DIV_A), T("f64", [14], values=DIV_B)], {"rounding_mode": mode},
           id=mid + "_specials")
for mode in ["trunc", "floor"]:
    binary("div.Tensor_mode", [T("i64", [6], values=[7, -7, 7, -7, -9223372036854775807, 0]),
                               T("i64", [6], values=[2, 2, -2, -2, 3, -5])], {"rounding_mode": mode}, id=mode + "_i64")
    binary("div.Tensor_mode", [T("i8", [3], values=[-128, 7, -7]), T("i8", [3], values=[-1, 2, 2])],
           {"rounding_mode": mode}, id=mode + "_i8")
    binary("div.Tensor_mode", [T("u8", [3], values=[200, 7, 0]), T("i32", [3], values=[-3, 2, 5])],
           {"rounding_mode": mode}, id=mode + "_u8_i32")
binary("div.Scalar", [T("f64", [2, 3])], {"other": -4})
binary("div.Scalar", [T("i32", [4])], {"other": 3}, id="int_to_f32", **F32)

# ---- pow -----------------------------------------------------------------------------
binary("pow.Tensor_Tensor", [T("f64", [3, 4], low=0.1, high=3), T("f64", [4], low=-2, high=2)])
binary("pow.Tensor_Tensor", [T("f64", [8], values=SPECIALS), T("f64", [8], values=[2.0, 0.5, 0.0, -1.0, 3.0, NAN, -0.5, 1e3])],
       id="specials")
binary("pow.Tensor_Tensor", [T("i32", [6], values=[2, -1, 1, 3, 2, 0]), T("i32", [6], values=[-1, -3, -5, 40, 31, 0])],
       id="i32_wraps")
binary("pow.Tensor_Tensor", [T("u8", [2], values=[2, 3]), T("u8", [2], values=[9, 6])], id="u8")
binary("pow.Tensor_Tensor", [T("i32", [4], low=1, high=5), T("f32", [4])], id="int_float", **F32)
for e in [2, 3, 0.5, -0.5, -1, -2, 2.5, 0, 1]:
    binary("pow.Tensor_Scalar", [T("f64", [8], values=SPECIALS)], {"exponent": e}, id=f"specials_{e}")
binary("pow.Tensor_Scalar", [T("f64", [3, 3], low=0.1, high=4)], {"exponent": 1.7}, id="random")
binary("pow.Tensor_Scalar", [T("i32", [3], values=[70000, -3, 5])], {"exponent": 2}, id="i32_wraps")
binary("pow.Tensor_Scalar", [T("i64", [4])], {"exponent": 3}, id="i64_cube")
binary("pow.Tensor_Scalar", [T("i32", [4], low=0, high=9)], {"exponent": 0.5}, id="int_sqrt_f32", **F32)
binary("pow.Tensor_Scalar", [T("bool", [4])], {"exponent": 2}, id="bool")

# ---- maximum / minimum / remainders / atan2 -----------------------------------------------
MM_A = [NAN, 1.0, -0.0, 2.0, -INF, 3.0]
MM_B = [1.0, NAN, -0.0, -2.0, INF, 3.0]
for name in ["maximum", "minimum"]:
    binary(name, [T("f64", [3, 4]), T("f64", [4])])
    binary(name, [T("f64", [6], values=MM_A), T("f64", [6], values=MM_B)], id="nan")
    binary(name, [T("i32", [5]), T("i64", [5])], id="int")
    binary(name, [T("i32", [4]), T("f16", [4])], id="i32_f16", **F16)
    binary(name, [T("bool", [4]), T("bool", [4])], id="bool")
REM_A = [7.0, -7.0, 7.0, -7.0, 1.0, -0.0, 5.0, INF, 5.5, -1e-20]
REM_B = [2.0, 2.0, -2.0, -2.0, -INF, 1.0, 0.0, 2.0, INF, 3.0]
for name in ["fmod.Tensor", "remainder.Tensor"]:
    binary(name, [T("f64", [3, 4], low=-10, high=10), T("f64", [4], low=0.5, high=3)])
    binary(name, [T("f64", [10], values=REM_A), T("f64", [10], values=REM_B)], id="specials")
    binary(name, [T("i32", [4], values=[7, -7, 7, -7]), T("i32", [4], values=[2, 2, -2, -2])], id="int")
    binary(name, [T("u8", [3], values=[200, 7, 9]), T("i8", [3], values=[-3, 2, 4])], id="u8_i8")
binary("remainder.Scalar", [T("i32", [6])], {"other": -3}, id="int")
binary("remainder.Scalar", [T("f64", [6], low=-5, high=5)], {"other": 1.5}, id="float")
binary("remainder.Scalar", [T("i32", [6])], {"other": 1.5}, id="int_float_scalar", **F32)
binary("atan2", [T("f64", [3, 4]), T("f64", [4])])
binary("atan2", [T("f64", [8], values=SPECIALS), T("f64", [8], values=[-1.0, -0.0, 1.0, INF, -INF, 0.0, -INF, NAN])],
       id="specials")
binary("atan2", [T("i64", [4], values=[1, 0, 0, -1]), T("i64", [4], values=[0, -1, 1, 0])], id="int_to_f32", **F32)

# ---- bitwise and logical -------------------------------------------------------------
for name in ["bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor"]:
    binary(name, [T("i32", [3, 4], low=-100, high=100), T("i32", [4], low=-100, high=100)])
    binary(name, [T("bool", [6]), T("bool", [6])], id="bool")
    binary(name, [T("u8", [4], low=0, high=255), T("i8", [4], low=-128, high=127)], id="u8_i8")
    binary(name, [T("i8", [3], values=[5, -3, 127]), T("i64", [], values=[3])], id="zero_dim")
    binary(name, [T("bool", [3]), T("i32", [3])], id="bool_i32")
for name in ["logical_and", "logical_or", "logical_xor"]:
    binary(name, [T("f64", [8], values=SPECIALS), T("i32", [8], values=[0, 1, 0, 0, 2, 0, -1, 0])])
    binary(name, [T("bool", [3, 1]), T("bool", [4])], id="bool")
    binary(name, [T("u8", [5], low=0, high=2), T("f32", [5], values=[0.0, -0.0, 1.0, NAN, 0.0])], id="u8_f32")

# ---- comparisons ---------------------------------------------------------------------
CMP_A = [1.0, 2.0, NAN, -0.0, INF, -INF, 3.0, NAN]
CMP_B = [1.0, 3.0, 1.0, 0.0, INF, 0.0, 2.0, NAN]
for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    binary(name + ".Tensor", [T("f64", [3, 4]), T("f64", [4])])
    binary(name + ".Tensor", [T("f64", [8], values=CMP_A), T("f64", [8], values=CMP_B)], id="specials")
    binary(name + ".Tensor", [T("i32", [2, 1], values=[1, 2]), T("f32", [3], values=[1.0, 1.5, 2.0])], id="i32_f32")
    binary(name + ".Tensor", [T("i64", [2], values=[16777217, 3]), T("f32", [2], values=[16777216.0, 3.0])],
           id="i64_vs_f32_rounds")
    binary(name + ".Tensor", [T("bool", [4]), T("bool", [4])], id="bool")
    binary(name + ".Scalar", [T("f64", [8], values=CMP_A)], {"other": 1.0}, id="float")
    binary(name + ".Scalar", [T("i32", [6], low=-3, high=4)], {"other": 0.5}, id="int_float_scalar")
    binary(name + ".Scalar", [T("u8", [4], values=[44, 255, 0, 45])], {"other": 300}, id="u8_wraps_scalar")
    binary(name + ".Scalar", [T("f16", [3], values=[0.1, 0.2, 0.3])], {"other": 0.1}, id="f16_scalar_cast")
    binary(name + ".Scalar", [T("bool", [4])], {"other": True}, id="bool")

# ---- where / clamp / masked_fill -------------------------------------------------------
add("aten.where.self", [T("bool", [2, 3]), T("f64", [2, 3]), T("f64", [3])], {},
    lambda c, a, b: A.where.self(c, a, b))
add("aten.where.self", [T("bool", [3]), T("i32", [2, 1]), T("f32", [3])], {},
    lambda c, a, b: A.where.self(c, a, b), id="promote_broadcast")
add("aten.where.self", [T("bool", [4]), T("i64", [4]), T("f64", [])], {},
    lambda c, a, b: A.where.self(c, a, b), id="zero_dim_other")
add("aten.where.self", [T("u8", [4], low=0, high=2), T("f64", [4]), T("i8", [4])], {},
    lambda c, a, b: A.where.self(c, a, b), id="u8_condition")
add("aten.clamp", [T("f64", [3, 4], low=-3, high=3)], {"min": -1.0, "max": 1.5}, lambda x: A.clamp.default(x, -1.0, 1.5))
add("aten.clamp", [T("f64", [8], values=SPECIALS)], {"min": -0.0}, lambda x: A.clamp.default(x, -0.0), id="min_only")
add("aten.clamp", [T("f64", [8], values=SPECIALS)], {"max": 0.0}, lambda x: A.clamp.default(x, None, 0.0), id="max_only")
add("aten.clamp", [T("f64", [8], values=SPECIALS)], {"min": NAN}, lambda x: A.clamp.default(x, NAN), id="nan_min_only")
add("aten.clamp", [T("f64", [8], values=SPECIALS)], {"min": -1.0, "max": NAN}, lambda x: A.clamp.default(x, -1.0, NAN),
    id="nan_max_with_min")
add("aten.clamp", [T("f64", [8], values=SPECIALS)], {"min": -0.0, "max": 0.0}, lambda x: A.clamp.default(x, -0.0, 0.0),
    id="signed_zero_bounds")
add("aten.clamp", [T("f64", [6])], {"min": 1.0, "max": -1.0}, lambda x: A.clamp.default(x, 1.0, -1.0), id="min_above_max")
add("aten.clamp", [T("i32", [6])], {"min": 2.5}, lambda x: A.clamp.default(x, 2.5), id="int_float_min", **F32)
add("aten.clamp", [T("i32", [6])], {"min": -2, "max": 3}, lambda x: A.clamp.default(x, -2, 3), id="int")
add("aten.clamp", [T("u8", [4], values=[1, 5, 200, 0])], {"min": -1, "max": 3}, lambda x: A.clamp.default(x, -1, 3),
    id="u8_negative_wraps")
add("aten.clamp.Tensor", [T("f64", [3, 4]), T("f64", [4]), T("f64", [3, 1], low=0.5, high=2)], {},
    lambda x, lo, hi: A.clamp.Tensor(x, lo, hi))
add("aten.clamp.Tensor", [T("f64", [4], values=[1.0, 5.0, NAN, -1.0]), T("f64", [4], values=[2.0, NAN, 0.0, -INF]), None],
    {}, lambda x, lo, hi: A.clamp.Tensor(x, lo, None), id="min_only_nan")
add("aten.clamp.Tensor", [T("i32", [2, 3]), None, T("i64", [3])], {}, lambda x, lo, hi: A.clamp.Tensor(x, None, hi),
    id="max_only_int")
add("aten.clamp.Tensor", [T("i32", [2, 3]), T("f32", []), None], {}, lambda x, lo, hi: A.clamp.Tensor(x, lo, None),
    id="zero_dim_float_bound", **F32)
add("aten.masked_fill.Scalar", [T("f64", [2, 3]), T("bool", [2, 3])], {"value": NAN},
    lambda x, m: A.masked_fill.Scalar(x, m, NAN))
add("aten.masked_fill.Scalar", [T("i32", [3]), T("bool", [2, 1])], {"value": 2.7},
    lambda x, m: A.masked_fill.Scalar(x, m, 2.7), id="int_broadcast_truncates")
add("aten.masked_fill.Scalar", [T("u8", [4], low=0, high=9), T("bool", [4])], {"value": -1},
    lambda x, m: A.masked_fill.Scalar(x, m, -1), id="u8_negative_wraps")
add("aten.masked_fill.Scalar", [T("bool", [4]), T("bool", [4])], {"value": 5},
    lambda x, m: A.masked_fill.Scalar(x, m, 5), id="bool")

# ---- _to_copy --------------------------------------------------------------------------
CAST_VALUES = [1.7, -1.7, NAN, 300.0, -129.0, 1e20, -0.0, 2147483653.0, -3.0, 0.5]
for dt, tdt in [("i8", torch.int8), ("i16", torch.int16), ("i32", torch.int32), ("i64", torch.int64),
                ("u8", torch.uint8), ("bool", torch.bool), ("f16", torch.float16), ("bf16", torch.bfloat16),
                ("f32", torch.float32)]:
    add("aten._to_copy", [T("f64", [10], values=CAST_VALUES)], {"dtype": Raw(dt)},
        lambda x, tdt=tdt: A._to_copy.default(x, dtype=tdt), id="f64_to_" + dt)
add("aten._to_copy", [T("f64", [6], values=[65520.0, 0.1, 1.0001, -1e-8, 6e-8, 1e-5])], {"dtype": Raw("f16")},
    lambda x: A._to_copy.default(x, dtype=torch.float16), id="f16_rounding")
add("aten._to_copy", [T("i64", [4], values=[16777217, 300, -129, -9223372036854775808])], {"dtype": Raw("f32")},
    lambda x: A._to_copy.default(x, dtype=torch.float32), id="i64_to_f32")
add("aten._to_copy", [T("i64", [4], values=[16777217, 300, -129, 65535])], {"dtype": Raw("i8")},
    lambda x: A._to_copy.default(x, dtype=torch.int8), id="i64_to_i8_wraps")
add("aten._to_copy", [T("i32", [4], values=[0, 3, -1, 2])], {"dtype": Raw("bool")},
    lambda x: A._to_copy.default(x, dtype=torch.bool), id="i32_to_bool")
add("aten._to_copy", [T("bool", [4])], {"dtype": Raw("f64")}, lambda x: A._to_copy.default(x, dtype=torch.float64),
    id="bool_to_f64")
add("aten._to_copy", [T("f16", [5])], {"dtype": Raw("f64")}, lambda x: A._to_copy.default(x, dtype=torch.float64),
    id="f16_to_f64")
add("aten._to_copy", [T("i16", [2, 3])], {}, lambda x: A._to_copy.default(x), id="no_dtype")

# ---- lerp / addcmul --------------------------------------------------------------------
add("aten.lerp.Scalar", [T("f64", [3, 4]), T("f64", [4])], {"weight": 0.3}, lambda a, b: A.lerp.Scalar(a, b, 0.3))
add("aten.lerp.Scalar", [T("f64", [3, 4]), T("f64", [3, 4])], {"weight": 0.75}, lambda a, b: A.lerp.Scalar(a, b, 0.75),
    id="large_weight")
add("aten.lerp.Scalar", [T("f64", [8], values=SPECIALS), T("f64", [8], values=[1.0] * 8)], {"weight": -0.25},
    lambda a, b: A.lerp.Scalar(a, b, -0.25), id="specials_negative_weight")
add("aten.lerp.Scalar", [T("f32", [5]), T("f32", [5])], {"weight": 2}, lambda a, b: A.lerp.Scalar(a, b, 2), id="f32",
    **F32)
add("aten.addcmul", [T("f64", [3, 4]), T("f64", [4]), T("f64", [3, 1])], {"value": 0.5},
    lambda s, a, b: A.addcmul.default(s, a, b, value=0.5))
add("aten.addcmul", [T("i32", [4]), T("i32", [4]), T("i32", [4])], {"value": 2},
    lambda s, a, b: A.addcmul.default(s, a, b, value=2), id="int")
add("aten.addcmul", [T("i32", [3]), T("f32", [3]), T("i64", [3])], {}, lambda s, a, b: A.addcmul.default(s, a, b),
    id="mixed", **F32)
