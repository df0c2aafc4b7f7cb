"""FX (ATen level) -> .pgraph text: how a captured graph enters the core.

Every call_function node on an ATen OpOverload becomes one .pgraph node; its arguments are
mapped to the op's schema by name (tensors become inputs, the rest attributes). Sizes are
symbolic where the graph's fake tensors say so: a SymInt dim or argument is written as its
sympy expression over the graph's size symbols (s0, s1, ...), and nodes that only compute
SymInts (sym_size, operator.mul on sizes) emit nothing. Multi-output ops bind several
values (`%a, %b = op(...)`), `getitem` picks one.

The conformance model generator (conformance/models/generate.py) writes its graphs with
this module too.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

DTYPES = {
    torch.bool: "bool", torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float32: "f32", torch.float64: "f64",
}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}
# Keyword arguments of torch's schemas that ours do not have (tensor placement/layout).
DROPPED_KWARGS = {"device", "layout", "pin_memory", "memory_format"}


# Outputs whose dtype torch makes device-dependent: the CPU kernel returns layer norm's mean and
# rstd in a 16-bit input's dtype, the core (as the CUDA kernel) in float32. The importer emits
# the core's type and casts to the one torch declared.
STATS_IN_F32 = {"aten.native_layer_norm": (1, 2)}
# Outputs the core's op defines as empty ([0], as torch's CPU kernels give them) that torch's
# CUDA kernels fill: declared empty when nothing reads them.
EMPTY_WHEN_UNUSED = {"aten._native_batch_norm_legit_no_training": (1, 2)}


class Unmapped(Exception):
    """The graph holds something .pgraph cannot say (the caller falls back to eager)."""


def fmt_float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(float(v))
    return r if any(c in r for c in ".e") else r + ".0"


def sym_text(expr) -> str:
    """A sympy size expression in .pgraph syntax (+ - * // %, parenthesized)."""
    import sympy

    name = type(expr).__name__
    if isinstance(expr, sympy.Symbol):
        return str(expr)
    if isinstance(expr, sympy.Integer) or (getattr(expr, "is_Integer", False)):
        return str(int(expr))
    if isinstance(expr, sympy.Add):
        return "(" + "+".join(sym_text(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + "*".join(sym_text(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Pow) and expr.args[1].is_Integer and int(expr.args[1]) > 0:
        return "(" + "*".join([sym_text(expr.args[0])] * int(expr.args[1])) + ")"
    if name in ("FloorDiv",):
        return f"({sym_text(expr.args[0])}//{sym_text(expr.args[1])})"
    if name in ("Mod", "PythonMod"):
        return f"({sym_text(expr.args[0])} % {sym_text(expr.args[1])})"
    raise Unmapped(f"size expression {expr} ({name})")


def size_text(d) -> str:
    if isinstance(d, torch.SymInt):
        return sym_text(d.node.expr)
    return str(int(d))


def attr_text(v: Any, ty: str = "") -> str:
    if v is None:
        return "none"
    if isinstance(v, torch.dtype):
        if v not in DTYPES:
            raise Unmapped(f"dtype {v}")
        return DTYPES[v]
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, torch.SymInt):
        return size_text(v)
    if isinstance(v, int):
        return fmt_float(v) if ty.startswith("float") else str(v)
    if isinstance(v, float):
        return fmt_float(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        inner = ty[len("List["):-1] if ty.startswith("List[") else ""
        return "[" + ", ".join(attr_text(e, inner) for e in v) + "]"
    raise Unmapped(f"cannot write attribute value {v!r}")


def type_text(t: torch.Tensor) -> str:
    if t.dtype not in DTYPES:
        raise Unmapped(f"dtype {t.dtype}")
    return f"{DTYPES[t.dtype]}[{', '.join(size_text(d) for d in t.shape)}]"


def is_tensor_type(ty: str) -> bool:
    return ty in ("Tensor", "Optional[Tensor]", "List[Tensor]", "List[Optional[Tensor]]")


def same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, torch.SymInt) or isinstance(b, torch.SymInt):
        return False
    return a == b


# Ops imported under the name of an op the core lowers with the same schema and meaning.
# aten.lift_fresh_copy (a constant tensor of the traced code, copied) is produced by
# functionalization after the decompositions ran, so the decomposition table cannot rewrite it.
SAME_AS = {"aten.lift_fresh_copy": "aten.clone"}


def op_name(target) -> str:
    name = str(target)  # aten.add.Tensor, aten.mm.default
    name = name[: -len(".default")] if name.endswith(".default") else name
    return SAME_AS.get(name, name)


def is_sym(v) -> bool:
    return isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)) and not isinstance(
        v, torch.Tensor)


@dataclass
class Imported:
    """A graph in .pgraph text and how to call it: which FX placeholders are its tensor
    inputs (in order), and where each FX output comes from."""
    text: str
    tensor_inputs: List[int]  # placeholder positions that are graph inputs
    outputs: List[tuple] = field(default_factory=list)  # ("program", i) | ("input", placeholder i) | ("none", -1)
    symbols: List[str] = field(default_factory=list)


def to_pgraph(gm: torch.fx.GraphModule, graph_name: str, input_names: Optional[List[str]] = None) -> Imported:
    """The .pgraph text of an ATen-level FX graph whose nodes carry meta['val'] (make_fx or
    AOT autograd). Placeholders are named by input_names (default: their FX names); SymInt
    placeholders are not graph inputs (their values are bound by the tensors' shapes)."""
    nodes = list(gm.graph.nodes)
    names: Dict[torch.fx.Node, str] = {}  # node -> value name (single-output nodes)
    sym_of: Dict[torch.fx.Node, Any] = {}  # node -> its SymInt / int value
    multi: Dict[torch.fx.Node, List[str]] = {}  # multi-output node -> its output names

    placeholders = [n for n in nodes if n.op == "placeholder"]
    if input_names is None:
        input_names = [n.name for n in placeholders]
    if len(placeholders) != len(input_names):
        raise Unmapped(f"{len(placeholders)} placeholders for {len(input_names)} names")
    params, tensor_inputs = [], []
    for i, (n, name) in enumerate(zip(placeholders, input_names)):
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            names[n] = name
            tensor_inputs.append(i)
            params.append(f"%{name}: {type_text(val)}")
        elif is_sym(val):
            sym_of[n] = val
        else:
            raise Unmapped(f"placeholder {n.name} of type {type(val).__name__}")

    (output,) = [n for n in nodes if n.op == "output"]
    results = list(torch.utils._pytree.tree_leaves(output.args[0]))
    outputs, out_names, renamed = [], [], {}
    for r in results:
        if r is None:  # e.g. the gradient of an input that does not require grad
            outputs.append(("none", -1))
            continue
        if not isinstance(r, torch.fx.Node):
            raise Unmapped(f"a graph output that is a constant ({r!r})")
        if r.op == "placeholder":
            if r not in names:
                raise Unmapped("a graph output that is a size")
            outputs.append(("input", placeholders.index(r)))
            continue
        if r in renamed:
            outputs.append(("program", out_names.index(renamed[r])))
            continue
        if not isinstance(r.meta.get("val"), torch.Tensor):
            raise Unmapped(f"a graph output that is not a tensor ({r.name})")
        o = f"out{len(out_names)}"
        renamed[r] = o
        outputs.append(("program", len(out_names)))
        out_names.append(o)
    if not out_names:
        raise Unmapped("a graph that computes no tensor")
    if out_names == ["out0"]:  # one output is `out` (`plugsdk run --save` writes DIR/out.npy)
        out_names = ["out"]
        renamed = {k: "out" for k in renamed}

    taken = set(input_names) | set(out_names)

    def fresh(base: str) -> str:
        base = base.replace("-", "_")
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    def tensor_ref(opname: str, argname: str, v) -> str:
        if v is None:
            return "none"
        if isinstance(v, torch.fx.Node) and v in names:
            return f"%{names[v]}"
        if isinstance(v, (bool, int, float)) and not isinstance(v, torch.fx.Node):
            # A Python number where the schema wants a tensor (aten.add.Tensor(x, 1) with no
            # .Scalar overload to switch to): a 0-dim tensor, which type promotion treats
            # like the number.
            dt = "bool" if isinstance(v, bool) else "i64" if isinstance(v, int) else DTYPES[torch.get_default_dtype()]
            c = fresh("scalar")
            lines.append(f"  %{c} = aten.scalar_tensor() {{dtype = {dt}, s = {attr_text(v, 'float' if dt[0] == 'f' else '')}}}"
                         f" : {dt}[]")
            return f"%{c}"
        raise Unmapped(f"{opname}: {v!r} for tensor argument {argname}")

    def scalar_overload(target, args):
        """aten.mul.Tensor(x, 2.0) -> aten.mul.Scalar(x, 2.0): the core's form for a number."""
        name = target._overloadname
        if name not in ("Tensor", "Tensor_Tensor") or len(args) < 2:
            return target
        if not isinstance(args[0], torch.fx.Node) or isinstance(args[1], torch.fx.Node):
            return target
        if not isinstance(args[1], (bool, int, float)):
            return target
        packet = target.overloadpacket
        for alt in ("Scalar", "Tensor_Scalar"):
            if alt in packet.overloads():
                return getattr(packet, alt)
        return target

    def value_of(v):
        """An attribute value with FX nodes replaced by their SymInt values."""
        if isinstance(v, torch.fx.Node):
            if v in sym_of:
                return sym_of[v]
            raise Unmapped(f"a tensor {v.name} where a value is expected")
        if isinstance(v, (list, tuple)):
            return type(v)(value_of(e) for e in v)
        return v

    lines = []
    for n in nodes:
        if n.op in ("placeholder", "output"):
            continue
        if n.op == "call_function" and n.target is operator.getitem and n.args[0] in multi:
            names[n] = multi[n.args[0]][n.args[1]]
            continue
        val = n.meta.get("val")
        if n.op == "call_function" and is_sym(val) and not isinstance(val, torch.Tensor):
            sym_of[n] = val  # size arithmetic: folded into the attributes that use it
            continue
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload):
            raise Unmapped(f"node {n.format_node()}")
        target = scalar_overload(n.target, n.args)
        schema = target._schema
        opname = op_name(target)
        ins, attrs = [], {}
        for i, a in enumerate(schema.arguments):
            given = i < len(n.args) and not a.kwarg_only
            if given:
                v = n.args[i]
            elif a.name in n.kwargs:
                v = n.kwargs[a.name]
            elif a.has_default_value():
                v = a.default_value
            else:
                raise Unmapped(f"{opname}: argument {a.name} missing")
            ty = str(a.type)
            if is_tensor_type(ty):
                if ty.startswith("List["):
                    ins += [tensor_ref(opname, a.name, e) for e in v]
                else:
                    ins.append(tensor_ref(opname, a.name, v))
                continue
            if a.name in DROPPED_KWARGS:
                continue
            v = value_of(v)
            if a.has_default_value() and same(v, a.default_value):
                continue  # the printer omits attributes equal to their default
            attrs[a.name] = attr_text(v, ty)
        attr_s = (" {" + ", ".join(f"{k} = {attrs[k]}" for k in sorted(attrs)) + "}") if attrs else ""

        casts = []
        if isinstance(val, (tuple, list)):
            getitems = {u.args[1]: u for u in n.users if u.target is operator.getitem}
            outs, type_list = [], []
            for i in range(len(val)):
                u = getitems.get(i)
                outs.append(renamed.get(u) or fresh(u.name) if u is not None else fresh(f"{n.name}.{i}"))
                type_list.append(type_text(val[i]))
            for i in EMPTY_WHEN_UNUSED.get(opname, ()):
                if i < len(val) and getitems.get(i) is None:
                    type_list[i] = type_list[i][: type_list[i].index("[")] + "[0]"
            multi[n] = list(outs)  # what the getitems read
            for i in STATS_IN_F32.get(opname, ()):
                if i < len(val) and val[i].dtype in (torch.float16, torch.bfloat16):
                    f32 = fresh(f"{outs[i]}.f32")
                    casts.append(f"  %{outs[i]} = aten._to_copy(%{f32}) {{dtype = {DTYPES[val[i].dtype]}}}"
                                 f" : {type_list[i]}")
                    outs[i] = f32
                    type_list[i] = "f32" + type_list[i][type_list[i].index("["):]
            types = ", ".join(type_list)
        elif isinstance(val, torch.Tensor):
            outs = [renamed.get(n) or fresh(n.name)]
            names[n] = outs[0]
            types = type_text(val)
        else:
            raise Unmapped(f"{opname}: result of type {type(val).__name__}")
        lines.append(f"  {', '.join('%' + o for o in outs)} = {opname}({', '.join(ins)}){attr_s} : {types}")
        lines += casts

    ret = ", ".join(f"%{o}" for o in out_names)
    text = (f"graph @{graph_name}({', '.join(params)}) {{\n" + "\n".join(lines) + f"\n  return {ret}\n}}\n")
    return Imported(text=text, tensor_inputs=tensor_inputs, outputs=outputs)
