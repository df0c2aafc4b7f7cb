"""Torch-oracle cases for the elementwise prims: unary math, arithmetic with integer wrapping,
division / remainder / fmod signs, pow, maximum / minimum with NaN and -0.0, bitwise ops,
comparisons, where and convert_element_type.

Prims are strict (one dtype, one shape, no scalars), so every case feeds same-typed tensors.
torch.ops.prims.* is the oracle where torch has the same prim with the same semantics; the
few integer cases torch cannot evaluate (INT_MIN / -1 raises SIGFPE) use exact Python
arithmetic (prim_refs). Integer division by zero is an error: test_prim_errors.py."""
from __future__ import annotations

import torch

import prim_refs as R
from oracle import Case, Raw, T

P = torch.ops.prims
CASES = []
NAN, INF = float("nan"), float("inf")
SPECIALS = [0.0, -0.0, NAN, INF, -INF, 1.5, -2.5, 0.5]
F32 = dict(rtol=1e-6, atol=1e-6)
F16 = dict(rtol=2e-3, atol=1e-3)
I32_MIN, I32_MAX = -2147483648, 2147483647
I64_MIN, I64_MAX = -9223372036854775808, 9223372036854775807


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


def prim(name, inputs, id="", fn=None, **kw):
    """prims.<name> on `inputs`, against torch.ops.prims.<name> (or `fn`)."""
    add("prims." + name, inputs, {}, fn or getattr(P, name), id=id, **kw)


def pair(dtype, a, b):
    return [T(dtype, [len(a)], values=a), T(dtype, [len(b)], values=b)]


# ---- unary floating math ------------------------------------------------------------------
DOMAINS = {
    "exp": (-3, 3), "expm1": (-3, 3), "log": (0.1, 10), "log1p": (-0.9, 5), "log2": (0.1, 10),
    "sqrt": (0, 10), "rsqrt": (0.1, 10), "sin": (-5, 5), "cos": (-5, 5), "tan": (-1.5, 1.5),
    "asin": (-1, 1), "acos": (-1, 1), "atan": (-5, 5), "sinh": (-3, 3), "cosh": (-3, 3),
    "tanh": (-3, 3), "asinh": (-5, 5), "acosh": (1, 10), "atanh": (-0.99, 0.99), "erf": (-3, 3),
}
for name, (lo, hi) in DOMAINS.items():
    prim(name, [T("f64", [3, 4], low=lo, high=hi)])
    prim(name, [T("f64", [8], values=SPECIALS)], id="specials", signed_zeros=True)
    prim(name, [T("f32", [5], low=lo, high=hi)], id="f32", **F32)
prim("log", [T("f64", [4], values=[0.0, -0.0, -1.0, 1.0])], id="zero_neg", signed_zeros=True)
prim("sqrt", [T("f64", [3], values=[-0.0, -1e-300, 4.0])], id="neg_zero", signed_zeros=True)
prim("rsqrt", [T("f64", [3], values=[0.0, -0.0, INF])], id="zeros", signed_zeros=True)
prim("atanh", [T("f64", [3], values=[1.0, -1.0, 2.0])], id="poles")
prim("exp", [T("f16", [6], low=-3, high=3)], id="f16", **F16)
prim("sqrt", [T("f16", [6], low=0, high=4)], id="f16", **F16)
prim("tanh", [T("f16", [6], low=-3, high=3)], id="f16", **F16)

# ---- unary numeric: abs, neg, sign and rounding -------------------------------------------
HALVES = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -0.0, 2.4999, NAN, -INF, 4503599627370495.5, -1e300]
for name in ["abs", "neg", "sign", "floor", "ceil", "round", "trunc"]:
    prim(name, [T("f64", [3, 4], low=-5, high=5)])
    prim(name, [T("f64", [8], values=SPECIALS)], id="specials", signed_zeros=True)
    prim(name, [T("i32", [6], values=[I32_MIN, -7, -1, 0, 1, I32_MAX])], id="i32_extremes")
    prim(name, [T("f32", [6], low=-5, high=5)], id="f32")
for name in ["floor", "ceil", "round", "trunc"]:
    prim(name, [T("f64", [len(HALVES)], values=HALVES)], id="halves", signed_zeros=True)
    prim(name, [T("f16", [6], values=[0.5, 1.5, 2.5, -0.5, -2.5, 1000.5])], id="halves_f16", signed_zeros=True)
    prim(name, [T("u8", [3], values=[0, 7, 255])], id="u8")
