#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. For now: an MLP built with the C++
# builder, run on the reference executor; `make demo BACKEND=minimal` also runs it on a
# plugin (the sample backend here). (Later issues move it to the CPU backend.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
args=("$@")
[ -n "${BACKEND:-}" ] && args+=(--backend "$BACKEND")
"$BUILD_DIR/bin/plugsdk_demo" "${args[@]}"
