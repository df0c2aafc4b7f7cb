"""The model graphs of conformance/models checked against torch eager, through `plugsdk`.

    tools/toolbox run python3 -m pytest conformance/models -q

For every model and dtype the model is rebuilt in Python with the seed generate.py used,
each graph input (parameters, buffers, x) is written as .npy, the graph is run with
`plugsdk run FILE --quiet --lower STAGE --save DIR --input name=path ...` and its output
compared with eager torch on the same inputs: as written (stage "aten"), reduced to prims
("prims": core/decomp) and as a scheduled program ("program": fused kernels and library
calls on the program interpreter). The committed .pgraph files must also be what
generate.py produces today, must pass `plugsdk check` and be in canonical form.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[1] / "build"))
CLI = BUILD / "bin" / "plugsdk"

# suffix -> (dtype, rtol, atol)
TOLERANCES = {
    "": (torch.float32, 1e-4, 1e-5),
    ".f64": (torch.float64, 1e-10, 1e-12),
}
GRAPHS = [f"{name}{suffix}" for name in generate.MODELS for suffix in generate.VARIANTS]


def run_cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: build first")
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=timeout)


def split_graph(graph: str):
    name, _, suffix = graph.partition(".")
    return name, ("." + suffix if suffix else "")


_eager_cache: dict = {}


def model_case(name: str, dtype: torch.dtype):
    """(graph inputs [(name, array)], the eager output as numpy), computed once."""
    key = (name, dtype)
    if key not in _eager_cache:
        model, x = generate.build(name, dtype)
        inputs = [(n, t.numpy()) for n, _, t in generate.graph_inputs(model, x)]
        want = generate.eager(model, x).detach().numpy()
        _eager_cache[key] = (inputs, want)
    return _eager_cache[key]


@pytest.mark.parametrize("stage", ["aten", "prims", "program"])
@pytest.mark.parametrize("graph", GRAPHS)
def test_model_matches_torch(graph: str, stage: str, tmp_path: pathlib.Path):
    name, suffix = split_graph(graph)
    dtype, rtol, atol = TOLERANCES[suffix]
    inputs, want = model_case(name, dtype)
    args = []
    for n, a in inputs:
        path = tmp_path / f"{n}.npy"
        np.save(path, a)
        args += ["--input", f"{n}={path}"]
    out_dir = tmp_path / "out"
    r = run_cli("run", str(HERE / f"{graph}.pgraph"), "--quiet", "--lower", stage,
                "--save", str(out_dir), *args)
    assert r.returncode == 0, f"plugsdk run --lower {stage} {graph}.pgraph failed:\n{r.stderr}"
    got = np.load(out_dir / "out.npy")
    assert got.shape == want.shape, f"shape {got.shape} vs torch {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} vs torch {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{graph} at stage {stage}")


# Library ops expanded into loop kernels (a device without matmul / convolution / sdpa).
# resnet18's convolutions as loops take minutes on the program interpreter: it runs through
# the minimal sample plugin instead (core/plugin/tests/test_plugin_models.py).
@pytest.mark.parametrize("graph", [g for g in GRAPHS if not g.startswith("resnet18")])
def test_model_as_loops_matches_torch(graph: str, tmp_path: pathlib.Path):
    test_model_matches_torch(graph, "program-loops", tmp_path)


@pytest.mark.parametrize("graph", GRAPHS)
def test_graph_checks_and_is_canonical(graph: str, tmp_path: pathlib.Path):
    path = HERE / f"{graph}.pgraph"
    r = run_cli("check", str(path))
    assert r.returncode == 0, r.stderr
    p = run_cli("print", str(path))
    assert p.returncode == 0, p.stderr
    body = "".join(line for line in path.read_text().splitlines(keepends=True)
                   if not line.startswith("#"))
    assert p.stdout == body, "the committed graph is not in the printer's canonical form"


def test_committed_graphs_are_current(tmp_path: pathlib.Path):
    assert generate.main(["--out", str(tmp_path)]) == 0
    fresh = sorted(p.name for p in tmp_path.glob("*.pgraph"))
    committed = sorted(p.name for p in HERE.glob("*.pgraph"))
    assert fresh == committed, "conformance/models holds other graphs than generate.py writes"
    stale = [f for f in fresh if (tmp_path / f).read_text() != (HERE / f).read_text()]
    assert not stale, (f"{stale} differ from what generate.py produces today: rerun "
                       "tools/toolbox run python3 conformance/models/generate.py")
