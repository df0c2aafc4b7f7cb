#!/usr/bin/env python3
"""Compiles one model of tools/bench_cuda_models.py with plugsdk on the GPU machine and calls
it N times (bf16 autocast inference), nothing else: a target for ncu or PLUGSDK_DUMP.

    bash tools/device_cuda_python.sh ncu -k regex:plugsdk_1a2b3c4d -c 1 python3 tools/run_cuda_model.py vit_b_16 3

(kernel entries are named plugsdk_ + 16 hex digits of their PTX cache key: the same in every
run; PLUGSDK_DUMP or the plugin's dump option lists them.)
"""
import sys

import torch

import plugsdk  # noqa: F401  (registers backend="plugsdk")
from bench_cuda_models import models


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "vit_b_16"
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.manual_seed(0)
    model, args = models()[name]()
    model = model.cuda().eval()
    args = tuple(a.cuda() for a in args)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        c = torch.compile(model, backend="plugsdk", options={"device": "cuda"})
        for _ in range(calls):
            c(*args)
        torch.cuda.synchronize()
    print(f"{name}: {calls} calls done")


if __name__ == "__main__":
    main()
