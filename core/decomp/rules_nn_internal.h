// Internal to the nn-family rule files (rules_nn*.cc): per-file registration and small helpers.
#pragma once

#include <string>

#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

void addPoolRules(DecompTable& t);       // rules_nn_pool.cc: max / avg / adaptive avg pooling
void addNormRules(DecompTable& t);       // rules_nn_norm.cc: batch / layer / group norm, softmax
void addAttentionRules(DecompTable& t);  // rules_nn_attention.cc: sdpa, dropout, losses

namespace rules {

/// A zero-dim constant holding a (possibly symbolic) size: prims.full takes no symbols, so a
/// symbolic one is the single element of an iota starting there.
inline V symScalar(Emitter& e, const SymExpr& s, DType dtype) {
  if (auto c = s.constant()) return e.scalar(static_cast<double>(*c), dtype);
  V v = e.op("prims.iota", {}, {{"length", Attribute::fromInt(1)}, {"start", Attribute::fromSym(s)}});
  return e.convert(e.reshape(v, {}), dtype);
}

/// An iota [start, start + step, ...) of `length` i64 values (start and step may be symbolic).
inline V iotaFrom(Emitter& e, const SymExpr& length, const SymExpr& start, const SymExpr& step) {
  return e.op("prims.iota", {},
              {{"length", Attribute::fromSym(length)},
               {"start", Attribute::fromSym(start)},
               {"step", Attribute::fromSym(step)}});
}

/// A Scalar attribute as a double (bools are 0 / 1).
inline double scalarValue(const Attribute& a) {
  if (auto b = a.asBool()) return *b ? 1.0 : 0.0;
  return a.asDouble().value_or(0.0);
}

}  // namespace rules
}  // namespace plugsdk::decomp
