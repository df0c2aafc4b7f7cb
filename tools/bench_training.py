#!/usr/bin/env python3
"""One training step (zero_grad, forward, loss, backward, SGD step) per model: eager torch,
inductor and torch.compile(backend="plugsdk") with the core's autograd, in one run.

    python3 tools/bench_training.py [--models mlp resnet18 ...] [--reps N] [--no-inductor]

Per model (random weights, train mode, a fixed random batch): the step's median time after
warm-up for each; the first step of each compiled one (Dynamo, AOT autograd's capture, and
for plugsdk the core's joint graph and both programs' compiles); the core's own stages of
that first step (prims + joint + partition = building the backward; then each program's
schedule and codegen); the bytes the forward saves for the backward (min cut vs saving
everything); and the largest loss difference from eager over the measured steps' first 5
(float32: ReLU decisions at rounding distance from zero make resnet18's trajectory diverge
at ~1e-2 after a few steps in any float32 implementation; docs/autograd.md).
/eager and /ind. are plugsdk's time over eager's and inductor's (below 1 is faster).
Writes $BUILD/bench_training.json. Inductor is vectorized only with libsleef preloaded
(`make bench-training` does it; DESIGN.md)."""
from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import sys
import time

if "--inductor-cache" not in sys.argv:
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
# plugsdk's first step is measured cold too: the CPU plugin's kernel cache starts empty
# (training artifacts do not use the core's program cache yet).
if "--plugsdk-cache" not in sys.argv:
    import tempfile
    os.environ["PLUGSDK_CACHE_DIR"] = tempfile.mkdtemp(prefix="plugsdk-bench-training-")

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
sys.path[:0] = [str(BUILD / "python"), str(ROOT / "python" / "tests")]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_util import median_ms  # noqa: E402

import acceptance_models as models  # noqa: E402

# name -> (batch, input maker or None for the model's own, loss kind, classes)
CASES = {
    "mlp": (64, None, "xent", 10),
    "resnet18": (8, lambda b, g: torch.randn(b, 3, 64, 64, generator=g), "xent", 1000),
    "transformer_encoder": (8, None, "mse", 0),
    "gpt2": (4, None, "lm", 0),
}


def loss_of(kind, out, x, target):
    if kind == "xent":
        return F.cross_entropy(out, target)
    if kind == "lm":  # next-token prediction on the input itself
        return F.cross_entropy(out[:, :-1].flatten(0, 1), x[:, 1:].flatten())
    return F.mse_loss(out, target)


def make_case(name):
    batch, inputs, kind, classes = CASES[name]
    model, x, _ = models.build(name, batch=batch, seed=0)
    model.train()
    gen = torch.Generator().manual_seed(3)
    if inputs is not None:
        x = inputs(batch, gen)
    target = (torch.randint(0, classes, (batch,), generator=gen) if kind == "xent" else
              torch.randn(x.shape, generator=gen) if kind == "mse" else None)
    return model, x, target, kind


def stepper(model, fn, x, target, kind, losses):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_of(kind, fn(x), x, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return step


def measure(name, backend, reps):
    """(first step s, median step ms, losses, plugsdk reports) for one backend (None: eager)."""
    model, x, target, kind = make_case(name)
    torch._dynamo.reset()
    fn = model if backend is None else torch.compile(model, backend=backend, dynamic=False)
    losses = []
    step = stepper(model, fn, x, target, kind, losses)
    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    ms = median_ms(step, reps)
    reports = []
    if backend == "plugsdk":
        import plugsdk
        reports = plugsdk.explain()
    return first, ms, losses, reports


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=list(CASES))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--inductor-cache", action="store_true", help="let inductor use its on-disk caches")
    ap.add_argument("--plugsdk-cache", action="store_true", help="keep $PLUGSDK_CACHE_DIR (warm kernels)")
    ap.add_argument("--json", default=str(BUILD / "bench_training.json"))
    args = ap.parse_args(argv)
    import plugsdk
    from plugsdk import backend as plugsdk_backend
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; plugsdk device cpu", flush=True)
    rows = []
    for name in args.models:
        row = {"model": name, "batch": CASES[name][0]}
        print(f"[{name}] eager ...", flush=True)
        _, row["eager_ms"], eager_losses, _ = measure(name, None, args.reps)
        if not args.no_inductor:
            print(f"[{name}] inductor (its first step compiles forward and backward) ...", flush=True)
            row["inductor_first_s"], row["inductor_ms"], _, _ = measure(name, "inductor", args.reps)
        print(f"[{name}] plugsdk ...", flush=True)
        plugsdk_backend.reports.clear()
        row["plugsdk_first_s"], row["plugsdk_ms"], losses, reports = measure(name, "plugsdk", args.reps)
        stages, saved = {}, {"min_cut": 0, "no_recompute": 0}
        for r in reports:
            for k, v in r.stage_seconds.items():
                stages[k] = stages.get(k, 0.0) + v
            for s in r.saved_bytes.values():
                saved["min_cut"] += s["saved_bytes"]
                saved["no_recompute"] += s["saved_bytes_no_recompute"]
        row["stages"] = stages
        row["joint_s"] = sum(stages.get(k, 0.0) for k in ("prims", "joint", "partition"))
        row["saved_bytes"] = saved
        row["training"] = all(r.training for r in reports) and bool(reports)
        row["fallbacks"] = sorted({f.op for r in reports for f in r.fallbacks})
        row["max_loss_diff_5"] = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses[:5], eager_losses[:5]))
        rows.append(row)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))

    def f(v, d=1):
        return "-" if v is None else f"{v:.{d}f}"

    print()
    print(f"{'model':20} {'batch':>5} {'eager ms':>9} {'inductor':>9} {'plugsdk':>9} {'/eager':>6} {'/ind.':>6} "
          f"{'1st step s: inductor':>21} {'plugsdk':>8} {'joint ms':>9} {'saved MB':>9} {'no-recomp.':>10} "
          f"{'loss diff':>9}")
    for r in rows:
        ind = r.get("inductor_ms")
        print(f"{r['model']:20} {r['batch']:>5} {f(r['eager_ms']):>9} {f(ind):>9} {f(r['plugsdk_ms']):>9} "
              f"{r['plugsdk_ms'] / r['eager_ms']:>6.2f} {f(r['plugsdk_ms'] / ind if ind else None, 2):>6} "
              f"{f(r.get('inductor_first_s'), 2):>21} {f(r['plugsdk_first_s'], 2):>8} {r['joint_s'] * 1e3:>9.1f} "
              f"{r['saved_bytes']['min_cut'] / 1e6:>9.2f} {r['saved_bytes']['no_recompute'] / 1e6:>10.2f} "
              f"{r['max_loss_diff_5']:>9.1e}" + ("" if r["training"] else "  (not a core training graph)") +
              (f"  fell back: {', '.join(r['fallbacks'])}" if r["fallbacks"] else ""))
    print("plugsdk's stages of the first step (joint = prims + joint + partition), ms:")
    for r in rows:
        print(f"  {r['model']:20} " + ", ".join(f"{k} {v * 1e3:.0f}" for k, v in r["stages"].items()))
    print(f"results in {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
