"""What test_cuda_epilogues.py and test_cuda_conv_epilogues.py share: a module compiled for
CUDA with some backend options, its second call profiled, and eager's answer beside it."""
import os

import torch

import plugsdk


def flat(out):
    """One tensor of a result or of a tuple of results."""
    return torch.cat([t.flatten() for t in out]) if isinstance(out, tuple) else out


def run_profiled(net, args, backend_options, dtype, dump):
    """(result, eager's, the executables' logs, the names of plugsdk's kernels the warm call
    launched: the profiler's entry names mapped through the plugin's dump, NAME.ENTRY.kir).
    Under bf16 autocast when `dtype` is torch.bfloat16."""
    f = torch.compile(net, backend="plugsdk",
                      options={"device": "cuda", "backend_options": f"{backend_options};dump={dump}"})
    before = set(plugsdk.runtime._functions)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
        f(*args)  # compiles
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            got = flat(f(*args))
            torch.cuda.synchronize()
        want = flat(net(*args))
    names = {f.split(".")[1]: f.split(".")[0] for f in os.listdir(dump) if f.endswith(".kir")}
    launched = sorted(names.get(e.name, e.name) for e in prof.events()
                      if e.device_type == torch.autograd.DeviceType.CUDA and e.name.startswith("plugsdk_"))
    # The executables' logs say how each library call's epilogue runs.
    log = "".join(a.log() for g in set(plugsdk.runtime._functions) - before for a, _, _ in (g.memo or {}).values())
    return got.float(), want.float(), log, launched
