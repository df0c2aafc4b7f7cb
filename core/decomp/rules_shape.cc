// Decompositions of the ATen-level shape ops into prims: views are prims.reshape / permute /
// broadcast_in_dim / rev (the scheduler turns them into index arithmetic, so they cost no
// copies); repeat is a broadcast of interleaved dims; constant_pad_nd crops with prims.slice
// and grows with prims.pad; tril / triu select with an iota comparison; roll is two slices
// and a concat. cat / stack / slice / split / ...: rules_shape_split.cc.
#include <algorithm>

#include "core/decomp/rules_shape_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// Every op whose result is the input's elements in the inferred shape (view, reshape,
/// flatten, unflatten, squeeze, unsqueeze, clone, alias, detach).
Result sameElements(Emitter& e, const DecompCall& c) { return one(e, e.reshape(c.input(0), c.outType().shape)); }

Result permute(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  if (e.rank(x) == 0) return one(e, x);
  return one(e, e.permute(x, c.getInts("dims")));
}

Result transpose(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  if (e.rank(x) < 2) return one(e, x);  // rank 0 or 1: the dims are the same one
  return one(e, e.transpose(x, c.getInt("dim0"), c.getInt("dim1")));
}

Result tOp(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  return one(e, e.rank(x) == 2 ? e.transpose(x, 0, 1) : x);
}

/// expand: the inference resolved -1 entries, so the output shape is a NumPy broadcast target.
Result expand(Emitter& e, const DecompCall& c) { return one(e, e.broadcastTo(c.input(0), c.outType().shape)); }

Result flip(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  std::vector<int64_t> dims = e.wrapDims(c.getInts("dims"), e.rank(x));
  if (e.rank(x) == 0 || dims.empty()) return one(e, x);
  std::sort(dims.begin(), dims.end());
  return one(e, e.op("prims.rev", {x}, {{"dims", Attribute::fromInts(dims)}}));
}

/// repeat: out[.., r * n + i, ..] = x[.., i, ..]. Each input dim n becomes a pair [r, n] of a
/// broadcast (the repeat) and the data, and the pairs merge into r * n; leading repeats of
/// dims the input lacks are plain broadcast dims.
Result repeat(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const Shape reps = c.getSyms("repeats");
  const Shape& in = e.shape(x);
  const size_t lead = reps.size() - in.size();
  Shape wide;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < reps.size(); ++i) {
    wide.push_back(reps[i]);
    if (i < lead) continue;
    dims.push_back(static_cast<int64_t>(wide.size()));
    wide.push_back(in[i - lead]);
  }
  return one(e, e.reshape(e.broadcastInDim(x, wide, dims), c.outType().shape));
}

/// A Scalar attribute as prims.pad / prims.full want it for `dtype`: a float truncates for an
/// integer dtype (as a cast), anything becomes a bool for bool.
Attribute fillValue(const Attribute& v, DType dtype) {
  if (dtype == DType::kBool) {
    if (v.asBool()) return v;
    return Attribute::fromBool(v.asDouble().value_or(0.0) != 0.0);
  }
  if (ir::isFloating(dtype)) {
    if (auto b = v.asBool()) return Attribute::fromFloat(*b ? 1.0 : 0.0);
    return v;
  }
  if (auto b = v.asBool()) return Attribute::fromInt(*b ? 1 : 0);
  if (v.kind() == Attribute::Kind::kFloat) return Attribute::fromInt(static_cast<int64_t>(*v.asDouble()));
  return v;
}

