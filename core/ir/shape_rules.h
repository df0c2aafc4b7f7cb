// Shared rules for shape and dtype inference: broadcasting, dim wrapping and PyTorch's
// result_type (type promotion with tensors, zero-dim tensors and scalars).
#pragma once

#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/tensor_type.h"
#include "core/support/status.h"

namespace plugsdk::ir {

/// NumPy/PyTorch broadcasting. Symbolic dims broadcast only when provably equal (or one
/// side is the constant 1); otherwise the error says which dims could not be reconciled.
StatusOr<Shape> broadcastShapes(const Shape& a, const Shape& b, const SymAssumptions& as = {});
StatusOr<Shape> broadcastAll(const std::vector<const TensorType*>& types, const SymAssumptions& as = {});

/// Wraps a possibly negative dim into [0, rank). rank 0 accepts -1 and 0 (as PyTorch does).
StatusOr<int64_t> wrapDim(int64_t dim, int64_t rank);
/// Wraps and checks a list of dims (no duplicates).
StatusOr<std::vector<int64_t>> wrapDims(const std::vector<int64_t>& dims, int64_t rank);

/// An operand for result_type: a tensor type or a Python scalar (given as an attribute).
struct PromotionOperand {
  const TensorType* tensor = nullptr;
  const Attribute* scalar = nullptr;
};
/// torch.result_type: dimensioned tensors win over zero-dim tensors, which win over scalars,
/// unless a lower-priority operand has a higher category (bool < int < float).
DType resultType(const std::vector<PromotionOperand>& operands);

/// Checks two sizes are equal (provably), with an error naming `what`.
Status checkSameSize(const SymExpr& a, const SymExpr& b, const std::string& what, const SymAssumptions& as = {});

}  // namespace plugsdk::ir
