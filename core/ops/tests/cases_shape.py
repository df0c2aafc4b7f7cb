"""Torch-oracle cases for the shape family: views, permutes, expand, squeeze, cat/stack,
slicing, splitting, flip, repeat, padding, tril/triu and roll."""
from __future__ import annotations

import torch

from oracle import Case, T

A = torch.ops.aten
CASES = []
INT64_MAX = 9223372036854775807


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


SPECIALS = [0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1.5]

# ---- views ---------------------------------------------------------------------------
add("aten.view", [T("f64", [2, 3, 4])], {"size": [6, -1]}, lambda x: A.view.default(x, [6, -1]))
add("aten.view", [T("f32", [6], values=SPECIALS)], {"size": [3, 2]}, lambda x: A.view.default(x, [3, 2]), id="specials")
add("aten.view", [T("i64", [1])], {"size": []}, lambda x: A.view.default(x, []), id="to_0d")
add("aten._unsafe_view", [T("i32", [4, 3])], {"size": [2, 2, 3]}, lambda x: A._unsafe_view.default(x, [2, 2, 3]))
add("aten.reshape", [T("f64", [2, 3, 4])], {"shape": [-1]}, lambda x: A.reshape.default(x, [-1]))
add("aten.reshape", [T("bool", [0, 4])], {"shape": [-1, 2]}, lambda x: A.reshape.default(x, [-1, 2]), id="empty")
add("aten.flatten.using_ints", [T("f64", [2, 3, 4, 5])], {"start_dim": 1, "end_dim": -2},
    lambda x: A.flatten.using_ints(x, 1, -2))
add("aten.flatten.using_ints", [T("f64", [])], {}, lambda x: A.flatten.using_ints(x), id="0d")
add("aten.unflatten.int", [T("i64", [2, 12])], {"dim": -1, "sizes": [3, -1, 2]}, lambda x: A.unflatten.int(x, -1, [3, -1, 2]))
add("aten.permute", [T("f64", [2, 3, 4])], {"dims": [2, 0, 1]}, lambda x: A.permute.default(x, [2, 0, 1]))
add("aten.permute", [T("i8", [2, 3, 4])], {"dims": [-1, 1, -3]}, lambda x: A.permute.default(x, [-1, 1, -3]), id="neg")
add("aten.transpose.int", [T("f64", [2, 3, 4])], {"dim0": 0, "dim1": -1}, lambda x: A.transpose.int(x, 0, -1))
add("aten.transpose.int", [T("f64", [])], {"dim0": 0, "dim1": -1}, lambda x: A.transpose.int(x, 0, -1), id="0d")
add("aten.t", [T("f32", [3, 5])], {}, lambda x: A.t.default(x))
add("aten.t", [T("i64", [4])], {}, lambda x: A.t.default(x), id="1d")
add("aten.expand", [T("f64", [3, 1])], {"size": [2, -1, 4]}, lambda x: A.expand.default(x, [2, -1, 4]))
add("aten.expand", [T("u8", [1, 1, 5])], {"size": [3, 0, 5]}, lambda x: A.expand.default(x, [3, 0, 5]), id="zero")
add("aten.unsqueeze", [T("f64", [2, 3])], {"dim": -1}, lambda x: A.unsqueeze.default(x, -1))
add("aten.unsqueeze", [T("f64", [])], {"dim": 0}, lambda x: A.unsqueeze.default(x, 0), id="0d")
add("aten.squeeze", [T("f64", [1, 3, 1, 2])], {}, lambda x: A.squeeze.default(x))
add("aten.squeeze.dim", [T("f64", [1, 3, 1])], {"dim": -1}, lambda x: A.squeeze.dim(x, -1))
add("aten.squeeze.dim", [T("f64", [2, 3])], {"dim": 0}, lambda x: A.squeeze.dim(x, 0), id="noop")
add("aten.squeeze.dims", [T("i64", [1, 3, 1, 1])], {"dim": [0, 1, -1]}, lambda x: A.squeeze.dims(x, [0, 1, -1]))
add("aten.clone", [T("f32", [6], values=SPECIALS)], {}, lambda x: A.clone.default(x))
add("aten.clone", [T("i64", [2], values=[INT64_MAX, -INT64_MAX - 1])], {}, lambda x: A.clone.default(x), id="i64_extremes")
add("aten.alias", [T("bool", [3, 2])], {}, lambda x: A.alias.default(x))
add("aten.detach", [T("f64", [2, 3, 4])], {}, lambda x: A.detach.default(x))
add("aten.detach", [T("i32", [5])], {}, lambda x: A.detach.default(x), id="i32")

# ---- join and cut --------------------------------------------------------------------
add("aten.cat", [T("f64", [2, 3]), T("f64", [4, 3]), T("f64", [1, 3])], {}, lambda *ts: A.cat.default(list(ts)))
add("aten.cat", [T("f64", [2, 1, 3]), T("f64", [2, 4, 3])], {"dim": 1}, lambda *ts: A.cat.default(list(ts), 1), id="dim1")
add("aten.cat", [T("i32", [2, 2]), T("f32", [2, 3]), T("i64", [2, 1])], {"dim": -1},
    lambda *ts: A.cat.default(list(ts), -1), id="promote")
