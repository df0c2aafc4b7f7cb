"""Torch-oracle cases for the indexing family: index_select, gather, the scatter ops,
embedding, index.Tensor and index_put. Writes that collide use accumulating ops only
(PyTorch leaves the winner of colliding plain writes unspecified)."""
from __future__ import annotations

import torch

from oracle import Case, T

A = torch.ops.aten
CASES = []


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


NAN = float("nan")

# ---- reads ---------------------------------------------------------------------------
add("aten.index_select", [T("f64", [4, 3]), T("i64", [5], low=0, high=4)], {"dim": 0},
    lambda x, i: A.index_select.default(x, 0, i))
add("aten.index_select", [T("i32", [2, 3, 4]), T("i32", [2], values=[3, 0])], {"dim": -1},
    lambda x, i: A.index_select.default(x, -1, i), id="i32_index")
add("aten.index_select", [T("f64", [4, 3]), T("i64", [], values=[2])], {"dim": 0},
    lambda x, i: A.index_select.default(x, 0, i), id="0d_index")
add("aten.gather", [T("f64", [3, 4]), T("i64", [3, 6], low=0, high=4)], {"dim": 1}, lambda x, i: A.gather.default(x, 1, i))
add("aten.gather", [T("i64", [4, 3, 2]), T("i64", [2, 3, 1], low=0, high=4)], {"dim": 0},
    lambda x, i: A.gather.default(x, 0, i), id="dim0_smaller_index")
add("aten.gather", [T("f32", [5]), T("i64", [], values=[4])], {"dim": 0}, lambda x, i: A.gather.default(x, 0, i), id="0d")
add("aten.embedding", [T("f64", [10, 4]), T("i64", [2, 3], low=0, high=10)], {}, lambda w, i: A.embedding.default(w, i))
add("aten.embedding", [T("f32", [5, 3]), T("i32", [4], low=0, high=5)], {"padding_idx": 2},
    lambda w, i: A.embedding.default(w, i, 2), id="i32_padding_idx")
add("aten.index.Tensor", [T("f64", [5, 4, 3]), T("i64", [2, 1], low=-5, high=5), T("i64", [3], low=-4, high=4)], {},
    lambda x, i, j: A.index.Tensor(x, [i, j]))
add("aten.index.Tensor", [T("i64", [6, 2]), T("i32", [2, 2], low=-6, high=6)], {}, lambda x, i: A.index.Tensor(x, [i]),
    id="one_i32_index")
add("aten.index.Tensor", [T("f64", [3, 4]), T("i64", [0])], {}, lambda x, i: A.index.Tensor(x, [i]), id="empty_index")

# ---- writes --------------------------------------------------------------------------
add("aten.scatter.src", [T("f64", [3, 5]), T("i64", [2, 3], values=[4, 0, 2, 1, 3, 0]), T("f64", [2, 4])], {"dim": 1},
    lambda x, i, s: A.scatter.src(x, 1, i, s))
add("aten.scatter.src", [T("i64", [4, 2]), T("i64", [2, 2], values=[3, 0, 1, 2]), T("i64", [3, 2])], {"dim": 0},
    lambda x, i, s: A.scatter.src(x, 0, i, s), id="dim0")
add("aten.scatter.value", [T("f32", [3, 4]), T("i64", [3, 1], values=[0, 3, 1])], {"dim": 1, "value": -2.5},
    lambda x, i: A.scatter.value(x, 1, i, -2.5))
add("aten.scatter.value", [T("i64", [4]), T("i64", [2], values=[3, 1])], {"dim": 0, "value": 2.7},
    lambda x, i: A.scatter.value(x, 0, i, 2.7), id="int_float_value")
add("aten.scatter_add", [T("f64", [3, 5]), T("i64", [3, 6], low=0, high=5), T("f64", [3, 6])], {"dim": 1},
    lambda x, i, s: A.scatter_add.default(x, 1, i, s))
add("aten.scatter_add", [T("i8", [2], values=[120, 0]), T("i64", [2], values=[0, 0]), T("i8", [2], values=[5, 5])],
    {"dim": 0}, lambda x, i, s: A.scatter_add.default(x, 0, i, s), id="i8_wraps")
add("aten.scatter.reduce", [T("f64", [3]), T("i64", [4], values=[0, 0, 1, 1]), T("f64", [4])], {"dim": 0, "reduce": "multiply"},
    lambda x, i, s: A.scatter.reduce(x, 0, i, s, reduce="multiply"))
add("aten.scatter.value_reduce", [T("f64", [3]), T("i64", [4], values=[0, 0, 1, 2])], {"dim": 0, "value": 1.5, "reduce": "add"},
    lambda x, i: A.scatter.value_reduce(x, 0, i, 1.5, reduce="add"))
