"""The model graphs of conformance/models run through the minimal sample plugin
(samples/minimal_backend) with `plugsdk run G --backend minimal`, against eager torch with
conformance/models/test_models.py's inputs, CLI helper and tolerances:

  - library ops on (the plugin's default): prims.matmul / convolution / sdpa are library calls
    (matmul and convolution with fused epilogues), every model including resnet18;
  - `--backend-options library=none`: the plugin reports no library ops, so the core expands
    them into loop kernels (resnet18 is left out: its convolutions as interpreted loops take
    minutes).

Each run must also say, on its summary line, that the program really used library calls (or
none): "ran @G as a program (N kernels, M library calls) on minimal:0 (host0)".
"""
from __future__ import annotations

import os
import pathlib
import re
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "conformance" / "models"))
import test_models as tm  # noqa: E402  (a module object: pytest does not collect its tests here)

# The plugin to run (a name or a path): tools/test_install.sh points it at the sample built
# out of tree with another compiler.
BACKEND = os.environ.get("PLUGSDK_TEST_BACKEND", "minimal")
RUN_LINE = re.compile(r"ran @\w+ as a program \((\d+) kernels, (\d+) library calls\) on minimal:0 \(host0\)")

# Library calls per model with library ops on: matmuls (addmm / linear / bmm), convolutions
# (resnet18: 20 and its fc), attentions.
LIBRARY_CALLS = {"mlp": 3, "resnet18": 21, "transformer_encoder": 5, "gpt2_block": 5}


def run_on_minimal(graph: str, options: str | None, tmp_path: pathlib.Path) -> tuple[int, int]:
    """Runs `graph` on the minimal plugin, checks its output against eager torch and returns
    (kernels, library calls) from the summary line."""
    name, suffix = tm.split_graph(graph)
    dtype, rtol, atol = tm.TOLERANCES[suffix]
    inputs, want = tm.model_case(name, dtype)
    args = []
    for n, a in inputs:
        path = tmp_path / f"{n}.npy"
        np.save(path, a)
        args += ["--input", f"{n}={path}"]
    extra = ["--backend-options", options] if options is not None else []
    out_dir = tmp_path / "out"
    r = tm.run_cli("run", str(tm.HERE / f"{graph}.pgraph"), "--quiet", "--backend", BACKEND, *extra,
                   "--save", str(out_dir), *args)
    what = f"plugsdk run {graph}.pgraph --backend {BACKEND}" + (f" --backend-options {options}" if options else "")
    assert r.returncode == 0, f"{what} failed:\n{r.stdout}\n{r.stderr}"
    m = RUN_LINE.search(r.stdout)
    assert m, f"{what}: no summary line in\n{r.stdout}"
    got = np.load(out_dir / "out.npy")
    assert got.shape == want.shape, f"shape {got.shape} vs torch {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} vs torch {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
    return int(m[1]), int(m[2])


@pytest.mark.parametrize("graph", tm.GRAPHS)
def test_model_with_library_ops_matches_torch(graph: str, tmp_path: pathlib.Path):
    _, calls = run_on_minimal(graph, None, tmp_path)  # mlp has no kernel left: its bias + relu are epilogues
    assert calls == LIBRARY_CALLS[tm.split_graph(graph)[0]], f"{calls} library calls"


@pytest.mark.parametrize("graph", [g for g in tm.GRAPHS if not g.startswith("resnet18")])
def test_model_as_loops_matches_torch(graph: str, tmp_path: pathlib.Path):
    kernels, calls = run_on_minimal(graph, "library=none", tmp_path)
    assert calls == 0, f"{calls} library calls with library=none"
    assert kernels > 0


def test_bad_backend_options_are_reported(tmp_path: pathlib.Path):
    r = tm.run_cli("run", str(tm.HERE / "mlp.pgraph"), "--quiet", "--backend", "minimal",
                   "--backend-options", "library=gemm")
    assert r.returncode != 0
    assert "option library: unknown value 'gemm'" in r.stderr, r.stderr
