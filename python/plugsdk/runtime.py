"""Devices and compiled graphs: torch tensors in, torch tensors out, no copies where the
backend can use the tensors' memory in place (buffer_import, ABI 1.1)."""
from __future__ import annotations

import logging
import os
import pathlib
import threading
import weakref
from typing import Callable, Dict, List, Optional, Tuple

import torch

from .cuda_graphs import GraphRunner
from .fx_import import DTYPES, TORCH_DTYPES, Imported

log = logging.getLogger("plugsdk")

_devices: Dict[Tuple[str, int, str], object] = {}
_devices_lock = threading.Lock()


_ext = None


def _C():
    """The extension: imported on first use (so fx_import works without it), then kept (an
    import statement per call cost ~1 us, times every tensor of every call)."""
    global _ext
    if _ext is None:
        from . import _C as c
        _ext = c
    return _ext


def plugin_search_path() -> List[str]:
    """The package's own plugins (an installed wheel), then the build tree's."""
    here = pathlib.Path(__file__).resolve().parent
    path = [str(here / "plugins")]
    build = getattr(_C(), "BUILD_PLUGIN_DIR", "")
    if build:
        path.append(build)
    return path


def device(name: str = "cpu", index: int = 0, options: str = ""):
    """The open device for (plugin name, index, client options), opened once per process."""
    key = (name, index, options)
    with _devices_lock:
        d = _devices.get(key)
        if d is None:
            probe = os.environ.get("PLUGSDK_PROBE", "1") != "0"
            d = _C().open_device(name, index, options, plugin_search_path(), probe)
            _devices[key] = d
        return d


def _memory_kind(t: torch.Tensor) -> int:
    return _C().MEMORY_HOST if t.is_cpu else _C().MEMORY_DEVICE


def _tensor_tuple(t: torch.Tensor, stride=None):
    """(data pointer, dtype, shape, strides, memory kind) as the extension takes a tensor; the
    shape and strides go as torch's tuples (any sequence converts)."""
    dtype = DTYPES.get(t.dtype)
    if dtype is None:
        raise TypeError(f"plugsdk: tensors of dtype {t.dtype} are not supported")
    return (t.data_ptr(), dtype, t.shape, t.stride() if stride is None else stride, _memory_kind(t))


def run_program(program, ins, outs, in_strides=None):
    """Runs a compiled program on torch tensors. CUDA tensors, with a plugin that imports
    streams (ABI 1.2 stream_import): the run is queued on torch's current stream, ordered with
    eager work there, and returns without waiting (unless a kernel can fail at run time).
    Otherwise torch's current stream is synchronized first (the plugin launches on a stream of
    its own: inputs still being written there, outputs whose memory the caching allocator just
    freed from pending work) and the run returns after its own stream completes."""
    if in_strides is None:
        tuples_in = [_tensor_tuple(t) for t in ins]
    else:
        tuples_in = [_tensor_tuple(t, st) for t, st in zip(ins, in_strides)]
    tuples_out = [_tensor_tuple(t) for t in outs]
    for t in ins:
        if t.is_cuda:
            stream = torch.cuda.current_stream(t.device)
            if program.imports_streams:
                return program.run(tuples_in, tuples_out, stream=_native_stream(stream))
            stream.synchronize()
            break
    return program.run(tuples_in, tuples_out)


def _native_stream(stream) -> int:
    """The CUstream of a torch stream: torch's default stream is the legacy NULL stream, whose
    handle 0 means "no stream" to the core, so it goes as the driver's CU_STREAM_LEGACY (0x1)."""
    return stream.cuda_stream or 0x1


_device_names: Dict[torch.device, str] = {}


def _device_name(t: torch.Tensor) -> str:
    d = t.device
    name = _device_names.get(d)
    if name is None:
        name = _device_names[d] = d.type if d.index is None else f"{d.type}:{d.index}"
    return name


def signature(t, grad: bool = False) -> tuple:
    """What the core's guards look at: (dtype, shape, strides, device, requires_grad). Fake
    tensors with symbolic sizes give their example values. requires_grad is reported only
    for training graphs (grad=True): the graphs AOT autograd hands over are pure functions
    whose autograd is its wrapper's business."""
    if t.dtype not in DTYPES:
        raise TypeError(f"plugsdk: tensors of dtype {t.dtype} are not supported")
    return (DTYPES[t.dtype], [_hint(s) for s in t.shape], [_hint(s) for s in t.stride()], _device_name(t),
            bool(grad and t.requires_grad))


def _hint(s) -> int:
    if isinstance(s, int):
        return s
    node = getattr(s, "node", None)
    hint = getattr(node, "hint", None)
    if hint is None:
        raise TypeError(f"plugsdk: size {s} has no example value")
    return int(hint)


_functions: "weakref.WeakSet[CompiledGraph]" = weakref.WeakSet()
_functions_lock = threading.Lock()


