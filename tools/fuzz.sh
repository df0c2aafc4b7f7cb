#!/usr/bin/env bash
# Builds the libFuzzer target for the .pgraph parser with clang (ASan + UBSan) and runs it
# for FUZZ_SECONDS (default 60) on FUZZ_JOBS workers, seeded with every .pgraph in the repo
# and the parser test inputs. Crashes are written to build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
B=$PWD/build-fuzz
secs=${FUZZ_SECONDS:-60}
echo "[fuzz] building $B with clang-19"
CC=clang-19 CXX=clang++-19 cmake -S . -B "$B" -G Ninja -DPLUGSDK_FUZZ=ON -DPLUGSDK_BUILD_TESTS=OFF >/dev/null
ninja -C "$B" parser_fuzz
mkdir -p "$B/corpus" "$B/crashes"
find . -name '*.pgraph' -not -path './build*' -exec cp {} "$B/corpus/" \; 2>/dev/null || true
cp tools/fuzz_seeds/*.pgraph "$B/corpus/" 2>/dev/null || true
echo "[fuzz] running for ${secs}s"
"$B/bin/parser_fuzz" "$B/corpus" -max_total_time="$secs" -max_len=4096 -timeout=10 -artifact_prefix="$B/crashes/" -print_final_stats=1 2>&1 \
  | grep -E "^#[0-9]+.*(pulse|DONE)|stat::|ERROR|SUMMARY" | tail -n 20
