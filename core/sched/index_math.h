// Index arithmetic on SymExprs: row-major linearization and its inverse, used to turn
// views into index expressions instead of copies.
#pragma once

#include <vector>

#include "core/ir/tensor_type.h"

namespace plugsdk::sched {

using ir::Shape;
using ir::SymExpr;

/// sum(idx[d] * stride[d]) for row-major strides of `shape`.
inline SymExpr linearize(const std::vector<SymExpr>& idx, const Shape& shape) {
  SymExpr out(0), stride(1);
  for (size_t d = shape.size(); d-- > 0;) {
    out = out + idx[d] * stride;
    stride = stride * shape[d];
  }
  return out;
}

/// The row-major multi-index of linear position `linear` in `shape` (size-1 dims give 0,
/// the leading dim needs no modulus).
inline std::vector<SymExpr> delinearize(const SymExpr& linear, const Shape& shape) {
  std::vector<SymExpr> idx(shape.size(), SymExpr(0));
  SymExpr stride(1);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != SymExpr(1)) {
      SymExpr q = stride == SymExpr(1) ? linear : SymExpr::floorDiv(linear, stride);
      idx[d] = d == 0 ? q : SymExpr::mod(q, shape[d]);
    }
    stride = stride * shape[d];
  }
  return idx;
}

/// sum(idx[d] * strides[d]).
inline SymExpr dot(const std::vector<SymExpr>& idx, const Shape& strides) {
  SymExpr out(0);
  for (size_t d = 0; d < idx.size(); ++d) out = out + idx[d] * strides[d];
  return out;
}

/// The grid variables i0..i{n-1} as a multi-index.
inline std::vector<SymExpr> gridIndex(size_t rank) {
  std::vector<SymExpr> idx;
  for (size_t d = 0; d < rank; ++d) idx.push_back(SymExpr::symbol("i" + std::to_string(d)));
  return idx;
}

}  // namespace plugsdk::sched
