"""Torch-oracle cases for the creation family: full, zeros, ones, empty (compared for shape
and dtype only), the *_like and new_* variants, scalar_tensor, arange and linspace."""
from __future__ import annotations

import torch

from oracle import Case, Raw, T

A = torch.ops.aten
CASES = []


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- constant fills ------------------------------------------------------------------
add("aten.full", [], {"size": [2, 3], "fill_value": 1.5}, lambda: A.full.default([2, 3], 1.5))
add("aten.full", [], {"size": [4], "fill_value": 3}, lambda: A.full.default([4], 3), id="int_value_i64")
add("aten.full", [], {"size": [2, 1], "fill_value": True}, lambda: A.full.default([2, 1], True), id="bool_value")
add("aten.full", [], {"size": [3], "fill_value": -3.7, "dtype": Raw("i32")},
    lambda: A.full.default([3], -3.7, dtype=torch.int32), id="truncates_to_i32")
add("aten.full", [], {"size": [2], "fill_value": -1, "dtype": Raw("u8")},
    lambda: A.full.default([2], -1, dtype=torch.uint8), id="wraps_u8")
add("aten.full", [], {"size": [2], "fill_value": 0.1, "dtype": Raw("f16")},
    lambda: A.full.default([2], 0.1, dtype=torch.float16), id="f16")
add("aten.full", [], {"size": [], "fill_value": float("-inf")}, lambda: A.full.default([], float("-inf")), id="0d_inf")
add("aten.full", [], {"size": [0, 3], "fill_value": 2}, lambda: A.full.default([0, 3], 2), id="empty")
add("aten.full_like", [T("i32", [2, 3])], {"fill_value": 3.7}, lambda x: A.full_like.default(x, 3.7))
add("aten.full_like", [T("i32", [2])], {"fill_value": 3.7, "dtype": Raw("f64")},
    lambda x: A.full_like.default(x, 3.7, dtype=torch.float64), id="dtype")
add("aten.zeros", [], {"size": [2, 3]}, lambda: A.zeros.default([2, 3]))
add("aten.zeros", [], {"size": [3], "dtype": Raw("i64")}, lambda: A.zeros.default([3], dtype=torch.int64), id="i64")
add("aten.ones", [], {"size": [2, 2]}, lambda: A.ones.default([2, 2]))
add("aten.ones", [], {"size": [3], "dtype": Raw("bool")}, lambda: A.ones.default([3], dtype=torch.bool), id="bool")
add("aten.zeros_like", [T("f64", [2, 3])], {}, lambda x: A.zeros_like.default(x))
add("aten.ones_like", [T("i8", [4])], {}, lambda x: A.ones_like.default(x))
add("aten.ones_like", [T("i8", [4])], {"dtype": Raw("f32")}, lambda x: A.ones_like.default(x, dtype=torch.float32),
    id="dtype")
add("aten.new_zeros", [T("i32", [1])], {"size": [2, 2]}, lambda x: A.new_zeros.default(x, [2, 2]))
add("aten.new_ones", [T("f64", [1])], {"size": [3], "dtype": Raw("i16")},
    lambda x: A.new_ones.default(x, [3], dtype=torch.int16))
add("aten.new_full", [T("i32", [1])], {"size": [2], "fill_value": 2.5}, lambda x: A.new_full.default(x, [2], 2.5))
# Uninitialized memory: compare against zeros of the same shape and dtype (the reference's choice).
add("aten.empty.memory_format", [], {"size": [2, 3]}, lambda: torch.zeros([2, 3]))
add("aten.empty.memory_format", [], {"size": [4], "dtype": Raw("i64")}, lambda: torch.zeros([4], dtype=torch.int64),
    id="i64")
add("aten.empty_like", [T("f64", [3, 2])], {}, lambda x: torch.zeros_like(x))
add("aten.new_empty", [T("u8", [1])], {"size": [5]}, lambda x: torch.zeros([5], dtype=torch.uint8))
add("aten.scalar_tensor", [], {"s": 3}, lambda: A.scalar_tensor.default(3))
add("aten.scalar_tensor", [], {"s": -2.5, "dtype": Raw("i64")}, lambda: A.scalar_tensor.default(-2.5, dtype=torch.int64),
    id="i64")

