// The type of a graph value: element type, shape (static or symbolic dims) and strides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/symbolic.h"

namespace plugsdk::ir {

using Shape = std::vector<SymExpr>;

/// Row-major strides for `shape` (the last dim has stride 1).
Shape contiguousStrides(const Shape& shape);
/// Product of the dims.
SymExpr numelOf(const Shape& shape);
/// "[2, s0, s0*2]"
std::string shapeToString(const Shape& shape);

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;
  /// Element strides; nullopt means contiguous (row-major). Only graph inputs usually
  /// carry explicit strides; values computed inside a graph are logically contiguous.
  std::optional<Shape> strides;

  int rank() const { return static_cast<int>(shape.size()); }
  SymExpr numel() const { return numelOf(shape); }
  bool isStatic() const;
  /// Dims as integers, if all are constants.
  std::optional<std::vector<int64_t>> staticShape() const;
  /// Effective strides (explicit or contiguous).
  Shape effectiveStrides() const { return strides ? *strides : contiguousStrides(shape); }
  /// "f32[2, s0]" or "f32[2, 3] strides [1, 2]"
  std::string toString() const;

  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape && a.effectiveStrides() == b.effectiveStrides();
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

}  // namespace plugsdk::ir
