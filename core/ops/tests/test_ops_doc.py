"""The ATen-level op set is complete and documented: every registered ATen op (category not
"prim.*") has a reference kernel, a decomposition rule and at least one torch-oracle case, and
docs/ops.md matches the registry. The prims are checked by core/prims/tests/test_prims_doc.py."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_ops_doc  # noqa: E402
import registry  # noqa: E402


def test_every_aten_op_has_a_kernel_a_rule_and_oracle_cases():
    rows = gen_ops_doc.aten_ops()
    counts = registry.oracle_counts()
    rules = registry.decomps()
    assert len(rows) >= 80, f"only {len(rows)} ATen ops registered"
    missing_kernel = [r.name for r in rows if not r.kernel]
    missing_rule = [r.name for r in rows if r.name not in rules]
    missing_cases = [r.name for r in rows if not counts[r.name]]
    assert not missing_kernel, f"ops without a reference kernel: {missing_kernel}"
    assert not missing_rule, f"ops without a decomposition rule: {missing_rule}"
    assert not missing_cases, f"ops without torch-oracle cases: {missing_cases}"


def test_oracle_cases_name_registered_ops():
    unknown = sorted(set(registry.oracle_counts()) - {r.name for r in registry.ops()})
    assert not unknown, f"oracle cases for unregistered ops: {unknown}"


def test_ops_doc_is_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_ops_doc.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
