"""torch.compile(model, backend="plugsdk"): the Dynamo backend.

Dynamo hands over a torch-level FX graph. AOT autograd lowers it to a functional ATen graph
under fake tensors (parameters become inputs, in-place ops their functional forms, sizes
symbolic when Dynamo made them dynamic). The ATen graph is split by what the core can
lower: supported parts are imported (fx_import) and compiled for the device, the rest runs
in eager torch, and every op that fell back is logged with its reason.

Options (torch.compile(..., options={...})):
  device          plugin name: "cpu" (default), "cuda", "level_zero", or any plugin on the path
  device_index    the plugin's device (default 0)
  backend_options the plugin's client options, "key=value;..."
  fallback        True (default): unsupported ops run in eager torch; False: raise
                  UnsupportedOpError naming the op
  dump_dir        write the stage dumps (ATen graph .pgraph, prims, program, generated code)
  dynamic_policy  how the core's cache treats the size symbols of a graph Dynamo made dynamic:
                  "symbolic" (default: Dynamo already saw the size change), "automatic" (compile
                  the first sizes as constants, symbolic once they change), "static" (every new
                  size compiles, up to recompile_limit)
  recompile_limit compiles per graph after which a new input signature runs in eager torch
                  with a logged reason (default 8)
  mode            "default"; "reduce-overhead" (inference graphs on CUDA tensors are recorded
                  into CUDA graphs on a signature's second call and replayed after: one graph
                  launch a call; parameters stay in place, other inputs are copied into static
                  tensors; see cuda_graphs.py. Elsewhere the same as default, where every
                  inference graph remembers, per input signature, the artifact and output specs
                  it selected); "max-autotune" (each specialization is compiled under several
                  schedule variants, timed on the device at the call's sizes, the fastest kept;
                  explain() lists the times). torch.compile(mode=...) passes it too.
  cache_dir       the persistent program cache ("off" disables it); default $PLUGSDK_CACHE_DIR/core,
                  $XDG_CACHE_HOME/plugsdk/core or ~/.cache/plugsdk/core
  autograd        "core" (default): when the graph's inputs require grad (training), the core
                  builds the backward from its own VJP rules and partitions forward and backward
                  (core/autograd, python/plugsdk/training.py); "aot": torch's AOT autograd derives
                  the backward graph and the core compiles both halves as separate graphs

Guards and the artifact cache are the core's (core/cache): every compiled graph checks its
inputs' dtype, rank, sizes or symbol constraints, stride class, device and requires_grad on
each call and recompiles on a miss; plugsdk.cache_info() reads the counters.
"""
from __future__ import annotations

import logging
import operator
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

from . import attention_rewrite, decompositions, fx_import, runtime, training

log = logging.getLogger("plugsdk")
_level = os.environ.get("PLUGSDK_LOG", "").lower()
if _level in ("info", "debug"):
    logging.basicConfig()
    log.setLevel(logging.DEBUG if _level == "debug" else logging.INFO)

KNOWN_OPTIONS = {"device", "device_index", "backend_options", "fallback", "dump_dir", "dynamic_policy",
                 "recompile_limit", "cache_dir", "mode", "autograd"}
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class UnsupportedOpError(RuntimeError):
    """An op the core cannot lower, with fallback=False."""


@dataclass
class Fallback:
    op: str
    node: str
    reason: str


@dataclass
class GraphReport:
    """What happened to one graph Dynamo handed over (explain() returns these)."""
    ops: int = 0
    compiled_partitions: int = 0
    eager_partitions: int = 0
    fallbacks: List[Fallback] = field(default_factory=list)
    stage_seconds: Dict[str, float] = field(default_factory=dict)
    text: List[str] = field(default_factory=list)
    autotune: Dict[str, dict] = field(default_factory=dict)  # max-autotune: per graph, variant times and winner
    training: bool = False  # the core built the backward (autograd="core")
    saved_bytes: Dict[str, dict] = field(default_factory=dict)  # training: per graph, the partition's stats


reports: List[GraphReport] = []


