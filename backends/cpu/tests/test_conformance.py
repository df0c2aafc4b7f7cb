"""The conformance suite against the cpu plugin, on every ISA path this CPU can run.

Issue 6's "done when": every tier the backend claims passes on the AVX-512 path and on the
forced-AVX2 path (and on the scalar path, which shares the code generator with one lane).
Each run compiles every kernel from scratch (a fresh cache directory), so the compile path
is what is tested, not a cache hit."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
RUNNER = BUILD / "bin" / "plugsdk-conformance"


def cpu_has(*features: str) -> bool:
    flags = pathlib.Path("/proc/cpuinfo").read_text()
    return all(f" {f}" in flags for f in features)


@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
def test_cpu_plugin_is_certified(tmp_path: pathlib.Path, isa: str):
    if isa == "avx512" and not cpu_has("avx512f", "avx512vl", "avx512bw", "avx512dq"):
        pytest.skip("this CPU has no AVX-512 (F, VL, BW, DQ)")
    if isa == "avx2" and not cpu_has("avx2", "fma", "f16c"):
        pytest.skip("this CPU has no AVX2, FMA and F16C")
    env = dict(os.environ, PLUGSDK_CPU_ISA=isa, PLUGSDK_CACHE_DIR=str(tmp_path / "cache"))
    # 300 s a case: fusion.limit.long_chain (700 chained sin/cos) compiles in ~110 s with
    # AVX-512 on a loaded 2-core machine, and the runner's default of 120 s made it flaky
    # (a timeout guards against hangs here; speed is measured by the benchmarks).
    r = subprocess.run([str(RUNNER), "--plugin", "cpu", "--timeout", "300", "--expectations",
                        str(ROOT / "conformance" / "expectations" / "cpu.txt"), "--report", str(tmp_path)],
                       capture_output=True, text=True, timeout=1200, env=env)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    rep = json.loads((tmp_path / "report.json").read_text())
    s = rep["summary"]
    assert s["verdict"] == "certified" and s["failed"] == 0 and s["xpass"] == 0, s
    assert isa in rep["device"]["name"], rep["device"]
    assert sorted(s["certified_tiers"]) == sorted(["abi", "op", "fusion", "model", "autograd", "dynamic", "fuzz"]), s
    assert s["passed"] > 4000, s
    # the kernels really were compiled on this path: one cache entry per distinct kernel
    assert len(list((tmp_path / "cache" / "cpu").glob("*.kobj"))) > 1000
