// Decompositions of the ops that join or cut tensors along a dim: cat and stack become
// prims.concat of converted operands; slice, select, narrow and the split family become
// prims.slice with bounds resolved as the inference resolves them (core/ops/shape_split.cc).
#include <algorithm>

#include "core/decomp/rules_shape_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// Constant slice bounds at least this large mean "to the end" (as in core/ops/shape_split.cc).
constexpr int64_t kHugeBound = int64_t{1} << 62;

bool provedLT(const Emitter& e, const SymExpr& a, const SymExpr& b) { return e.provedGE(b, a + SymExpr(1)); }

/// Python-style clamp of a slice bound into [0, n], exactly as the inference does it: a
/// comparison that cannot be decided assumes the bound is in range.
SymExpr clampBound(const Emitter& e, const SymExpr& x, const SymExpr& n) {
  if (auto c = x.constant()) {
    if (*c >= kHugeBound) return n;
    if (*c <= -kHugeBound) return SymExpr(0);
    if (auto cn = n.constant()) return SymExpr(std::clamp<int64_t>(*c < 0 ? *c + *cn : *c, 0, *cn));
  }
  SymExpr v = x;
  if (provedLT(e, x, SymExpr(0))) {
    v = x + n;
    if (provedLT(e, v, SymExpr(0))) return SymExpr(0);
  }
  if (e.provedGE(v, n)) return n;
  return v;
}

bool isLegacyEmpty(Emitter& e, V t) { return e.rank(t) == 1 && e.shape(t)[0].constant() == 0; }

/// cat: operands convert to the promoted dtype; 1-D empty tensors are skipped (PyTorch's legacy rule).
Result cat(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  std::vector<V> parts;
  for (V t : c.inputs())
    if (!isLegacyEmpty(e, t)) parts.push_back(e.convert(t, dt));
  if (parts.empty()) return one(e, e.full(c.outType().shape, 0.0, dt));
  return one(e, e.concat(parts, e.wrapDim(c.getInt("dim"), e.rank(parts[0]))));
}

Result stack(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(c.input(0)) + 1);
  std::vector<V> parts;
  for (V t : c.inputs()) parts.push_back(e.unsqueeze(e.convert(t, dt), dim));
  return one(e, e.concat(parts, dim));
}

Result slice(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.done({});
  const SymExpr n = e.shape(x)[static_cast<size_t>(dim)];
  auto step = c.getSym("step").constant();
  if (!step) return e.decline("slice.Tensor: the step " + c.getSym("step").toString() + " is symbolic");
  SymExpr start = c.isNone("start") ? SymExpr(0) : clampBound(e, c.getSym("start"), n);
  SymExpr end = c.isNone("end") ? n : clampBound(e, c.getSym("end"), n);
  int64_t st = *step;
  auto cs = start.constant(), ce = end.constant();
  if (cs && ce) {
    if (*ce < *cs) end = start;
    // A step longer than the range takes one element: keep it small so sizes cannot overflow.
    st = std::max<int64_t>(1, std::min<int64_t>(st, std::max<int64_t>(*ce - *cs, 1)));
  } else if (provedLT(e, end, start)) {
    end = start;
  }
  return one(e, e.sliceDim(x, dim, start, end, st));
}

/// A (possibly negative) index into a dim of size n, resolved as the inference does.
StatusOr<SymExpr> resolveIndex(Emitter& e, const SymExpr& index, const SymExpr& n, const std::string& op) {
  if (auto ci = index.constant()) return *ci < 0 ? index + n : index;
  if (e.provedGE(index, SymExpr(0))) return index;
  if (provedLT(e, index, SymExpr(0))) return index + n;
  return e.decline(op + ": the sign of the symbolic index " + index.toString() + " is unknown");
}

Result select(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.done({});
  const SymExpr n = e.shape(x)[static_cast<size_t>(dim)];
  auto i = resolveIndex(e, c.getSym("index"), n, "select.int");
  if (!i.isOk()) return i.status();
  return one(e, e.reshape(e.sliceDim(x, dim, *i, *i + SymExpr(1)), c.outType().shape));
}

Result narrow(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.done({});
  const SymExpr n = e.shape(x)[static_cast<size_t>(dim)];
  SymExpr start = c.getSym("start");
  if (auto cs = start.constant(); cs && *cs < 0) start = start + n;  // symbolic starts count from 0
  return one(e, e.sliceDim(x, dim, start, start + c.getSym("length")));
}

/// split, split_with_sizes, chunk: consecutive pieces with the sizes the inference gave.
Result pieces(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.done({});
  std::vector<V> outs;
  SymExpr offset(0);
  for (const ir::TensorType& t : c.outTypes()) {
    const SymExpr& size = t.shape[static_cast<size_t>(dim)];
    outs.push_back(e.sliceDim(x, dim, offset, offset + size));
    offset = offset + size;
  }
  return e.done(outs);
}

Result unbind(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.done({});
  std::vector<V> outs;
  for (size_t i = 0; i < c.outTypes().size(); ++i) {
    const auto k = static_cast<int64_t>(i);
    outs.push_back(e.reshape(e.sliceDim(x, dim, SymExpr(k), SymExpr(k + 1)), c.outType(i).shape));
  }
  return e.done(outs);
}

}  // namespace

void addShapeSplitRules(DecompTable& t) {
  t.add("aten.cat", cat);
  t.add("aten.stack", stack);
  t.add("aten.slice.Tensor", slice);
  t.add("aten.select.int", select);
  t.add("aten.narrow", narrow);
  t.add("aten.split.Tensor", pieces);
  t.add("aten.split_with_sizes", pieces);
  t.add("aten.chunk", pieces);
  t.add("aten.unbind.int", unbind);
}

}  // namespace plugsdk::decomp
