#!/usr/bin/env python3
"""Where one model's time goes under plugsdk (or inductor) on the GPU machine: the kernels
of N calls as torch's profiler (CUPTI) sees them -- every launch in the process, the cuda
plugin's and cuBLASLt's included -- grouped by name, with the GPU busy time against the wall
time of the calls (the gap is host time the GPU waited for); then the host's side: how long
a call takes to return (launches queued; a program that must wait includes the GPU) and, by
cProfile, where that time goes (Python functions, and the extension's run as one entry). Run through
tools/device_cuda_python.sh:

    bash tools/device_cuda_python.sh python3 tools/profile_cuda_model.py vit_b_16 [plugsdk|plugsdk-ro|inductor] [--train]

plugsdk-ro is plugsdk under mode="reduce-overhead" (its runs replayed from CUDA graphs).
--dump DIR writes the stage dumps (graphs, prims, programs) and every kernel the cuda plugin
compiles (NAME.ENTRY.kir / .ll / .ptx, ENTRY being the name the profile shows) under DIR.
--train profiles one training step per call (bench_cuda_models.py's: forward under bf16
autocast, the loss as the mean of the output times a fixed random tensor, backward).
"""
import contextlib
import collections
import cProfile
import os
import pstats
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import plugsdk  # noqa: F401  (registers backend="plugsdk")
import plugsdk.runtime as rt
import plugsdk.training as training
from bench_cuda_models import first_tensor, models

# The core's host phases of every run (artifact.run_timed), summed while `phases` is on.
phases = collections.Counter()


def run_program_timed(program, ins, outs, in_strides=None):
    t0 = time.perf_counter()
    tuples_in = [rt._tensor_tuple(t) for t in ins] if in_strides is None else \
        [rt._tensor_tuple(t, st) for t, st in zip(ins, in_strides)]
    tuples_out = [rt._tensor_tuple(t) for t in outs]
    t1 = time.perf_counter()
    stream = rt._native_stream(torch.cuda.current_stream()) if program.imports_streams else 0
    if not program.imports_streams:
        torch.cuda.current_stream().synchronize()
    d = program.run_timed(tuples_in, tuples_out, stream=stream)
    t2 = time.perf_counter()
    phases["python: tensor tuples"] += t1 - t0
    phases["run: argument conversion (t - phases)"] += (t2 - t1) - d["prepare_s"] - d["kernel_launch_s"] - \
        d["library_call_s"] - d["wait_s"]
    for k in ("prepare_s", "kernel_launch_s", "library_call_s", "wait_s"):
        phases["run: " + k] += d[k]
    phases["kernels"] += d["kernels"]
    phases["library calls"] += d["library_calls"]
    phases["runs that waited"] += d["waited"]
    phases["runs replayed from a recording"] += d.get("replayed", 0)
    phases["runs recorded"] += d.get("recorded", 0)
    phases["tensors copied"] += d["copied"]
    return d["imported"], d["copied"]

N = 10


def compiled_call(name, backend, train, dump):
    """The model compiled for `backend`, as a function of no arguments: one inference call
    (run it under ctx() of main) or one training step."""
    torch.manual_seed(0)
    model, args = models()[name]()
    model = model.cuda().train() if train else model.cuda().eval()
    args = tuple(a.cuda() for a in args)
    if backend.startswith("plugsdk"):
        options = {"device": "cuda", **({"mode": "reduce-overhead"} if backend == "plugsdk-ro" else {})}
        if dump:
            os.makedirs(os.path.join(dump, "kernels"), exist_ok=True)
            options.update(dump_dir=dump, backend_options="dump=" + os.path.join(dump, "kernels"))
        c = torch.compile(model, backend="plugsdk", options=options)
    else:
        c = torch.compile(model)
    if not train:
        return lambda: c(*args)
    probe = []

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = first_tensor(c(*args)).float()
        if not probe:
            gen = torch.Generator(device=out.device).manual_seed(1)
            probe.append(torch.randn(out.shape, device=out.device, generator=gen))
        (out * probe[0]).mean().backward()
    return step


def main():
    argv, dump = sys.argv[1:], ""
    if "--dump" in argv:
        i = argv.index("--dump")
        dump = argv[i + 1]
        del argv[i:i + 2]
    train = "--train" in argv
    argv = [a for a in argv if a != "--train"]
    name = argv[0] if argv else "vit_b_16"
    backend = argv[1] if len(argv) > 1 else "plugsdk"
    call = compiled_call(name, backend, train, dump)

    def ctx():
        stack = contextlib.ExitStack()
        if not train:
            stack.enter_context(torch.no_grad())
            stack.enter_context(torch.autocast("cuda", dtype=torch.bfloat16))
        return stack
    with ctx():
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            for _ in range(N):
                call()
            torch.cuda.synchronize()
            wall = (time.perf_counter() - t0) / N
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    by = collections.defaultdict(lambda: [0, 0.0])
    for e in kernels:
        by[e.name][0] += 1
        by[e.name][1] += e.device_time
    busy = sum(t for _, t in by.values()) / N / 1000
    print(f"{name}{' training step' if train else ''} on {backend}: wall {wall * 1000:.2f} ms per call, GPU busy {busy:.2f} ms "
          f"({len(kernels) / N:.0f} kernels per call)")
    print(f"{'kernel':70s} {'per call':>8s} {'ms/call':>8s} {'us each':>8s}")
    for k, (n, t) in sorted(by.items(), key=lambda kv: -kv[1][1])[:45]:
        print(f"{k[:70]:70s} {n / N:8.1f} {t / N / 1000:8.3f} {t / n:8.1f}")
    with ctx():
        returns = []
        for _ in range(N):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            call()
            returns.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        returns.sort()
        print(f"host: a call returns after {returns[N // 2] * 1000:.2f} ms (median of {N}, GPU idle at the start)")
        # The inference path calls runtime.run_program; the training path (training.py)
        # imported it by name.
        original = rt.run_program
        rt.run_program = training.run_program = run_program_timed
        for _ in range(N):
            call()
        torch.cuda.synchronize()
        rt.run_program = training.run_program = original
        print("host phases of the core's runs, per call:")
        for k, v in phases.items():
            unit = " ms" if k.startswith(("python", "run:")) else ""
            print(f"  {k:45s} {v / N * (1 if unit == '' else 1000):8.3f}{unit}")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(N):
            call()
        prof.disable()
        torch.cuda.synchronize()
    stats = pstats.Stats(prof)
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:15]
    print(f"{'host function (cProfile, own time)':70s} {'calls':>8s} {'ms/call':>8s}")
    for (file, line, fn), (_, ncalls, tottime, _, _) in rows:
        print(f"{(file.split('/')[-1] + ':' + str(line) + ' ' + fn)[:70]:70s} {ncalls / N:8.1f} "
              f"{tottime / N * 1000:8.3f}")


if __name__ == "__main__":
    main()
