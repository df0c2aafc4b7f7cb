"""Every ATen-level op checked against torch eager, through the `plugsdk` CLI.

For each case (see oracle.py and cases_*.py): the one-node graph must parse and verify,
print canonically and round-trip (print(parse(print(g))) == print(g)), and its outputs on
the reference executor must match torch on the same inputs -- as written (stage "aten"),
after prim reduction (stage "prims": the op decomposed by core/decomp and the prim graph
run on the reference executor) and as a scheduled program (stage "program": fused kernels
and library calls run by the program interpreter), so every decomposition and every
scheduling path is checked against torch.
"""
from __future__ import annotations

import importlib
import os
import re
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import pytest
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from oracle import Case, graph_text  # noqa: E402

BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[2] / "build"))
CLI = BUILD / "bin" / "plugsdk"


def load_cases():
    out = []
    for path in sorted(HERE.glob("cases_*.py")):
        mod = importlib.import_module(path.stem)
        family = path.stem[len("cases_"):]
        for i, case in enumerate(mod.CASES):
            out.append(pytest.param(case, id=f"{family}-{i}-{case.name()}"))
    return out


def to_torch(a: np.ndarray) -> torch.Tensor:
    # np.ascontiguousarray would turn a 0-d array into shape (1,): copy instead.
    return torch.from_numpy(np.array(a, copy=True, order="C"))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=120)


# Ops whose prim graphs may hold a library op (matmul, convolution, sdpa): they run once
# more with the library ops expanded into loop kernels (stage "program-loops"), as for a
# device that does not implement them.
LIBRARY_OPS = re.compile(r"mm|matmul|conv(?!ert)|attention|sdpa|linear|bmm|addmv|\bmv\b|dot|einsum")


def library_cases():
    return [c for c in load_cases() if LIBRARY_OPS.search(c.values[0].name())]


def lowered_to(case: Case, stage: str, prims_re: str, tmp_path: pathlib.Path) -> str:
    """The case lowered to `stage` (skipped when its prim graph has no match for prims_re)."""
    prims = tmp_path / "case.pgraph"
    prims.write_text(graph_text(case))
    p = run_cli("lower", str(prims), "--to", "prims")
    assert p.returncode == 0, p.stderr
    if not re.search(prims_re, p.stdout):
        pytest.skip(f"its prim graph has no {prims_re}")
    lowered = run_cli("lower", str(prims), "--to", stage)
    assert lowered.returncode == 0, lowered.stderr
    return lowered.stdout


@pytest.mark.parametrize("case", library_cases())
def test_library_loops_match_torch(case: Case, tmp_path: pathlib.Path):
    loops = lowered_to(case, "program-loops", r"prims\.(matmul|convolution|sdpa)", tmp_path)
    assert "call " not in loops, f"a library call survived the expansion:\n{loops}"
    test_op_matches_torch(case, "program-loops", tmp_path)


@pytest.mark.parametrize("case", [c for c in library_cases()
                                  if re.search(r"conv(?!ert)|attention|sdpa", c.values[0].name())])
def test_convolution_and_attention_over_matmul_match_torch(case: Case, tmp_path: pathlib.Path):
    """A device with prims.matmul but no prims.convolution or prims.sdpa:
    im2col + matmul; attention's products as f32 matmuls."""
    lowered_to(case, "program-im2col", r"prims\.(convolution|sdpa)", tmp_path)
    test_op_matches_torch(case, "program-im2col", tmp_path)


@pytest.mark.parametrize("stage", ["aten", "prims", "program"])
@pytest.mark.parametrize("case", load_cases())
def test_op_matches_torch(case: Case, stage: str, tmp_path: pathlib.Path):
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: build first")
    rng = np.random.default_rng(zlib.crc32(case.name().encode()))
    src = tmp_path / "case.pgraph"
    src.write_text(graph_text(case))

    # Round trip: the canonical print parses back to the same canonical text.
    p1 = run_cli("print", str(src))
    assert p1.returncode == 0, f"graph rejected:\n{graph_text(case)}\n{p1.stderr}"
    canon = tmp_path / "canon.pgraph"
    canon.write_text(p1.stdout)
    p2 = run_cli("print", str(canon))
    assert p2.returncode == 0, p2.stderr
    assert p2.stdout == p1.stdout, "print(parse(print(g))) differs from print(g)"

    # Execute on the reference executor and compare with torch.
    arrays, args = [], []
    for i, t in enumerate(case.inputs):
        if t is None:
            arrays.append(None)
            continue
        a = t.make(rng)
        np.save(tmp_path / f"in{i}.npy", a)
        args += ["--input", f"in{i}={tmp_path / f'in{i}.npy'}"]
        arrays.append(a)
    out_dir = tmp_path / "out"
    r = run_cli("run", str(canon), "--quiet", "--lower", stage, "--save", str(out_dir), *args)
    assert r.returncode == 0, f"run failed:\n{p1.stdout}\n{r.stderr}"

    expected = case.torch_fn(*[None if a is None else to_torch(a) for a in arrays])
    if not isinstance(expected, (tuple, list)):
        expected = [expected]
    assert len(expected) == case.num_outputs, "torch returned a different number of outputs"
    for i, want in enumerate(expected):
        if i in case.skip_outputs:
            continue
        got = np.load(out_dir / f"out{i}.npy")
        want_np = want.detach().numpy() if want.dtype != torch.bfloat16 else want.float().numpy()
        assert got.shape == want_np.shape, f"output {i}: shape {got.shape} vs torch {want_np.shape}"
        assert got.dtype == want_np.dtype, f"output {i}: dtype {got.dtype} vs torch {want_np.dtype}"
        if np.issubdtype(got.dtype, np.floating):
            np.testing.assert_allclose(got, want_np, rtol=case.rtol, atol=case.atol, equal_nan=True,
                                       err_msg=f"output {i} of\n{p1.stdout}")
            # NaN positions and signs of zeros/infs must match exactly.
            assert np.array_equal(np.isnan(got), np.isnan(want_np)), f"output {i}: NaN positions differ"
            if case.signed_zeros:
                num = ~np.isnan(got)
                assert np.array_equal(np.signbit(got[num]), np.signbit(want_np[num])), f"output {i}: signs differ"
        else:
            np.testing.assert_array_equal(got, want_np, err_msg=f"output {i} of\n{p1.stdout}")
