"""Torch-oracle cases for the reduction prims: sum and prod in the input dtype (integers wrap;
torch's prims.sum promotes integers to int64, so the oracle is torch.sum(dtype=input dtype)),
amax / amin with NaN propagation, argmax / argmin (first extreme, first NaN wins, exact int64
comparison), reductions over no dims, all dims and empty dims."""
from __future__ import annotations

import torch

from oracle import Case, T

CASES = []
NAN, INF = float("nan"), float("inf")
F32 = dict(rtol=1e-6, atol=1e-6)
F16 = dict(rtol=2e-3, atol=2e-3)
I64_MIN, I64_MAX = -9223372036854775808, 9223372036854775807


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


def in_dtype(fn):
    """torch's reduction `fn` computed in the input's dtype (no integer promotion)."""
    def run(a, dims):
        if not dims:
            return a.clone()
        return fn(a, dims, a.dtype)
    return run


def prod_dims(a, dims, dtype):
    for d in sorted(dims, reverse=True):  # torch.prod takes one dim at a time
        a = torch.prod(a, d, dtype=dtype)
    return a


REDUCE = {
    "sum": in_dtype(lambda a, dims, dt: torch.sum(a, dims, dtype=dt)),
    "prod": in_dtype(lambda a, dims, dt: prod_dims(a, dims, dt)),
    "amax": lambda a, dims: torch.amax(a, dims) if dims else a.clone(),
    "amin": lambda a, dims: torch.amin(a, dims) if dims else a.clone(),
}


def reduce(name, src, dims, id="", **kw):
    fn = REDUCE[name]
    add("prims." + name, [src], {"dims": dims}, lambda a: fn(a, dims), id=id, **kw)


for name in ["sum", "prod", "amax", "amin"]:
    reduce(name, T("f64", [3, 4], low=0.5, high=1.5), [1])
    reduce(name, T("f64", [2, 3, 4], low=0.5, high=1.5), [0, 2], id="two_dims")
    reduce(name, T("f64", [2, 3], low=0.5, high=1.5), [0, 1], id="all_to_0d")
    reduce(name, T("f64", [2, 3]), [], id="no_dims")
    reduce(name, T("f64", [4], values=[1.0, NAN, -INF, 2.0]), [0], id="nan")
    reduce(name, T("i32", [3, 5]), [1], id="i32")
    reduce(name, T("f32", [4, 6]), [0], id="f32", **F32)
    reduce(name, T("f16", [3, 8], low=0.5, high=1.5), [1], id="f16", **F16)
for name in ["sum", "prod"]:
    reduce(name, T("f64", [3, 0]), [1], id="empty")
    reduce(name, T("i64", [0]), [0], id="empty_i64_to_0d")
reduce("sum", T("i8", [4], values=[100, 100, 100, -1]), [0], id="i8_wraps")
reduce("sum", T("u8", [3], values=[200, 100, 7]), [0], id="u8_wraps")
reduce("sum", T("i64", [2], values=[I64_MAX, 1]), [0], id="i64_wraps")
reduce("sum", T("f64", [3], values=[INF, -INF, 1.0]), [0], id="inf_minus_inf")
reduce("prod", T("i32", [3], values=[65536, 65536, 3]), [0], id="i32_wraps")
reduce("prod", T("f64", [3], values=[0.0, INF, 1.0]), [0], id="zero_times_inf")
for name in ["amax", "amin"]:
    reduce(name, T("f64", [2, 3], values=[NAN, 1.0, 2.0, 5.0, NAN, -1.0]), [1], id="nan_first_and_middle")
    reduce(name, T("f64", [2, 2], values=[INF, -INF, -INF, -INF]), [0, 1], id="infs")
    reduce(name, T("i64", [3], values=[I64_MIN, I64_MAX, 0]), [0], id="i64_extremes")
    reduce(name, T("u8", [2, 3], values=[0, 255, 7, 3, 3, 3]), [1], id="u8")
    reduce(name, T("bool", [2, 3], values=[True, False, False, False, False, False]), [1], id="bool")
    reduce(name, T("f64", [2, 0]), [0], id="empty_non_reduced_dim")


# ---- argmax, argmin -----------------------------------------------------------------------
def arg(name, src, dim, id=""):
    fn = getattr(torch, name)
    add("prims." + name, [src], {"dim": dim}, lambda a: fn(a, dim), id=id)


for name in ["argmax", "argmin"]:
    arg(name, T("f64", [3, 5]), 1)
    arg(name, T("f64", [4, 3, 2]), 1, id="middle_dim")
    arg(name, T("f64", [6], values=[1.0, 3.0, 3.0, -1.0, -1.0, 0.0]), 0, id="ties_first")
    arg(name, T("f64", [5], values=[1.0, NAN, 3.0, NAN, -INF]), 0, id="first_nan_wins")
    arg(name, T("f64", [3], values=[2.0, 1.0, NAN]), 0, id="nan_last")
    arg(name, T("f64", [2], values=[-0.0, 0.0]), 0, id="signed_zeros_tie")
    arg(name, T("i64", [3], values=[9007199254740992, 9007199254740993, 9007199254740992]), 0, id="i64_exact")
    arg(name, T("i32", [3, 4]), 0, id="i32")
    arg(name, T("u8", [4], values=[3, 255, 0, 255]), 0, id="u8")
    arg(name, T("f64", [5]), 0, id="to_0d")
    arg(name, T("f16", [2, 6]), 1, id="f16")
