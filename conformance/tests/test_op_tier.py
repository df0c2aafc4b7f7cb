"""The op tier of plugsdk-conformance against the minimal sample plugin: it must pass every
case (the sample claims all ten dtypes and the three library ops, so nothing skips), the tier
must keep its size, and every prim the op registry lists must have op cases, so a prim added
later without conformance cases fails here."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import time

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[1] / "build"))
RUNNER = BUILD / "bin" / "plugsdk-conformance"
CLI = BUILD / "bin" / "plugsdk"

# The number of op cases when this test was written; the tier may grow, not shrink.
MIN_CASES = 4330


def op_case_names() -> list[str]:
    r = subprocess.run([str(RUNNER), "--list", "--tier", "op"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def registry_prims() -> list[str]:
    r = subprocess.run([str(CLI), "ops"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    names = sorted({w for w in r.stdout.replace("|", " ").replace("`", " ").split() if w.startswith("prims.")})
    assert len(names) >= 71, names  # docs/prims.md: 71 prims
    return names


def test_every_prim_has_op_cases():
    cases = op_case_names()
    assert len(cases) == len(set(cases)), "duplicate case names"
    assert all(c.startswith("op.") for c in cases)
    missing = [p for p in registry_prims() if not any(c.startswith("op." + p[len("prims."):] + ".") for c in cases)]
    assert not missing, f"prims without op-tier cases: {missing}"


def test_every_float_dtype_and_integer_dtype_is_swept():
    cases = set(op_case_names())
    for dt in ("f32", "f16", "bf16", "f64"):
        assert f"op.exp.{dt}.special_1025" in cases and f"op.sum.{dt}.dims_0_2_exact" in cases
    for dt in ("i64", "i32", "i16", "i8", "u8"):
        assert f"op.div.{dt}.special_1025" in cases and f"op.convert_element_type.f32.to_{dt}" in cases
    assert "op.matmul.f32.odd_17x33x65_transposed_b" in cases and "op.sum.f32.dims_0_1_2_exact" in cases


def test_minimal_sample_passes_the_op_tier(tmp_path: pathlib.Path):
    start = time.monotonic()
    r = subprocess.run([str(RUNNER), "--plugin", "minimal", "--tier", "op", "--report", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - start
    failures = [line for line in r.stdout.splitlines() if " failed " in line and "rerun" not in line][:20]
    assert r.returncode == 0, "\n".join(failures) + r.stdout[-3000:] + r.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    s = report["summary"]
    assert s["failed"] == 0 and s["skipped"] == 0 and s["verdict"] == "certified", s
    assert s["passed"] == len(report["cases"]) >= MIN_CASES, s
    # the tier runs in `make test`: about 60 s on a 2-core machine; far beyond that is a regression
    assert elapsed < 300, f"the op tier took {elapsed:.0f} s"
