#!/usr/bin/env python3
"""Issue 9's model table on the GPU machine: resnet50 and vit_b_16 (timm), BERT-base and
GPT-2 (transformers), random weights, bf16 autocast, inference; eager, inductor and plugsdk
(torch.compile(backend="plugsdk", options={"device": "cuda"})) in one process. Per model:
median time of R x N calls (CUDA events), the cold compile time (the first call), the
largest difference from eager, and plugsdk / inductor. Run through tools/device_cuda_python.sh:

    bash tools/device_cuda_python.sh python3 tools/bench_cuda_models.py [MODEL ...]
"""
import statistics
import sys
import time

import torch

import plugsdk  # registers backend="plugsdk" with Dynamo

R, N = 5, 5


def models():
    def resnet50():
        import timm
        return timm.create_model("resnet50", pretrained=False), (torch.randn(32, 3, 224, 224),)

    def vit_b_16():
        import timm
        return timm.create_model("vit_base_patch16_224", pretrained=False), (torch.randn(32, 3, 224, 224),)

    def bert():
        from transformers import BertConfig, BertModel
        return BertModel(BertConfig()), (torch.randint(0, 30000, (16, 128)),)

    def gpt2():
        from transformers import GPT2Config, GPT2LMHeadModel
        return GPT2LMHeadModel(GPT2Config()), (torch.randint(0, 50000, (8, 256)),)

    return {"resnet50": resnet50, "vit_b_16": vit_b_16, "bert": bert, "gpt2": gpt2}


def first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "logits"):
        return out.logits
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    if isinstance(out, (tuple, list)):
        return first_tensor(out[0])
    raise TypeError(type(out))


def timed(fn, args):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(R):
        s.record()
        for _ in range(N):
            fn(*args)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / N)
    return statistics.median(ts)


def run(name, make):
    torch.manual_seed(0)
    model, args = make()
    model = model.cuda().eval()
    args = tuple(a.cuda() for a in args)
    row = {"model": name}
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        want = first_tensor(model(*args)).float()
        row["eager"] = timed(model, args)
        reports_before = len(plugsdk.explain())
        for backend, opts in (("inductor", None), ("plugsdk", {"device": "cuda"})):
            torch._dynamo.reset()
            try:
                c = torch.compile(model, backend=backend, options=opts) if opts else torch.compile(model)
                t0 = time.time()
                got = first_tensor(c(*args)).float()
                torch.cuda.synchronize()
                row[backend + "_compile"] = time.time() - t0
                row[backend + "_err"] = (got - want).abs().max().item()
                row[backend] = timed(c, args)
            except Exception as ex:  # reported in the table, the other rows still run
                row[backend + "_error"] = f"{type(ex).__name__}: {str(ex).splitlines()[0][:160]}"
        rep = plugsdk.explain()[reports_before:]
        row["partitions"] = (sum(r.compiled_partitions for r in rep), sum(r.eager_partitions for r in rep))
        row["fallbacks"] = sorted({f"{f.op}: {f.reason[:200]}" for r in rep for f in r.fallbacks})
    return row


def main():
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; bf16 autocast, inference, "
          f"medians of {R} x {N} calls")
    wanted = sys.argv[1:] or list(models())
    rows = []
    for name in wanted:
        rows.append(run(name, models()[name]))
        r = rows[-1]

        def ms(k):
            return f"{r[k]:8.2f} ms" if k in r else "       -   "

        def s(k):
            return f"{r[k]:6.1f} s" if k in r else "     - "

        ratio = f"{r['plugsdk'] / r['inductor']:.2f}" if "plugsdk" in r and "inductor" in r else "-"
        print(f"{name:10s} eager {ms('eager')} | inductor {ms('inductor')} (compile {s('inductor_compile')}) | "
              f"plugsdk {ms('plugsdk')} (compile {s('plugsdk_compile')}, max diff {r.get('plugsdk_err', float('nan')):.3g}, "
              f"partitions compiled/eager {r.get('partitions')}) | plugsdk/inductor {ratio}", flush=True)
        for k in ("inductor_error", "plugsdk_error"):
            if k in r:
                print(f"           {k}: {r[k]}", flush=True)
        for f in r.get("fallbacks", []):
            print(f"           eager: {f}", flush=True)


if __name__ == "__main__":
    main()
