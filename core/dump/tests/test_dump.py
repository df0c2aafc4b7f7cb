"""PLUGSDK_DUMP writes every stage as text and Graphviz, and the fused view shows the kernels."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
CLI = BUILD / "bin" / "plugsdk"
GRAPH = ROOT / "core" / "golden" / "program" / "fusion" / "matmul_bias_gelu.pgraph"


def lower(tmp: pathlib.Path, env_extra: dict) -> subprocess.CompletedProcess:
    env = dict(os.environ, **env_extra)
    return subprocess.run([str(CLI), "lower", str(GRAPH), "--to", "program"], capture_output=True, text=True, env=env,
                          timeout=60)


def test_dump_writes_every_stage(tmp_path: pathlib.Path):
    r = lower(tmp_path, {"PLUGSDK_DUMP": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    d = tmp_path / "matmul_bias_gelu"
    for f in ["1-input.pgraph", "1-input.dot", "2-prims.pgraph", "2-prims.dot", "3-program.txt", "3-fused.dot"]:
        assert (d / f).stat().st_size > 0, f
    # The dumped program is exactly what `lower` printed; the input round-trips.
    assert (d / "3-program.txt").read_text() == r.stdout
    assert "aten.addmm" in (d / "1-input.pgraph").read_text()
    prims = (d / "2-prims.pgraph").read_text()
    assert "prims.matmul" in prims and "aten." not in prims
    fused = (d / "3-fused.dot").read_text()
    assert "cluster_0" in fused and "prims.matmul + epilogue" in fused and "strided view" in fused
    assert "prims.erf" in fused


def test_dump_svg_when_graphviz_is_present(tmp_path: pathlib.Path):
    assert shutil.which("dot"), "graphviz is part of the toolbox (tools/toolbox.packages)"
    r = lower(tmp_path, {"PLUGSDK_DUMP": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    svg = tmp_path / "matmul_bias_gelu" / "3-fused.svg"
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "prims.matmul + epilogue" in svg.read_text()


def test_no_dump_without_the_variable(tmp_path: pathlib.Path):
    env = {k: v for k, v in os.environ.items() if k != "PLUGSDK_DUMP"}
    r = subprocess.run([str(CLI), "lower", str(GRAPH), "--to", "program"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not any(tmp_path.iterdir())


def test_unwritable_dump_dir_is_an_error(tmp_path: pathlib.Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = lower(tmp_path, {"PLUGSDK_DUMP": str(blocker)})
    assert r.returncode != 0
    assert "PLUGSDK_DUMP" in r.stderr and "cannot create" in r.stderr
