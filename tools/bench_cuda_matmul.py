#!/usr/bin/env python3
"""Issue 9's matmul benchmark on the GPU machine: prims.matmul through the cuda plugin (the
CLI, as tools/bench_cuda_memory.py times it) beside torch's matmul (cuBLAS; TF32 off, as
plugsdk's f32) and inductor, in one session. Shapes: bf16 8192^3 (the issue's target: >= 80%
of cuBLAS), f32 4096^3, and GPT-2's LM head in bf16 ([2048, 768] x [768, 50257]: the odd
vocabulary). Run through tools/bench_cuda_memory.sh's unpacking:

    bash -c 'source tools/device_cuda_unpack.sh; python3 tools/bench_cuda_matmul.py'
"""
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda_memory import events_ms, plugsdk_ms  # noqa: E402

SHAPES = [("bf16", torch.bfloat16, 8192, 8192, 8192), ("f32", torch.float32, 4096, 4096, 4096),
          ("bf16", torch.bfloat16, 2048, 768, 50257)]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}; medians of calls between events (torch, inductor) and of "
          "CLI repetitions (plugsdk)")
    print(f"{'matmul':30} {'plugsdk':>22} {'torch (cuBLAS)':>22} {'inductor':>22}  plugsdk/cuBLAS  note")
    with tempfile.TemporaryDirectory() as tmp:
        for name, dt, m, k, n in SHAPES:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            flops = 2 * m * n * k
            cublas = events_ms(torch.mm, [a, b])
            inductor = events_ms(torch.compile(torch.mm), [a, b])
            del a, b
            torch.cuda.empty_cache()
            text = f"graph @mm(%a: {name}[{m}, {k}], %b: {name}[{k}, {n}]) {{\n  %y = aten.mm(%a, %b)\n  return %y\n}}"
            ours, note = plugsdk_ms(text, tmp)

            def cell(ms):
                return "-" if ms is None else f"{ms:7.3f} ms {flops / ms / 1e9:5.0f} TF/s"

            ratio = f"{cublas / ours * 100:5.0f}%" if ours else "-"
            print(f"{name} {m}x{k}x{n:<17} {cell(ours):>22} {cell(cublas):>22} {cell(inductor):>22}  {ratio:>13}  {note}",
                  flush=True)


if __name__ == "__main__":
    main()
