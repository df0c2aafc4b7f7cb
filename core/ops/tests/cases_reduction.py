"""Torch-oracle cases for the reduction family: sum, mean, prod, amax/amin, max/min (whole and
.dim), argmax/argmin, var/std, any/all, cumsum and logsumexp over dim lists, negative dims,
keepdim, dtype= casts, NaN and infinities, ties, empty and zero-dim inputs."""
from __future__ import annotations

import torch

from oracle import Case, Raw, T

A = torch.ops.aten
CASES = []
NAN, INF = float("nan"), float("inf")
F32 = dict(rtol=1e-6, atol=1e-6)
TDT = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "i64": torch.int64, "i32": torch.int32,
       "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


def red(name, inputs, attrs=None, id="", **kw):
    """A case calling torch.ops.aten.<name> with the attributes as keyword arguments
    (dtype given as a name is passed to torch as the dtype and to the graph as Raw)."""
    attrs = dict(attrs or {})
    kwargs = dict(attrs)
    if "dtype" in attrs:
        kwargs["dtype"] = TDT[attrs["dtype"]]
        attrs["dtype"] = Raw(attrs["dtype"])
    base, _, overload = name.partition(".")
    fn = getattr(getattr(A, base), overload or "default")
    add("aten." + name, inputs, attrs, lambda x: fn(x, **kwargs), id=id, **kw)


SPECIAL_ROWS = [1.0, NAN, 3.0, -INF, -INF, 2.0, INF, 1.0, -0.0, 0.0, -0.0, 5.0]  # 4 rows of 3
TIES = [1.0, 3.0, 3.0, 2.0, 2.0, 2.0, -1.0, -5.0, -5.0, 0.0, 7.0, 7.0]

# ---- sum -------------------------------------------------------------------------------
red("sum.dim_IntList", [T("f64", [3, 4, 5])], {"dim": [1]})
red("sum.dim_IntList", [T("f64", [3, 4, 5])], {"dim": [-1, 0], "keepdim": True}, id="neg_dims_keepdim")
red("sum.dim_IntList", [T("f64", [3, 4])], {"dim": None}, id="none_all")
red("sum.dim_IntList", [T("f64", [3, 4])], {"dim": [], "keepdim": True}, id="empty_list_all_keepdim")
red("sum.dim_IntList", [T("i32", [4, 3], low=-1000000000, high=1000000000)], {"dim": [0]}, id="i32_to_i64")
red("sum.dim_IntList", [T("i32", [4, 3], low=-1000000000, high=1000000000)], {"dim": [0], "dtype": "i32"},
    id="i32_dtype_wraps")
red("sum.dim_IntList", [T("i8", [5, 2], values=[100] * 10)], {"dim": [0], "dtype": "i8"}, id="i8_wraps")
red("sum.dim_IntList", [T("bool", [3, 5])], {"dim": [1]}, id="bool_to_i64")
red("sum.dim_IntList", [T("f32", [4, 6])], {"dim": [1], "dtype": "f64"}, id="f32_dtype_f64")
red("sum.dim_IntList", [T("f64", [4], values=[1.7, 300.0, -2.9, 0.5])], {"dim": [0], "dtype": "i8"},
    id="f64_dtype_i8_casts_first")
red("sum.dim_IntList", [T("f64", [0, 3])], {"dim": [0]}, id="empty")
red("sum.dim_IntList", [T("f64", [12], values=SPECIAL_ROWS)], {"dim": [0]}, id="specials")
red("sum.dim_IntList", [T("f64", [])], {"dim": [0], "keepdim": True}, id="zero_dim")
red("sum", [T("f64", [3, 4])])
red("sum", [T("i64", [2, 3])], id="i64")
red("sum", [T("u8", [6], low=0, high=250)], {"dtype": "u8"}, id="u8_dtype_wraps")

# ---- mean ------------------------------------------------------------------------------
red("mean.dim", [T("f64", [3, 4, 5])], {"dim": [1, 2]})
red("mean.dim", [T("f64", [3, 4])], {"dim": [-1], "keepdim": True}, id="keepdim")
red("mean.dim", [T("f64", [3, 4])], {"dim": None}, id="all")
red("mean.dim", [T("i64", [3, 4])], {"dim": [0], "dtype": "f64"}, id="int_dtype_f64")
red("mean.dim", [T("f32", [3, 4])], {"dim": [1]}, id="f32", **F32)
red("mean.dim", [T("f64", [0, 2])], {"dim": [0]}, id="empty_nan")
red("mean", [T("f64", [2, 5])])
red("mean", [T("f16", [8])], {"dtype": "f32"}, id="f16_dtype_f32", **F32)

