// Attention's score masks (sdpa_scores.h).
#include "core/decomp/sdpa_scores.h"

#include <limits>
#include <vector>

namespace plugsdk::decomp {

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::SymExpr;

V padDim(Emitter& e, V x, int64_t dim, const SymExpr& n) {
  if (!x || n.isZero()) return x;
  const size_t r = e.shape(x).size();
  std::vector<SymExpr> low(r, SymExpr(0)), high(r, SymExpr(0));
  high[static_cast<size_t>(e.wrapDim(dim, static_cast<int64_t>(r)))] = n;
  const DType t = e.dtype(x);
  return e.pad(x, low, high,
               ir::isFloating(t)   ? Attribute::fromFloat(0.0)
               : t == DType::kBool ? Attribute::fromBool(false)
                                   : Attribute::fromInt(0));
}

V maskScores(Emitter& e, V sc, const SymExpr& s, const SymExpr& sp, bool causal, V mask, DType acc) {
  if (!e.ok()) return sc;
  const Shape scores = e.shape(sc);
  const size_t r = scores.size();
  const SymExpr& l = scores[r - 2];
  Shape unpadded = scores;
  unpadded.back() = s;
  const V negInf = e.scalar(-std::numeric_limits<double>::infinity(), acc);
  const SymExpr pad = sp - s;
  if (!pad.isZero()) {
    V padded = e.binary("ge", e.broadcastInDim(e.iota(sp), scores, {static_cast<int64_t>(r) - 1}),
                        e.scalar(static_cast<double>(*s.constant()), DType::kI64));
    sc = e.where(padded, negInf, sc);
  }
  if (causal) {
    V above = e.binary("gt", e.broadcastInDim(e.iota(sp), {l, sp}, {1}), e.broadcastInDim(e.iota(l), {l, sp}, {0}));
    sc = e.where(above, negInf, sc);
  }
  if (mask) {
    // The padded keys are -inf already: the mask's padding may be any value.
    V m = padDim(e, e.broadcastTo(mask, unpadded), -1, pad);
    sc = e.dtype(m) == DType::kBool ? e.where(m, sc, negInf) : e.add(sc, e.convert(m, acc));
  }
  return sc;
}

}  // namespace plugsdk::decomp
