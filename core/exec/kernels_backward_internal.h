// Internal to the backward kernels (core/exec/kernels_backward*.cc): the per-file
// registration functions.
#pragma once

#include "core/exec/reference_executor.h"

namespace plugsdk::exec::bwd {

void registerPointwiseLossBackwardKernels(RefKernelTable& t);  // kernels_backward.cc
void registerNNBackwardKernels(RefKernelTable& t);             // kernels_backward_nn.cc

}  // namespace plugsdk::exec::bwd
