#!/usr/bin/env python3
"""Adds up JUnit XML files (ctest, pytest, lint) and prints 'N passed, N failed, N skipped'.

Exit status 1 if anything failed or errored, or if no test ran at all."""
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
failures = []
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        print(f"[test] cannot read {path}: {e}")
        failed += 1
        failures.append(path)
        continue
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped += 1
        else:
            passed += 1
if failures:
    print("[test] failed:")
    for f in failures[:50]:
        print("  " + f)
line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
