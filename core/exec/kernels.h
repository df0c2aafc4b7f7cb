// Registration of the reference kernels, one function per op family (one file each),
// mirroring core/ops/aten_ops.h.
#pragma once

#include "core/exec/reference_executor.h"

namespace plugsdk::exec {

void registerPointwiseKernels(RefKernelTable& t);  // kernels_pointwise.cc
void registerReductionKernels(RefKernelTable& t);  // kernels_reduction.cc
void registerShapeKernels(RefKernelTable& t);      // kernels_shape.cc
void registerIndexingKernels(RefKernelTable& t);   // kernels_indexing.cc
void registerCreationKernels(RefKernelTable& t);   // kernels_creation.cc
void registerNNKernels(RefKernelTable& t);         // kernels_nn.cc
void registerBackwardKernels(RefKernelTable& t);   // kernels_backward.cc
void registerPrimKernels(RefKernelTable& t);       // kernels_prims.cc: elementwise and structural prims
void registerPrimDataKernels(RefKernelTable& t);   // kernels_prims_data.cc: reductions, data, library prims

}  // namespace plugsdk::exec
