#!/usr/bin/env bash
# On the GPU machine (the `device` tool): checks cudnn_api.h's constants against cuDNN's
# headers (from the Python packages) and runs the fused-attention probes (forward, backward).
#   device: run(command="bash tools/probes/device_cudnn_sdpa.sh")
set -uo pipefail
inc=$(dirname "$(find / -name cudnn_graph.h -path '*include*' 2>/dev/null | head -1)")
echo "cuDNN headers: $inc"
incs=$(find / -name cuda_runtime_api.h -path '*include*' 2>/dev/null | head -3 | xargs -r -n1 dirname | sed 's/^/-I/')
g++ -std=c++20 -fsyntax-only -I. -Isdk/include -I"$inc" $incs tools/probes/cudnn_enums_check.cc && check="constants match cuDNN's headers" || check="CONSTANTS DIFFER (above)"
echo "$check"
g++ -O2 -std=c++20 -I. -Isdk/include tools/probes/cudnn_sdpa_probe.cc backends/cuda/library/sdpa_graph.cc \
  backends/cuda/library/dnn_graph_builder.cc backends/cuda/library/cudnn_api.cc backends/cuda/driver/cuda_api.cc \
  -ldl -o /tmp/sdpa_probe || exit 1
g++ -O2 -std=c++20 -I. -Isdk/include tools/probes/cudnn_sdpa_bwd_probe.cc backends/cuda/library/sdpa_backward_graph.cc \
  backends/cuda/library/sdpa_graph.cc backends/cuda/library/dnn_graph_builder.cc backends/cuda/library/cudnn_api.cc \
  backends/cuda/driver/cuda_api.cc -ldl -o /tmp/sdpa_bwd_probe || exit 1
lib=$(dirname "$(find / -name 'libcudnn.so.9*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
CUDNN_LOGERR_DBG=1 CUDNN_LOGWARN_DBG=1 CUDNN_LOGDEST_DBG=stderr /tmp/sdpa_probe 2> "${OUT:-/tmp}/cudnn_errors.log"
echo "probe exit $?"; grep -c . "${OUT:-/tmp}/cudnn_errors.log"; head -c 1500 "${OUT:-/tmp}/cudnn_errors.log"
CUDNN_LOGERR_DBG=1 CUDNN_LOGWARN_DBG=1 CUDNN_LOGDEST_DBG=stderr /tmp/sdpa_bwd_probe 2> "${OUT:-/tmp}/cudnn_bwd_errors.log"
echo "backward probe exit $?"; grep -c . "${OUT:-/tmp}/cudnn_bwd_errors.log"; head -c 1500 "${OUT:-/tmp}/cudnn_bwd_errors.log"
echo "$check"
