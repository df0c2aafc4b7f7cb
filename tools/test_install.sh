#!/usr/bin/env bash
# The install, used the way a vendor and an embedder use it (ctest install.out_of_tree):
#  1. cmake --install the build into a fresh prefix;
#  2. build samples/minimal_backend out of tree against it with find_package(plugsdk), with
#     clang (the core is built with g++: a plugin from another compiler must load);
#  3. build a C++ program against plugsdk::core out of tree (samples/builder_mlp);
#  4. run the installed CLI: it finds its installed plugins, and runs the MLP model on the
#     out-of-tree plugin, matching the reference executor;
#  5. run every model graph (resnet18, MLP, transformer encoder, GPT-2 block; f32 and f64) on
#     the out-of-tree plugin against eager torch (core/plugin/tests/test_plugin_models.py).
# Usage: tools/test_install.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: test_install.sh BUILD_DIR}" && pwd)
work=$build/install-test
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

echo "[install] cmake --install -> $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/plugsdk/plugsdk.h include/plugsdk/plugsdk.hpp include/plugsdk/core/ir/graph.h \
         lib/libplugsdk_core.a bin/plugsdk lib/plugsdk/plugins/libplugsdk_minimal.so \
         lib/plugsdk/plugins/libplugsdk_null.so lib/plugsdk/plugins/libplugsdk_cpu.so lib/cmake/plugsdk/plugsdkConfig.cmake; do
  [ -e "$prefix/$f" ] || { echo "[install] FAIL: $f was not installed"; exit 1; }
done

echo "[install] the minimal sample, out of tree, with clang"
CC=clang-19 cmake -S "$src/samples/minimal_backend" -B "$work/minimal" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/minimal.log" 2>&1 \
  || { cat "$work/minimal.log"; exit 1; }
cmake --build "$work/minimal" >> "$work/minimal.log" 2>&1 || { cat "$work/minimal.log"; exit 1; }
plugin=$work/minimal/libplugsdk_minimal.so
readelf -p .comment "$plugin" | grep -q clang || { echo "[install] FAIL: the plugin was not built by clang"; exit 1; }

echo "[install] a C++ program against plugsdk::core, out of tree"
mkdir -p "$work/embed"
cat > "$work/embed/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(embed CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(plugsdk REQUIRED)
add_executable(embed $src/samples/builder_mlp/main.cc)
target_link_libraries(embed PRIVATE plugsdk::core)
CMAKE
cmake -S "$work/embed" -B "$work/embed/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > "$work/embed.log" 2>&1 \
  || { cat "$work/embed.log"; exit 1; }
cmake --build "$work/embed/build" >> "$work/embed.log" 2>&1 || { cat "$work/embed.log"; exit 1; }
"$work/embed/build/embed" > "$work/embed.out" || { echo "[install] FAIL: the embedded program failed"; exit 1; }

echo "[install] the installed CLI"
cli=$prefix/bin/plugsdk
env -u PLUGSDK_PLUGIN_PATH "$cli" plugins > "$work/plugins.out"
grep -q "minimal .*ABI 1\.0  1 device" "$work/plugins.out" && grep -Eq "cpu .*ABI 1\.[0-9]+  1 device" "$work/plugins.out" || { cat "$work/plugins.out"; echo "[install] FAIL: installed plugins not found"; exit 1; }
model=$src/conformance/models/mlp.f64.pgraph
"$cli" run "$model" --backend "$plugin" --quiet --save "$work/out-plugin"
"$cli" run "$model" --quiet --save "$work/out-reference"
python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
a, b = np.load(f"{w}/out-plugin/out.npy"), np.load(f"{w}/out-reference/out.npy")
assert a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=1e-12), f"max diff {abs(a - b).max()}"
print(f"[install] mlp on the out-of-tree clang plugin matches the reference (max diff {abs(a - b).max():.3g})")
PY
echo "[install] the model graphs on the out-of-tree plugin vs eager torch"
(cd "$src/core/plugin/tests" && PLUGSDK_BUILD_DIR=$build PLUGSDK_TEST_BACKEND=$plugin \
  python3 -m pytest -q -p no:cacheprovider test_plugin_models.py -k library_ops 2>&1 | tail -n 3)
echo "[install] ok"
