"""The fusion and dynamic tiers against the minimal sample: every case passes (so each fusion
rule fired, as the case checks the schedule's kernel counts first, and every symbolic-size
program ran at each size), and the case lists cover the rules and sizes they claim to."""
from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", HERE.parents[1] / "build"))
RUNNER = BUILD / "bin" / "plugsdk-conformance"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUNNER), *args], capture_output=True, text=True, timeout=600)


def cases(report_dir: pathlib.Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((report_dir / "report.json").read_text())["cases"]}


def test_fusion_tier_passes_on_the_minimal_sample(tmp_path: pathlib.Path):
    r = run("--plugin", "minimal", "--tier", "fusion", "--report", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    got = cases(tmp_path)
    rules = {name.split(".")[1] for name in got}
    assert rules >= {"vertical", "horizontal", "reduction", "multi_reduction", "library_epilogue", "inline",
                     "combining_store", "memory", "limit"}, rules
    assert all(c["status"] == "passed" for c in got.values()), [c for c in got.values() if c["status"] != "passed"]
    assert len(got) >= 30


def test_dynamic_tier_passes_on_the_minimal_sample(tmp_path: pathlib.Path):
    r = run("--plugin", "minimal", "--tier", "dynamic", "--report", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    got = cases(tmp_path)
    assert len(got) >= 20 and all(c["status"] == "passed" for c in got.values())


def test_a_device_that_fails_launches_fails_the_fusion_and_dynamic_tiers():
    r = run("--plugin", str(BUILD / "test_plugins" / "libplugsdk_fault_launch.so"), "--tier", "fusion,dynamic",
            "--filter", "f32")
    assert r.returncode == 1, r.stdout
    assert "the kernel hit a hardware fault" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("0 passed"), r.stdout.splitlines()[-1]


def test_bool_predicates_need_no_bool_claim():
    # fault_launch claims f32 only; a padded concat masks its loads with bool predicates: the
    # program must compile and reach the launch (which fails on purpose), not be refused for bool
    r = run("--plugin", str(BUILD / "test_plugins" / "libplugsdk_fault_launch.so"), "--tier", "fusion",
            "--filter", "inline.views_pad_concat.f32")
    assert r.returncode == 1, r.stdout
    assert "the kernel hit a hardware fault" in r.stdout and "uses dtype bool" not in r.stdout, r.stdout


def test_case_names_are_unique_across_the_suite():
    # a duplicate name would make --filter, the rerun command and the reports ambiguous
    r = run("--list")
    assert r.returncode == 0, r.stderr
    names = r.stdout.split()
    dupes = sorted(n for n, k in collections.Counter(names).items() if k > 1)
    assert len(names) >= 4400 and not dupes, dupes[:20]
    assert {n.split(".")[0] for n in names} == {"abi", "op", "fusion", "model", "autograd", "dynamic", "fuzz"}
