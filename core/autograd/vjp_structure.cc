// VJPs of the structure prims: each is the adjoint index map. broadcast_in_dim sums over the
// dims it repeated, slice pads with zeros where it skipped and pad slices back, concat splits,
// and as_strided scatter-adds through the flat indices of its view (windows that overlap,
// as in pooling, accumulate).
#include "core/autograd/vjp_util.h"

namespace plugsdk::autograd {
namespace {

using namespace vjp;  // NOLINT(google-build-using-namespace): the rule files' vocabulary

Result broadcastInDimVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0);
  const Shape& in = e.shape(a);
  const Shape& out = e.shape(g);
  const std::vector<int64_t> bdims = c.getInts("broadcast_dimensions");
  std::vector<bool> kept(out.size(), false);
  std::vector<int64_t> reduce;
  for (size_t i = 0; i < bdims.size(); ++i) {
    const auto d = static_cast<size_t>(bdims[i]);
    kept[d] = !(in[i] == SymExpr(1) && out[d] != SymExpr(1));
  }
  for (size_t d = 0; d < out.size(); ++d)
    if (!kept[d]) reduce.push_back(static_cast<int64_t>(d));
  V s = reduce.empty() ? g : e.sum(g, reduce);
  return grads(e, c, {e.reshape(s, in)});
}

Result reshapeVjp(Emitter& e, const VjpCall& c) { return grads(e, c, {e.reshape(c.cotangent(), e.shape(c.input(0)))}); }

Result permuteVjp(Emitter& e, const VjpCall& c) {
  const std::vector<int64_t> dims = c.getInts("dims");
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(dims[i])] = static_cast<int64_t>(i);
  return grads(e, c, {e.permute(c.cotangent(), inverse)});
}

Result revVjp(Emitter& e, const VjpCall& c) {
  return grads(e, c, {e.op("prims.rev", {c.cotangent()}, {{"dims", c.attr("dims")}})});
}

bool provablyEmpty(const Shape& s) {
  for (const SymExpr& d : s)
    if (d == SymExpr(0)) return true;
  return false;
}

/// The slice's elements go back to their places; everything it skipped gets zero: a pad with
/// `start` before, stride - 1 between and the rest after.
Result sliceVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0);
  const Shape& in = e.shape(a);
  const Shape& n = e.shape(g);
  if (provablyEmpty(n)) return grads(e, c, {zerosLike(e, a)});
  const std::vector<SymExpr> start = c.getSyms("start_indices");
  std::vector<int64_t> strides = c.getInts("strides");
  if (strides.empty()) strides.assign(in.size(), 1);
  std::vector<SymExpr> high;
  std::vector<int64_t> interior;
  for (size_t d = 0; d < in.size(); ++d) {
    high.push_back(in[d] - start[d] - (n[d] - SymExpr(1)) * SymExpr(strides[d]) - SymExpr(1));
    interior.push_back(strides[d] - 1);
  }
  V ga = e.op("prims.pad", {g},
              {{"padding_value", Attribute::fromFloat(0.0)},
               {"low", Attribute::fromInts(start)},
               {"high", Attribute::fromInts(high)},
               {"interior", Attribute::fromInts(interior)}});
  return grads(e, c, {ga});
}

/// The adjoint of pad reads the input's elements back: a strided slice.
Result padVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0);
  const Shape& in = e.shape(a);
  if (provablyEmpty(in)) return grads(e, c, {zerosLike(e, a)});
  const std::vector<SymExpr> low = c.getSyms("low");
  std::vector<int64_t> interior = c.getInts("interior");
  if (interior.empty()) interior.assign(in.size(), 0);
  std::vector<SymExpr> limit;
  std::vector<int64_t> strides;
  for (size_t d = 0; d < in.size(); ++d) {
    limit.push_back(low[d] + (in[d] - SymExpr(1)) * SymExpr(interior[d] + 1) + SymExpr(1));
    strides.push_back(interior[d] + 1);
  }
  V ga = e.op("prims.slice", {g},
              {{"start_indices", Attribute::fromInts(low)},
               {"limit_indices", Attribute::fromInts(limit)},
               {"strides", Attribute::fromInts(strides)}});
  return grads(e, c, {ga});
}

Result concatVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent();
  const int64_t dim = c.getInt("dim");
  std::vector<V> out;
  SymExpr offset(0);
  for (V in : c.inputs()) {
    const SymExpr size = e.shape(in)[static_cast<size_t>(dim)];
    out.push_back(e.sliceDim(g, dim, offset, offset + size));
    offset = offset + size;
  }
  return grads(e, c, out);
}

SymExpr numel(const Shape& s) {
  SymExpr n(1);
  for (const SymExpr& d : s) n = n * d;
  return n;
}

/// Each element of the view read a[flat index]: the cotangents scatter-add to those indices
/// (the indices are the view of an iota of a's size, taken with the same size and strides).
Result asStridedVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0);
  const Shape& in = e.shape(a);
  const SymExpr total = numel(in), viewed = numel(e.shape(g));
  V flat = e.reshape(e.iota(total), in);
  V index =
      e.op("prims.as_strided", {flat},
           {{"size", c.attr("size")}, {"stride", c.attr("stride")}, {"storage_offset", c.attr("storage_offset")}});
  V zeros = e.full({total}, 0.0, e.dtype(a));
  V ga = e.op("prims.scatter", {zeros, e.reshape(index, {viewed}), e.reshape(g, {viewed})},
              {{"dim", Attribute::fromInt(0)}, {"reduce", Attribute::fromString("sum")}});
  return grads(e, c, {e.reshape(ga, in)});
}

}  // namespace

void addStructureVjps(VjpTable& t) {
  t.add("prims.broadcast_in_dim", broadcastInDimVjp);
  t.add("prims.reshape", reshapeVjp);
  t.add("prims.permute", permuteVjp);
  t.add("prims.rev", revVjp);
  t.add("prims.slice", sliceVjp);
  t.add("prims.pad", padVjp);
  t.add("prims.concat", concatVjp);
  t.add("prims.as_strided", asStridedVjp);
}

}  // namespace plugsdk::autograd
