"""The scheduler on whole models (conformance/models/*.f64.pgraph): the fused program matches
the reference executor on the original graph to 1e-10 relative, fusion cuts the kernel count
and planning does not grow memory. `plugsdk report` prints the table docs/scheduling.md shows."""
from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
CLI = BUILD / "bin" / "plugsdk"
MODELS = sorted((ROOT / "conformance" / "models").glob("*.f64.pgraph"))


def test_models_exist():
    names = {p.name.split(".")[0] for p in MODELS}
    assert {"mlp", "resnet18", "transformer_encoder", "gpt2_block"} <= names, names


@pytest.mark.parametrize("model", MODELS, ids=[p.name.split(".")[0] for p in MODELS])
def test_program_matches_reference_and_fuses(model: pathlib.Path):
    r = subprocess.run([str(CLI), "report", str(model)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    row = [c.strip() for c in r.stdout.strip().splitlines()[-1].strip("|").split("|")]
    aten, prims, unfused = int(row[1]), int(row[2]), int(row[3])
    kernels, calls = (int(x) for x in row[4].split("+"))
    temp_unfused, temp_fused, temp_planned = float(row[5]), float(row[6]), float(row[7])
    err = float(row[8])
    assert err <= 1e-10, f"program differs from the reference by {err}"
    assert prims >= aten
    assert kernels + calls < unfused, "fusion did not reduce the number of kernels"
    assert temp_planned <= temp_fused <= temp_unfused
