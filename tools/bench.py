#!/usr/bin/env python3
"""`make bench`: the CPU backend against eager torch and inductor, side by side in one run.

    tools/toolbox run env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 python3 tools/bench.py [--only NAME ...]

Each workload is a torch module with random weights. Its forward is captured at the ATen
level (conformance/models/generate.py's make_fx capture) into a .pgraph file, which
`plugsdk run --backend cpu` compiles and runs: once with an empty compile cache (cold
compile), once with the cache it filled (warm compile), timing only the launches (inputs
uploaded once). Eager torch and torch.compile (inductor) run the same module in this
process. Inductor is only vectorized when libsleef is preloaded (DESIGN.md's pitfalls): the
script refuses to report an unvectorized inductor as the baseline.

Prints a table (medians after warm-up; ratio = plugsdk / inductor, below 1 is faster) and
writes it as JSON (--json, default build/bench.json). The limit column is the physical
bound measured here: bytes moved over the measured copy bandwidth, or flops over OpenBLAS's
sgemm rate at 2048^3 (torch.mm) on the same threads.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

# Inductor's compile time is measured cold: its on-disk caches would otherwise turn a
# second `make bench` into a cache hit (--inductor-cache keeps them).
if "--inductor-cache" not in sys.argv:
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")

import torch  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_util import median_ms  # noqa: E402
import torch.nn as nn  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "conformance" / "models"))
import generate  # noqa: E402  (the .pgraph capture)

BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
CLI = BUILD / "bin" / "plugsdk"


class SinCos(nn.Module):
    def forward(self, x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2


class MLP(nn.Module):
    def __init__(self, width=1024, layers=4):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())])

    def forward(self, x):
        return self.layers(x)


class MatMul(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, n))

    def forward(self, x):
        return x @ self.w


def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None)


# name -> (module constructor, input shape, kind, work): kind "bytes" or "flops", the
# work each run must do at least (bytes moved or flops).
def workloads():
    n = 1 << 24
    return {
        "sin2+cos2 2^24 f32": (SinCos, (n,), "bytes", 8 * n),
        "mlp 4x1024 b256": (MLP, (256, 1024), "flops", 4 * 2 * 256 * 1024 * 1024),
        "gemm 2048^3": (lambda: MatMul(2048), (2048, 2048), "flops", 2 * 2048 ** 3),
        "resnet18 b8 224": (resnet18, (8, 3, 224, 224), "flops", 8 * 2 * 1.814e9),
    }




def limits():
    """Measured copy bandwidth (GB/s, read + write) and sgemm rate (GFLOP/s) on these threads."""
    x = torch.randn(1 << 26)
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x), 10)
    bw = 2 * x.numel() * 4 / (ms * 1e-3) / 1e9
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    ms = median_ms(lambda: torch.mm(a, b), 5)
    return bw, 2 * 2048 ** 3 / (ms * 1e-3) / 1e9


def plugsdk_run(pgraph, cache, reps, timeout):
    out = pgraph.with_suffix(".json")
    env = dict(os.environ, PLUGSDK_CACHE_DIR=str(cache))
    env.pop("LD_PRELOAD", None)
    cmd = [str(CLI), "run", str(pgraph), "--backend", "cpu", "--repeat", str(reps), "--quiet", "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="workloads whose name contains one of these")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default=str(BUILD / "bench.json"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per plugsdk run")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--inductor-cache", action="store_true", help="let inductor use its on-disk caches")
    args = ap.parse_args(argv)

    threads = len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    from torch._inductor import cpu_vec_isa
    isa = str(cpu_vec_isa.pick_vec_isa())
    if not args.no_inductor and isa in ("", "INVALID_VEC_ISA"):
        print("inductor would not be vectorized (pick_vec_isa() is INVALID_VEC_ISA): run with "
              "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libsleef.so.3 (make bench does)", file=sys.stderr)
        return 2
    bw, gflops = limits()
    print(f"threads {threads}, torch {torch.__version__}, inductor vec ISA {isa}; "
          f"measured copy bandwidth {bw:.1f} GB/s, sgemm 2048^3 {gflops:.0f} GFLOP/s", flush=True)
    rows = []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="plugsdk-bench-"))
    for name, (ctor, shape, kind, work) in workloads().items():
        if args.only and not any(o in name for o in args.only):
            continue
        torch.manual_seed(0)
        model = ctor().eval()
        for p in model.parameters():
            p.requires_grad_(False)
        x = torch.randn(shape)
        row = {"workload": name, "kind": kind, "work": work}
        with torch.no_grad():
            row["eager_ms"] = median_ms(lambda: model(x), args.reps)
            if not args.no_inductor:
                torch._dynamo.reset()
                t = time.perf_counter()
                compiled = torch.compile(model)
                compiled(x)
                row["inductor_compile_s"] = time.perf_counter() - t
                row["inductor_ms"] = median_ms(lambda: compiled(x), args.reps)
        # plugsdk: capture to .pgraph, then the CLI with a cold and a warm cache.
        inputs = generate.graph_inputs(model, x)
        gm = generate.trace(model, x)
        pgraph = tmp / (name.split()[0].replace("+", "") + ".pgraph")
        pgraph.write_text(generate.to_pgraph(gm, pgraph.stem, [n for n, _, _ in inputs]))
        cache = tmp / ("cache-" + pgraph.stem)
        try:
            cold = plugsdk_run(pgraph, cache, args.reps, args.timeout)
            warm = plugsdk_run(pgraph, cache, args.reps, args.timeout)
            row["plugsdk_ms"] = min(cold["run_ms_median"], warm["run_ms_median"])
            row["plugsdk_cold_compile_s"] = cold["compile_ms"] / 1e3
            row["plugsdk_warm_compile_s"] = warm["compile_ms"] / 1e3
            row["kernels"], row["library_calls"] = cold["kernels"], cold["library_calls"]
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row["plugsdk_error"] = str(e)[-300:]
        limit = work / (bw * 1e9) * 1e3 if kind == "bytes" else work / (gflops * 1e9) * 1e3
        row["limit_ms"] = limit
        rows.append(row)
        print_row(row, first=len(rows) == 1)
    pathlib.Path(args.json).write_text(json.dumps({"threads": threads, "copy_gbps": bw, "sgemm_gflops": gflops,
                                                   "inductor_isa": isa, "rows": rows}, indent=1))
    print(f"wrote {args.json}")
    return 0


def print_row(r, first):
    if first:
        print(f"{'workload':22} {'eager ms':>9} {'inductor':>9} {'plugsdk':>9} {'ratio':>6} {'achieved':>16} "
              f"{'limit ms':>9} {'cold s':>7} {'warm s':>7} {'ind. s':>7}")
    ms = r.get("plugsdk_ms")
    ind = r.get("inductor_ms")
    ach = ""
    if ms:
        ach = (f"{r['work'] / (ms * 1e-3) / 1e9:.1f} GB/s" if r["kind"] == "bytes"
               else f"{r['work'] / (ms * 1e-3) / 1e9:.1f} GFLOP/s")
    f = lambda v, p=2: f"{v:.{p}f}" if isinstance(v, (int, float)) else "-"  # noqa: E731
    print(f"{r['workload']:22} {f(r['eager_ms']):>9} {f(ind):>9} {f(ms):>9} "
          f"{f(ms / ind if ms and ind else None):>6} {ach:>16} {f(r['limit_ms']):>9} "
          f"{f(r.get('plugsdk_cold_compile_s')):>7} {f(r.get('plugsdk_warm_compile_s'), 3):>7} "
          f"{f(r.get('inductor_compile_s'), 1):>7}", flush=True)
    if "plugsdk_error" in r:
        print("   plugsdk failed: " + r["plugsdk_error"].strip().replace("\n", "\n   "))


if __name__ == "__main__":
    sys.exit(main())