/// constant_pad_nd: negative pads crop (prims.slice), positive ones pad (prims.pad). A symbolic
/// pad must be provably of one sign.
Result constantPad(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const Shape pad = c.getSyms("pad");
  const int r = e.rank(x);
  Shape start(static_cast<size_t>(r), SymExpr(0)), limit = e.shape(x);
  Shape low(static_cast<size_t>(r), SymExpr(0)), high(static_cast<size_t>(r), SymExpr(0));
  bool crop = false, grow = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = static_cast<size_t>(r) - 1 - i;
    for (int side = 0; side < 2; ++side) {
      const SymExpr& p = pad[2 * i + static_cast<size_t>(side)];
      if (e.provedGE(p, SymExpr(0))) {
        (side == 0 ? low : high)[d] = p;
        grow = grow || !p.isZero();
      } else if (e.provedGE(SymExpr(0) - p, SymExpr(1))) {
        if (side == 0)
          start[d] = SymExpr(0) - p;
        else
          limit[d] = limit[d] + p;
        crop = true;
      } else {
        return e.decline("constant_pad_nd: the sign of the symbolic pad " + p.toString() + " is unknown");
      }
    }
  }
  if (crop)
    x = e.op("prims.slice", {x},
             {{"start_indices", Attribute::fromInts(start)}, {"limit_indices", Attribute::fromInts(limit)}});
  if (grow) x = e.pad(x, low, high, fillValue(c.attr("value"), e.dtype(x)));
  return one(e, x);
}

/// tril / triu: keep x where col - row <= diagonal (tril) or >= diagonal (triu), else 0.
Rule triangle(bool lower) {
  return [lower](Emitter& e, const DecompCall& c) -> Result {
    V x = c.input(0);
    const Shape& s = e.shape(x);
    const SymExpr rows = s[s.size() - 2], cols = s[s.size() - 1];
    V row = e.reshape(e.iota(rows), {rows, SymExpr(1)});
    V col = e.reshape(e.iota(cols), {SymExpr(1), cols});
    V k = e.sub(col, row);
    V diag = e.scalar(static_cast<double>(c.getInt("diagonal")), DType::kI64);
    V keep = e.binary(lower ? "le" : "ge", k, diag);
    return one(e, e.where(keep, x, e.scalar(0.0, e.dtype(x))));
  };
}

/// x rolled by `shift` along dim: concat(x[n - s:], x[:n - s]) for s = shift mod n.
V rollDim(Emitter& e, V x, const SymExpr& shift, int64_t dim) {
  if (!e.ok()) return nullptr;
  const SymExpr n = e.shape(x)[static_cast<size_t>(dim)];
  SymExpr s;
  auto cn = n.constant(), cs = shift.constant();
  if (cn && cs) {
    if (*cn == 0) return x;
    s = SymExpr(((*cs % *cn) + *cn) % *cn);
  } else {
    if (!e.provedGE(n, SymExpr(1))) return e.fail(e.decline("roll: the symbolic size " + n.toString() + " may be 0"));
    s = SymExpr::mod(shift, n);
  }
  if (s.isZero()) return x;
  return e.concat({e.sliceDim(x, dim, n - s, n), e.sliceDim(x, dim, SymExpr(0), n - s)}, dim);
}

Result roll(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const Shape shifts = c.getSyms("shifts");
  const std::vector<int64_t> dims = c.getInts("dims");
  if (dims.empty()) {  // the flattened tensor
    V flat = e.reshape(x, {e.type(x).numel()});
    return one(e, e.reshape(rollDim(e, flat, shifts[0], 0), e.shape(x)));
  }
  for (size_t i = 0; i < dims.size(); ++i) x = rollDim(e, x, shifts[i], e.wrapDim(dims[i], e.rank(x)));
  return one(e, x);
}

}  // namespace

void addShapeRules(DecompTable& t) {
  for (const char* op : {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.flatten.using_ints",
                         "aten.unflatten.int", "aten.unsqueeze", "aten.squeeze", "aten.squeeze.dim",
                         "aten.squeeze.dims", "aten.clone", "aten.alias", "aten.detach"})
    t.add(op, sameElements);
  t.add("aten.permute", permute);
  t.add("aten.transpose.int", transpose);
  t.add("aten.t", tOp);
  t.add("aten.expand", expand);
  t.add("aten.flip", flip);
  t.add("aten.repeat", repeat);
  t.add("aten.constant_pad_nd", constantPad);
  t.add("aten.tril", triangle(true));
  t.add("aten.triu", triangle(false));
  t.add("aten.roll", roll);
  addShapeSplitRules(t);
}

}  // namespace plugsdk::decomp
