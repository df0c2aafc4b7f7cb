// Helpers shared by the decomposition rule files (rules_*.cc): reading Scalar attributes as
// prim constants and small idioms that several families use.
#pragma once

#include <string>
#include <vector>

#include "core/decomp/decompose.h"

namespace plugsdk::decomp::rules {

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::SymExpr;
using Result = StatusOr<std::vector<V>>;

/// The dtype PyTorch computes 16-bit float arithmetic in (f32), else the dtype itself.
inline DType opmath(DType t) { return t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t; }

/// A Scalar attribute as a zero-dim constant of `dtype` (rounded or truncated as a cast).
inline V scalarAttr(Emitter& e, const DecompCall& c, const std::string& name, DType dtype) {
  return e.scalar(c.attr(name), dtype);
}

/// x != 0 as bool (NaN is true), for logical ops.
inline V truthy(Emitter& e, V x) {
  if (e.dtype(x) == DType::kBool) return x;
  return e.binary("ne", x, e.scalar(0.0, e.dtype(x)));
}

/// A single output.
inline Result one(Emitter& e, V v) { return e.done({v}); }

/// dims of an int[]? attribute: none or [] mean every dim.
inline std::vector<int64_t> dimsOrAll(const DecompCall& c, const std::string& name, int rank) {
  std::vector<int64_t> dims;
  if (!c.isNone(name)) dims = c.getInts(name);
  if (dims.empty())
    for (int d = 0; d < rank; ++d) dims.push_back(d);
  return dims;
}

}  // namespace plugsdk::decomp::rules
