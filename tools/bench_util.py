"""What the benchmark scripts share (tools/bench.py, tools/bench_models.py)."""
from __future__ import annotations

import time


def median_ms(fn, reps, warmup=2):
    """The median wall time of `fn` in milliseconds over `reps` calls after `warmup` calls."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]
