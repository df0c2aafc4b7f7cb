"""What the generated docs read from the code: the op registry and the decomposition table
(through the `plugsdk` CLI) and the torch-oracle cases (core/ops/tests/cases_*.py)."""
from __future__ import annotations

import collections
import dataclasses
import importlib
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("PLUGSDK_BUILD_DIR", ROOT / "build"))
CASES_DIR = ROOT / "core" / "ops" / "tests"


@dataclasses.dataclass(frozen=True)
class Op:
    name: str       # "aten.add.Tensor", "prims.add"
    category: str   # "pointwise", "prim.elementwise"
    kernel: bool    # has a reference kernel
    schema: str
    doc: str

    @property
    def is_prim(self) -> bool:
        return self.category.startswith("prim")


def cli(*args: str) -> str:
    return subprocess.run([str(BUILD / "bin" / "plugsdk"), *args], check=True, capture_output=True, text=True).stdout


def ops() -> list[Op]:
    rows = []
    for line in cli("ops", "--tsv").splitlines():
        name, category, kernel, schema, doc = (line.split("\t") + [""] * 5)[:5]
        rows.append(Op(name, category, kernel == "kernel", schema, doc))
    return rows


def decomps() -> set[str]:
    """The ATen-level ops with decomposition rules (`plugsdk decomps`)."""
    return set(cli("decomps").split())


def decomposition(op: Op, rules: set[str]) -> str:
    """rule (decomposes into prims), prim (is one) or none."""
    return "prim" if op.is_prim else "rule" if op.name in rules else "none"


def oracle_counts() -> collections.Counter:
    """Torch-oracle cases per op name (FX's ".default" suffix dropped)."""
    if str(CASES_DIR) not in sys.path:
        sys.path.insert(0, str(CASES_DIR))
    counts = collections.Counter()
    for path in sorted(CASES_DIR.glob("cases_*.py")):
        for case in importlib.import_module(path.stem).CASES:
            op = case.op[: -len(".default")] if case.op.endswith(".default") else case.op
            counts[op] += 1
    return counts


def check_or_write(path: pathlib.Path, text: str, generator: str) -> int:
    """Writes `text` to `path`, or with --check on the command line compares (exit status 1
    when the file is out of date)."""
    rel = path.relative_to(ROOT)
    if "--check" in sys.argv:
        if not path.exists() or path.read_text() != text:
            print(f"{rel} is out of date: run tools/toolbox run python3 tools/{generator}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text)
    print(f"wrote {rel}")
    return 0
