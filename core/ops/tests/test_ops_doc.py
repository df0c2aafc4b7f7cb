"""The op set is complete and documented: every registered op has a reference kernel and at
least one torch-oracle case, and docs/ops.md matches the registry."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_ops_doc  # noqa: E402


def test_every_op_has_a_kernel_and_oracle_cases():
    rows = gen_ops_doc.registry()
    counts = gen_ops_doc.oracle_counts()
    assert len(rows) >= 80, f"only {len(rows)} ops registered"
    missing_kernel = [r[0] for r in rows if not r[2]]
    missing_cases = [r[0] for r in rows if not counts[r[0]]]
    assert not missing_kernel, f"ops without a reference kernel: {missing_kernel}"
    assert not missing_cases, f"ops without torch-oracle cases: {missing_cases}"
    unknown = sorted(set(counts) - {r[0] for r in rows})
    assert not unknown, f"oracle cases for unregistered ops: {unknown}"


def test_ops_doc_is_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ops_doc.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
