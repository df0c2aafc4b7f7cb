#!/usr/bin/env python3
"""What cuBLASLt's epilogues take and compute on this GPU (the facts behind
backends/cuda/library/epilogue_match.h): for a row-major linear layer D[m, n] = act(x W^T +
bias (+ C)), computed as cuBLASLt's column-major D^T, each (A/B, D, bias) dtype combination
and epilogue is asked of the heuristic (found or the status), then run on torch tensors and
compared with torch: relu, the tanh GELU and the erf GELU (which one cuBLASLt's GELU is),
with the error in units of D's rounding. Run through tools/device_cuda_python.sh:

    bash tools/device_cuda_python.sh python3 tools/probes/cublaslt_epilogue_probe.py
"""
import ctypes

import torch

lt = None
for name in ("libcublasLt.so.13", "libcublasLt.so.12"):
    try:
        lt = ctypes.CDLL(name)
        break
    except OSError:
        pass
if lt is None:  # torch's own copy
    import glob
    import os
    for p in glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcublasLt.so*")):
        lt = ctypes.CDLL(p)
        break

R16F, R16BF, R32F = 2, 14, 0
COMPUTE_32F = 68
TRANSA, TRANSB, EPILOGUE, BIAS_POINTER, BIAS_DATA_TYPE = 3, 4, 7, 8, 26
EPI = {"bias": 4, "relu_bias": 6, "gelu_bias": 36}
TYPES = {torch.float16: R16F, torch.bfloat16: R16BF, torch.float32: R32F}
vp = ctypes.c_void_p


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: cuBLASLt status {status}")


class Heuristic(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def linear(x, w, bias, residual, epilogue, out_dtype):
    """cuBLASLt's act(x @ w.T + bias (+ residual)) as D^T = W x^T, or (None, status)."""
    m, k = x.shape
    n = w.shape[0]
    d = torch.empty(m, n, dtype=out_dtype, device="cuda")
    handle = vp()
    check(lt.cublasLtCreate(ctypes.byref(handle)), "create")
    desc = vp()
    check(lt.cublasLtMatmulDescCreate(ctypes.byref(desc), COMPUTE_32F, R32F), "desc")
    ta, tb = ctypes.c_int32(1), ctypes.c_int32(0)
    lt.cublasLtMatmulDescSetAttribute(desc, TRANSA, ctypes.byref(ta), ctypes.c_size_t(4))
    lt.cublasLtMatmulDescSetAttribute(desc, TRANSB, ctypes.byref(tb), ctypes.c_size_t(4))
    e = ctypes.c_uint32(EPI[epilogue])
    lt.cublasLtMatmulDescSetAttribute(desc, EPILOGUE, ctypes.byref(e), ctypes.c_size_t(4))
    bp = ctypes.c_uint64(bias.data_ptr())
    lt.cublasLtMatmulDescSetAttribute(desc, BIAS_POINTER, ctypes.byref(bp), ctypes.c_size_t(8))
    if bias.dtype != out_dtype:
        bt = ctypes.c_int32(TYPES[bias.dtype])
        s = lt.cublasLtMatmulDescSetAttribute(desc, BIAS_DATA_TYPE, ctypes.byref(bt), ctypes.c_size_t(4))
        if s != 0:
            return None, f"BIAS_DATA_TYPE refused ({s})"
    la, lb, ld = vp(), vp(), vp()
    t = TYPES[x.dtype]
    lt.cublasLtMatrixLayoutCreate(ctypes.byref(la), t, ctypes.c_uint64(k), ctypes.c_uint64(n), ctypes.c_int64(k))
    lt.cublasLtMatrixLayoutCreate(ctypes.byref(lb), t, ctypes.c_uint64(k), ctypes.c_uint64(m), ctypes.c_int64(k))
    lt.cublasLtMatrixLayoutCreate(ctypes.byref(ld), TYPES[out_dtype], ctypes.c_uint64(n), ctypes.c_uint64(m),
                                  ctypes.c_int64(n))
    pref = vp()
    lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref))
    ws = ctypes.c_uint64(32 << 20)
    lt.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(ws), ctypes.c_size_t(8))
    res, found = Heuristic(), ctypes.c_int(0)
    s = lt.cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, 1, ctypes.byref(res), ctypes.byref(found))
    if s != 0 or found.value == 0:
        return None, f"heuristic: status {s}, {found.value} found"
    work = torch.empty(32 << 20, dtype=torch.uint8, device="cuda")
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    c = residual if residual is not None else d
    s = lt.cublasLtMatmul(handle, desc, ctypes.byref(one), vp(w.data_ptr()), la, vp(x.data_ptr()), lb,
                          ctypes.byref(one if residual is not None else zero), vp(c.data_ptr()), ld,
                          vp(d.data_ptr()), ld, ctypes.byref(res.algo), vp(work.data_ptr()), ctypes.c_size_t(32 << 20),
                          vp(torch.cuda.current_stream().cuda_stream))
    torch.cuda.synchronize()
    return (d, "ok") if s == 0 else (None, f"matmul status {s}")


def main():
    torch.manual_seed(0)
    m, n, k = 512, 768, 384
    print(f"device {torch.cuda.get_device_name()}, cuBLASLt {lt.cublasLtGetVersion()}")
    for ab, out, bias_t in [(torch.bfloat16, torch.bfloat16, torch.bfloat16), (torch.bfloat16, torch.bfloat16, torch.float32),
                            (torch.float16, torch.float16, torch.float32), (torch.bfloat16, torch.float32, torch.float32),
                            (torch.float32, torch.float32, torch.float32)]:
        x = torch.randn(m, k, device="cuda").to(ab)
        w = (torch.randn(n, k, device="cuda") / k ** 0.5).to(ab)
        b = torch.randn(n, device="cuda").to(bias_t)
        r = torch.randn(m, n, device="cuda").to(out)
        acc = x.double() @ w.double().T + b.double()
        ulp = torch.finfo(out).eps
        for epi in EPI:
            for res in (None, r):
                d, status = linear(x, w, b, res, epi, out)
                tag = f"A/B {str(ab)[6:]:8s} D {str(out)[6:]:8s} bias {str(bias_t)[6:]:8s} {epi:9s} " \
                      f"{'+C' if res is not None else '  '}"
                if d is None:
                    print(f"{tag}: {status}")
                    continue
                y = acc + (r.double() if res is not None else 0)
                refs = {"relu": torch.relu(y), "gelu_tanh": torch.nn.functional.gelu(y, approximate="tanh"),
                        "gelu_erf": torch.nn.functional.gelu(y), "none": y}
                errs = {key: ((d.double() - v).abs() / (v.abs() + 1)).max().item() / ulp for key, v in refs.items()}
                print(f"{tag}: max error in D ulps vs " + ", ".join(f"{key} {e:.2f}" for key, e in errs.items()))


if __name__ == "__main__":
    main()
