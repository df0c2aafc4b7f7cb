"""The current ABI header keeps the layout of every frozen version (sdk/tests/abi_v*/).

A probe program printing sizeof of every struct, offsetof of every field and the value of
every enum constant is generated from the frozen header, then compiled twice -- against the
frozen header and against the current one -- with the C compiler. Every line the frozen build
prints must be printed, unchanged, by the current build: a newer minor may add fields at the
end of structs (so sizes may grow), enum constants and table functions, never move or
renumber anything.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CURRENT = HERE.parent / "include"
FROZEN = sorted(p for p in HERE.glob("abi_v*") if p.is_dir())
CC = os.environ.get("CC") or shutil.which("cc") or "gcc"


def parse(header: str):
    """(structs: {name: [fields]}, enums: {name: [constants]}) from the header's typedefs."""
    text = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
    structs, enums = {}, {}
    for m in re.finditer(r"typedef struct (\w+) \{(.*?)\} (\w+);", text, flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            fp = re.search(r"\(\*(\w+)\)", decl)
            name = fp.group(1) if fp else re.search(r"(\w+)\s*(\[\w*\])?$", decl).group(1)
            fields.append(name)
        structs[m.group(3)] = fields
    for m in re.finditer(r"typedef enum (\w+) \{(.*?)\} (\w+);", text, flags=re.S):
        consts = [c.split("=")[0].strip() for c in m.group(2).split(",") if c.strip()]
        enums[m.group(3)] = consts
    return structs, enums


def probe_source(header: str) -> str:
    structs, enums = parse(header)
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "plugsdk/plugsdk.h"', "int main(void) {"]
    for s, fields in structs.items():
        lines.append(f'  printf("sizeof {s} >= %zu\\n", (size_t)PLUGSDK_STRUCT_SIZE({s}, {fields[-1]}));')
        for f in fields:
            lines.append(f'  printf("offsetof {s}.{f} = %zu\\n", offsetof({s}, {f}));')
    for e, consts in enums.items():
        for c in consts:
            lines.append(f'  printf("enum {e}.{c} = %lld\\n", (long long){c});')
    lines += ['  printf("macro PLUGSDK_ABI_VERSION_MAJOR = %d\\n", PLUGSDK_ABI_VERSION_MAJOR);', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_probe(src: pathlib.Path, include: pathlib.Path, out: pathlib.Path) -> list[str]:
    exe = out.with_suffix("")
    r = subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-I", str(include), str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()


def test_a_frozen_version_exists():
    assert FROZEN, "no frozen ABI header under sdk/tests/abi_v*/"


def version(header: str) -> tuple[int, int]:
    major = re.search(r"#define PLUGSDK_ABI_VERSION_MAJOR (\d+)", header)
    minor = re.search(r"#define PLUGSDK_ABI_VERSION_MINOR (\d+)", header)
    return int(major.group(1)), int(minor.group(1))


def test_every_released_minor_is_frozen_as_itself():
    """abi_vM_m/ holds version M.m, and every minor before the current header's has one."""
    for frozen in FROZEN:
        assert frozen.name == "abi_v%d_%d" % version((frozen / "plugsdk" / "plugsdk.h").read_text()), frozen
    major, minor = version((CURRENT / "plugsdk" / "plugsdk.h").read_text())
    missing = [f"abi_v{major}_{m}" for m in range(minor) if not (HERE / f"abi_v{major}_{m}").is_dir()]
    assert not missing, f"ABI {major}.{minor}: no frozen copy of " + ", ".join(missing)


@pytest.mark.parametrize("frozen", FROZEN, ids=[p.name for p in FROZEN])
def test_current_header_keeps_the_frozen_layout(frozen: pathlib.Path, tmp_path: pathlib.Path):
    header = (frozen / "plugsdk" / "plugsdk.h").read_text()
    structs, enums = parse(header)
    assert len(structs) > 20 and len(enums) > 8, "the probe parser found too little: is the header's style changed?"
    src = tmp_path / "probe.c"
    src.write_text(probe_source(header))
    old = run_probe(src, frozen, tmp_path / "old.out")
    new = run_probe(src, CURRENT, tmp_path / "new.out")
    changed = []
    for a, b in zip(old, new):
        if a == b:
            continue
        if a.startswith("sizeof") and b.startswith("sizeof"):  # sizes may only grow
            if int(b.split()[-1]) >= int(a.split()[-1]):
                continue
        changed.append(f"{frozen.name}: {a}  ->  now: {b}")
    assert not changed, "the current header breaks ABI layout:\n" + "\n".join(changed)


def test_the_probe_catches_a_moved_field(tmp_path: pathlib.Path):
    """The check can fail: a header with two fields swapped is caught."""
    frozen = FROZEN[0]
    header = (frozen / "plugsdk" / "plugsdk.h").read_text()
    broken = header.replace("  uint32_t abi_major; /* the version the plugin implements */\n  uint32_t abi_minor;",
                            "  uint32_t abi_minor;\n  uint32_t abi_major; /* the version the plugin implements */", 1)
    assert broken != header
    inc = tmp_path / "include"
    (inc / "plugsdk").mkdir(parents=True)
    (inc / "plugsdk" / "plugsdk.h").write_text(broken)
    src = tmp_path / "probe.c"
    src.write_text(probe_source(header))
    old = run_probe(src, frozen, tmp_path / "old.out")
    new = run_probe(src, inc, tmp_path / "new.out")
    assert old != new