# ---- prod ------------------------------------------------------------------------------
red("prod.dim_int", [T("f64", [3, 4], low=0.5, high=1.5)], {"dim": 1})
red("prod.dim_int", [T("f64", [3, 4], low=0.5, high=1.5)], {"dim": -2, "keepdim": True}, id="keepdim")
red("prod.dim_int", [T("i32", [3, 5], low=-9, high=9)], {"dim": 1}, id="i32_to_i64")
red("prod.dim_int", [T("i32", [3], values=[1048576, 1048576, 3])], {"dim": 0, "dtype": "i32"}, id="i32_dtype_wraps")
red("prod.dim_int", [T("f64", [2, 0])], {"dim": 1}, id="empty_one")
red("prod.dim_int", [T("f64", [12], values=SPECIAL_ROWS)], {"dim": 0}, id="specials")
red("prod", [T("f64", [3, 3], low=0.5, high=2)])
red("prod", [T("bool", [5])], id="bool_to_i64")

# ---- amax / amin / max / min -------------------------------------------------------------
for name in ["amax", "amin"]:
    red(name, [T("f64", [3, 4, 5])], {"dim": [0, 2]})
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": [1]}, id="specials")
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": [0], "keepdim": True}, id="specials_cols")
    red(name, [T("f64", [3, 4])], {}, id="all_dims")
    red(name, [T("i32", [3, 4])], {"dim": [-1]}, id="i32")
    red(name, [T("bool", [3, 4])], {"dim": [1]}, id="bool")
    red(name, [T("u8", [2, 3], low=0, high=255)], {"dim": [0, 1], "keepdim": True}, id="u8_keepdim")
    red(name, [T("f64", [0, 3])], {"dim": [1]}, id="empty_other_dim")
for name in ["max", "min"]:
    red(name, [T("f64", [3, 4])])
    red(name, [T("f64", [12], values=SPECIAL_ROWS)], id="specials")
    red(name, [T("i64", [5])], id="i64")

# ---- max.dim / min.dim / argmax / argmin -------------------------------------------------
for name in ["max.dim", "min.dim"]:
    red(name, [T("f64", [3, 4, 5])], {"dim": 1}, num_outputs=2)
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": 1}, id="specials", num_outputs=2)
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": 0, "keepdim": True}, id="specials_cols", num_outputs=2)
    red(name, [T("f64", [4, 3], values=TIES)], {"dim": -1}, id="ties_first", num_outputs=2)
    red(name, [T("i32", [4, 3], values=[int(v) for v in TIES])], {"dim": 1}, id="i32_ties", num_outputs=2)
    red(name, [T("bool", [3, 4])], {"dim": 1}, id="bool", num_outputs=2)
    red(name, [T("f64", [])], {"dim": 0, "keepdim": True}, id="zero_dim", num_outputs=2)
    red(name, [T("f64", [0, 3])], {"dim": 1}, id="empty_other_dim", num_outputs=2)
for name in ["argmax", "argmin"]:
    red(name, [T("f64", [3, 4])])
    red(name, [T("f64", [3, 4])], {"keepdim": True}, id="all_keepdim")
    red(name, [T("f64", [3, 4, 5])], {"dim": 1}, id="dim")
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": 1, "keepdim": True}, id="specials")
    red(name, [T("f64", [4, 3], values=TIES)], {"dim": 1}, id="ties_first")
    red(name, [T("f64", [12], values=TIES)], {}, id="flat_ties")
    red(name, [T("u8", [3, 4], low=0, high=4)], {"dim": 0}, id="u8")
    red(name, [T("f64", [])], {}, id="zero_dim")

