"""Torch-oracle harness for the ATen-level ops.

Each family file `cases_<family>.py` beside this one defines `CASES`, a list of `Case`.
For every case the harness writes a one-node `.pgraph`, random (or given) inputs as .npy,
runs `plugsdk run` (the reference executor), checks the text form round-trips through
`plugsdk print`, and compares every output with torch eager on the same inputs.

    Case("aten.add.Tensor", [T("f64", [3, 4]), T("f64", [4])], {"alpha": 2},
         lambda a, b: torch.ops.aten.add.Tensor(a, b, alpha=2))

Attribute values are written in .pgraph syntax: python ints/floats/bools/str map to
3, 1.5, true/false, "str"; `Raw("f32")` is written verbatim (dtypes, symbols); lists map
to [..]; None to none.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

NP_DTYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64, "i32": np.int32,
    "i16": np.int16, "i8": np.int8, "u8": np.uint8, "bool": np.bool_,
}


@dataclasses.dataclass
class Raw:
    """An attribute written verbatim into the .pgraph (a dtype name, a symbol expression)."""
    text: str


@dataclasses.dataclass
class T:
    """An input tensor: dtype name, shape, and how to fill it.

    Floats are standard normal scaled to [low, high) if both are given; integers uniform
    in [low, high) (default [-10, 10)); bool random. `values` (flat list) overrides.
    """
    dtype: str
    shape: Sequence[int]
    low: Optional[float] = None
    high: Optional[float] = None
    values: Optional[Sequence[Any]] = None

    def make(self, rng: np.random.Generator) -> np.ndarray:
        npdt = NP_DTYPES[self.dtype]
        shape = tuple(self.shape)
        if self.values is not None:
            return np.array(self.values, dtype=npdt).reshape(shape)
        if self.dtype == "bool":
            return rng.integers(0, 2, size=shape).astype(np.bool_)
        if self.dtype.startswith("f"):
            if self.low is not None and self.high is not None:
                return rng.uniform(self.low, self.high, size=shape).astype(npdt)
            return rng.standard_normal(size=shape).astype(npdt)
        lo = -10 if self.low is None else int(self.low)
        hi = 10 if self.high is None else int(self.high)
        if self.dtype == "u8":
            lo = max(lo, 0)
        return rng.integers(lo, hi, size=shape).astype(npdt)


@dataclasses.dataclass
class Case:
    op: str
    inputs: Sequence[Optional[T]]
    attrs: dict
    torch_fn: Callable[..., Any]
    id: str = ""
    rtol: float = 1e-9
    atol: float = 1e-12
    # Outputs whose values are not compared (e.g. the indices of a max over ties, dropout masks).
    skip_outputs: Sequence[int] = ()
    # Number of tensor outputs of the node (ops returning (Tensor, Tensor) or Tensor[]).
    num_outputs: int = 1
    # Floating outputs must also match torch in the sign of every zero (and infinity).
    signed_zeros: bool = False

    def name(self) -> str:
        return self.op + ("[" + self.id + "]" if self.id else "")


def attr_text(v: Any) -> str:
    if isinstance(v, Raw):
        return v.text
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if any(c in r for c in ".e") else r + ".0"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr_text(x) for x in v) + "]"
    raise TypeError(f"cannot write attribute {v!r}")


def graph_text(case: Case) -> str:
    params, args = [], []
    for i, t in enumerate(case.inputs):
        if t is None:
            args.append("none")
            continue
        params.append(f"%in{i}: {t.dtype}[{', '.join(str(d) for d in t.shape)}]")
        args.append(f"%in{i}")
    attrs = ""
    if case.attrs:
        attrs = " {" + ", ".join(f"{k} = {attr_text(v)}" for k, v in sorted(case.attrs.items())) + "}"
    outs = ", ".join(f"%out{i}" for i in range(case.num_outputs))
    return (f"graph @case({', '.join(params)}) {{\n"
            f"  {outs} = {case.op}({', '.join(args)}){attrs}\n"
            f"  return {outs}\n}}\n")
