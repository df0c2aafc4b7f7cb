// Registration of the ATen-level op set, one function per family (one file each).
#pragma once

#include "core/ir/op_registry.h"

namespace plugsdk::ops {

Status registerPointwiseOps(ir::OpRegistry& reg);  // pointwise.cc: unary, binary, comparison, where, clamp, casts
Status registerReductionOps(ir::OpRegistry& reg);  // reduction.cc: sum, mean, amax, max.dim, argmax, var, ...
Status registerShapeOps(ir::OpRegistry& reg);      // shape.cc: view, permute, expand, cat, slice, select, ...
Status registerIndexingOps(ir::OpRegistry& reg);   // indexing.cc: gather, index_select, embedding, scatter, ...
Status registerCreationOps(ir::OpRegistry& reg);   // creation.cc: full, arange, scalar_tensor, ...
Status registerNNOps(ir::OpRegistry& reg);         // nn.cc: mm, conv, pooling, norms, softmax, attention, losses
Status registerBackwardOps(ir::OpRegistry& reg);   // backward.cc: *_backward ops that training graphs contain

/// All of the above.
Status registerAtenOps(ir::OpRegistry& reg);

namespace nn {
/// aten.convolution's inference (input, weight, optional bias at input 2; stride, padding,
/// dilation, transposed, output_padding, groups), shared with prims.convolution.
StatusOr<std::vector<ir::TensorType>> inferConvolution(const ir::InferContext& ctx);
}  // namespace nn

}  // namespace plugsdk::ops