def _options(options: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    opts = dict(options or {})
    unknown = set(opts) - KNOWN_OPTIONS
    if unknown:
        raise ValueError(f"plugsdk: unknown option(s) {sorted(unknown)}; known: {sorted(KNOWN_OPTIONS)}")
    opts.setdefault("device", "cpu")
    opts.setdefault("device_index", 0)
    opts.setdefault("backend_options", "")
    opts.setdefault("fallback", True)
    opts.setdefault("dump_dir", os.environ.get("PLUGSDK_DUMP", ""))
    opts.setdefault("dynamic_policy", "symbolic")
    opts.setdefault("recompile_limit", 8)
    if "cache_dir" not in opts:
        opts["cache_dir"] = runtime._C().default_cache_dir()
    opts.setdefault("mode", "default")
    opts.setdefault("autograd", "core")
    if opts["autograd"] not in ("core", "aot"):
        raise ValueError(f"plugsdk: autograd {opts['autograd']!r}: want 'core' or 'aot'")
    if opts["mode"] not in MODES:
        raise ValueError(f"plugsdk: mode {opts['mode']!r}: want one of {', '.join(MODES)}")
    if opts["dynamic_policy"] not in ("symbolic", "automatic", "static"):
        raise ValueError(f"plugsdk: dynamic_policy {opts['dynamic_policy']!r}: want 'symbolic', 'automatic' or 'static'")
    return opts


def _supported_ops() -> set:
    return set(runtime._C().decomposed_ops())


def _unsupported_reason(node: torch.fx.Node, supported: set) -> Optional[str]:
    if node.op != "call_function":
        return None
    if isinstance(node.target, torch._ops.OpOverload):
        name = fx_import.op_name(node.target)
        if name not in supported:
            return f"the core has no lowering for {name}"
        val = node.meta.get("val")
        vals = val if isinstance(val, (list, tuple)) else [val]
        for v in vals:
            if isinstance(v, torch.Tensor) and v.dtype not in fx_import.DTYPES:
                return f"dtype {v.dtype} is not supported"
        return None
    if fx_import.is_sym(node.meta.get("val")):
        return None  # size arithmetic
    if node.target is operator.getitem:
        return None
    return f"{node.target} is not an ATen op"


def _eager_callable(gm: torch.fx.GraphModule):
    return lambda *args: list(_as_tuple(gm(*args)))


def _compile_part(gm: torch.fx.GraphModule, name: str, opts, report: GraphReport, train: bool = False,
                  num_mutated: int = 0, requires_grad: Optional[List[bool]] = None):
    """The graph imported into the core as a compiled function, compiled now for the example
    inputs Dynamo traced with (so that an op the device lacks is an error here, not at the
    first call)."""
    dev = runtime.device(opts["device"], opts["device_index"], opts["backend_options"])
    t0 = time.perf_counter()
    imported = fx_import.to_pgraph(gm, name)
    import_s = time.perf_counter() - t0
    dump = opts["dump_dir"]
    if dump:
        os.makedirs(dump, exist_ok=True)
        with open(os.path.join(dump, f"{name}.fx.txt"), "w") as f:
            f.write(gm.print_readable(print_output=False))
        with open(os.path.join(dump, f"{name}.aten.pgraph"), "w") as f:
            f.write(imported.text)
    examples = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    ins = [examples[i] for i in imported.tensor_inputs]
    input_device = runtime._device_name(ins[0]) if ins else "cpu"
    differentiable = []
    if train and num_mutated:  # buffer updates (AOT's first outputs) get no tangent
        differentiable = [True] * (max((i for kind, i in imported.outputs if kind == "program"), default=-1) + 1)
        for k, (kind, i) in enumerate(imported.outputs):
            if kind == "program" and k < num_mutated:
                differentiable[i] = False
    fn = runtime._C().Function(dev, imported.text, opts["dynamic_policy"], int(opts["recompile_limit"]),
                               input_device, os.path.join(dump, name) if dump else "", opts["cache_dir"] or "off",
                               opts["mode"].startswith("max-autotune") and not train, train, differentiable)
    graph_cls = training.TrainingGraph if train else runtime.CompiledGraph
    extra = {} if train else {"cuda_graphs": opts["mode"] == "reduce-overhead"}
    compiled = graph_cls(imported, fn, _eager_callable(gm), name, torch.device(input_device),
                         memoize=not train, **extra)
    if train and requires_grad is not None and len(requires_grad) == len(examples):
        artifact, reason, _ = compiled.select(ins, [requires_grad[i] for i in imported.tensor_inputs])
    else:
        artifact, reason, _ = compiled.select(ins)
    if artifact is None:
        raise runtime._C().Error(f"cannot compile {name}: {reason}")
    stages = {"fx_import": import_s, **dict(artifact.stage_seconds)}
    if artifact.backward is not None:
        report.saved_bytes[name] = dict(artifact.backward.stats)
    for k, v in stages.items():
        report.stage_seconds[k] = report.stage_seconds.get(k, 0.0) + v
    report.text.append(imported.text)
    if artifact.autotune:
        report.autotune[name] = {"times_ms": dict(artifact.autotune), "winner": artifact.autotune_winner}
    log.info("plugsdk: compiled %s on %s: %d kernels, %d library calls, %s", name, dev.describe(),
             artifact.kernels, artifact.library_calls,
             ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in stages.items()))
    return compiled


