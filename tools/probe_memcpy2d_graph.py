#!/usr/bin/env python3
"""Probe on the GPU machine: a 2D device-to-device copy (cuMemcpy2DAsync, as the cuda
plugin copies a padded matmul result into place: GPT-2's logits, 2048 rows of 50257 bf16
from rows of 50264) timed issued on a stream and replayed from a CUDA graph, next to torch's
copy kernel for the same strided copy. Needs cupy (the GPU machine's image has it).

    bash tools/device_cuda_python.sh python3 tools/probe_memcpy2d_graph.py
"""
import cupy
import torch

ROWS, COLS, PITCH = 2048, 50257, 50264
ITEM = 2


def timed(fn, n=20):
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / n


def main():
    src = torch.randn(ROWS, PITCH, device="cuda").to(torch.bfloat16)
    dst = torch.empty(ROWS, COLS, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.current_stream()

    def memcpy2d():
        cupy.cuda.runtime.memcpy2DAsync(dst.data_ptr(), COLS * ITEM, src.data_ptr(), PITCH * ITEM, COLS * ITEM, ROWS,
                                        cupy.cuda.runtime.memcpyDeviceToDevice, stream.cuda_stream)

    def kernel_copy():
        dst.copy_(src[:, :COLS])

    results = {}
    for name, fn in (("cuMemcpy2DAsync", memcpy2d), ("torch copy_ kernel", kernel_copy)):
        results[name + ", stream"] = timed(fn)
        g = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(stream)
        with torch.cuda.stream(side):
            fn()
        stream.wait_stream(side)
        with torch.cuda.graph(g):
            if name.startswith("cuMemcpy"):
                cupy.cuda.runtime.memcpy2DAsync(dst.data_ptr(), COLS * ITEM, src.data_ptr(), PITCH * ITEM,
                                                COLS * ITEM, ROWS, cupy.cuda.runtime.memcpyDeviceToDevice,
                                                torch.cuda.current_stream().cuda_stream)
            else:
                fn()
        results[name + ", graph replay"] = timed(g.replay)
        torch.testing.assert_close(dst, src[:, :COLS])
    bytes_moved = 2 * ROWS * COLS * ITEM
    for k, ms in results.items():
        print(f"{k:40s} {ms * 1e3:8.1f} us  {bytes_moved / ms / 1e6:7.0f} GB/s")


if __name__ == "__main__":
    main()
