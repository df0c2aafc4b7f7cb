"""Torch-oracle cases for the data prims gather and scatter (every reduce mode, i32 and i64
indices) and the generators iota, full and rand. rand is our own counter-based generator, so
its oracle is a Python reimplementation of splitmix64 (prim_refs.uniform), bit for bit in
every floating dtype."""
from __future__ import annotations

import torch

import prim_refs as R
from oracle import Case, Raw, T

P = torch.ops.prims
CASES = []
NAN, INF = float("nan"), float("inf")
I32_MAX = 2147483647


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- gather -------------------------------------------------------------------------------
def gather(src, index, dim, id=""):
    add("prims.gather", [src, index], {"dim": dim}, lambda a, i: torch.gather(a, dim, i.long()), id=id)


gather(T("f64", [4, 3]), T("i64", [2, 3], values=[3, 0, 1, 0, 0, 3 - 1]), 0)
gather(T("f64", [3, 5]), T("i64", [3, 2], low=0, high=5), 1, id="dim1")
gather(T("i32", [4, 3]), T("i32", [4, 2], low=0, high=3), 1, id="i32_index_smaller")
gather(T("f64", [2, 3, 4]), T("i64", [2, 3, 6], low=0, high=4), 2, id="repeats")
gather(T("f64", [5]), T("i64", [0], values=[]), 0, id="empty_index")
gather(T("bool", [3, 2]), T("i64", [1, 2], values=[2, 1]), 0, id="bool")


# ---- scatter ------------------------------------------------------------------------------
def scatter(a, index, src, dim, reduce=None, id=""):
    attrs = {"dim": dim}
    if reduce is not None:
        attrs["reduce"] = reduce

    def fn(x, i, s):
        if reduce in (None, "none"):
            return torch.scatter(x, dim, i.long(), s)
        return torch.scatter_reduce(x, dim, i.long(), s, reduce, include_self=True)
    add("prims.scatter", [a, index, src], attrs, fn, id=id)


# Unique indices per destination column for "none" (the last write for duplicates is unspecified).
UNIQUE = T("i64", [2, 3], values=[0, 2, 1, 3, 0, 2])
scatter(T("f64", [4, 3]), UNIQUE, T("f64", [2, 3]), 0)
scatter(T("f64", [4, 3]), UNIQUE, T("f64", [2, 3]), 0, "none", id="none_explicit")
scatter(T("i32", [3, 4]), T("i32", [3, 2], values=[0, 3, 1, 2, 3, 0]), T("i32", [3, 5]), 1, id="i32_src_larger")
DUPS = T("i64", [3, 2], values=[0, 1, 0, 1, 2, 1])
for red in ["sum", "prod", "amax", "amin"]:
    scatter(T("f64", [3, 2]), DUPS, T("f64", [3, 2]), 0, red, id=red + "_duplicates")
    scatter(T("i64", [2, 4], low=-5, high=5), T("i64", [2, 3], values=[3, 3, 0, 1, 1, 1]), T("i64", [2, 3]), 1, red,
            id=red + "_i64")
scatter(T("f64", [3], values=[1.0, 2.0, 3.0]), T("i64", [3], values=[0, 0, 2]), T("f64", [3], values=[NAN, 5.0, -INF]),
        0, "amax", id="amax_nan")
scatter(T("f64", [3], values=[NAN, 2.0, 3.0]), T("i64", [2], values=[0, 1]), T("f64", [2], values=[1.0, NAN]),
        0, "amin", id="amin_nan_in_self_and_src")
scatter(T("i32", [2], values=[I32_MAX, 3]), T("i64", [2], values=[0, 0]), T("i32", [2], values=[1, 1]), 0, "sum",
        id="sum_i32_wraps")
scatter(T("f64", [4]), T("i64", [0], values=[]), T("f64", [0]), 0, "sum", id="empty_index")


# ---- iota ---------------------------------------------------------------------------------
def iota(length, start=None, step=None, dtype=None, id="", fn=None):
    attrs = {"length": length}
    for k, v in (("start", start), ("step", step)):
        if v is not None:
            attrs[k] = v
    if dtype is not None:
        attrs["dtype"] = Raw(dtype)
    tdt = R.TORCH_DTYPES[dtype or "i64"]
    add("prims.iota", [], attrs, fn or (lambda: P.iota(length, start=start or 0, step=1 if step is None else step,
                                                         dtype=tdt, device="cpu", requires_grad=False)), id=id)


iota(5)
iota(5, 3, -2, id="negative_step")
iota(4, -7, 0, "i32", id="zero_step_i32", fn=lambda: R.wrap([-7] * 4, "i32"))  # torch refuses step 0
iota(0, 5, 2, id="empty")
iota(6, 252, 1, "u8", id="u8_wraps", fn=lambda: R.wrap([252 + i for i in range(6)], "u8"))
iota(3, I32_MAX - 1, 1, "i32", id="i32_wraps")
iota(4, -9223372036854775807, -1, "i64", id="i64_wraps",
     fn=lambda: R.wrap([-9223372036854775807 - i for i in range(4)], "i64"))


# ---- full ---------------------------------------------------------------------------------
def full(shape, value, dtype, id="", fn=None):
    tdt = R.TORCH_DTYPES[dtype]
    add("prims.full", [], {"shape": shape, "value": value, "dtype": Raw(dtype)},
        fn or (lambda: P.full(shape, value, dtype=tdt, device="cpu", requires_grad=False)), id=id)


full([2, 3], 1.5, "f64")
full([4], -3, "i32", id="i32")
full([2], -1, "u8", id="u8_wraps")
full([3], 300, "i8", id="i8_wraps", fn=lambda: R.wrap([300] * 3, "i8"))  # torch raises
full([2], 0.1, "f16", id="f16_rounds")
full([2], 0.1, "bf16", id="bf16_rounds")
full([2], 1e300, "f32", id="f32_overflows_to_inf",  # torch raises
     fn=lambda: torch.full([2], INF, dtype=torch.float32))
full([], NAN, "f64", id="0d_nan")
full([2], -INF, "f32", id="neg_inf")
full([3], -0.0, "f64", id="neg_zero")
full([2, 2], True, "bool", id="bool")
full([2], 0.5, "bool", id="float_to_bool")
full([2], 2, "f64", id="int_value_f64")
full([0, 4], 7, "i64", id="empty")


# ---- rand ---------------------------------------------------------------------------------
def rand(shape, seed, offset=None, dtype=None, id=""):
    attrs = {"shape": shape, "seed": seed}
    if offset is not None:
        attrs["offset"] = offset
    if dtype is not None:
        attrs["dtype"] = Raw(dtype)
    add("prims.rand", [], attrs, lambda: R.rand(shape, seed, offset or 0, dtype or "f32"), id=id, rtol=0, atol=0)


rand([3, 4], 0)
rand([2, 5], 42, dtype="f64", id="f64")
rand([7], 7, 1000, "f64", id="offset")
rand([2, 3], -1, 5, "f16", id="f16_negative_seed")
rand([4, 4], 123456789, dtype="bf16", id="bf16")
rand([3], 9223372036854775807, 9223372036854775800, "f64", id="max_seed_large_offset")
rand([], 3, dtype="f64", id="0d")
rand([0, 2], 3, id="empty")
