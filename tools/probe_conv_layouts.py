#!/usr/bin/env python3
"""What a convolution library op would buy resnet50 on the GPU (issue 9), before building
it: the convolutions of timm's resnet50 (batch 32, bf16) timed one by one with torch's
cuDNN path, NCHW against channels-last, next to the whole model (eager NCHW, eager
channels-last, inductor). Prints a table; no assertion (a probe, not a test).

    bash tools/device_cuda_python.sh python3 tools/probe_conv_layouts.py
"""
import statistics

import torch
import torch.nn.functional as F


def timed(fn, reps=20, rounds=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    meds = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        torch.cuda.synchronize()
        meds.append(a.elapsed_time(b) / reps)
    return statistics.median(meds)


def main():
    import timm
    torch.backends.cudnn.benchmark = True
    model = timm.create_model("resnet50", pretrained=False).cuda().eval()
    x = torch.randn(32, 3, 224, 224, device="cuda")
    convs = []

    def hook(mod, inp, out):
        convs.append((tuple(inp[0].shape), mod.weight.detach().to(torch.bfloat16), mod.stride, mod.padding,
                      mod.dilation, mod.groups))

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(x)
    for h in hs:
        h.remove()
    total = {"nchw": 0.0, "nhwc": 0.0}
    print(f"{len(convs)} convolutions")
    print(f"{'input':>22} {'weight':>20} {'s':>3} {'NCHW ms':>9} {'NHWC ms':>9}")
    shapes = {}
    for shape, w, stride, pad, dil, groups in convs:
        key = (shape, tuple(w.shape), stride, pad)
        if key in shapes:
            a, b = shapes[key]
        else:
            xi = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
            xl = xi.to(memory_format=torch.channels_last)
            wl = w.to(memory_format=torch.channels_last)
            a = timed(lambda: F.conv2d(xi, w, None, stride, pad, dil, groups))
            b = timed(lambda: F.conv2d(xl, wl, None, stride, pad, dil, groups))
            shapes[key] = (a, b)
            print(f"{str(shape):>22} {str(tuple(w.shape)):>20} {stride[0]:>3} {a:9.4f} {b:9.4f}")
        total["nchw"] += a
        total["nhwc"] += b
    print(f"sum of all {len(convs)} convolutions: NCHW {total['nchw']:.3f} ms, channels-last {total['nhwc']:.3f} ms")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        e1 = timed(lambda: model(x), reps=5)
        ml = model.to(memory_format=torch.channels_last)
        xl = x.to(memory_format=torch.channels_last)
        e2 = timed(lambda: ml(xl), reps=5)
        model = model.to(memory_format=torch.contiguous_format)
        ind = torch.compile(model)
        ind(x)
        e3 = timed(lambda: ind(x), reps=5)
    print(f"whole model, bf16 autocast: eager NCHW {e1:.3f} ms, eager channels-last {e2:.3f} ms, inductor {e3:.3f} ms")


if __name__ == "__main__":
    main()
