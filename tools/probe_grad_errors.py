#!/usr/bin/env python3
"""Where a training step's gradients leave eager's: one step of MODEL (tools/bench_cuda_models.py's
models and loss) under bf16 autocast in eager, inductor and plugsdk, then every parameter's
relative gradient error ||g - g_eager|| / ||g_eager||, the largest first. On the GPU machine:

    bash tools/device_cuda_python.sh python3 tools/probe_grad_errors.py gpt2 [N] [--poison]

--poison fills the caching allocator's free memory with NaN before each compiled step, so a
kernel that reads memory it never wrote (an output it assumes zeroed) shows as NaN gradients.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cuda_models as bench  # noqa: E402  (the models and first_tensor)


def poison():
    """NaN in every block the caching allocator will hand out next (2 GiB of 64 MiB blocks)."""
    blocks = [torch.full((1 << 24,), float("nan"), device="cuda") for _ in range(32)]
    del blocks
    torch.cuda.synchronize()


def grads(model, fn, args, probe, poisoned=False):
    model.zero_grad(set_to_none=True)
    if poisoned:
        poison()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = bench.first_tensor(fn(*args)).float()
    if not probe:
        gen = torch.Generator(device=out.device).manual_seed(1)
        probe.append(torch.randn(out.shape, device=out.device, generator=gen))
    (out * probe[0]).mean().backward()
    return {n: p.grad.detach().float().clone() for n, p in model.named_parameters() if p.grad is not None}


def main():
    pos = [a for a in sys.argv[1:] if not a.startswith("--")]
    name = pos[0] if pos else "gpt2"
    top = int(pos[1]) if len(pos) > 1 else 15
    poisoned = "--poison" in sys.argv
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
        got[backend] = grads(model, c, args, probe, poisoned)

    def rel(g, w):
        return (g - w).norm().item() / max(w.norm().item(), 1e-30)

    rows = sorted(((rel(got["plugsdk"][n], w), rel(got["inductor"][n], w), n) for n, w in want.items()), reverse=True)
    nan = [n for n, g in got["plugsdk"].items() if not torch.isfinite(g).all()]
    print(f"{name}{' (poisoned)' if poisoned else ''}: {len(rows)} parameters; relative gradient error vs eager, "
          f"plugsdk's largest first; non-finite plugsdk gradients: {nan[:8]}")
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
