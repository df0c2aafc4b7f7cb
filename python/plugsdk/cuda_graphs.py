"""mode="reduce-overhead" on CUDA: a compiled inference graph's run recorded into CUDA graphs
and replayed, so a call costs one graph launch instead of the host work of every kernel and
library call (GPT-2: ~140 kernel launches and ~70 cuBLASLt calls a call).

One recording per input signature (the memo key of runtime.CompiledGraph), made on the
signature's second call, when the first has compiled and sized everything (the program's
arena, the plugin's workspaces, loaded modules). What a replay reads and writes:

- Inputs whose memory stayed put between the first two calls (parameters, buffers) are
  recorded in place, and a replay needs them at the same addresses (a moved one makes the
  call run unrecorded). Other inputs are copied into static tensors first, as torch's CUDA
  graphs do.
- The program's temporaries: the artifact's memory_generation must not have moved (a larger
  arena for another signature replaces the recorded one).
- Outputs: two recordings alternate between two sets of output tensors, so the outputs of
  the previous call stay valid while the next call runs (`out = model(x)` in a loop holds
  them). Each call hands out fresh views; before a replay writes a set, the views handed out
  from it must be gone (the storage's use count), else the call runs unrecorded and returns
  fresh tensors: results are never overwritten under a live reference.

Anything that cannot be recorded (a plugin that synchronizes or allocates during the run,
a program that waits for its kernels' failures) makes the signature run unrecorded, with
the reason logged once.
"""
from __future__ import annotations

import logging
from typing import List, Optional

import torch

log = logging.getLogger("plugsdk")


def _use_count(t: torch.Tensor) -> int:
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata)


class _Recording:
    """One CUDA graph of a run and the outputs it writes."""

    def __init__(self, graph, outs: List[torch.Tensor]):
        self.graph = graph
        self.outs = outs
        self.baseline = [_use_count(o) for o in outs]

    def free(self) -> bool:
        """No view handed out from these outputs is alive."""
        return all(_use_count(o) <= b for o, b in zip(self.outs, self.baseline))


class GraphRunner:
    """The recordings of one input signature of one compiled graph."""

    def __init__(self, artifact, shapes, dtypes, device: torch.device):
        self.artifact = artifact
        self.shapes = shapes
        self.dtypes = dtypes
        self.device = device
        self.first_ptrs: Optional[List[int]] = None  # the first call's input addresses
        self.pinned: List[bool] = []
        self.ptrs: List[int] = []
        self.statics: List[Optional[torch.Tensor]] = []
        self.recordings: List[_Recording] = []
        self.next = 0
        self.generation = -1
        self.disabled: Optional[str] = None
        self.replays = 0
        self.unrecorded_calls = 0

    @staticmethod
    def usable() -> bool:
        return hasattr(torch._C, "_storage_Use_Count") and torch.cuda.is_available()

    def run(self, run_program, ins: List[torch.Tensor], strides) -> Optional[List[torch.Tensor]]:
        """The outputs of this call through a replay (recording first when due), or None: the
        caller runs the program unrecorded."""
        if self.disabled is not None:
            return None
        ptrs = [t.data_ptr() for t in ins]
        if self.first_ptrs is None:
            self.first_ptrs = ptrs
            return None
        if not self.recordings:
            try:
                self._record(run_program, ins, ptrs, strides)
            except Exception as ex:  # a plugin or program that cannot be recorded
                self.disabled = f"{type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}"
                self.recordings = []
                log.warning("plugsdk: reduce-overhead: this signature runs without CUDA graphs: %s", self.disabled)
                return None
        for i, t in enumerate(ins):
            if self.pinned[i]:
                if ptrs[i] != self.ptrs[i]:
                    self.unrecorded_calls += 1
                    return None
        if self.artifact.memory_generation != self.generation:
            self.unrecorded_calls += 1
            return None
        rec = self.recordings[self.next]
        if not rec.free():
            self.unrecorded_calls += 1
            return None
        for i, t in enumerate(ins):
            s = self.statics[i]
            if s is not None and ptrs[i] != s.data_ptr():
                s.copy_(t)
        rec.graph.replay()
        self.next = (self.next + 1) % len(self.recordings)
        self.replays += 1
        return [o.view(o.shape) for o in rec.outs]

    def _record(self, run_program, ins, ptrs, strides):
        self.pinned = [p == q for p, q in zip(ptrs, self.first_ptrs)]
        self.ptrs = ptrs
        self.statics = [None if pin else torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
                        for t, pin in zip(ins, self.pinned)]
        for s, t in zip(self.statics, ins):
            if s is not None:
                s.copy_(t)
        graph_ins = [t if s is None else s for t, s in zip(ins, self.statics)]
        pool = None
        for _ in range(2):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                outs = [torch.empty(s, dtype=dt, device=self.device) for s, dt in zip(self.shapes, self.dtypes)]
                run_program(self.artifact, graph_ins, outs, strides)
            pool = g.pool()
            self.recordings.append(_Recording(g, outs))
        self.generation = self.artifact.memory_generation
