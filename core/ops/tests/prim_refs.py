"""Reference implementations for the prim oracle cases where torch has no op with the same
semantics: our counter-based generator (splitmix64, core/prims/scalar_ops.cc), pad with
interior padding, a float64 attention and exact two's complement integer arithmetic."""
from __future__ import annotations

import math

import numpy as np
import torch

TORCH_DTYPES = {
    "f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i64": torch.int64, "i32": torch.int32, "i16": torch.int16, "i8": torch.int8, "u8": torch.uint8,
    "bool": torch.bool,
}
BITS = {"f64": 53, "f32": 24, "f16": 11, "bf16": 8}
M64 = (1 << 64) - 1


def splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def uniform(seed: int, counters, bits: int = 53) -> np.ndarray:
    """uniformAt(seed, counter, bits) for every counter: exact in a float with `bits` bits."""
    key = splitmix64(seed & M64)
    return np.array([math.ldexp(splitmix64((key + int(c)) & M64) >> (64 - bits), -bits) for c in counters],
                    dtype=np.float64)


def rand(shape, seed: int, offset: int, dtype: str) -> torch.Tensor:
    n = math.prod(shape)
    u = uniform(seed, range(offset, offset + n), BITS[dtype]).reshape(shape)
    return torch.from_numpy(u).to(TORCH_DTYPES[dtype])  # exact: u has at most BITS[dtype] bits


def wrap(values, dtype: str) -> torch.Tensor:
    """Python integers wrapped to the width of `dtype` (two's complement)."""
    bits = {"i64": 64, "i32": 32, "i16": 16, "i8": 8, "u8": 8}[dtype]
    out = []
    for v in values:
        v &= (1 << bits) - 1
        if dtype != "u8" and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return torch.tensor(out, dtype=TORCH_DTYPES[dtype])


def int_binary(fn, dtype: str):
    """An elementwise integer op evaluated exactly in Python and wrapped to `dtype` (torch
    raises SIGFPE on INT_MIN / -1, so those cases cannot ask torch)."""
    def run(a, b):
        vals = [fn(int(x), int(y)) for x, y in zip(a.flatten().tolist(), b.flatten().tolist())]
        return wrap(vals, dtype).reshape(a.shape)
    return run


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_fmod(a: int, b: int) -> int:
    return a - trunc_div(a, b) * b


def pad(a: torch.Tensor, value, low, high, interior) -> torch.Tensor:
    shape = [lo + (n + (n - 1) * i if n else 0) + hi for n, lo, hi, i in zip(a.shape, low, high, interior)]
    out = torch.full(shape, value, dtype=a.dtype)
    if a.numel():
        out[tuple(slice(lo, lo + (n - 1) * (i + 1) + 1, i + 1) for n, lo, i in zip(a.shape, low, interior))] = a
    return out


def sdpa(q, k, v, mask=None, causal=False, scale=None, dropout_p=0.0, seed=0):
    """softmax(scale q k^T + mask) v and its row logsumexp in float64; fully masked rows give
    0 and lse 0; dropout keeps weight (i, j) iff uniform(seed, row-major position) < 1 - p."""
    qd, kd, vd = q.double(), k.double(), v.double()
    L, S = q.shape[-2], k.shape[-2]
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (qd @ kd.transpose(-1, -2)) * sc
    allowed = torch.ones(s.shape, dtype=torch.bool)
    if mask is not None:
        if mask.dtype == torch.bool:
            allowed = allowed & mask
        else:
            s = s + mask.double()
    if causal:
        allowed = allowed & torch.ones(L, S, dtype=torch.bool).tril()
    s = s.masked_fill(~allowed, -math.inf)
    m = s.amax(-1, keepdim=True)
    empty = torch.isneginf(m)
    m = torch.where(empty, 0.0, m)
    e = torch.exp(s - m)
    den = e.sum(-1, keepdim=True)
    w = torch.where(empty, 0.0, e / den)
    lse = torch.where(empty, 0.0, m + torch.log(den))[..., 0]
    if dropout_p > 0:
        u = torch.from_numpy(uniform(seed, range(w.numel()))).reshape(w.shape)
        w = torch.where(u < 1 - dropout_p, w / (1 - dropout_p), 0.0)
    out = (w @ vd).to(q.dtype)
    return out, lse.to(torch.float64 if q.dtype == torch.float64 else torch.float32)
