#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. An MLP built with the C++ builder runs
# on the reference executor (float64), then compiled for the CPU backend (BACKEND=NAME picks
# another plugin), and the same model in eager torch, with times and differences side by
# side. (Issue 7 moves it to torch.compile(backend="plugsdk").)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
backend=${BACKEND:-cpu}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$BUILD_DIR/bin/plugsdk_demo" "$@" --backend "$backend" --save "$dir"
python3 tools/demo_torch.py "$dir"
