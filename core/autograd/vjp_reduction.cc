// VJPs of the reductions, gather and scatter; the generators and arg-reductions have none.
// sum broadcasts back; amax and amin route g to the first element attaining the extreme;
// prod is exact with zeros (the product of the others, not prod / a); gather scatter-adds
// back; scatter routes g to a where src did not overwrite it.
#include "core/autograd/vjp_util.h"

namespace plugsdk::autograd {
namespace {

using namespace vjp;  // NOLINT(google-build-using-namespace): the rule files' vocabulary

/// The dims a reduction kept, in order (for broadcast_in_dim back to the input's shape).
std::vector<int64_t> keptDims(int rank, const std::vector<int64_t>& reduced) {
  std::vector<bool> gone(static_cast<size_t>(rank), false);
  for (int64_t d : reduced) gone[static_cast<size_t>(d)] = true;
  std::vector<int64_t> kept;
  for (int d = 0; d < rank; ++d)
    if (!gone[static_cast<size_t>(d)]) kept.push_back(d);
  return kept;
}

/// v (the reduction's output shape) broadcast back to a's shape.
V expandBack(Emitter& e, V v, V a, const std::vector<int64_t>& dims) {
  return e.broadcastInDim(v, e.shape(a), keptDims(e.rank(a), dims));
}

Result sumVjp(Emitter& e, const VjpCall& c) {
  V a = c.input(0);
  return grads(e, c, {expandBack(e, c.cotangent(), a, c.getInts("dims"))});
}

/// amax / amin: g goes to the first element attaining the extreme (argmax / argmin), as
/// torch's max_pool2d and max(dim) route it; torch.amax splits a tie evenly instead, which
/// differs only on exact ties. An index, not an equality test against the saved extreme: a
/// backward that recomputes the input (the partitioner may) need not reproduce it bit for bit.
Result extremeVjp(Emitter& e, const VjpCall& c) {
  V a = c.input(0), g = c.cotangent();
  const std::vector<int64_t> dims = c.getInts("dims");
  const int rank = e.rank(a);
  std::vector<int64_t> order = keptDims(rank, dims), inverse(static_cast<size_t>(rank));
  order.insert(order.end(), dims.begin(), dims.end());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  V moved = e.permute(a, order);
  Shape flat(e.shape(moved).begin(), e.shape(moved).begin() + static_cast<std::ptrdiff_t>(rank - dims.size()));
  SymExpr reduced(1);
  for (int64_t d : dims) reduced = reduced * e.shape(a)[static_cast<size_t>(d)];
  flat.push_back(reduced);
  V rows = e.reshape(moved, flat);
  const auto last = static_cast<int64_t>(flat.size() - 1);
  V index = e.op(c.op() == "prims.amax" ? "prims.argmax" : "prims.argmin", {rows}, {{"dim", Attribute::fromInt(last)}});
  std::vector<int64_t> lead;
  for (int64_t d = 0; d < last; ++d) lead.push_back(d);
  V hit = e.binary("eq", e.broadcastInDim(e.iota(reduced), flat, {last}), e.broadcastInDim(index, flat, lead));
  V spread = e.where(hit, e.broadcastInDim(g, flat, lead), constant(e, 0.0, a));
  return grads(e, c, {e.permute(e.reshape(spread, e.shape(moved)), inverse)});
}

/// d prod / d a_i = the product of the other elements: prod / a_i where a_i != 0; where a_i
/// is the only zero of its slice, the product of the nonzero elements; else 0.
Result prodVjp(Emitter& e, const VjpCall& c) {
  V a = c.input(0), g = c.cotangent(), y = c.output();
  const std::vector<int64_t> dims = c.getInts("dims");
  if (dims.empty()) return grads(e, c, {g});
  V zero = constant(e, 0.0, a), one = constant(e, 1.0, a);
  V isZero = e.binary("eq", a, zero);
  V zeros = e.sum(e.convert(isZero, e.dtype(a)), dims);
  V nonzeroProd = e.reduce("prod", e.where(isZero, one, a), dims, false);
  V atZero = e.where(e.binary("eq", zeros, one), nonzeroProd, e.full(e.shape(zeros), 0.0, e.dtype(a)));
  V others = e.where(isZero, expandBack(e, atZero, a, dims), e.div(expandBack(e, y, a, dims), e.where(isZero, one, a)));
  return grads(e, c, {e.mul(expandBack(e, g, a, dims), others)});
}

Result gatherVjp(Emitter& e, const VjpCall& c) {
  V a = c.input(0), index = c.input(1), g = c.cotangent();
  V ga = e.op("prims.scatter", {zerosLike(e, a), index, g},
              {{"dim", c.attr("dim")}, {"reduce", Attribute::fromString("sum")}});
  return grads(e, c, {ga, nullptr});
}

/// reduce "none": a's cotangent is g where no src element landed, src's is g gathered at its
/// destinations; reduce "sum": a gets g whole. prod, amax and amin have no rule.
Result scatterVjp(Emitter& e, const VjpCall& c) {
  V index = c.input(1), src = c.input(2), g = c.cotangent();
  const std::string reduce = c.getString("reduce");
  if (reduce != "none" && reduce != "sum")
    return unimplemented("prims.scatter with reduce=\"" + reduce +
                         "\" has no gradient rule (only \"none\" and \"sum\" are differentiable here)");
  V ga = g;
  if (reduce == "none" && c.needs(0))
    ga = e.op("prims.scatter", {g, index, zerosLike(e, src)}, {{"dim", c.attr("dim")}, {"reduce", c.attr("reduce")}});
  V gsrc = c.needs(2) ? e.op("prims.gather", {g, index}, {{"dim", c.attr("dim")}}) : nullptr;
  return grads(e, c, {ga, nullptr, gsrc});
}

}  // namespace

void addReductionVjps(VjpTable& t) {
  t.add("prims.sum", sumVjp);
  t.add("prims.amax", extremeVjp);
  t.add("prims.amin", extremeVjp);
  t.add("prims.prod", prodVjp);
  t.add("prims.gather", gatherVjp);
  t.add("prims.scatter", scatterVjp);
  t.addNonDifferentiable("prims.argmax", "an index: its output is i64");
  t.addNonDifferentiable("prims.argmin", "an index: its output is i64");
  for (const char* op : {"prims.full", "prims.iota", "prims.rand"})
    t.addNonDifferentiable(op, "a generator: it has no tensor inputs");
}

}  // namespace plugsdk::autograd
