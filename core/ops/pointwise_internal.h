// Inference helpers shared by the pointwise and reduction op files (pointwise*.cc, reduction*.cc):
// type construction, PyTorch's checked scalar conversion, and the binary-op registration entry point.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::ops::pw {

/// A contiguous tensor type.
inline ir::TensorType tensorOf(ir::DType dtype, ir::Shape shape) {
  ir::TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

inline std::vector<ir::TensorType> one(ir::DType dtype, ir::Shape shape) { return {tensorOf(dtype, std::move(shape))}; }

/// "i32" etc.
inline std::string dtypeStr(ir::DType t) { return std::string(ir::dtypeName(t)); }

/// The dtype PyTorch computes a dtype's arithmetic in (float32 for the 16-bit floats).
inline ir::DType opmathType(ir::DType t) { return t == ir::DType::kF16 || t == ir::DType::kBF16 ? ir::DType::kF32 : t; }

/// PyTorch's checked Scalar conversion (c10::checked_convert, as used by masked_fill, clamp and
/// hardtanh): an error message if `value` does not fit `dtype` (bool targets never overflow;
/// negative ints may wrap into unsigned types down to -max), nullopt if it fits.
std::optional<std::string> scalarOverflow(const ir::Attribute& value, ir::DType dtype);

/// ctx.error naming the attribute when scalarOverflow reports a problem.
Status checkScalarFits(const ir::InferContext& ctx, const std::string& attrName, ir::DType dtype);

/// Registers the binary arithmetic, comparison, bitwise and logical ops (pointwise_binary.cc).
Status registerPointwiseBinaryOps(ir::OpRegistry& reg);

}  // namespace plugsdk::ops::pw
