#!/usr/bin/env python3
"""The memory-bound workloads of issue 9 on the GPU machine: plugsdk's cuda plugin (through the
CLI: `plugsdk run --repeat R --batch B`, each repetition B programs back to back, then one
synchronize) beside torch eager and inductor (CUDA events around B calls) in the same device
session, each as a fraction of the measured device-copy bandwidth (torch's copy_ of 2^28 f32).

Every working set is 5-20x the H100's 50 MB L2, so back-to-back runs see no L2 reuse between
runs; no explicit flush is made. Run it through tools/bench_cuda_memory.sh (which unpacks the
plugin); prints one table.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch

R, B = 7, 10
G = os.environ.get("G", "/tmp/gc")
OPTIONS = os.environ.get("PLUGSDK_BENCH_OPTIONS", "")  # the cuda plugin's options, "key=value;..."

# name -> (graph text, torch function, inputs maker, bytes moved)
N = 2**26
ROWS, COLS = 16384, 4096
SUM_N = 2**28
WORKLOADS = {
    "sin^2+cos^2 2^26 f32": (
        f"""graph @sincos(%x: f32[{N}]) {{
  %s = aten.sin(%x)
  %c = aten.cos(%x)
  %s2 = aten.mul.Tensor(%s, %s)
  %c2 = aten.mul.Tensor(%c, %c)
  %y = aten.add.Tensor(%s2, %c2)
  return %y
}}""",
        lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2,
        lambda: [torch.randn(N, device="cuda")],
        2 * N * 4,
    ),
    "softmax 16384x4096 f32": (
        f"""graph @softmax(%x: f32[{ROWS}, {COLS}]) {{
  %y = aten._softmax(%x) {{dim = 1, half_to_float = false}}
  return %y
}}""",
        lambda x: torch.softmax(x, 1),
        lambda: [torch.randn(ROWS, COLS, device="cuda")],
        2 * ROWS * COLS * 4,
    ),
    "layernorm 16384x4096 f32": (
        f"""graph @layernorm(%x: f32[{ROWS}, {COLS}], %w: f32[{COLS}], %b: f32[{COLS}]) {{
  %y, %m, %r = aten.native_layer_norm(%x, %w, %b) {{eps = 1e-05, normalized_shape = [{COLS}]}}
  return %y
}}""",
        lambda x, w, b: torch.nn.functional.layer_norm(x, (COLS,), w, b),
        lambda: [torch.randn(ROWS, COLS, device="cuda"), torch.randn(COLS, device="cuda"),
                 torch.randn(COLS, device="cuda")],
        2 * ROWS * COLS * 4,
    ),
    "sum 2^28 f32": (
        f"""graph @sum(%x: f32[{SUM_N}]) {{
  %y = aten.sum(%x)
  return %y
}}""",
        lambda x: torch.sum(x),
        lambda: [torch.randn(SUM_N, device="cuda")],
        SUM_N * 4,
    ),
}


def events_ms(fn, args):
    """Median over R repetitions of (B calls between two events) / B, in ms."""
    fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(R):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(B):
            fn(*args)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / B)
    return sorted(times)[len(times) // 2]


def plugsdk_ms(text, tmp):
    path = os.path.join(tmp, "g.pgraph")
    with open(path, "w") as f:
        f.write(text + "\n")
    js = os.path.join(tmp, "t.json")
    r = subprocess.run([f"{G}/bin/plugsdk", "run", path, "--backend", "cuda", "--repeat", str(R), "--batch", str(B),
                        "--quiet", "--json", js, "--backend-options", OPTIONS], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr).strip().splitlines()[-1]
    with open(js) as f:
        j = json.load(f)
    return j["run_ms_median"], f"{j['kernels']} kernels, compiled in {j['compile_ms']:.0f} ms"


def main():
    torch.manual_seed(0)
    src = torch.randn(2**28, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = events_ms(lambda: dst.copy_(src), [])
    copy_gbs = 2 * src.numel() * 4 / copy_ms / 1e6
    del src, dst
    print(f"device: {torch.cuda.get_device_name()}; device copy (copy_ of 2^28 f32): {copy_ms:.3f} ms = "
          f"{copy_gbs:.0f} GB/s; medians of {R} x {B} calls; plugsdk options [{OPTIONS}]")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, fn, make, nbytes) in WORKLOADS.items():
            args = make()
            eager = events_ms(fn, args)
            try:
                inductor = events_ms(torch.compile(fn), args)
            except Exception as e:  # noqa: BLE001 - report, keep going
                print(f"inductor failed on {name}: {e}", file=sys.stderr)
                inductor = None
            del args
            torch.cuda.empty_cache()
            ours, note = plugsdk_ms(text, tmp)
            rows.append((name, nbytes, ours, eager, inductor, note))

    def pct(ms, nbytes):
        return "-" if ms is None else f"{ms:8.3f} ms {nbytes / ms / 1e6 / copy_gbs * 100:4.0f}%"

    print(f"{'workload':26} {'plugsdk':>17} {'eager':>17} {'inductor':>17}  note")
    for name, nbytes, ours, eager, inductor, note in rows:
        print(f"{name:26} {pct(ours, nbytes):>17} {pct(eager, nbytes):>17} {pct(inductor, nbytes):>17}  {note}")
    print("(% = bytes moved / time / device-copy bandwidth; target: plugsdk >= 90%)")


if __name__ == "__main__":
    main()