def compile_aten(gm: torch.fx.GraphModule, example_inputs, opts, name: str = "graph", train: bool = False,
                 num_mutated: int = 0, requires_grad: Optional[List[bool]] = None,
                 mutated_inputs: Optional[List[int]] = None):
    """Compiles an ATen-level FX graph (nodes carry meta['val']); returns a callable taking
    the graph's flat arguments and returning its outputs as a list. train: the graph is a
    forward whose inputs may require grad: the core builds its backward (training.py);
    num_mutated: its first outputs are buffer updates (no gradient); requires_grad: per
    placeholder, the flag its real input has (the fake tensors AOT traced with lack it), so that
    the compile done now is the one the first call selects; mutated_inputs: the placeholders
    AOT's wrapper updates in place after the call (buffers), which the backward must not read
    by reference."""
    mutated_inputs = mutated_inputs or []
    constants = _lift_constants(gm)
    if constants:
        # The constants are passed after the graph's own arguments on every call.
        if requires_grad is not None:
            requires_grad = list(requires_grad) + [False] * len(constants)
        inner = compile_aten(gm, example_inputs, opts, name, train, num_mutated, requires_grad, mutated_inputs)

        def call(args):
            return inner(list(args) + constants)
        call._boxed_call = True
        return call
    report = GraphReport(training=train)
    reports.append(report)
    supported = _supported_ops()
    unsupported = {}
    for n in gm.graph.nodes:
        if n.op == "call_function":
            report.ops += 1
            why = _unsupported_reason(n, supported)
            if why:
                unsupported[n] = why
    for n, why in unsupported.items():
        op = fx_import.op_name(n.target) if isinstance(n.target, torch._ops.OpOverload) else str(n.target)
        if not opts["fallback"]:
            raise UnsupportedOpError(f"plugsdk: {op} ({n.name}) cannot run on {opts['device']}: {why} "
                                     "(options={'fallback': False})")
        report.fallbacks.append(Fallback(op=op, node=n.name, reason=why))
        log.warning("plugsdk: %s (%s) falls back to eager torch: %s", op, n.name, why)
    if not unsupported:
        try:
            compiled = _compile_part(gm, name, opts, report, train, num_mutated, requires_grad)
            report.compiled_partitions = 1
            if train:
                compiled.mutated = {k for k, i in enumerate(compiled.imported.tensor_inputs) if i in mutated_inputs}
            return _boxed(_trained(compiled, num_mutated) if train else compiled)
        except fx_import.Unmapped as e:
            return _eager_whole(gm, report, opts, f"cannot import the graph: {e}", train, num_mutated, mutated_inputs)
        except runtime._C().Error as e:
            return _eager_whole(gm, report, opts, f"cannot compile the graph: {e}", train, num_mutated,
                                mutated_inputs)
    return _partitioned(gm, set(unsupported), opts, report, name, train, num_mutated, mutated_inputs)


def _lift_constants(gm: torch.fx.GraphModule) -> List[torch.Tensor]:
    """Tensor constants of the traced code (get_attr nodes: torch.tensor(...) in a model's
    forward) become placeholders after the graph's own, in place in `gm`; returns their
    values, which the caller passes after the arguments."""
    constants = []
    last = None
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            last = n
    for n in list(gm.graph.nodes):
        if n.op != "get_attr":
            continue
        value = gm
        for part in n.target.split("."):
            value = getattr(value, part)
        if not isinstance(value, torch.Tensor):
            continue
        with gm.graph.inserting_after(last) if last is not None else gm.graph.inserting_before(
                next(iter(gm.graph.nodes))):
            p = gm.graph.placeholder(f"const_{n.name}")
        p.meta = dict(n.meta)
        if "val" not in p.meta:
            p.meta["val"] = value
        n.replace_all_uses_with(p)
        gm.graph.erase_node(n)
        last = p
        constants.append(value)
    if constants:
        gm.recompile()
    return constants


def _trained(fn, num_mutated: int, clone: Optional[List[int]] = None):
    """A training graph's callable: AOT's inference wrapper calls it with grad disabled, so
    grad is enabled again around it (Dynamo compiled this graph for grad mode); buffer
    updates leave detached (the wrapper copies them into the buffers). clone: arguments eager
    torch gets copies of, since its autograd may save them and the wrapper then updates them."""
    def call(*args):
        if clone:
            args = tuple(a.clone() if k in clone else a for k, a in enumerate(args))
        with torch.enable_grad():
            outs = list(fn(*args))
        for k in range(num_mutated):
            if isinstance(outs[k], torch.Tensor):
                outs[k] = outs[k].detach()
        return outs
    return call


def _eager_whole(gm, report: GraphReport, opts, why: str, train: bool = False, num_mutated: int = 0,
                 mutated_inputs: Optional[List[int]] = None):
    if not opts["fallback"]:
        raise UnsupportedOpError(f"plugsdk: {why}")
    log.warning("plugsdk: the whole graph runs in eager torch: %s", why)
    report.fallbacks.append(Fallback(op="<graph>", node="", reason=why))
    report.eager_partitions = 1
    eager = _eager_callable(gm)
    return _boxed(_trained(eager, num_mutated, mutated_inputs) if train else eager)


