// Internal to the backward decomposition rules (rules_backward*.cc): the per-file
// registration function and small helpers those files share.
#pragma once

#include <string>
#include <vector>

#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

void addBackwardNNRules(DecompTable& t);  // rules_backward_nn.cc: norms, convolution, pooling, attention

namespace rules {

/// A SymInt as a zero-dim constant of `dtype`: prims.full for a constant, else a one-element
/// prims.iota starting at the symbol (evaluated with the bound sizes), converted.
inline V symScalar(Emitter& e, const SymExpr& v, DType dtype) {
  if (auto c = v.constant()) return e.full({}, Attribute::fromInt(*c), dtype);
  V i = e.op("prims.iota", {},
             {{"length", Attribute::fromInt(1)},
              {"start", Attribute::fromSym(v)},
              {"dtype", Attribute::fromDType(DType::kI64)}});
  return e.convert(e.reshape(i, {}), dtype);
}

/// num / n as a zero-dim constant of `dtype`: folded (in double, then rounded) when n is a
/// constant, else a division by the symbol's value.
inline V ratio(Emitter& e, double num, const SymExpr& n, DType dtype) {
  if (auto c = n.constant()) return e.scalar(num / static_cast<double>(*c), dtype);
  return e.div(e.scalar(num, dtype), symScalar(e, n, dtype));
}

/// A Scalar attribute (possibly symbolic) as a zero-dim constant of `dtype`.
inline V scalarOf(Emitter& e, const DecompCall& c, const std::string& name, DType dtype) {
  if (c.attr(name).kind() == Attribute::Kind::kSym) return symScalar(e, c.getSym(name), dtype);
  return scalarAttr(e, c, name, dtype);
}

/// The zero padding value for a tensor of `dtype`.
inline Attribute zeroOf(DType dtype) {
  if (dtype == DType::kBool) return Attribute::fromBool(false);
  if (ir::isFloating(dtype)) return Attribute::fromFloat(0.0);
  return Attribute::fromInt(0);
}

/// sum over `dims`; no dims is the identity (Emitter::sum would reduce every dim).
inline V sumOver(Emitter& e, V a, const std::vector<int64_t>& dims, bool keepdim) {
  if (dims.empty()) return a;
  return e.sum(a, dims, keepdim);
}

/// prims.scatter(a, index, src, dim, reduce).
inline V scatter(Emitter& e, V a, V index, V src, int64_t dim, const std::string& reduce) {
  return e.op("prims.scatter", {a, index, src},
              {{"dim", Attribute::fromInt(dim)}, {"reduce", Attribute::fromString(reduce)}});
}

/// The product of `shape[from, to)`.
inline SymExpr productOf(const Shape& shape, size_t from, size_t to) {
  SymExpr p(1);
  for (size_t i = from; i < to && i < shape.size(); ++i) p = p * shape[i];
  return p;
}

}  // namespace rules

}  // namespace plugsdk::decomp
