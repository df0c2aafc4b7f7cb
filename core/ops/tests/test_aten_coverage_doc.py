"""docs/aten-coverage.md matches torch's Core ATen op set, our registry, the decomposition
rules and what the oracle cases lower to (tools/gen_coverage_doc.py --check)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_coverage_doc  # noqa: E402


def test_core_aten_set_is_found():
    ops = gen_coverage_doc.core_aten_overloads()
    assert len(ops) >= 150, f"only {len(ops)} Core ATen overloads found: is torch.Tag.core still the tag?"
    assert "aten.add.Tensor" in ops and "aten.convolution.default" in ops


def test_aten_coverage_doc_is_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_coverage_doc.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
