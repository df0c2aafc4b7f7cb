#!/usr/bin/env bash
# `make demo`: the main job on the embedded default. For now: an MLP built with the C++
# builder, run on the reference executor. (Later issues move it to the CPU backend.)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
"$BUILD_DIR/bin/plugsdk_demo" "$@"