# ---- var / std ---------------------------------------------------------------------------
for name in ["var.correction", "std.correction"]:
    red(name, [T("f64", [4, 5])], {"dim": [1]})
    red(name, [T("f64", [4, 5])], {}, id="all")
    red(name, [T("f64", [3, 4, 5])], {"dim": [0, 2], "keepdim": True, "correction": 0}, id="population_keepdim")
    red(name, [T("f64", [4, 5])], {"dim": [-1], "correction": 2.5}, id="float_correction")
    red(name, [T("f64", [2, 3])], {"dim": [1], "correction": 5}, id="correction_above_n")
    red(name, [T("f64", [3, 1])], {"dim": [1]}, id="single_element_nan")
    red(name, [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": [1]}, id="specials")
    red(name, [T("f32", [4, 6])], {"dim": [1]}, id="f32", **F32)

# ---- any / all ---------------------------------------------------------------------------
ZEROS = [0.0, NAN, 0.0, -0.0, 1.0, 2.0, 0.0, 0.0, -0.0, INF, 3.0, -1.0]
for name in ["any", "all"]:
    red(name + ".dim", [T("f64", [4, 3], values=ZEROS)], {"dim": 1})
    red(name + ".dim", [T("f64", [4, 3], values=ZEROS)], {"dim": 0, "keepdim": True}, id="keepdim")
    red(name + ".dim", [T("bool", [3, 4])], {"dim": -1}, id="bool")
    red(name + ".dim", [T("u8", [3, 4], low=0, high=2)], {"dim": 1}, id="u8_result")
    red(name + ".dim", [T("i32", [0, 3])], {"dim": 0}, id="empty")
    red(name, [T("f64", [4, 3], values=ZEROS)])
    red(name, [T("bool", [5])], id="bool")

# ---- cumsum / logsumexp ------------------------------------------------------------------
red("cumsum", [T("f64", [3, 4])], {"dim": 1})
red("cumsum", [T("f64", [3, 4])], {"dim": -2}, id="neg_dim")
red("cumsum", [T("f64", [12], values=SPECIAL_ROWS)], {"dim": 0}, id="specials")
red("cumsum", [T("i32", [5])], {"dim": 0}, id="i32_to_i64")
red("cumsum", [T("i8", [4], values=[100, 100, 100, -50])], {"dim": 0, "dtype": "i8"}, id="i8_wraps")
red("cumsum", [T("bool", [6])], {"dim": 0}, id="bool")
red("cumsum", [T("i32", [2, 3])], {"dim": 1, "dtype": "f64"}, id="int_dtype_f64")
red("cumsum", [T("f64", [])], {"dim": 0}, id="zero_dim")
red("logsumexp", [T("f64", [3, 4])], {"dim": [1]})
red("logsumexp", [T("f64", [3, 4, 2], low=-800, high=800)], {"dim": [0, 2], "keepdim": True}, id="large_keepdim")
red("logsumexp", [T("f64", [4, 3], values=SPECIAL_ROWS)], {"dim": [1]}, id="specials")
red("logsumexp", [T("f64", [3, 2], values=[-INF, -INF, INF, 1.0, INF, -INF])], {"dim": [-1]}, id="infinities")
red("logsumexp", [T("i64", [2, 3])], {"dim": [1]}, id="int_to_f32", **F32)
red("logsumexp", [T("f64", [0, 2])], {"dim": [0]}, id="empty")

# ---- decomposition paths (prim reduction) ---------------------------------------------------
red("cumsum", [T("f64", [2, 5, 3])], {"dim": 1}, id="middle_dim_3d")
red("cumsum", [T("f64", [6], values=[1.0, INF, 2.0, NAN, 3.0, -INF])], {"dim": 0}, id="inf_nan_stay_later")
red("mean.dim", [T("f16", [4, 6])], {"dim": [1]}, id="f16", rtol=1e-3, atol=1e-3)
red("var.correction", [T("f16", [3, 8])], {"dim": [1]}, id="f16", rtol=2e-3, atol=2e-3)
red("logsumexp", [T("f64", [2, 3], values=[-INF, -INF, -INF, NAN, 1.0, 2.0])], {"dim": [1], "keepdim": True},
    id="all_neg_inf_and_nan_rows")
red("all.dim", [T("f64", [0, 3])], {"dim": 0}, id="empty_true")
red("argmin", [T("i64", [2, 3])], {"dim": None, "keepdim": True}, id="none_keepdim")
red("min.dim", [T("f64", [2, 3, 4])], {"dim": 0}, id="dim0", num_outputs=2)
