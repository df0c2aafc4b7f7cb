"""mode="reduce-overhead" (remembered dispatch per input signature) and mode="max-autotune"
(schedule variants timed on the device, the fastest kept): results against eager torch, the
memo and the autotune report."""
from __future__ import annotations

import gc

import pytest
import torch
import torch.nn as nn

import plugsdk
from plugsdk import backend


def fresh():
    torch._dynamo.reset()
    backend.reports.clear()
    gc.collect()
    plugsdk.reset_cache_info()


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return torch.softmax(self.norm(torch.relu(self.fc(x))), dim=-1) * x.sum(-1, keepdim=True)


def test_reduce_overhead_remembers_the_dispatch_per_signature():
    fresh()
    model = Small().eval()
    f = torch.compile(model, backend="plugsdk", mode="reduce-overhead", dynamic=False)
    with torch.no_grad():
        for n in (4, 4, 4, 6, 6, 4):
            x = torch.randn(n, 16)
            torch.testing.assert_close(f(x), model(x), rtol=1e-5, atol=1e-5)
    info = plugsdk.cache_info()
    # Dynamo: one static graph per size. Each graph's core select()s: one at Dynamo's compile,
    # one on its first call; every later call with a known signature skips select(), its hit
    # counted all the same.
    assert info["compiles"] == 2 and info["eager_calls"] == 0, info
    assert info["hits"] + info["misses"] == 8, info
    import plugsdk.runtime as rt
    assert sum(g.memo_hits for g in rt._functions) == 4


def test_max_autotune_times_schedule_variants_and_keeps_the_fastest():
    fresh()
    model = Small().eval()
    x = torch.randn(64, 16)
    with torch.no_grad():
        got = torch.compile(model, backend="plugsdk", mode="max-autotune")(x)
        torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)
    (report,) = plugsdk.explain()
    ((name, tuned),) = report.autotune.items()
    times = tuned["times_ms"]
    assert len(times) >= 3 and all(t > 0 for t in times.values()), times
    assert tuned["winner"] == min(times, key=times.get), tuned
    assert "autotune" in report.stage_seconds


def test_an_unknown_mode_is_an_error():
    fresh()
    with pytest.raises(Exception, match="mode 'fastest'"):
        torch.compile(lambda x: x + 1, backend="plugsdk", options={"mode": "fastest"})(torch.randn(3))
