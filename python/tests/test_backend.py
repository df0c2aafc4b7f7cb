"""torch.compile(backend="plugsdk") on the CPU plugin: results against eager torch, the
fallback of ops the core lacks, zero-copy transfers, and the FX importer's symbolic sizes.

Runs on the build tree's package (tools/run_tests.sh puts $PLUGSDK_BUILD_DIR/python on
sys.path)."""
from __future__ import annotations

import re
import shutil

import pytest
import torch
import torch.nn as nn

import plugsdk
from plugsdk import backend, fx_import

torch.manual_seed(0)


def fresh():
    torch._dynamo.reset()
    backend.reports.clear()


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_backend_is_registered_by_name():
    assert "plugsdk" in torch._dynamo.list_backends()


def test_mlp_matches_eager_and_passes_tensors_in_place():
    fresh()
    model = MLP().eval()
    x = torch.randn(8, 64)
    with torch.no_grad():
        want = model(x)
        got = torch.compile(model, backend="plugsdk")(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    (report,) = plugsdk.explain()
    assert report.compiled_partitions == 1 and report.eager_partitions == 0 and not report.fallbacks
    assert set(report.stage_seconds) >= {"fx_import", "prims+schedule", "codegen"}


def test_inputs_and_outputs_are_used_in_place():
    fresh()
    ran = []
    orig = backend._compile_part

    def spy(*a, **k):
        c = orig(*a, **k)
        ran.append(c)
        return c

    backend._compile_part = spy
    try:
        f = torch.compile(lambda a, b: torch.sin(a) * b + 1, backend="plugsdk")
        a, b = torch.randn(1000), torch.randn(1000)
        torch.testing.assert_close(f(a, b), torch.sin(a) * b + 1)
    finally:
        backend._compile_part = orig
    (c,) = ran
    assert c.imported_count == 3 and c.copied_count == 0  # two inputs, one output
    # A non-contiguous input is copied (the program reads its own layout), never misread.
    at = torch.randn(1000, 2)[:, 0]
    torch.testing.assert_close(f(at, b), torch.sin(at) * b + 1)


def test_an_op_the_core_lacks_falls_back_to_eager_and_says_so(caplog):
    fresh()
    missing = "aten.erfinv"
    assert missing not in set(plugsdk.backend._supported_ops()), "pick an op the core lacks"

    def f(x):
        return torch.erfinv(torch.tanh(x)) * 2

    x = torch.randn(16)
    with caplog.at_level("WARNING", logger="plugsdk"):
        got = torch.compile(f, backend="plugsdk")(x)
    torch.testing.assert_close(got, f(x))
    (report,) = plugsdk.explain()
    assert [fb.op for fb in report.fallbacks] == [missing]
    assert report.compiled_partitions >= 1 and report.eager_partitions >= 1
    assert any(missing in r.getMessage() and "falls back" in r.getMessage() for r in caplog.records)


def test_fallback_false_raises_naming_the_op():
    fresh()

    def f(x):
        return torch.erfinv(x)

    with pytest.raises(Exception, match="aten.erfinv"):
        torch.compile(f, backend="plugsdk", options={"fallback": False})(torch.randn(4))


def test_unknown_option_is_an_error():
    fresh()
    with pytest.raises(Exception, match="unknown option"):
        torch.compile(lambda x: x + 1, backend="plugsdk", options={"devcie": "cpu"})(torch.randn(3))


def test_symbolic_sizes_are_imported_as_size_symbols():
    fresh()
    seen = []
    orig = backend._compile_part

    def spy(gm, *a, **k):
        c = orig(gm, *a, **k)
        seen.append(c.imported.text)
        return c

    backend._compile_part = spy
    try:
        f = torch.compile(lambda x: (x * 2).sum(dim=1), backend="plugsdk", dynamic=True)
        for n in (3, 5):
            x = torch.randn(n, 7)
            torch.testing.assert_close(f(x), (x * 2).sum(dim=1))
    finally:
        backend._compile_part = orig
    assert len(seen) == 1, "a dynamic graph compiles once"
    # Symbol names are torch's (s0, s1 in torch 2.6; hashed ones such as s77 in 2.11).
    assert re.search(r"f32\[s\d+, s\d+\]", seen[0]), seen[0]


def test_sym_text_writes_pgraph_size_syntax():
    import sympy
    from torch.utils._sympy.functions import FloorDiv, Mod
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    assert fx_import.sym_text(s0) == "s0"
    assert fx_import.sym_text(2 * s0 + 1) in ("(1+(2*s0))", "((2*s0)+1)")
    assert fx_import.sym_text(FloorDiv(s0, 2)) == "(s0//2)"
    assert fx_import.sym_text(Mod(s1, 4)) == "(s1 % 4)"


def test_explain_reports_graph_breaks_and_fullgraph_is_honored():
    fresh()
    torch._dynamo.utils.counters.clear()

    def f(x):
        y = torch.sin(x) + 1
        print("a graph break")  # Dynamo cannot trace print: two graphs
        return torch.cos(y) * 2

    x = torch.randn(8)
    torch.testing.assert_close(torch.compile(f, backend="plugsdk")(x), f(x))
    e = plugsdk.explain()
    assert len(e) == 2 and all(r.compiled_partitions == 1 for r in e)
    assert e.graph_breaks and any("print" in k for k in e.graph_breaks), e.graph_breaks
    fresh()
    with pytest.raises(Exception, match="print"):
        torch.compile(f, backend="plugsdk", fullgraph=True)(x)


def test_dump_dir_writes_every_stage(tmp_path):
    fresh()
    f = torch.compile(lambda a, b: torch.relu(a @ b) + 1, backend="plugsdk", options={"dump_dir": str(tmp_path)})
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    torch.testing.assert_close(f(a, b), torch.relu(a @ b) + 1)
    names = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert "forward1.fx.txt" in names and "forward1.aten.pgraph" in names, names
    for stage in ("1-input.pgraph", "2-prims.pgraph", "3-program.txt"):
        assert stage in names, (stage, names)
    # Graphs as Graphviz, rendered to SVG where `dot` is installed (the toolbox has it).
    assert any(n.endswith(".svg" if shutil.which("dot") else ".dot") for n in names), names


def test_training_steps_compile_the_backward_graph_too():
    """With autograd="aot", AOT autograd's backward graph (ATen backward ops) compiles in the core; a gradient
    output that is None (an input without requires_grad) is passed through."""
    fresh()
    torch.manual_seed(1)
    model, ref = MLP(), MLP()
    ref.load_state_dict(model.state_dict())
    x, y = torch.randn(8, 64), torch.randint(0, 10, (8,))
    opt, ref_opt = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref))
    f = torch.compile(model, backend="plugsdk", options={"autograd": "aot"})
    for _ in range(5):
        for m, o in ((f, opt), (ref, ref_opt)):
            loss = nn.functional.cross_entropy(m(x), y)
            o.zero_grad()
            loss.backward()
            o.step()
        torch.testing.assert_close(model.fc1.weight, ref.fc1.weight, rtol=1e-5, atol=1e-6)
    reports = plugsdk.explain()
    assert len(reports) == 2 and all(r.compiled_partitions == 1 and not r.fallbacks for r in reports), reports
