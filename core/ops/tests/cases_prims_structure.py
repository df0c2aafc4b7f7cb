"""Torch-oracle cases for the structural prims: broadcast_in_dim, reshape, permute, slice with
strides, rev, pad with negative-free low/high and interior padding, concat and as_strided
(overlapping windows, zero strides, storage offsets). None computes anything, so every
output must equal torch's bit for bit (also in integer and bool dtypes)."""
from __future__ import annotations

import torch

import prim_refs as R
from oracle import Case, T

P = torch.ops.prims
CASES = []
NAN, INF = float("nan"), float("inf")


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- broadcast_in_dim ---------------------------------------------------------------------
def bcast(src, shape, dims, id=""):
    add("prims.broadcast_in_dim", [src], {"shape": shape, "broadcast_dimensions": dims},
        lambda a: P.broadcast_in_dim(a, shape, dims).clone(), id=id)


bcast(T("f64", [3]), [2, 3], [1])
bcast(T("f64", [3]), [3, 2], [0], id="leading")
bcast(T("f64", [3, 1]), [3, 4], [0, 1], id="size1_expands")
bcast(T("i32", [1, 4]), [2, 5, 4], [0, 2], id="new_middle_dim")
bcast(T("f64", []), [2, 2], [], id="0d")
bcast(T("bool", [2, 3]), [2, 3], [0, 1], id="identity_bool")
bcast(T("f64", [1]), [0, 3], [1], id="to_empty")

# ---- reshape ------------------------------------------------------------------------------
for src, shape, id in [(T("f64", [2, 3, 4]), [6, 4], ""), (T("i64", [2, 3, 4]), [24], "flatten_i64"),
                       (T("f64", []), [1, 1], "0d"), (T("f64", [1, 1]), [], "to_0d"),
                       (T("f64", [0, 3]), [3, 0], "empty"), (T("u8", [6]), [3, 2], "u8")]:
    add("prims.reshape", [src], {"shape": shape}, lambda a, s=shape: a.reshape(s).clone(), id=id)

# ---- permute ------------------------------------------------------------------------------
for src, dims, id in [(T("f64", [2, 3, 4]), [2, 0, 1], ""), (T("i32", [2, 3]), [1, 0], "transpose_i32"),
                      (T("f64", [2, 1, 3, 2]), [3, 1, 0, 2], "rank4"), (T("f64", [3]), [0], "identity")]:
    add("prims.permute", [src], {"dims": dims}, lambda a, d=dims: a.permute(d).clone(), id=id)


# ---- slice --------------------------------------------------------------------------------
def slc(src, start, limit, strides=None, id=""):
    attrs = {"start_indices": start, "limit_indices": limit}
    if strides is not None:
        attrs["strides"] = strides
    st = strides or [1] * len(start)
    add("prims.slice", [src], attrs,
        lambda a: a[tuple(slice(s, l, k) for s, l, k in zip(start, limit, st))].clone(), id=id)


slc(T("f64", [5, 6]), [1, 2], [4, 6])
slc(T("f64", [7, 6]), [0, 1], [7, 6], [3, 2], id="strides")
slc(T("f64", [7]), [1], [6], [4], id="stride_past_limit")
slc(T("i64", [4, 3]), [2, 0], [2, 3], id="empty_i64")
slc(T("f64", [4, 5]), [0, 0], [4, 5], [], id="default_strides")
slc(T("bool", [3, 4, 5]), [1, 0, 4], [3, 4, 5], [1, 2, 1], id="rank3_bool")

# ---- rev ----------------------------------------------------------------------------------
for src, dims, id in [(T("f64", [3, 4]), [1], ""), (T("f64", [2, 3, 4]), [0, 2], "two_dims"),
                      (T("i32", [5]), [0], "i32"), (T("f64", [2, 3]), [], "none"), (T("f64", [0, 2]), [0], "empty")]:
    add("prims.rev", [src], {"dims": dims}, lambda a, d=dims: torch.flip(a, d) if d else a.clone(), id=id)


# ---- pad ----------------------------------------------------------------------------------
def pad(src, value, low, high, interior=None, id=""):
    attrs = {"padding_value": value, "low": low, "high": high}
    if interior is not None:
        attrs["interior"] = interior
    inner = interior or [0] * len(low)
    add("prims.pad", [src], attrs, lambda a: R.pad(a, value, low, high, inner), id=id)


pad(T("f64", [2, 3]), 0.0, [1, 0], [2, 1])
pad(T("f64", [3]), -1.5, [0], [0], [2], id="interior")
pad(T("f64", [2, 3]), float("-inf"), [1, 2], [0, 1], [1, 3], id="interior_2d_neg_inf")
pad(T("f64", [2, 2]), float("nan"), [1, 1], [1, 1], id="nan")
pad(T("i32", [2, 3]), 7, [0, 1], [1, 0], [1, 0], id="i32")
pad(T("u8", [4]), 255, [2], [1], id="u8")
pad(T("bool", [3]), True, [1], [1], [1], id="bool")
pad(T("f64", [0, 2]), 2.0, [1, 0], [1, 0], [3, 1], id="empty_with_interior")
pad(T("f64", [1, 1]), 4.0, [0, 0], [0, 0], [5, 5], id="size1_interior")
pad(T("f16", [2, 2]), 0.1, [1, 0], [0, 1], id="f16")

# ---- concat -------------------------------------------------------------------------------
for srcs, dim, id in [([T("f64", [2, 3]), T("f64", [4, 3]), T("f64", [1, 3])], 0, ""),
                      ([T("f64", [2, 1, 3]), T("f64", [2, 4, 3])], 1, "dim1"),
                      ([T("i8", [2, 2]), T("i8", [2, 0]), T("i8", [2, 3])], 1, "empty_piece_i8"),
                      ([T("bool", [3])], 0, "single_bool"),
                      ([T("f64", [2, 2])] * 5, 1, "five")]:
    add("prims.concat", srcs, {"dim": dim}, lambda *ts, d=dim: torch.cat(ts, d), id=id)


# ---- as_strided ---------------------------------------------------------------------------
def strided(src, size, stride, offset=None, id=""):
    attrs = {"size": size, "stride": stride}
    if offset is not None:
        attrs["storage_offset"] = offset
    add("prims.as_strided", [src], attrs,
        lambda a: torch.as_strided(a, size, stride, offset or 0).clone(), id=id)


strided(T("f64", [12]), [3, 4], [4, 1])
strided(T("f64", [3, 4]), [4, 3], [1, 4], id="transpose")
strided(T("f64", [10]), [4, 3], [2, 1], 1, id="overlapping_windows_offset")
strided(T("f64", [5]), [3, 2], [0, 1], 3, id="zero_stride")
strided(T("i64", [2, 3, 4]), [2, 2, 2, 2], [12, 4, 2, 1], id="pool_windows_i64")
strided(T("f64", [6]), [], [], 5, id="0d_last")
strided(T("f64", [6]), [0, 3], [9, 9], 0, id="empty")
