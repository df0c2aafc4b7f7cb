#!/usr/bin/env bash
# The CUDA backend on the GPU machine (the `device` tool): unpacks .gpu/cuda.tar.xz (made
# on the Debian 12 host by tools/pack_cuda_device.sh), lists the plugins, and runs the
# conformance suite on the cuda plugin with reports under $OUT/conformance.
#   device: run(command="bash tools/device_cuda_check.sh [TIERS]", carry=[".gpu"])
# TIERS: a --tier list (default: every tier the expectations claim). JOBS: workers (8).
set -uo pipefail
source "$(dirname "$0")/device_cuda_unpack.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$G/bin/plugsdk" plugins
tiers=${1:+--tier $1}
filter=${FILTER:+--filter $FILTER}
time "$G/bin/plugsdk-conformance" --plugin cuda $tiers $filter --jobs "${JOBS:-8}" \
  --expectations conformance/expectations/cuda.txt --report "$OUT/conformance" > "$OUT/conformance.log" 2>&1
echo "conformance exit $?"
grep -vE "^  (pass|PASS)" "$OUT/conformance.log" | tail -60
