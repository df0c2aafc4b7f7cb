#!/usr/bin/env bash
# Builds what the CUDA checks run on the GPU machine, on this Debian 12 host (glibc 2.36, so
# the binaries run on the GPU machine's 2.39; see DESIGN.md) and packs it into
# .gpu/cuda.tar.xz with the shared libraries it needs (libLLVM and its dependencies, minus
# the C and C++ runtimes): the cuda and reference plugins, the conformance runner, the CLI,
# and the core as a static library for the Python extension, which is compiled on the GPU
# machine against its own Python and torch (tools/device_cuda_python.sh).
#   bash tools/pack_cuda_device.sh            then: run(command="bash tools/device_cuda_check.sh", carry=[".gpu"])
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-/var/tmp/bw}
# Debian 12's LLVM 19 and what configuring every backend needs (a fresh host lacks them).
if [ ! -x /usr/lib/llvm-19/bin/llvm-config ] || [ ! -e /usr/include/oneapi/tbb.h ]; then
  echo "[pack] installing llvm-19-dev, libtbb-dev, zlib1g-dev, libzstd-dev on the host (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends llvm-19-dev libtbb-dev zlib1g-dev \
    libzstd-dev > /dev/null
fi
cmake -S . -B "$B" -G Ninja -DPLUGSDK_BUILD_TESTS=OFF -DPLUGSDK_PYTHON=OFF -DCMAKE_BUILD_TYPE=Release > /dev/null
ninja -C "$B" plugsdk_cuda plugsdk_reference plugsdk_conformance plugsdk_cli plugsdk_core
S=$(mktemp -d)
mkdir -p "$S/bin" "$S/plugins" "$S/lib" "$S/static"
cp "$B/lib/libplugsdk_core.a" "$S/static/"
cp "$B/bin/plugsdk-conformance" "$B/bin/plugsdk" "$S/bin/"
cp "$B/plugins/libplugsdk_cuda.so" "$B/plugins/libplugsdk_reference.so" "$S/plugins/"
strip --strip-debug "$S"/bin/* "$S"/plugins/*
# A tree caught mid-edit can link a plugin with unresolved symbols (it then fails to load on
# the GPU machine, after a start that costs device time): refuse to pack it.
for f in "$S"/plugins/*; do
  if ldd -r "$f" 2>&1 | grep -q "undefined symbol"; then
    ldd -r "$f" 2>&1 | grep "undefined symbol" | head -3 >&2
    echo "[pack] $f has undefined symbols: not packed" >&2
    exit 1
  fi
done
for f in "$S"/bin/* "$S"/plugins/*; do
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*|libpthread|libdl|librt)\.so' |
  while read -r l; do cp -L "$l" "$S/lib/"; done
mkdir -p .gpu
XZ_OPT="-T0 -6" tar -C "$S" -cJf .gpu/cuda.tar.xz .
rm -rf "$S"
ls -la .gpu/cuda.tar.xz
