"""Faults on the GPU that a test without one cannot reach (issue 9, "Faults and bad input"):
an allocation the device cannot satisfy names the bytes asked for and those free, and the
process goes on (no crash, no partial results); an illegal address names the kernel. Runs the `plugsdk` CLI on the cuda plugin
($PLUGSDK_CLI, else the build's bin/plugsdk). Needs a GPU: skipped without one (CI); on the
GPU machine through tools/device_cuda_python.sh with PLUGSDK_CLI=$G/bin/plugsdk."""
import os
import pathlib
import re
import subprocess

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("PLUGSDK_CLI", ROOT / "build" / "bin" / "plugsdk"))


def run(graph: str, tmp_path: pathlib.Path, options: str = "") -> subprocess.CompletedProcess:
    assert CLI.exists(), f"{CLI} is missing: set PLUGSDK_CLI to the plugsdk binary"
    src = tmp_path / "g.pgraph"
    src.write_text(graph)
    extra = ["--backend-options", options] if options else []
    return subprocess.run([str(CLI), "run", str(src), "--backend", "cuda", "--quiet", *extra], capture_output=True,
                          text=True, timeout=300)


def test_out_of_memory_names_the_bytes_asked_and_free(tmp_path):
    free, total = torch.cuda.mem_get_info()
    # Two outputs, each under the device's buffer limit (its memory) and together over it:
    # the second allocation fails in the driver, not in the core's size check.
    cols = 1 << 20
    rows = (total * 3 // 4) // (4 * cols)
    each = rows * cols * 4
    assert 2 * each > total and each < total
    graph = f"""graph @oom(%x: f32[1]) {{
  %y = prims.broadcast_in_dim(%x) {{shape = [{rows}, {cols}], broadcast_dimensions = [1]}}
  %a = prims.exp(%y)
  %b = prims.sin(%y)
  return %a, %b
}}
"""
    r = run(graph, tmp_path)
    assert r.returncode != 0, r.stdout
    msg = r.stderr
    assert "resource_exhausted" in msg, msg
    assert f"cannot allocate {each} bytes" in msg, msg
    m = re.search(r"(\d+) of (\d+) bytes are free", msg)
    assert m, msg
    assert int(m.group(2)) == total and int(m.group(1)) < each, msg


def test_after_an_out_of_memory_the_device_still_runs(tmp_path):
    graph = """graph @small(%x: f32[1024]) {
  %a = prims.exp(%x)
  return %a
}
"""
    r = run(graph, tmp_path)
    assert r.returncode == 0, r.stderr


def test_an_illegal_address_names_the_kernel(tmp_path):
    """A kernel that touches memory that is not there (the plugin's fault=address hook: its first
    argument at an unmapped address; imports cannot make one: a strided view past its
    allocation is refused at import). The error names the kernel and the driver's reason; the
    CLI's process, whose CUDA context the fault ends, exits with it."""
    graph = """graph @g(%x: f32[4096]) {
  %a = prims.sin(%x)
  return %a
}
"""
    r = run(graph, tmp_path, "fault=address")
    assert r.returncode != 0, r.stdout
    assert re.search(r"kernel @\w+", r.stderr), r.stderr
    assert "illegal" in r.stderr.lower(), r.stderr
