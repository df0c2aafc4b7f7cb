#!/usr/bin/env bash
# Configure and build plugsdk into $PLUGSDK_BUILD_DIR (inside the toolbox).
# SANITIZE=1 builds with ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PLUGSDK_BUILD_DIR:-$PWD/build}
flags=(-DPLUGSDK_WERROR=ON)
[ "${SANITIZE:-0}" = 1 ] && flags+=(-DPLUGSDK_SANITIZE=ON)
echo "[build] configuring $BUILD_DIR (${flags[*]})"
mkdir -p "$BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -G Ninja "${flags[@]}" > "$BUILD_DIR/configure.log" 2>&1 || { cat "$BUILD_DIR/configure.log"; exit 1; }
echo "[build] compiling (ninja -j$(nproc))"
start=$SECONDS
ninja -C "$BUILD_DIR" -j"$(nproc)" || { echo "[build] FAILED"; exit 1; }
echo "[build] done in $((SECONDS - start)) s"
