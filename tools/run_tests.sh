#!/usr/bin/env bash
# Runs every test layer (inside the toolbox): build, ctest (GoogleTest), pytest (torch
# oracle and Python layer), lint. Ends with one line "N passed, N failed[, N skipped]" and
# exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
start=$SECONDS
tools/build.sh || { echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$BUILD_DIR/test-results"
results=$BUILD_DIR/test-results
rm -f "$results"/*.xml

echo "[test] ctest (GoogleTest)"
(cd "$BUILD_DIR" && ctest -j"$(nproc)" --output-on-failure --output-junit "$results/ctest.xml") | tail -n 25

echo "[test] pytest"
pytest_dirs=()
for d in core sdk backends python conformance; do [ -d "$d" ] && pytest_dirs+=("$d"); done
python3 -m pytest -q -p no:cacheprovider "${pytest_dirs[@]}" --junitxml="$results/pytest.xml" | tail -n 30

echo "[test] lint"
tools/lint.sh --junit "$results/lint.xml" | tail -n 20

python3 tools/summarize_junit.py "$results"/*.xml
rc=$?
echo "[test] total time $((SECONDS - start)) s"
exit $rc