prim("abs", [T("i64", [3], values=[I64_MIN, -5, I64_MAX])], id="i64_min_wraps")
prim("abs", [T("i8", [3], values=[-128, -1, 127])], id="i8_min_wraps")
prim("neg", [T("u8", [3], values=[0, 1, 255])], id="u8_wraps")
prim("neg", [T("i8", [3], values=[-128, 127, 0])], id="i8_wraps")
prim("neg", [T("i64", [2], values=[I64_MIN, I64_MAX])], id="i64_wraps")
prim("sign", [T("f64", [4], values=[NAN, -NAN, -0.0, 1e-320])], id="nan_is_zero")
prim("sign", [T("u8", [3], values=[0, 1, 200])], id="u8")
prim("bitwise_not", [T("i32", [5], values=[0, -1, I32_MIN, I32_MAX, 12345])])
prim("bitwise_not", [T("u8", [3], values=[0, 1, 255])], id="u8")
prim("bitwise_not", [T("bool", [2], values=[True, False])], id="bool_is_logical_not")
prim("bitwise_not", [T("i64", [2], values=[I64_MIN, 7])], id="i64")

# ---- add, sub, mul: IEEE in floats, wrapping in integers ---------------------------------
for name in ["add", "sub", "mul"]:
    prim(name, [T("f64", [3, 4]), T("f64", [3, 4])])
    prim(name, pair("f64", [INF, -INF, NAN, 0.0, -0.0, 1e308], [-INF, INF, 1.0, -0.0, -0.0, 1e308]),
         id="specials", signed_zeros=True)
    prim(name, pair("i32", [I32_MAX, I32_MIN, -5, 65536, 7], [1, -1, 3, 65536, -9]), id="i32_wraps")
    prim(name, pair("i64", [I64_MAX, I64_MIN, 3037000500], [1, 1, 3037000500]), id="i64_wraps")
    prim(name, pair("u8", [250, 3, 16], [10, 5, 16]), id="u8_wraps")
    prim(name, pair("i8", [127, -128, 12], [1, 1, 11]), id="i8_wraps")
    prim(name, [T("f32", [5]), T("f32", [5])], id="f32", **F32)
    prim(name, [T("f16", [5]), T("f16", [5])], id="f16", **F16)
prim("add", [T("f64", [0, 3]), T("f64", [0, 3])], id="empty")
prim("add", [T("f64", []), T("f64", [])], id="0d")

# ---- div, remainder, fmod: signs, zeros, INT_MIN / -1 -------------------------------------
SIGNS_A, SIGNS_B = [-7, 7, -7, 7, 6, -6, 0, 1], [2, -2, -2, 2, 3, 3, -5, 9]
FA = [-7.0, 7.0, -7.0, 7.0, -0.0, 0.0, 5.0, -5.0, 1.0, -1.0, 0.0, INF, NAN, 5.0, -7.0, 7.5]
FB = [2.0, -2.0, -2.0, 2.0, 3.0, -3.0, INF, INF, 0.0, 0.0, 0.0, 2.0, 1.0, -INF, INF, -2.5]
for name in ["div", "remainder", "fmod"]:
    prim(name, [T("f64", [3, 4]), T("f64", [3, 4], low=0.5, high=3)])
    prim(name, pair("f64", FA, FB), id="specials", signed_zeros=True)
    prim(name, pair("f32", FA, FB), id="specials_f32", signed_zeros=True, **F32)
    for dt in ["i32", "i64", "i8"]:
        prim(name, pair(dt, SIGNS_A, SIGNS_B), id=dt + "_signs")
    prim(name, [T("i32", [4, 3]), T("i32", [4, 3], low=1, high=6)], id="i32_random")
    prim(name, [T("u8", [4], values=[7, 255, 0, 200]), T("u8", [4], values=[2, 16, 3, 201])], id="u8")
    prim(name, [T("f16", [5]), T("f16", [5], low=0.5, high=2)], id="f16", **F16)
prim("div", pair("i32", [I32_MIN, I32_MIN, I32_MAX], [-1, 1, -1]),
     fn=R.int_binary(R.trunc_div, "i32"), id="i32_min_by_minus_one_wraps")
prim("div", pair("i64", [I64_MIN, I64_MIN, -9], [-1, 2, 4]),
     fn=R.int_binary(R.trunc_div, "i64"), id="i64_min_by_minus_one_wraps")
prim("remainder", pair("i32", [I32_MIN, I32_MIN, -1], [-1, I32_MAX, I32_MIN]),
     fn=R.int_binary(lambda a, b: a % b, "i32"), id="i32_min_by_minus_one")
