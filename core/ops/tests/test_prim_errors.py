"""The prim behaviours the torch-oracle harness cannot express because they are errors:
integer division by zero (div, remainder, fmod) fails at run time in every stage, an index
outside its dim fails gather and scatter, and the strictness rules (no broadcasting, no
promotion) reject a graph before it runs. Each case runs the CLI and checks the error text."""
from __future__ import annotations

import os
import pathlib
import subprocess

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[2] / "build"))
CLI = BUILD / "bin" / "plugsdk"
STAGES = ["aten", "prims", "program"]


def run(tmp_path, params, body, inputs, stage="aten"):
    src = tmp_path / "g.pgraph"
    src.write_text(f"graph @g({', '.join(params)}) {{\n  {body}\n  return %out0\n}}\n")
    args = []
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    return subprocess.run([str(CLI), "run", str(src), "--quiet", "--lower", stage, *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("op", ["div", "remainder", "fmod"])
@pytest.mark.parametrize("dtype", ["i32", "i64", "u8"])
def test_integer_division_by_zero_is_an_error(tmp_path, op, dtype, stage):
    npdt = {"i32": np.int32, "i64": np.int64, "u8": np.uint8}[dtype]
    r = run(tmp_path, [f"%a: {dtype}[3]", f"%b: {dtype}[3]"], f"%out0 = prims.{op}(%a, %b)",
            {"a": np.array([6, 7, 8], npdt), "b": np.array([2, 0, 3], npdt)}, stage)
    assert r.returncode != 0, f"prims.{op} by an integer zero did not fail ({stage})"
    assert "integer division by zero" in r.stderr, r.stderr


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("op", ["div", "remainder", "fmod"])
def test_float_division_by_zero_is_not_an_error(tmp_path, op, stage):
    r = run(tmp_path, ["%a: f64[2]", "%b: f64[2]"], f"%out0 = prims.{op}(%a, %b)",
            {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 0.0])}, stage)
    assert r.returncode == 0, r.stderr


def index_error(r, stage):
    # Every stage checks each index against its dim: the reference kernels directly, scheduled
    # kernels through a `check` statement (a device assert).
    return r.returncode != 0 and "out of range" in r.stderr


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("bad", [3, -1])
def test_gather_index_out_of_range_is_an_error(tmp_path, bad, stage):
    r = run(tmp_path, ["%a: f64[3]", "%i: i64[2]"], "%out0 = prims.gather(%a, %i) {dim = 0}",
            {"a": np.arange(3.0), "i": np.array([0, bad], np.int64)}, stage)
    assert index_error(r, stage), r.stderr


@pytest.mark.parametrize("stage", STAGES)
def test_scatter_index_out_of_range_is_an_error(tmp_path, stage):
    r = run(tmp_path, ["%a: f64[3]", "%i: i64[1]", "%s: f64[1]"],
            '%out0 = prims.scatter(%a, %i, %s) {dim = 0, reduce = "sum"}',
            {"a": np.zeros(3), "i": np.array([3], np.int64), "s": np.ones(1)}, stage)
    assert index_error(r, stage), r.stderr


@pytest.mark.parametrize("stage", STAGES)
def test_gather_index_past_its_dim_but_inside_the_buffer_is_an_error(tmp_path, stage):
    r = run(tmp_path, ["%a: f64[2, 3]", "%i: i64[1, 1]"], "%out0 = prims.gather(%a, %i) {dim = 1}",
            {"a": np.arange(6.0).reshape(2, 3), "i": np.array([[3]], np.int64)}, stage)
    assert r.returncode != 0 and "out of range" in r.stderr, r.stderr


@pytest.mark.parametrize("params, body, message", [
    (["%a: f32[3]", "%b: f64[3]"], "%out0 = prims.add(%a, %b)", "prims do not promote"),
    (["%a: f64[3]", "%b: f64[1]"], "%out0 = prims.mul(%a, %b)", "prims do not broadcast"),
    (["%a: bool[3]", "%b: bool[3]"], "%out0 = prims.add(%a, %b)", "does not accept dtype bool"),
    (["%a: i32[3]"], "%out0 = prims.exp(%a)", "does not accept dtype i32"),
    (["%a: f64[3]", "%b: f64[3]"], "%out0 = prims.bitwise_and(%a, %b)", "does not accept dtype f64"),
    (["%a: f64[0]"], "%out0 = prims.amax(%a) {dims = [0]}", "no identity"),
    (["%a: f64[4]"], "%out0 = prims.as_strided(%a) {size = [2], stride = [3], storage_offset = 1}", "reaches element"),
    (["%a: f64[4]"], "%out0 = prims.slice(%a) {start_indices = [3], limit_indices = [2]}", "start <= limit"),
    (["%a: f64[4]"], "%out0 = prims.pad(%a) {padding_value = 0.0, low = [0], high = [0], interior = [-1]}",
     "interior padding must be >= 0"),
    (["%a: i32[2]"], "%out0 = prims.pad(%a) {padding_value = 0.5, low = [1], high = [0]}", "floating padding_value"),
    ([], "%out0 = prims.full() {shape = [2], value = 1.5, dtype = i32}", "floating value cannot fill"),
    ([], "%out0 = prims.rand() {shape = [2], seed = 1, dtype = i32}", "dtype must be floating"),
])
def test_strict_operands_are_rejected(tmp_path, params, body, message):
    src = tmp_path / "g.pgraph"
    src.write_text(f"graph @g({', '.join(params)}) {{\n  {body}\n  return %out0\n}}\n")
    r = subprocess.run([str(CLI), "check", str(src)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0, f"accepted: {body}"
    assert message in r.stderr, r.stderr