def _as_tuple(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _partitioned(gm: torch.fx.GraphModule, unsupported: set, opts, report: GraphReport, name: str,
                 train: bool = False, num_mutated: int = 0, mutated_inputs: Optional[List[int]] = None):
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node.op == "call_function" and node not in unsupported

    parts = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True)
    fused = parts.fuse_partitions(parts.propose_partitions())
    for sub in list(fused.graph.nodes):
        if sub.op != "call_module":
            continue
        module = getattr(fused, sub.target)
        part_name = f"{name}_{sub.target}"
        try:
            compiled = _compile_part(module, part_name, opts, report, train)
        except (fx_import.Unmapped, runtime._C().Error) as e:
            if not opts["fallback"]:
                raise UnsupportedOpError(f"plugsdk: {part_name}: {e}") from e
            log.warning("plugsdk: partition %s runs in eager torch: %s", part_name, e)
            report.fallbacks.append(Fallback(op="<partition>", node=part_name, reason=str(e)))
            report.eager_partitions += 1
            continue
        setattr(fused, sub.target, _PartModule(compiled, _single_output(module)))
        report.compiled_partitions += 1
    report.eager_partitions += sum(1 for n in fused.graph.nodes if n.op == "call_function")
    fused.recompile()
    call = lambda *args: list(_as_tuple(fused(*args)))  # noqa: E731
    return _boxed(_trained(call, num_mutated, mutated_inputs) if train else call)


def _single_output(gm: torch.fx.GraphModule) -> bool:
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    return not isinstance(out.args[0], (tuple, list))


class _PartModule(torch.nn.Module):
    """A compiled partition in the fused graph module's place."""

    def __init__(self, compiled, single: bool):
        super().__init__()
        self.compiled = compiled
        self.single = single

    def forward(self, *args):
        outs = self.compiled(*args)
        return outs[0] if self.single else tuple(outs)


def _boxed(fn):
    def call(args):
        out = fn(*args)
        args.clear()
        return out
    call._boxed_call = True
    return call


def plugsdk_backend(gm: torch.fx.GraphModule, example_inputs, mode: Optional[str] = None,
                    options: Optional[Dict[str, Any]] = None):
    """The Dynamo backend: AOT autograd to ATen, then compile_aten on each graph. When grad is
    enabled and an input requires grad (training) and autograd="core", AOT autograd traces
    the forward only (under no_grad) and the core builds the backward."""
    from torch._functorch.aot_autograd import aot_module_simplified

    opts = _options(dict(options or {}, **({"mode": mode} if mode else {})))
    attention_rewrite.rewrite(gm)  # attention as one op, never torch's f32 math path
    counter = {"n": 0}
    train = (opts["autograd"] == "core" and torch.is_grad_enabled()
             and any(isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs))
    # AOT's graph inputs: gm's parameters and buffers (when Dynamo did not lift them), then the inputs.
    flags = ([p.requires_grad for p in gm.parameters()] + [False for _ in gm.buffers()]
             + [isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs])

    def fw_compiler(aten_gm: torch.fx.GraphModule, fake_inputs):
        counter["n"] += 1
        mutated, mutated_inputs = _mutations() if train else (0, [])
        return compile_aten(aten_gm, fake_inputs, opts, name=f"forward{counter['n']}", train=train,
                            num_mutated=mutated, requires_grad=flags, mutated_inputs=mutated_inputs)

    def bw_compiler(aten_gm: torch.fx.GraphModule, fake_inputs):
        counter["n"] += 1
        return compile_aten(aten_gm, fake_inputs, opts, name=f"backward{counter['n']}")

    if not train:
        return aot_module_simplified(gm, example_inputs, fw_compiler=fw_compiler, bw_compiler=bw_compiler,
                                     decompositions=_decompositions())
    with torch.no_grad():
        return aot_module_simplified(gm, example_inputs, fw_compiler=fw_compiler, decompositions=_decompositions())


def _mutations():
    """(how many of the graph's first outputs are inputs' new values, the indices of those
    inputs) from AOT's metadata."""
    from torch._guards import TracingContext

    tc = TracingContext.try_get()
    meta = getattr(tc, "fw_metadata", None) if tc is not None else None
    if meta is None:
        return 0, []
    return int(meta.num_mutated_inp_runtime_indices), list(meta.mutated_inp_runtime_indices)


_decomposition_table = None


def _decompositions():
    global _decomposition_table
    if _decomposition_table is None:
        _decomposition_table = decompositions.table(_supported_ops(), fx_import.op_name)
    return _decomposition_table