class CompiledGraph:
    """A captured graph on one device: the core's compiled function (its artifact cache and
    guards). Called with the FX graph's flat arguments (tensors and SymInt sizes); returns
    its outputs as a list of tensors. When the core says the call cannot be compiled (the
    recompile limit, inputs on another device), `eager` runs it and the reason is logged."""

    def __init__(self, imported: Imported, fn, eager: Callable, name: str, out_device: torch.device,
                 memoize: bool = False, cuda_graphs: bool = False):
        self.imported = imported
        self.fn = fn
        self.eager = eager
        self.name = name
        self.out_device = out_device
        self.imported_count = 0
        self.copied_count = 0
        self.eager_calls = 0
        self._reasons_logged = set()
        # Inference graphs: input metadata -> (artifact, output shapes, output dtypes). The key
        # holds everything the guards look at (dtype, shape, strides, device), so a remembered
        # artifact still passes them; a hit skips select() (its signatures and guards cost
        # ~1.5 ms a call for GPT-2's 173 inputs) and is counted in the core's stats.
        self.memo: Optional[Dict[tuple, tuple]] = {} if memoize else None
        self.memo_hits = 0
        # mode="reduce-overhead" on CUDA: per memo key, the run's CUDA graphs (cuda_graphs.py).
        self.graph_runners: Optional[Dict[tuple, object]] = (
            {} if cuda_graphs and memoize and out_device.type == "cuda" and GraphRunner.usable() else None)
        with _functions_lock:
            _functions.add(self)

    def select(self, ins):
        """(artifact or None, fallback reason, compiled now) for these input tensors."""
        return self.fn.select([signature(t) for t in ins])

    def __call__(self, *args) -> List[torch.Tensor]:
        ins = [args[i] for i in self.imported.tensor_inputs]
        strides = key = None
        if self.memo is not None:
            strides = [t.stride() for t in ins]
            key = tuple((t.dtype, t.shape, st, t.device) for t, st in zip(ins, strides))
            hit = self.memo.get(key)
            if hit is not None:
                self.memo_hits += 1
                self.fn.count_hit()
                return self._run(args, ins, *hit, strides, key)
        artifact, reason, _ = self.select(ins)
        if artifact is None:
            self.eager_calls += 1
            if reason not in self._reasons_logged:
                self._reasons_logged.add(reason)
                log.warning("plugsdk: %s runs in eager torch: %s", self.name, reason)
            return list(self.eager(*args))
        shapes = artifact.output_shapes([(DTYPES[t.dtype], list(t.shape)) for t in ins])
        dtypes = [TORCH_DTYPES[dt] for dt in artifact.output_dtypes()]
        if self.memo is not None:
            self.memo[key] = (artifact, shapes, dtypes)
        return self._run(args, ins, artifact, shapes, dtypes, strides, key)

    def _run(self, args, ins, artifact, shapes, dtypes, strides=None, key=None) -> List[torch.Tensor]:
        outs = None
        if self.graph_runners is not None and key is not None and artifact.imports_streams:
            runner = self.graph_runners.get(key)
            if runner is None:
                runner = self.graph_runners[key] = GraphRunner(artifact, shapes, dtypes, self.out_device)
            outs = runner.run(run_program, ins, strides)
        if outs is None:
            outs = [torch.empty(s, dtype=dt, device=self.out_device) for s, dt in zip(shapes, dtypes)]
            imported, copied = run_program(artifact, ins, outs, strides)
            self.imported_count += imported
            self.copied_count += copied
        return [outs[i] if kind == "program" else args[i] if kind == "input" else None
                for kind, i in self.imported.outputs]

    def graph_stats(self) -> Dict[str, int]:
        """reduce-overhead on CUDA: replays, and calls that ran unrecorded."""
        runners = list((self.graph_runners or {}).values())
        return {"replays": sum(r.replays for r in runners),
                "unrecorded_calls": sum(r.unrecorded_calls for r in runners)}


def reset_cache_info() -> None:
    """Counts nothing compiled so far in later cache_info() calls (the graphs keep working)."""
    with _functions_lock:
        _functions.clear()


def cache_info() -> Dict[str, object]:
    """The core's cache counters summed over every live compiled graph: graphs, compiles,
    hits, misses (with the failed guard of each in miss_reasons), fallbacks, entries,
    compile_seconds, the eager calls the fallbacks made, and (mode="reduce-overhead" on CUDA)
    cuda_graph_replays and cuda_graph_unrecorded_calls."""
    total: Dict[str, object] = {"graphs": 0, "compiles": 0, "hits": 0, "misses": 0, "fallbacks": 0,
                                "disk_hits": 0, "disk_rejected": 0, "entries": 0, "compile_seconds": 0.0, "eager_calls": 0,
                                "cuda_graph_replays": 0, "cuda_graph_unrecorded_calls": 0, "miss_reasons": []}
    with _functions_lock:
        graphs = list(_functions)
    for g in graphs:
        st = g.fn.stats()
        total["graphs"] += 1
        total["eager_calls"] += g.eager_calls
        for k in ("compiles", "hits", "misses", "fallbacks", "disk_hits", "disk_rejected", "entries",
                  "compile_seconds"):
            total[k] += st[k]
        total["miss_reasons"] += [f"{g.name}: {r}" for r in st["miss_reasons"]]
        if isinstance(g, CompiledGraph):
            gs = g.graph_stats()
            total["cuda_graph_replays"] += gs["replays"]
            total["cuda_graph_unrecorded_calls"] += gs["unrecorded_calls"]
    return total