add("aten.cat", [T("bool", [3]), T("u8", [2])], {}, lambda *ts: A.cat.default(list(ts)), id="bool_u8")
add("aten.cat", [T("i64", [1], values=[2049]), T("f16", [2])], {}, lambda *ts: A.cat.default(list(ts)), id="i64_to_f16")
add("aten.cat", [T("f32", [2, 2]), T("f64", [0])], {"dim": 1}, lambda *ts: A.cat.default(list(ts), 1), id="legacy_empty")
add("aten.stack", [T("f64", [2, 3]), T("f64", [2, 3])], {}, lambda *ts: A.stack.default(list(ts)))
add("aten.stack", [T("i64", [2, 3]), T("f64", [2, 3]), T("i64", [2, 3])], {"dim": -1},
    lambda *ts: A.stack.default(list(ts), -1), id="promote_last")
add("aten.stack", [T("f32", []), T("f32", [])], {}, lambda *ts: A.stack.default(list(ts)), id="0d")
add("aten.slice.Tensor", [T("f64", [10, 3])], {"dim": 0, "start": -3, "end": None, "step": 2},
    lambda x: A.slice.Tensor(x, 0, -3, None, 2))
add("aten.slice.Tensor", [T("f64", [4, 10])], {"dim": 1, "start": -30, "end": 100, "step": 3},
    lambda x: A.slice.Tensor(x, 1, -30, 100, 3), id="clamped")
add("aten.slice.Tensor", [T("i64", [10])], {"start": 1, "end": INT64_MAX}, lambda x: A.slice.Tensor(x, 0, 1, INT64_MAX),
    id="int64_max_end")
add("aten.slice.Tensor", [T("i64", [10])], {"start": 7, "end": 2}, lambda x: A.slice.Tensor(x, 0, 7, 2), id="empty")
add("aten.select.int", [T("f64", [3, 4])], {"dim": 1, "index": -1}, lambda x: A.select.int(x, 1, -1))
add("aten.select.int", [T("f64", [3])], {"dim": 0, "index": 2}, lambda x: A.select.int(x, 0, 2), id="to_0d")
add("aten.narrow", [T("f64", [3, 10])], {"dim": 1, "start": -4, "length": 3}, lambda x: A.narrow.default(x, 1, -4, 3))
add("aten.split.Tensor", [T("f64", [10, 2])], {"split_size": 3}, lambda x: A.split.Tensor(x, 3), num_outputs=4)
add("aten.split.Tensor", [T("f64", [2, 5])], {"split_size": 5, "dim": -1}, lambda x: A.split.Tensor(x, 5, -1),
    num_outputs=1, id="whole")
add("aten.split_with_sizes", [T("i64", [2, 6])], {"split_sizes": [1, 0, 5], "dim": 1},
    lambda x: A.split_with_sizes.default(x, [1, 0, 5], 1), num_outputs=3)
add("aten.chunk", [T("f64", [5, 2])], {"chunks": 4}, lambda x: A.chunk.default(x, 4), num_outputs=3)
add("aten.chunk", [T("f64", [0, 2])], {"chunks": 3}, lambda x: A.chunk.default(x, 3), num_outputs=3, id="empty")
add("aten.unbind.int", [T("f64", [2, 3])], {"dim": 1}, lambda x: A.unbind.int(x, 1), num_outputs=3)

# ---- rearrangements ------------------------------------------------------------------
add("aten.flip", [T("f64", [2, 3, 4])], {"dims": [0, -1]}, lambda x: A.flip.default(x, [0, -1]))
add("aten.flip", [T("f64", [])], {"dims": [0]}, lambda x: A.flip.default(x, [0]), id="0d")
add("aten.repeat", [T("f64", [2, 3])], {"repeats": [2, 1, 3]}, lambda x: A.repeat.default(x, [2, 1, 3]))
add("aten.repeat", [T("i16", [2])], {"repeats": [0]}, lambda x: A.repeat.default(x, [0]), id="zero")
add("aten.constant_pad_nd", [T("f64", [2, 3, 4])], {"pad": [1, 2, 0, 1], "value": -1.5},
    lambda x: A.constant_pad_nd.default(x, [1, 2, 0, 1], -1.5))
add("aten.constant_pad_nd", [T("f64", [3, 5])], {"pad": [-2, 1, 1, -3]}, lambda x: A.constant_pad_nd.default(x, [-2, 1, 1, -3]),
    id="crop")
add("aten.constant_pad_nd", [T("i64", [4])], {"pad": [2, 1], "value": 2.7}, lambda x: A.constant_pad_nd.default(x, [2, 1], 2.7),
    id="int_float_value")
add("aten.constant_pad_nd", [T("f32", [2])], {"pad": [1, 1], "value": 0.1}, lambda x: A.constant_pad_nd.default(x, [1, 1], 0.1),
    id="f32_value_rounds")
add("aten.tril", [T("f64", [4, 5])], {}, lambda x: A.tril.default(x))
add("aten.tril", [T("i64", [2, 3, 4])], {"diagonal": -1}, lambda x: A.tril.default(x, -1), id="batched_neg")
add("aten.triu", [T("f64", [4, 5])], {"diagonal": 2}, lambda x: A.triu.default(x, 2))
add("aten.triu", [T("bool", [3, 3])], {}, lambda x: A.triu.default(x), id="bool")
add("aten.roll", [T("f64", [3, 4])], {"shifts": [5]}, lambda x: A.roll.default(x, [5]))
add("aten.roll", [T("f64", [3, 4])], {"shifts": [1, -6], "dims": [0, 1]}, lambda x: A.roll.default(x, [1, -6], [0, 1]),
    id="dims")
add("aten.roll", [T("i64", [3, 4])], {"shifts": [2, 2], "dims": [1, -1]}, lambda x: A.roll.default(x, [2, 2], [1, -1]),
    id="same_dim_twice")
