#!/usr/bin/env bash
# Issue 9's memory-bound benchmark on the GPU machine (tools/bench_cuda_memory.py):
#   device: run(command="bash tools/bench_cuda_memory.sh", carry=[".gpu/cuda.tar.xz"])
set -uo pipefail
source "$(dirname "$0")/device_cuda_unpack.sh"
python3 "$(dirname "$0")/bench_cuda_memory.py"
