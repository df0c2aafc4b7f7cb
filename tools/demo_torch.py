#!/usr/bin/env python3
"""The demo's MLP in eager torch, on the inputs `plugsdk_demo --save DIR` wrote.

    python3 tools/demo_torch.py DIR

Runs x -> linear(w0, b0) -> relu -> linear(w1, b1) -> relu -> linear(w2, b2) -> softmax in
float32 eager torch (its own threads, the median of 20 runs after warm-up), compares with
the reference executor's float64 output and the device's, and prints the times side by side."""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import torch


def main(argv) -> int:
    d = pathlib.Path(argv[1])
    t = {n: torch.from_numpy(np.load(d / f"{n}.npy")).float() for n in ("x", "w0", "b0", "w1", "b1", "w2", "b2")}

    def forward():
        h = torch.relu(torch.nn.functional.linear(t["x"], t["w0"], t["b0"]))
        h = torch.relu(torch.nn.functional.linear(h, t["w1"], t["b1"]))
        return torch.softmax(torch.nn.functional.linear(h, t["w2"], t["b2"]), dim=-1)

    with torch.no_grad():
        for _ in range(3):
            out = forward()
        ts = []
        for _ in range(20):
            s = time.perf_counter()
            out = forward()
            ts.append((time.perf_counter() - s) * 1e3)
    eager_ms = sorted(ts)[len(ts) // 2]
    ref = np.load(d / "reference_out.npy")
    print(f"== eager torch {torch.__version__} ({torch.get_num_threads()} threads) ==")
    print(f"time: median {eager_ms:.3f} ms over 20 runs; max |diff| vs reference {np.abs(out.numpy() - ref).max():.3g}")
    dev = d / "device_out.npy"
    if dev.exists():
        dev_ms = float((d / "device_ms.txt").read_text())
        print(f"device vs eager torch: {dev_ms:.3f} ms vs {eager_ms:.3f} ms ({eager_ms / dev_ms:.2f}x); "
              f"max |diff| device vs eager {np.abs(np.load(dev) - out.numpy()).max():.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