prim("fmod", pair("i64", [I64_MIN, I64_MIN, -1], [-1, I64_MAX, I64_MIN]),
     fn=R.int_binary(R.c_fmod, "i64"), id="i64_min_by_minus_one")

# ---- pow, atan2 --------------------------------------------------------------------------
prim("pow", [T("f64", [3, 4], low=0.1, high=3), T("f64", [3, 4], low=-2, high=2)])
prim("pow", pair("f64", [-8.0, -2.0, 0.0, 0.0, NAN, 1.0, INF, -INF, -0.0, -0.0, 2.0],
                 [1 / 3, 3.0, 0.0, -1.0, 0.0, NAN, -1.0, 3.0, 3.0, -3.0, 1024.0]),
     id="specials", signed_zeros=True)
prim("pow", pair("i32", [2, -2, 1, -1, 3, 0, 0, 7, -3], [-1, -3, -5, -3, 40, 0, 5, 2, 3]), id="i32_neg_exp_wraps")
prim("pow", pair("i64", [3, -1, 2, 10], [40, 1000001, 63, 19]), id="i64_wraps")
prim("pow", pair("u8", [2, 3, 0, 255], [7, 5, 0, 2]), id="u8_wraps")
prim("pow", [T("f32", [5], low=0.5, high=2), T("f32", [5], low=-2, high=2)], id="f32", **F32)
prim("atan2", [T("f64", [3, 4]), T("f64", [3, 4])])
prim("atan2", pair("f64", [0.0, -0.0, 0.0, -0.0, 1.0, INF, -INF, NAN, INF],
                   [0.0, 0.0, -0.0, -0.0, INF, -INF, INF, 1.0, INF]), id="specials", signed_zeros=True)
prim("atan2", [T("f32", [5]), T("f32", [5])], id="f32", **F32)

# ---- maximum, minimum: NaN wins, first operand on ties (-0.0 vs 0.0) ----------------------
for name in ["maximum", "minimum"]:
    prim(name, [T("f64", [3, 4]), T("f64", [3, 4])])
    prim(name, pair("f64", [NAN, 1.0, NAN, -0.0, 0.0, -INF, INF], [1.0, NAN, NAN, 0.0, -0.0, INF, 3.0]),
         id="nan_zero_inf", signed_zeros=True)
    prim(name, pair("f32", [NAN, 1.0, -0.0, 0.0], [2.0, NAN, 0.0, -0.0]), id="f32_nan", signed_zeros=True)
    prim(name, pair("f16", [NAN, 1.0, -2.0], [2.0, NAN, 3.0]), id="f16_nan")
    prim(name, pair("i64", [I64_MIN, I64_MAX, 9007199254740993], [I64_MAX, 0, 9007199254740992]), id="i64_exact")
    prim(name, pair("u8", [0, 255, 7], [255, 1, 7]), id="u8")
    prim(name, pair("bool", [True, True, False, False], [True, False, True, False]), id="bool")

# ---- bitwise ------------------------------------------------------------------------------
for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    prim(name, [T("i32", [3, 4], low=-100, high=100), T("i32", [3, 4], low=-100, high=100)])
    prim(name, pair("i64", [I64_MIN, -1, 0x0F0F], [-1, I64_MAX, 0x00FF]), id="i64")
    prim(name, pair("u8", [0xF0, 255, 0], [0x3C, 1, 0]), id="u8")
    prim(name, pair("bool", [True, True, False, False], [True, False, True, False]), id="bool")

# ---- comparisons: NaN compares false except ne; bool and integers exactly -----------------
for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    prim(name, [T("f64", [3, 4], low=-2, high=2), T("f64", [3, 4], low=-2, high=2)])
    prim(name, pair("f64", [NAN, 1.0, NAN, -0.0, INF, -INF, 2.0], [1.0, NAN, NAN, 0.0, INF, 3.0, 2.0]), id="specials")
    prim(name, pair("i64", [9007199254740993, I64_MIN, 5], [9007199254740992, I64_MIN, -5]), id="i64_exact")
    prim(name, pair("bool", [True, True, False, False], [True, False, True, False]), id="bool")
    prim(name, pair("u8", [0, 255, 9], [255, 0, 9]), id="u8")
    prim(name, pair("f16", [NAN, 1.0, 0.1], [NAN, 1.0, 0.2]), id="f16")

