// What a guard looks at in one input tensor: its dtype, sizes, strides, where it lives and
// whether it requires grad. The Python layer fills these from torch tensors; C++ callers
// from their own tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor_type.h"

namespace plugsdk::guard {

/// The layout family of a tensor's strides. Dims of size 1 (and empty tensors) place no
/// constraint on their stride, as in torch.
enum class StrideClass {
  kContiguous,    ///< row-major
  kChannelsLast,  ///< rank 4 NHWC or rank 5 NDHWC order, dense
  kStrided,       ///< anything else (transposed, sliced, expanded)
};

const char* strideClassName(StrideClass c);
/// `strides` empty: contiguous.
StrideClass classifyStrides(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
/// The strides of a dense channels-last tensor of `shape` (rank 4 or 5), sizes symbolic or not.
ir::Shape channelsLastStrides(const ir::Shape& shape);

struct TensorSignature {
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  ///< elements; empty: contiguous
  std::string device = "cpu";    ///< torch's spelling: "cpu", "<type>:<index>"
  bool requiresGrad = false;

  StrideClass strideClass() const { return classifyStrides(shape, strides); }
  /// "f32[8, 3] contiguous cpu", with " requires_grad" when set.
  std::string toString() const;
};

}  // namespace plugsdk::guard
