#!/usr/bin/env python3
"""torch.compile(backend="plugsdk") against eager torch and inductor, per model, in one run.

    python3 tools/bench_models.py [--models resnet18 gpt2 ...] [--batch N] [--device cpu]

For each model of python/tests/acceptance_models.py (random weights): eager run time; inductor's first
call (its compile) and run time; plugsdk's first call in a fresh process with empty caches
(cold), again in a second process over the caches the first one wrote (warm: programs from
the core's disk cache, kernels from the plugin's), and its run time; the largest difference
from eager. Run times are medians after warm-up; /eager and /ind. = plugsdk's time over
eager's and inductor's (below 1 is faster).
`make demo` runs it on torchvision resnet18 at batch 8. Exits non-zero when a model's result
is off eager by more than its tolerance.

Inductor is vectorized only with libsleef preloaded (the Makefile does it; DESIGN.md)."""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

# Inductor's compile time is measured cold (as tools/bench.py does): --inductor-cache keeps
# its on-disk caches.
if "--inductor-cache" not in sys.argv:
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
sys.path[:0] = [str(BUILD / "python"), str(ROOT / "python" / "tests")]

import torch  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_util import median_ms  # noqa: E402

import acceptance_models as models  # noqa: E402




def worker(name: str, batch: int, device: str, reps: int) -> dict:
    """One plugsdk measurement in this process (the caches are whatever PLUGSDK_CACHE_DIR holds)."""
    import plugsdk
    model, x, tol = models.build(name, batch)
    with torch.no_grad():
        want = model(x)
        compiled = torch.compile(model, backend="plugsdk", dynamic=False, options={"device": device})
        t0 = time.perf_counter()
        got = compiled(x)
        first_s = time.perf_counter() - t0
        run_ms = median_ms(lambda: compiled(x), reps)
    info = plugsdk.cache_info()
    stages = {}
    for r in plugsdk.explain():
        for k, v in r.stage_seconds.items():
            stages[k] = stages.get(k, 0.0) + v
    fallbacks = sorted({f.op for r in plugsdk.explain() for f in r.fallbacks})
    return {"first_s": first_s, "run_ms": run_ms, "max_err": (got - want).abs().max().item(),
            "scale": want.abs().max().item(), "tol": tol, "disk_hits": info["disk_hits"],
            "compiles": info["compiles"], "stages": stages, "fallbacks": fallbacks}


def plugsdk_in_process(name, batch, device, reps, cache_dir) -> dict:
    env = dict(os.environ, PLUGSDK_CACHE_DIR=str(cache_dir))
    env.pop("LD_PRELOAD", None)
    cmd = [sys.executable, __file__, "--worker", name, "--batch", str(batch), "--device", device, "--reps", str(reps)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"plugsdk on {name} failed:\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=list(models.MODELS))
    ap.add_argument("--batch", type=int, default=0, help="0: each model's default")
    ap.add_argument("--device", default="cpu", help="the plugsdk plugin")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--inductor-cache", action="store_true", help="let inductor use its on-disk caches")
    ap.add_argument("--json", default=str(BUILD / "bench_models.json"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.batch, args.device, args.reps)))
        return 0
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; plugsdk device {args.device}", flush=True)
    rows, bad = [], []
    for name in args.models:
        model, x, _ = models.build(name, args.batch)
        row = {"model": name, "batch": x.shape[0]}
        with torch.no_grad():
            print(f"[{name}] eager ...", flush=True)
            row["eager_ms"] = median_ms(lambda: model(x), args.reps)
            if not args.no_inductor:
                print(f"[{name}] inductor compile ...", flush=True)
                torch._dynamo.reset()
                ind = torch.compile(model)
                t0 = time.perf_counter()
                ind(x)
                row["inductor_compile_s"] = time.perf_counter() - t0
                row["inductor_ms"] = median_ms(lambda: ind(x), args.reps)
        with tempfile.TemporaryDirectory(prefix="plugsdk-bench-cache-") as cache:
            print(f"[{name}] plugsdk, cold (empty caches) ...", flush=True)
            cold = plugsdk_in_process(name, args.batch, args.device, args.reps, cache)
            print(f"[{name}] plugsdk, warm (a second process) ...", flush=True)
            warm = plugsdk_in_process(name, args.batch, args.device, args.reps, cache)
        row.update(plugsdk_cold_s=cold["first_s"], plugsdk_warm_s=warm["first_s"],
                   plugsdk_ms=min(cold["run_ms"], warm["run_ms"]), max_err=cold["max_err"], scale=cold["scale"],
                   stages=cold["stages"], stages_warm=warm["stages"], warm_disk_hits=warm["disk_hits"], fallbacks=cold["fallbacks"])
        rtol, atol = cold["tol"]
        if cold["max_err"] > atol * cold["scale"] + rtol * cold["scale"]:
            bad.append(name)
        rows.append(row)
    pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))

    def f(v, d=1):
        return "-" if v is None else f"{v:.{d}f}"

    print()
    print(f"{'model':20} {'batch':>5} {'eager ms':>9} {'inductor':>9} {'plugsdk':>9} {'/eager':>6} {'/ind.':>6} "
          f"{'compile s: inductor':>20} {'plugsdk cold':>13} {'warm':>6} {'max |err|':>10}")
    for r in rows:
        print(f"{r['model']:20} {r['batch']:>5} {f(r['eager_ms']):>9} {f(r.get('inductor_ms')):>9} "
              f"{f(r['plugsdk_ms']):>9} {r['plugsdk_ms'] / r['eager_ms']:>6.2f} "
              f"{f(r['plugsdk_ms'] / r['inductor_ms'] if r.get('inductor_ms') else None, 2):>6} "
              f"{f(r.get('inductor_compile_s'), 2):>20} {f(r['plugsdk_cold_s'], 2):>13} {f(r['plugsdk_warm_s'], 2):>6} "
              f"{r['max_err']:>10.1e}" + (f"  fell back: {', '.join(r['fallbacks'])}" if r["fallbacks"] else ""))
    print("compile = the first call (Dynamo + AOT autograd + the backend); plugsdk's own stages, cold | warm:")
    for r in rows:
        print(f"  {r['model']:20} " + ", ".join(f"{k} {v * 1e3:.0f}" for k, v in r["stages"].items()) + " ms | " +
              ", ".join(f"{k} {v * 1e3:.0f}" for k, v in r["stages_warm"].items()) + " ms")
    print(f"results in {args.json}")
    if bad:
        print(f"FAILED: {', '.join(bad)} differ from eager by more than their tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