# ---- ranges --------------------------------------------------------------------------
add("aten.arange", [], {"end": 7}, lambda: A.arange.default(7))
add("aten.arange", [], {"end": 4.5}, lambda: A.arange.default(4.5), id="float_end")
add("aten.arange.start", [], {"start": -3, "end": 4}, lambda: A.arange.start(-3, 4))
add("aten.arange.start_step", [], {"start": 0, "end": 1, "step": 0.1}, lambda: A.arange.start_step(0, 1, 0.1), rtol=1e-6)
add("aten.arange.start_step", [], {"start": 5, "end": -6, "step": -3}, lambda: A.arange.start_step(5, -6, -3), id="negative_step")
add("aten.arange.start_step", [], {"start": 0.5, "end": 5.5, "step": 1.5, "dtype": Raw("i64")},
    lambda: A.arange.start_step(0.5, 5.5, 1.5, dtype=torch.int64), id="i64_truncates_bounds")
add("aten.arange.start_step", [], {"start": 0.5, "end": 5.5, "step": 1.5, "dtype": Raw("i32")},
    lambda: A.arange.start_step(0.5, 5.5, 1.5, dtype=torch.int32), id="i32_double_length")
add("aten.arange.start_step", [], {"start": 2147483640, "end": 2147483650, "step": 3, "dtype": Raw("i32")},
    lambda: A.arange.start_step(2147483640, 2147483650, 3, dtype=torch.int32), id="i32_wraps")
add("aten.arange.start_step", [], {"start": 0, "end": 10, "step": 3, "dtype": Raw("f64")},
    lambda: A.arange.start_step(0, 10, 3, dtype=torch.float64), id="f64")
add("aten.arange.start_step", [], {"start": 3, "end": 3}, lambda: A.arange.start_step(3, 3), id="empty")
add("aten.linspace", [], {"start": 0, "end": 1, "steps": 5}, lambda: A.linspace.default(0, 1, 5), rtol=1e-6)
add("aten.linspace", [], {"start": -1.5, "end": 2.0, "steps": 9, "dtype": Raw("f64")},
    lambda: A.linspace.default(-1.5, 2.0, 9, dtype=torch.float64), id="f64")
add("aten.linspace", [], {"start": -3, "end": 8, "steps": 7, "dtype": Raw("i64")},
    lambda: A.linspace.default(-3, 8, 7, dtype=torch.int64), id="i64")
add("aten.linspace", [], {"start": 10, "end": 0, "steps": 4, "dtype": Raw("i32")},
    lambda: A.linspace.default(10, 0, 4, dtype=torch.int32), id="i32_descending")
add("aten.linspace", [], {"start": 3, "end": 8, "steps": 1}, lambda: A.linspace.default(3, 8, 1), id="one_step")

# ---- decomposition paths (prim reduction) ---------------------------------------------------
add("aten.arange.start_step", [], {"start": 0.25, "end": 3.0, "step": 0.5, "dtype": Raw("f16")},
    lambda: A.arange.start_step(0.25, 3.0, 0.5, dtype=torch.float16), id="f16_float_bounds")
add("aten.arange.start_step", [], {"start": -2.5, "end": 4.0, "step": 1.25, "dtype": Raw("f64")},
    lambda: A.arange.start_step(-2.5, 4.0, 1.25, dtype=torch.float64), id="f64_float_bounds")
add("aten.arange.start", [], {"start": 2, "end": 9, "dtype": Raw("f32")},
    lambda: A.arange.start(2, 9, dtype=torch.float32), id="int_bounds_f32")
add("aten.linspace", [], {"start": -2.0, "end": 5.0, "steps": 6, "dtype": Raw("f32")},
    lambda: A.linspace.default(-2.0, 5.0, 6, dtype=torch.float32), id="f32_even", rtol=1e-6)
add("aten.linspace", [], {"start": 1.5, "end": 3.5, "steps": 0}, lambda: A.linspace.default(1.5, 3.5, 0), id="zero_steps")
