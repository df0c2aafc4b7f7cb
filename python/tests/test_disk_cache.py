"""The persistent program cache across processes: a second process starts warm (programs
from disk, counted in cache_info()["disk_hits"]), a corrupt entry is ignored, reported and
rewritten, and every run's result matches eager torch."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

SCRIPT = r'''
import json, sys, time, torch
sys.path.insert(0, sys.argv[1])
import plugsdk, acceptance_models as models
model, x, (rtol, atol) = models.build("transformer_encoder")
with torch.no_grad():
    t0 = time.perf_counter()
    got = torch.compile(model, backend="plugsdk", dynamic=False)(x)
    first = time.perf_counter() - t0
    torch.testing.assert_close(got, model(x), rtol=rtol, atol=atol * model(x).abs().max().item())
info = plugsdk.cache_info()
info["first_call_s"] = first
print(json.dumps(info))
'''


def run(cache: pathlib.Path) -> dict:
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, PLUGSDK_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(here)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_starts_warm_and_corrupt_entries_are_rewritten(tmp_path):
    cold = run(tmp_path)
    assert cold["compiles"] >= 1 and cold["disk_hits"] == 0, cold
    warm = run(tmp_path)
    assert warm["disk_hits"] == warm["compiles"] >= 1, warm
    assert warm["disk_rejected"] == 0, warm
    entries = list((tmp_path / "core").glob("*.program"))
    assert entries, list(tmp_path.rglob("*"))
    for e in entries:
        data = bytearray(e.read_bytes())
        data[-10:] = b"0123456789"
        e.write_bytes(bytes(data))
    bad = run(tmp_path)
    assert bad["disk_hits"] == 0 and bad["disk_rejected"] == len(entries), bad
    again = run(tmp_path)
    assert again["disk_hits"] == again["compiles"] and again["disk_rejected"] == 0, again