for how in ["sum", "prod", "mean", "amax", "amin"]:
    for include_self in [True, False]:
        add("aten.scatter_reduce.two",
            [T("f64", [4], values=[2.0, -1.0, NAN, 7.0]), T("i64", [6], values=[0, 0, 1, 1, 0, 2]),
             T("f64", [6], values=[1.5, NAN, 3.0, 4.0, -2.0, 0.5])],
            {"dim": 0, "reduce": how, "include_self": include_self},
            lambda x, i, s, how=how, inc=include_self: A.scatter_reduce.two(x, 0, i, s, how, include_self=inc),
            id=f"{how}_self={include_self}")
add("aten.scatter_reduce.two", [T("i64", [3], values=[2, 2, 7]), T("i64", [4], values=[0, 0, 1, 1]),
                                T("i64", [4], values=[-1, -4, 3, 4])],
    {"dim": 0, "reduce": "mean", "include_self": False},
    lambda x, i, s: A.scatter_reduce.two(x, 0, i, s, "mean", include_self=False), id="int_mean_floors")
add("aten.scatter_reduce.two", [T("f64", [3, 4]), T("i64", [3, 2], low=0, high=4), T("f64", [3, 2])],
    {"dim": 1, "reduce": "amax"}, lambda x, i, s: A.scatter_reduce.two(x, 1, i, s, "amax"), id="2d")
add("aten.index_put", [T("f64", [5, 3]), T("f64", [2, 3]), T("i64", [2], values=[4, -5])], {},
    lambda x, v, i: A.index_put.default(x, [i], v))
add("aten.index_put", [T("f64", [5, 3]), T("f64", []), T("i64", [2, 1], values=[1, 3]), T("i64", [2], values=[0, -1])], {},
    lambda x, v, i, j: A.index_put.default(x, [i, j], v), id="two_indices_scalar_value")
add("aten.index_put", [T("f64", [4]), T("f64", [6]), T("i64", [6], low=-4, high=4)], {"accumulate": True},
    lambda x, v, i: A.index_put.default(x, [i], v, True), id="accumulate")
add("aten.index_put", [T("i32", [3, 2]), T("i32", [2]), T("i32", [3], values=[2, 2, 0])], {"accumulate": True},
    lambda x, v, i: A.index_put.default(x, [i], v, True), id="i32_accumulate_broadcast")

# ---- decomposition paths (prim reduction) ---------------------------------------------------
add("aten.index.Tensor", [T("i32", [3, 4, 2]), T("i64", [5], low=-3, high=3), T("i64", [5], low=-4, high=4),
                          T("i64", [1], values=[-1])], {}, lambda x, i, j, k: A.index.Tensor(x, [i, j, k]),
    id="three_indices_all_dims")
add("aten.index_put", [T("f64", [3, 4, 2]), T("f64", [2, 2]), T("i64", [2], values=[2, -3]),
                       T("i64", [2], values=[-1, 1])], {}, lambda x, v, i, j: A.index_put.default(x, [i, j], v),
    id="two_indices_rows")
add("aten.index_put", [T("bool", [5]), T("bool", [4], values=[True, False, True, False]),
                       T("i64", [4], values=[0, 0, 3, 3])], {"accumulate": True},
    lambda x, v, i: A.index_put.default(x, [i], v, True), id="bool_accumulate")
add("aten.scatter_reduce.two", [T("i32", [3, 4]), T("i64", [3, 2], values=[0, 0, 3, 1, 2, 2]), T("i32", [3, 2])],
    {"dim": 1, "reduce": "amin", "include_self": False},
    lambda x, i, s: A.scatter_reduce.two(x, 1, i, s, "amin", include_self=False), id="i32_amin_no_self")
add("aten.scatter_reduce.two", [T("f64", [4], values=[-0.0, 1.0, 2.0, 3.0]), T("i64", [2], values=[0, 0]),
                                T("f64", [2], values=[-0.0, -0.0])],
    {"dim": 0, "reduce": "sum", "include_self": False},
    lambda x, i, s: A.scatter_reduce.two(x, 0, i, s, "sum", include_self=False), id="sum_neg_zero")
add("aten.scatter.src", [T("f64", []), T("i64", [], values=[0]), T("f64", [])], {"dim": 0},
    lambda x, i, s: A.scatter.src(x, 0, i, s), id="0d")
add("aten.gather", [T("f64", [3, 4]), T("i64", [0, 2])], {"dim": 1}, lambda x, i: A.gather.default(x, 1, i),
    id="empty_index")
add("aten.index_select", [T("f64", []), T("i64", [1], values=[0])], {"dim": 0},
    lambda x, i: A.index_select.default(x, 0, i), id="0d_self")
