"""The core's guards and artifact cache seen through torch.compile: batch changes compile at
most twice (read through plugsdk.cache_info()), the recompile limit falls back to eager torch
with a logged reason, a miss names the failed guard, and two threads share one compiled
model. Results are checked against eager torch on every call."""
from __future__ import annotations

import gc
import threading

import torch
import torch.nn as nn

import plugsdk
from plugsdk import backend


def fresh():
    torch._dynamo.reset()
    backend.reports.clear()
    gc.collect()
    plugsdk.reset_cache_info()  # graphs of earlier tests may outlive reset() (torch 2.11 keeps some)
    assert plugsdk.cache_info()["graphs"] == 0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return torch.softmax(self.fc2(h).view(x.shape[0], 2, 4), dim=-1)


def test_batch_8_4_16_compiles_at_most_twice():
    fresh()
    model = Net().eval()
    f = torch.compile(model, backend="plugsdk")
    with torch.no_grad():
        for batch in (8, 4, 16):
            x = torch.randn(batch, 32)
            torch.testing.assert_close(f(x), model(x), rtol=1e-4, atol=1e-5)
    info = plugsdk.cache_info()
    assert info["compiles"] <= 2, info
    assert info["compiles"] == 2, "batch 8 static, then one symbolic graph"
    assert info["hits"] >= 1, info  # batch 16 ran the symbolic artifact
    assert info["fallbacks"] == 0 and info["eager_calls"] == 0, info


def test_recompile_limit_falls_back_to_eager_with_the_reason(caplog):
    fresh()
    f = torch.compile(lambda x: torch.tanh(x) * 3, backend="plugsdk", dynamic=True,
                      options={"dynamic_policy": "static", "recompile_limit": 2})
    with caplog.at_level("WARNING", logger="plugsdk"):
        for n in (3, 5, 7, 9):  # one symbolic Dynamo graph; the core specializes each size
            x = torch.randn(n)
            torch.testing.assert_close(f(x), torch.tanh(x) * 3)
    info = plugsdk.cache_info()
    assert info["compiles"] == 2 and info["fallbacks"] == 2 and info["eager_calls"] == 2, info
    assert any("runs in eager torch" in r.getMessage() and "recompile limit (2)" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert any("guard wants 3" in m for m in info["miss_reasons"]), info["miss_reasons"]


def test_automatic_policy_specializes_then_goes_symbolic():
    fresh()
    f = torch.compile(lambda x, y: (x @ y).relu(), backend="plugsdk", dynamic=True,
                      options={"dynamic_policy": "automatic"})
    y = torch.randn(6, 4)
    for n in (5, 5, 2, 11, 5):
        x = torch.randn(n, 6)
        torch.testing.assert_close(f(x, y), (x @ y).relu())
    info = plugsdk.cache_info()
    # compiled for 5 at Dynamo's compile; 5, 5 hit; 2 compiles the symbolic artifact; 11, 5 hit
    assert info["compiles"] == 2 and info["hits"] == 4 and info["entries"] == 2, info
    assert any("size: input" in m and "guard wants 5" in m for m in info["miss_reasons"]), info["miss_reasons"]


def test_two_threads_share_one_compiled_model():
    fresh()
    model = Net().eval()
    f = torch.compile(model, backend="plugsdk", dynamic=True, options={"dynamic_policy": "automatic"})
    with torch.no_grad():
        f(torch.randn(3, 32))  # Dynamo's compile happens once, here; the core's compiles in the threads
    errors = []

    def worker(seed):
        g = torch.Generator().manual_seed(seed)
        try:
            with torch.no_grad():
                for i in range(10):
                    x = torch.randn(2 + (i + seed) % 5, 32, generator=g)
                    torch.testing.assert_close(f(x), model(x), rtol=1e-4, atol=1e-5)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    info = plugsdk.cache_info()
    assert info["compiles"] == 2, info  # batch 3 as a constant, then symbolic
    assert info["hits"] + info["misses"] == 22, info  # the backend's compile-time select, then 21 calls
