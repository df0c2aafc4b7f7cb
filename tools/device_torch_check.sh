#!/usr/bin/env bash
# The Python package on the GPU machine (the `device` tool; see docs/torch-compile.md): its
# python3 and torch (2.11) differ from the toolbox's, and it has no LLVM 19 or oneTBB. So
# the core and the package are built there (pip install ./python, the CPU backend off), and
# the CPU plugin comes prebuilt from a Debian 12 host (glibc 2.36, so it loads there) in
# .gpu/libs.tar.xz with the libraries it needs that the machine lacks:
#
#   here:   cmake -S . -B /var/tmp/bw -G Ninja -DPLUGSDK_BUILD_TESTS=OFF -DPLUGSDK_PYTHON=OFF \
#             -DCMAKE_BUILD_TYPE=Release && ninja -C /var/tmp/bw plugsdk_cpu
#           (tar the plugin and its ldd dependencies, minus libc/libm/libgcc/libstdc++, into .gpu/libs.tar.xz)
#   device: run(command="bash tools/device_torch_check.sh", carry=[".gpu"])   (SKIP_BENCH=1: tests only)
#
# Then: the package is installed with pip (entry point included), a fresh python3 compiles a
# function with backend="plugsdk" without importing plugsdk, the pytest suite runs, and
# the acceptance models are benchmarked. Output and logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/gl/all /tmp/gl/lib
python3 -c "import tarfile; tarfile.open('.gpu/libs.tar.xz').extractall('/tmp/gl/all')" || exit 1
for f in /tmp/gl/all/*.so*; do
  n=$(basename "$f")
  [ "$n" = libplugsdk_cpu.so ] && continue
  ldconfig -p | grep -q " $n " || cp "$f" /tmp/gl/lib/
done
echo "carried libraries used: $(ls /tmp/gl/lib | tr '\n' ' ')"
export LD_LIBRARY_PATH=/tmp/gl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
site=/tmp/site
time python3 -m pip install -q --no-build-isolation --no-deps --target "$site" -C build-dir=/tmp/pipbuild \
  -C cmake.define.PLUGSDK_CPU_BACKEND=OFF -C cmake.define.PLUGSDK_CUDA_BACKEND=OFF -C build.targets="plugsdk_python;plugsdk_null;plugsdk_reference" ./python \
  > "$OUT/pip.log" 2>&1 || { tail -40 "$OUT/pip.log"; exit 1; }
cp /tmp/gl/all/libplugsdk_cpu.so "$site/plugsdk/plugins/"
export PYTHONPATH=$site
echo "== backend=plugsdk without importing plugsdk (the entry point) =="
python3 -c "
import torch
f = torch.compile(lambda x: torch.sin(x) * 2 + 1, backend='plugsdk')
x = torch.randn(1000)
torch.testing.assert_close(f(x), torch.sin(x) * 2 + 1)
import plugsdk, sys
print('ok: registered through the entry point; ran on', plugsdk.runtime.device('cpu').describe(), 'from', plugsdk.__file__)
" || exit 1
echo "== pytest python/tests =="
PLUGSDK_BUILD_DIR=/nonexistent python3 -m pytest -q -p no:cacheprovider python/tests > "$OUT/pytest.log" 2>&1
grep -E "^(FAILED|ERROR)|^E  |passed|failed" "$OUT/pytest.log" | tail -30
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0
echo "== models =="
PLUGSDK_BUILD_DIR=/nonexistent python3 tools/bench_models.py --json "$OUT/bench_models.json" "$@" 2>&1 | grep -v Warning
