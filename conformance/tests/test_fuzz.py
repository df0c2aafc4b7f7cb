"""plugsdk-fuzz end to end: a fuzz run on the sample plugin finds nothing and runs many graphs;
the minimizer shrinks resnet18 against a plugin whose every launch fails to at most 2 nodes,
and the command written into the small file reproduces the failure; the fuzz tier of
plugsdk-conformance passes on the sample; and the graphs the fuzzer once found failing on the
sample (fuzz_regressions/, each with the seed it failed under) now pass."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
FUZZ = BUILD / "bin" / "plugsdk-fuzz"
RUNNER = BUILD / "bin" / "plugsdk-conformance"
FAULT_LAUNCH = BUILD / "test_plugins" / "libplugsdk_fault_launch.so"
REGRESSIONS = sorted((HERE / "fuzz_regressions").glob("*.pgraph"))


def fuzz(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(FUZZ), *args], capture_output=True, text=True, timeout=timeout)


def test_a_fuzz_run_on_the_sample_finds_nothing(tmp_path: pathlib.Path):
    r = fuzz("run", "--plugin", "minimal", "--seconds", "5", "--seed", "11", "--out", str(tmp_path))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    m = re.search(r"plugsdk-fuzz: (\d+) graphs \((\d+) nodes\) in [\d.]+ s, 0 failures, 0 rejected \(seed 11\)", r.stdout)
    assert m, r.stdout[-2000:]
    assert int(m.group(1)) >= 100 and int(m.group(2)) > 5 * int(m.group(1)), m.group(0)
    assert "graphs, 0 failures, 0 rejected" in r.stdout  # the progress lines
    assert not list(tmp_path.iterdir())  # nothing failed: nothing written


def minimize(plugin: pathlib.Path, graph: str, out: pathlib.Path) -> tuple[str, dict[str, str], list[str]]:
    r = fuzz("minimize", "--plugin", str(plugin), "--seed", "5", str(ROOT / "conformance" / "models" / graph),
             "--out", str(out))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    assert re.search(r"minimize: \d+ nodes? left \(", r.stdout), r.stdout  # progress
    text = out.read_text()
    header = dict(re.findall(r"^# (rerun|fails with): (.*)$", text, re.M))
    nodes = [line for line in text.splitlines() if re.match(r"\s+%.* = \w+\.", line)]
    return r.stdout, header, nodes


def test_minimizing_resnet18_on_a_device_whose_launches_fail(tmp_path: pathlib.Path):
    # the plugin claims f32 only and fails every launch: the minimizer keeps the first failure
    # (same text up to value and kernel names) and ends at one or two nodes. That failure is the
    # claim: resnet18's max-pool values are gathered at its i64 indices, so a step needs i64.
    # (Before bool predicates needed no claim, the core refused the padded convolution's mask;
    # before the gather, the indices were dead and the first launch's fault was kept.)
    small = tmp_path / "small.pgraph"
    out, header, nodes = minimize(FAULT_LAUNCH, "resnet18.pgraph", small)
    assert "resnet18.pgraph: 70 nodes, device error:" in out
    assert 1 <= len(nodes) <= 2, small.read_text()
    rerun = shlex.split(header["rerun"])
    assert rerun[:2] == ["plugsdk-fuzz", "check"] and rerun[-1] == str(small) and "--seed" in rerun, rerun
    again = fuzz(*rerun[1:])
    assert again.returncode == 1, again.stdout + again.stderr
    assert again.stdout.strip() == header["fails with"], (again.stdout, header)
    assert "uses dtype i64, which device fault:0 (fault0) does not support" in again.stdout


def test_minimizing_to_a_launch_failure(tmp_path: pathlib.Path):
    small = tmp_path / "small.pgraph"
    out, header, nodes = minimize(FAULT_LAUNCH, "mlp.pgraph", small)
    assert "the kernel hit a hardware fault" in header["fails with"], header
    assert len(nodes) == 1, small.read_text()
    again = fuzz(*shlex.split(header["rerun"])[1:])
    assert again.returncode == 1 and "the kernel hit a hardware fault" in again.stdout, again.stdout
    # the same small graph passes on a correct plugin: the failure was the device's
    ok = fuzz("check", "--plugin", "minimal", "--seed", "5", str(small))
    assert ok.returncode == 0 and ok.stdout.strip() == "passed", ok.stdout + ok.stderr


def test_check_and_usage():
    r = fuzz("check", "--plugin", "minimal", "--seed", "3", "--generated", "--print")
    assert r.returncode == 0 and "graph @fuzz(" in r.stdout and r.stdout.strip().endswith("passed"), r.stdout
    r = fuzz("check", "--plugin", "minimal", str(ROOT / "conformance" / "models" / "mlp.pgraph"))
    assert r.returncode == 0 and r.stdout.strip() == "passed", r.stdout + r.stderr
    r = fuzz("minimize", "--plugin", "minimal", str(ROOT / "conformance" / "models" / "mlp.pgraph"), "--out", "x")
    assert r.returncode == 1 and "does not fail" in r.stderr
    r = fuzz("frobnicate")
    assert r.returncode == 2 and "usage:" in r.stderr
    r = fuzz("check", "--plugin", "minimal")
    assert r.returncode == 2 and "missing" in r.stderr


def test_the_fuzz_tier_passes_on_the_sample(tmp_path: pathlib.Path):
    r = subprocess.run([str(RUNNER), "--plugin", "minimal", "--tier", "fuzz", "--report", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert len(cases) == 40 and all(c["status"] == "passed" for c in cases), [c for c in cases if c["status"] != "passed"]
    assert sorted(c["name"] for c in cases) == sorted(f"fuzz.{k}" for k in range(40))


def test_a_failing_fuzz_case_says_how_to_minimize_it():
    # launches fail: every fuzz graph fails, and the message is the plugsdk-fuzz command
    r = subprocess.run([str(RUNNER), "--plugin", str(FAULT_LAUNCH), "--filter", "fuzz.3", "--seed", "9"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout
    m = re.search(r"minimize: (plugsdk-fuzz minimize .*)$", r.stdout, re.M)
    assert m, r.stdout
    cmd = shlex.split(m.group(1))
    assert "--generated" in cmd and cmd[cmd.index("--plugin") + 1] == str(FAULT_LAUNCH), cmd
    # the command regenerates the same graph: checking it fails the same way
    check = ["check" if a == "minimize" else a for a in cmd[1:]]
    check = check[:check.index("--out")]
    again = fuzz(*check)
    assert again.returncode == 1 and "hardware fault" in again.stdout, again.stdout + again.stderr


def test_every_regression_graph_is_collected():
    # four memory-plan findings (core/sched/memory_plan.cc; also gtests in memory_plan_test.cc)
    assert len(REGRESSIONS) >= 4, REGRESSIONS


@pytest.mark.parametrize("graph", REGRESSIONS, ids=[g.stem for g in REGRESSIONS])
def test_a_fixed_fuzz_finding_passes_on_the_sample(graph: pathlib.Path):
    # rerun exactly as the file's header says (its seed draws the inputs it failed on)
    rerun = shlex.split(re.search(r"^# rerun: (.*)$", graph.read_text(), re.M).group(1))
    assert rerun[:4] == ["plugsdk-fuzz", "check", "--plugin", "minimal"] and "--seed" in rerun, rerun
    seed = rerun[rerun.index("--seed") + 1]
    r = fuzz("check", "--plugin", "minimal", "--seed", seed, str(graph))
    assert r.returncode == 0 and r.stdout.strip() == "passed", r.stdout + r.stderr
