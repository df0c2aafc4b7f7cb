"""Faults on the GPU that a test without one cannot reach (issue 9, "Faults and bad input"):
an allocation the device cannot satisfy names the bytes asked for and those free, and the
process goes on (no crash, no partial results). Runs the `plugsdk` CLI on the cuda plugin
($PLUGSDK_CLI, else the build's bin/plugsdk). Needs a GPU: skipped without one (CI); on the
GPU machine through tools/device_cuda_python.sh with PLUGSDK_CLI=$G/bin/plugsdk."""
import os
import pathlib
import re
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (the GPU machine runs these)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("PLUGSDK_CLI", ROOT / "build" / "bin" / "plugsdk"))


def run(graph: str, tmp_path: pathlib.Path) -> subprocess.CompletedProcess:
    assert CLI.exists(), f"{CLI} is missing: set PLUGSDK_CLI to the plugsdk binary"
    src = tmp_path / "g.pgraph"
    src.write_text(graph)
    return subprocess.run([str(CLI), "run", str(src), "--backend", "cuda", "--quiet"], capture_output=True, text=True,
                          timeout=300)


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


_ILLEGAL_ADDRESS_CHILD = r"""
import torch, plugsdk
from plugsdk import runtime

class Bogus:  # device memory that is not there: a tensor over an unmapped address
    __cuda_array_interface__ = {"shape": (1 << 20,), "typestr": "<f4", "data": (1 << 46, False), "version": 3,
                                "strides": None}

f = torch.compile(lambda x: torch.sin(x) * 2.0 + 1.0, backend="plugsdk", options={"device": "cuda"})
good = torch.randn(1 << 20, device="cuda")
f(good)
torch.cuda.synchronize()
graph = next(g for g in list(runtime._functions) if g.name)
bad = torch.as_tensor(Bogus(), device="cuda")
artifact, reason, _ = graph.select([bad])
assert artifact is not None, reason
out = torch.empty_like(good)
try:
    # The plugin's own stream, synchronously (what a caller without stream import gets).
    artifact.run([runtime._tensor_tuple(bad)], [runtime._tensor_tuple(out)])
except Exception as ex:
    print("ERROR:", ex)
else:
    print("NO ERROR")
"""


def test_an_illegal_address_names_the_kernel():
    """A kernel that reads memory that is not there: the synchronous run's error names the
    kernel and the driver's reason (the context is lost afterwards, so in a child process)."""
    r = subprocess.run([sys.executable, "-c", _ILLEGAL_ADDRESS_CHILD], capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert "ERROR:" in r.stdout, out
    line = r.stdout.split("ERROR:", 1)[1]
    assert "kernel @" in line, out
    assert "illegal" in line.lower(), out
