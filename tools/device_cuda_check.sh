#!/usr/bin/env bash
# The CUDA backend on the GPU machine (the `device` tool): unpacks .gpu/cuda.tar.xz (made
# on the Debian 12 host by tools/pack_cuda_device.sh), lists the plugins, and runs the
# conformance suite on the cuda plugin with reports under $OUT/conformance.
#   device: run(command="bash tools/device_cuda_check.sh [TIERS]", carry=[".gpu"])
# TIERS: a --tier list (default: every tier the expectations claim). JOBS: workers (8).
set -uo pipefail
OUT=${OUT:-/tmp/out}
G=/tmp/gc
mkdir -p "$OUT" "$G"
tar -C "$G" -xJf .gpu/cuda.tar.xz || exit 1
# Only the libraries this machine lacks.
mkdir -p "$G/needed"
for f in "$G"/lib/*; do
  n=$(basename "$f")
  ldconfig -p | grep -q " $n " || cp "$f" "$G/needed/"
done
export LD_LIBRARY_PATH=$G/needed${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PLUGSDK_PLUGIN_PATH=$G/plugins
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$G/bin/plugsdk" plugins
tiers=${1:+--tier $1}
filter=${FILTER:+--filter $FILTER}
time "$G/bin/plugsdk-conformance" --plugin cuda $tiers $filter --jobs "${JOBS:-8}" \
  --expectations conformance/expectations/cuda.txt --report "$OUT/conformance" > "$OUT/conformance.log" 2>&1
echo "conformance exit $?"
grep -vE "^  (pass|PASS)" "$OUT/conformance.log" | tail -60
