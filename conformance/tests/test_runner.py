"""plugsdk-conformance against the sample plugin (must certify) and a deliberately broken
plugin (must not): the runner's exit code, its progress and rerun lines, and report.json."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[1] / "build"))
RUNNER = BUILD / "bin" / "plugsdk-conformance"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUNNER), *args], capture_output=True, text=True, timeout=300)


def test_minimal_sample_is_certified_for_the_abi_tier(tmp_path: pathlib.Path):
    r = run("--plugin", "minimal", "--tier", "abi", "--report", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "seed 20261122" in r.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    s = report["summary"]
    assert s["failed"] == 0 and s["passed"] == len(report["cases"]) >= 15, s
    assert s["verdict"] == "certified"
    assert report["abi"] == "1.0" and report["device"]["name"] == "host0"
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert suite.get("name") == "abi" and int(suite.get("tests")) == s["passed"] and suite.get("failures") == "0"


def test_a_plugin_whose_free_fails_is_not_certified(tmp_path: pathlib.Path):
    plugin = BUILD / "test_plugins" / "libplugsdk_fault_free.so"
    r = run("--plugin", str(plugin), "--filter", "abi.memory.roundtrip", "--seed", "7", "--report", str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "the allocator lost track of the buffer" in r.stdout
    assert f"rerun: plugsdk-conformance --plugin {plugin} --device 0 --seed 7 --filter abi.memory.roundtrip.0" in r.stdout
    s = json.loads((tmp_path / "report.json").read_text())["summary"]
    assert s["failed"] == 5 and s["verdict"] == "not certified", s
    failures = ET.parse(tmp_path / "junit.xml").getroot().findall(".//testcase/failure")
    assert len(failures) == 5 and "lost track of the buffer" in failures[0].get("message")


def test_list_and_bad_options():
    r = run("--list", "--tier", "abi")
    assert r.returncode == 0 and "abi.memory.fill.8" in r.stdout.split()
    r = run("--plugin", "minimal", "--frobnicate")
    assert r.returncode == 2 and "unknown or incomplete option '--frobnicate'" in r.stderr
    r = run("--plugin", "no_such_plugin")
    assert r.returncode == 1 and "no plugin named 'no_such_plugin'" in r.stderr


def test_minimal_sample_passes_the_model_tier(tmp_path: pathlib.Path):
    r = run("--plugin", "minimal", "--tier", "model", "--report", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert sorted(c["name"] for c in cases if c["status"] == "passed") == sorted(
        f"model.{m}{s}" for m in ("mlp", "resnet18", "transformer_encoder", "gpt2_block") for s in ("", ".f64"))


def test_a_device_that_fails_launches_fails_the_model_tier():
    # it claims f32 only: the f64 graphs and one with i64 inputs are skipped (with the
    # reason), the other f32 ones fail
    r = run("--plugin", str(BUILD / "test_plugins" / "libplugsdk_fault_launch.so"), "--tier", "model")
    assert r.returncode == 1, r.stdout
    assert "the kernel hit a hardware fault" in r.stdout
    assert "0 passed, 3 failed, 5 skipped" in r.stdout
