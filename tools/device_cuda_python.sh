#!/usr/bin/env bash
# The Python package on the GPU machine: unpacks .gpu/cuda.tar.xz (tools/pack_cuda_device.sh),
# compiles the plugsdk._C extension there against that machine's Python and pybind11 (the
# core comes prebuilt as a static library from the Debian 12 host), assembles the package
# in $G/py with the repo's python/plugsdk sources, and runs the command given with it on
# PYTHONPATH (the cuda plugin found through the extension's plugin directory).
#   device: run(command="bash tools/device_cuda_python.sh python3 SCRIPT ...", carry=[".gpu/cuda.tar.xz"])
set -uo pipefail
source "$(dirname "$0")/device_cuda_unpack.sh"
PKG=$G/py/plugsdk
mkdir -p "$PKG"
cp python/plugsdk/*.py "$PKG/"
EXT=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
start=$(date +%s)
g++ -O2 -std=c++20 -fPIC -shared -fvisibility=hidden -I. -Isdk/include $(python3 -m pybind11 --includes) \
  -DPLUGSDK_PY_BUILD_PLUGIN_DIR="\"$G/plugins\"" python/src/plugsdk_module.cc "$G/static/libplugsdk_core.a" -ldl \
  -o "$PKG/_C$EXT" || exit 1
echo "plugsdk._C built in $(( $(date +%s) - start )) s"
export PYTHONPATH=$G/py${PYTHONPATH:+:$PYTHONPATH}
"$@"