# ---- where --------------------------------------------------------------------------------
prim("where", [T("bool", [3, 4]), T("f64", [3, 4]), T("f64", [3, 4])])
prim("where", [T("bool", [4], values=[True, False, True, False]), T("f64", [4], values=[1.0, NAN, -0.0, INF]),
               T("f64", [4], values=[NAN, 2.0, 0.0, NAN])], id="nan_not_selected", signed_zeros=True)
prim("where", [T("bool", [5]), T("i64", [5], values=[I64_MIN] * 5), T("i64", [5], values=[I64_MAX] * 5)], id="i64")
prim("where", [T("bool", [2, 2]), T("bool", [2, 2]), T("bool", [2, 2])], id="bool")
prim("where", [T("bool", []), T("f16", []), T("f16", [])], id="0d_f16")


# ---- convert_element_type: the only cast --------------------------------------------------
def cvt(src, to, id, fn=None, **kw):
    dtype = R.TORCH_DTYPES[to]
    add("prims.convert_element_type", [src], {"dtype": Raw(to)},
        fn or (lambda x: P.convert_element_type(x, dtype)), id=id, **kw)


TO_INT = [NAN, 3.9, -3.9, 0.5, -0.5, 1e20, -1e20, INF, -INF, 300.0, -300.0, 200.5, 65535.7, 2147483647.9]
for to in ["i64", "i32", "i16", "i8", "u8", "bool"]:
    cvt(T("f64", [len(TO_INT)], values=TO_INT), to, f"f64_to_{to}_trunc_nan_range")
cvt(T("f32", [5], values=[NAN, 2.5, -2.5, 16777217.0, -0.0]), "i32", "f32_to_i32")
cvt(T("f16", [4], values=[NAN, 65504.0, -1.5, 0.0]), "i64", "f16_to_i64")
cvt(T("i64", [6], values=[I64_MIN, I64_MAX, 300, -129, 255, 0]), "i8", "i64_to_i8_wraps")
cvt(T("i64", [4], values=[-1, 256, 257, I64_MIN]), "u8", "i64_to_u8_wraps")
cvt(T("i32", [4], values=[-1, 65536, 32768, I32_MIN]), "i16", "i32_to_i16_wraps")
cvt(T("u8", [3], values=[0, 255, 128]), "i8", "u8_to_i8")
cvt(T("i32", [4], values=[0, -1, 2, I32_MIN]), "bool", "i32_to_bool")
cvt(T("bool", [2], values=[True, False]), "f32", "bool_to_f32")
cvt(T("bool", [2], values=[True, False]), "i64", "bool_to_i64")
cvt(T("i64", [4], values=[9007199254740993, I64_MAX, -3, 16777217]), "f64", "i64_to_f64_rounds")
cvt(T("i64", [3], values=[16777217, 16777219, -16777217]), "f32", "i64_to_f32_rounds")
cvt(T("i32", [4], values=[2049, 2051, 65519, 65520]), "f16", "i32_to_f16_rounds_overflows")
cvt(T("f64", [3, 4]), "f32", "f64_to_f32")
cvt(T("f64", [6], values=[1.0 + 2 ** -24, 1.0 + 3 * 2 ** -24, 1e39, -1e-46, 1e-45, NAN]), "f32", "f64_to_f32_ties",
    signed_zeros=True)
cvt(T("f32", [4], values=[0.1, NAN, -INF, -0.0]), "f64", "f32_to_f64", signed_zeros=True)
cvt(T("f16", [3], values=[0.1, 65504.0, 6e-8]), "f32", "f16_to_f32")
# float64 -> f16 / bf16 rounds through float32 first, as torch does, so values just above a
# halfway point (1 + 2^-11 + 2^-40) round down; compared with torch directly.
F16_EDGES = [0.1, 65504.0, 65519.99, 65520.0, 6e-8, 2e-8, -0.0, NAN, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11,
             1.0 + 2 ** -11 + 2 ** -40]
cvt(T("f64", [len(F16_EDGES)], values=F16_EDGES), "f16", "f64_to_f16_via_f32",
    signed_zeros=True)
BF16_EDGES = [0.1, 3.0e38, 3.4e38, 1e-40, -0.0, NAN, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -8 + 2 ** -40]
cvt(T("f64", [len(BF16_EDGES)], values=BF16_EDGES), "bf16", "f64_to_bf16_via_f32",
    signed_zeros=True)
cvt(T("f32", [3, 4]), "bf16", "f32_to_bf16")
cvt(T("f64", [3, 4]), "f16", "f64_to_f16")
