#!/usr/bin/env bash
# On the GPU machine (the `device` tool): the fused convolution epilogue probe
# (cudnn_conv_epilogue_probe.cc): which layouts cuDNN's engines take conv + bias + relu in,
# and the time a call of each, with cuDNN's own error log.
#   device: run(command="bash tools/probes/device_cudnn_conv.sh")
set -uo pipefail
g++ -O2 -std=c++20 -I. -Isdk/include tools/probes/cudnn_conv_epilogue_probe.cc backends/cuda/library/cudnn_graph.cc \
  backends/cuda/library/dnn_graph_builder.cc backends/cuda/library/cudnn_api.cc backends/cuda/driver/cuda_api.cc \
  -ldl -o /tmp/conv_probe || exit 1
lib=$(dirname "$(find / -name 'libcudnn.so.9*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
CUDNN_LOGERR_DBG=1 CUDNN_LOGDEST_DBG=stderr /tmp/conv_probe 2> "${OUT:-/tmp}/cudnn_conv_errors.log"
echo "probe exit $?"; grep -c . "${OUT:-/tmp}/cudnn_conv_errors.log"; head -c 2500 "${OUT:-/tmp}/cudnn_conv_errors.log"
