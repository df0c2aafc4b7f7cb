"""Golden tests for the compiler passes, in the spirit of MLIR's lit tests.

Each `<stage>/<family>/<name>.pgraph` beside this file is an input graph; `<name>.expected`
is the exact text `plugsdk lower --to <stage>` must print for it. A pass that changes its
output fails here until the new output is reviewed and the .expected file updated:

    PLUGSDK_UPDATE_GOLDEN=1 python3 -m pytest core/golden   # rewrites the .expected files

Numbers are checked elsewhere (the torch oracle and the program interpreter); these tests
pin down what each decomposition and fusion rule produces.
"""
from __future__ import annotations

import difflib
import os
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[1] / "build"))
CLI = BUILD / "bin" / "plugsdk"
UPDATE = os.environ.get("PLUGSDK_UPDATE_GOLDEN") == "1"


def cases():
    out = []
    for src in sorted(HERE.glob("*/*/*.pgraph")):
        stage = src.parent.parent.name
        out.append(pytest.param(stage, src, id=f"{stage}/{src.parent.name}/{src.stem}"))
    return out


@pytest.mark.parametrize("stage,src", cases())
def test_golden(stage: str, src: pathlib.Path):
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: build first")
    r = subprocess.run([str(CLI), "lower", str(src), "--to", stage], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"plugsdk lower failed for {src}:\n{r.stderr}"
    expected_path = src.with_suffix(".expected")
    if UPDATE:
        expected_path.write_text(r.stdout)
        return
    assert expected_path.exists(), f"{expected_path} is missing (run with PLUGSDK_UPDATE_GOLDEN=1 and review it)"
    expected = expected_path.read_text()
    if r.stdout != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), r.stdout.splitlines(True), "expected", "actual"))
        pytest.fail(f"{src.name}: output differs from {expected_path.name}:\n{diff}")


def test_golden_cases_exist():
    """Every stage directory holds cases, and no .expected file lacks its input."""
    assert cases(), "no golden cases found"
    for exp in HERE.glob("*/*/*.expected"):
        assert exp.with_suffix(".pgraph").exists(), f"{exp} has no .pgraph input"
