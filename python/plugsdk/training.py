"""Training through the core's autograd (core/autograd): a graph whose inputs require grad
is compiled by the core into a forward program that also returns what the backward needs
and a backward program built from the core's own VJP rules, partitioned by a min cut over
saved bytes. A torch.autograd.Function runs the two: forward on the call, backward when
torch's autograd reaches it (loss.backward()).

torch's AOT autograd still captures and functionalizes the graph (it is traced as an
inference graph under no_grad: parameters become inputs, in-place ops functional, buffer
updates extra outputs that its wrapper copies back); it derives no backward. Outputs that
are buffer updates get no tangent; outputs that are integers carry no gradient.
"""
from __future__ import annotations

from typing import List

import torch

from .fx_import import DTYPES, TORCH_DTYPES
from .runtime import CompiledGraph, run_program, signature


def _alloc(program, ins, device, memo=None) -> List[torch.Tensor]:
    """The program's outputs for inputs `ins`, as new tensors. `memo` (a dict the caller keeps
    for this program) remembers the output shapes and dtypes per input shapes: asking the core
    converts every input's shape, which cost ~0.5 ms a call for a GPT-2 step's 300 tensors."""
    key = tuple(t.shape for t in ins) if memo is not None else None
    meta = memo.get(key) if memo is not None else None
    if meta is None:
        shapes = program.output_shapes([(DTYPES[t.dtype], list(t.shape)) for t in ins])
        meta = list(zip(shapes, [TORCH_DTYPES[d] for d in program.output_dtypes()]))
        if memo is not None:
            memo[key] = meta
    return [torch.empty(s, dtype=dt, device=device) for s, dt in meta]


def _run(program, ins, device, memo=None) -> List[torch.Tensor]:
    outs = _alloc(program, ins, device, memo)
    run_program(program, ins, outs)
    return outs


def _memo(graph, artifact, kind: str) -> dict:
    """The output-shape memo of `artifact`'s forward or backward program, kept on the graph
    (which holds the artifact, so the id names it while the entry lives)."""
    memos = graph.__dict__.setdefault("_output_memos", {})
    entry = memos.get((id(artifact), kind))
    if entry is None or entry[0] is not artifact:
        entry = memos[(id(artifact), kind)] = (artifact, {})
    return entry[1]


_zeros_cache: dict = {}


def _zeros(shape, dtype, device) -> torch.Tensor:
    """A zero gradient for an output the loss did not use, shared across steps: programs never
    write their inputs (GPT-2's step had 24 such tangents, a fresh torch.zeros each)."""
    key = (tuple(shape), dtype, device)
    z = _zeros_cache.get(key)
    if z is None:
        z = _zeros_cache[key] = torch.zeros(shape, dtype=dtype, device=device)
    return z


class _CompiledStep(torch.autograd.Function):
    """forward: the artifact's forward program; backward: its backward program."""

    @staticmethod
    def forward(ctx, graph, artifact, *ins):
        bw = artifact.backward
        outs = _run(artifact, ins, graph.out_device, _memo(graph, artifact, "forward"))
        n = len(outs) - bw.num_saved
        fw, saved = outs[:n], outs[n:]
        # an input the caller updates in place after this call (a buffer) is saved as a copy
        mutated = graph.mutated
        ctx.save_for_backward(*[ins[i].clone() if i in mutated else ins[i] for i in bw.saved_inputs], *saved)
        ctx.bw = bw
        ctx.bw_memo = _memo(graph, artifact, "backward")
        ctx.device = graph.out_device
        ctx.out_meta = [(t.shape, t.dtype) for t in fw]
        ctx.num_inputs = len(ins)
        ctx.set_materialize_grads(False)  # an output the loss did not use arrives as None
        tangents = set(bw.tangent_of)
        nondiff = [t for i, t in enumerate(fw) if i not in tangents]
        if nondiff:
            ctx.mark_non_differentiable(*nondiff)
        return tuple(fw)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        bw = ctx.bw
        result = [None] * ctx.num_inputs
        present = [grads[i] is not None for i in bw.tangent_of]
        if bw.has_program and any(present):
            tangents = []
            for i in bw.tangent_of:
                g = grads[i]
                if g is None:
                    shape, dtype = ctx.out_meta[i]
                    g = _zeros(shape, dtype, ctx.device)
                tangents.append(g.contiguous())
            gs = _run(bw, list(ctx.saved_tensors) + tangents, ctx.device, ctx.bw_memo)
            for g, i, deps in zip(gs, bw.grad_of, bw.grad_tangents):
                # a gradient only unused outputs reach stays None, as in eager autograd
                result[i] = g if any(present[d] for d in deps) else None
        return (None, None, *result)


class TrainingGraph(CompiledGraph):
    """A CompiledGraph whose artifacts are training pairs when its inputs require grad (the
    core's guards include requires_grad, so a call without grad gets an inference artifact)."""

    mutated: set = set()  # tensor-input positions AOT's wrapper updates in place after the call

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._training_memo: dict = {}  # input metadata -> the artifact select() chose for it

    def select(self, ins, requires_grad=None):
        """requires_grad: per input, overrides the tensors' flags (fake tensors lack them)."""
        if requires_grad is None:
            return self.fn.select([signature(t, grad=True) for t in ins])
        sigs = [signature(t)[:4] + (bool(g),) for t, g in zip(ins, requires_grad)]
        return self.fn.select(sigs)

    def __call__(self, *args) -> List[torch.Tensor]:
        ins = [args[i] for i in self.imported.tensor_inputs]
        # The artifact per input metadata, as inference graphs memoize it (runtime.py): the key
        # holds all the guards look at, requires_grad included, so a remembered artifact still
        # passes them; a hit skips select() (~1 ms a step for vit_b_16's 153 inputs).
        key = tuple((t.dtype, t.shape, t.stride(), t.device, t.requires_grad) for t in ins)
        artifact = self._training_memo.get(key)
        if artifact is not None:
            self.memo_hits += 1
            self.fn.count_hit()
        else:
            artifact, reason, _ = self.select(ins)
            if artifact is not None:
                self._training_memo[key] = artifact
        if artifact is None:
            self.eager_calls += 1
            if reason not in self._reasons_logged:
                self._reasons_logged.add(reason)
                from .runtime import log
                log.warning("plugsdk: %s runs in eager torch: %s", self.name, reason)
            with torch.enable_grad():
                return list(self.eager(*args))
        if artifact.backward is None:  # nothing requires grad
            outs = _run(artifact, ins, self.out_device)
        else:
            with torch.enable_grad():
                outs = list(_CompiledStep.apply(self, artifact, *ins))
        return [outs[i] if kind == "program" else args[i] if kind == "input" else None
                for kind, i in self.imported.outputs]
