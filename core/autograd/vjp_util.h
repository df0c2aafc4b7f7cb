// Helpers shared by the VJP rule files (vjp_*.cc).
#pragma once

#include <string>
#include <vector>

#include "core/autograd/vjp.h"

namespace plugsdk::autograd::vjp {

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::SymExpr;
using Result = StatusOr<std::vector<V>>;

/// A zero-dim constant of v's dtype (broadcasts in Emitter::binary).
inline V constant(Emitter& e, double value, V like) { return e.scalar(value, e.dtype(like)); }

inline V zerosLike(Emitter& e, V v) { return e.full(e.shape(v), 0.0, e.dtype(v)); }

/// g summed down to `shape`: the adjoint of NumPy-style broadcasting (leading dims, and dims
/// where `shape` has size 1 and g does not), reshaped to `shape`.
inline V sumToShape(Emitter& e, V g, const Shape& shape) {
  if (!e.ok() || !g) return nullptr;
  const Shape& gs = e.shape(g);
  const size_t lead = gs.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < gs.size(); ++d) {
    const bool leading = d < lead;
    if (leading || (shape[d - lead] == SymExpr(1) && gs[d] != SymExpr(1))) dims.push_back(static_cast<int64_t>(d));
  }
  V s = dims.empty() ? g : e.sum(g, dims);
  return e.reshape(s, shape);
}

/// The rule's cotangents, with nullptr where the input does not need one.
inline Result grads(Emitter& e, const VjpCall& c, std::vector<V> gs) {
  for (size_t i = 0; i < gs.size(); ++i)
    if (!c.needs(i)) gs[i] = nullptr;
  if (!e.ok()) return e.status();
  return gs;
}

}  // namespace plugsdk::autograd::vjp
