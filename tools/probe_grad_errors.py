#!/usr/bin/env python3
"""Where a training step's gradients leave eager's: one step of MODEL (tools/bench_cuda_models.py's
models and loss) under bf16 autocast in eager, inductor and plugsdk, then every parameter's
relative gradient error ||g - g_eager|| / ||g_eager||, the largest first. On the GPU machine:

    bash tools/device_cuda_python.sh python3 tools/probe_grad_errors.py gpt2 [N]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cuda_models as bench  # noqa: E402  (the models and first_tensor)


def grads(model, fn, args, probe):
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = bench.first_tensor(fn(*args)).float()
    if not probe:
        gen = torch.Generator(device=out.device).manual_seed(1)
        probe.append(torch.randn(out.shape, device=out.device, generator=gen))
    (out * probe[0]).mean().backward()
    return {n: p.grad.detach().float().clone() for n, p in model.named_parameters() if p.grad is not None}


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "gpt2"
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    torch.manual_seed(0)
    model, args = bench.models()[name]()
    model = model.cuda().train()
    args = tuple(a.cuda() for a in args)
    probe = []
    want = grads(model, model, args, probe)
    got = {}
    for backend, opts in (("inductor", None), ("plugsdk", {"device": "cuda"})):
        torch._dynamo.reset()
        c = torch.compile(model, backend=backend, options=opts) if opts else torch.compile(model)
        got[backend] = grads(model, c, args, probe)

    def rel(g, w):
        return (g - w).norm().item() / max(w.norm().item(), 1e-30)

    rows = sorted(((rel(got["plugsdk"][n], w), rel(got["inductor"][n], w), n) for n, w in want.items()), reverse=True)
    print(f"{name}: {len(rows)} parameters; relative gradient error vs eager, plugsdk's largest first")
    print(f"{'plugsdk':>9} {'inductor':>9}  parameter")
    for p, i, n in rows[:top]:
        print(f"{p:9.4f} {i:9.4f}  {n}")
    first = next(n for n, p in model.named_parameters() if p.requires_grad)
    print(f"first parameter ({first}, the bench's): plugsdk {rel(got['plugsdk'][first], want[first]):.4f}, "
          f"inductor {rel(got['inductor'][first], want[first]):.4f}")
    med = sorted(r[0] for r in rows)[len(rows) // 2]
    medi = sorted(r[1] for r in rows)[len(rows) // 2]
    print(f"median: plugsdk {med:.4f}, inductor {medi:.4f}")


if __name__ == "__main__":
    main()
