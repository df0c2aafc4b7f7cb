// Decompositions of the ATen-level indexing ops into prims.gather and prims.scatter. Reads
// broadcast their index to the result's shape along the indexed dim; index.Tensor and
// index_put with several index tensors linearize them (sum of index_k * stride_k over the
// flattened leading dims, negative indices wrapped) and gather / scatter rows of the
// flattened tensor. Scatter reductions without include_self first overwrite the touched
// positions with the reduction's identity; mean divides by a scattered count.
#include <cstdint>
#include <limits>
#include <optional>

#include "core/decomp/rules_util.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A rank-0 i64 tensor holding the size expression n (a constant, or iota's symbolic start).
V sizeScalar(Emitter& e, const SymExpr& n) {
  if (auto k = n.constant()) return e.scalar(static_cast<double>(*k), DType::kI64);
  V v = e.op("prims.iota", {},
             {{"length", Attribute::fromSym(SymExpr(1))},
              {"start", Attribute::fromSym(n)},
              {"dtype", Attribute::fromDType(DType::kI64)}});
  return e.reshape(v, {});
}

/// A rank-0 tensor as [1] (gather and scatter see 0-dim tensors as 1-dim).
V atLeast1d(Emitter& e, V v) { return v && e.rank(v) == 0 ? e.reshape(v, {SymExpr(1)}) : v; }

bool provablyEmpty(Emitter& e, V v) { return e.type(v).numel().constant() == 0; }

V gatherPrim(Emitter& e, V a, V index, int64_t dim) {
  return e.op("prims.gather", {a, index}, {{"dim", Attribute::fromInt(dim)}});
}

V scatterPrim(Emitter& e, V a, V index, V src, int64_t dim, const std::string& reduce) {
  return e.op("prims.scatter", {a, index, src},
              {{"dim", Attribute::fromInt(dim)}, {"reduce", Attribute::fromString(reduce)}});
}

Result gather(Emitter& e, const DecompCall& c) {
  const ir::TensorType& out = c.outType();
  V x = atLeast1d(e, c.input(0)), index = c.input(1);
  if (provablyEmpty(e, index)) return one(e, e.full(out.shape, 0.0, out.dtype));
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  return one(e, e.reshape(gatherPrim(e, x, atLeast1d(e, index), dim), out.shape));
}

/// index_select: the index vector broadcast along dim to the result's shape.
Result indexSelect(Emitter& e, const DecompCall& c) {
  const ir::TensorType& out = c.outType();
  V x = c.input(0), index = c.input(1);
  const SymExpr k = e.type(index).numel();
  if (e.rank(x) == 0) {
    e.wrapDim(c.getInt("dim"), 1);
    V g = gatherPrim(e, e.reshape(x, {SymExpr(1)}), e.reshape(index, {SymExpr(1)}), 0);
    return one(e, e.reshape(g, out.shape));
  }
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  V flat = e.reshape(index, {k});
  return one(e, gatherPrim(e, x, e.broadcastInDim(flat, out.shape, {dim}), dim));
}

/// embedding: weight rows at the indices.
Result embedding(Emitter& e, const DecompCall& c) {
  V w = c.input(0), indices = c.input(1);
  const Shape& ws = e.shape(w);
  const SymExpr k = e.type(indices).numel();
  V flat = e.reshape(indices, {k});
  V g = gatherPrim(e, w, e.broadcastInDim(flat, {k, ws[1]}, {0}), 0);
  return one(e, e.reshape(g, c.outType().shape));
}

/// The broadcast shape of the index tensors inputs[first..].
std::optional<Shape> indexShape(Emitter& e, const DecompCall& c, size_t first) {
  std::vector<const ir::TensorType*> types;
  for (size_t i = first; i < c.inputs().size(); ++i) types.push_back(&e.type(c.input(i)));
  auto b = ir::broadcastAll(types, e.assumptions());
  if (!b.isOk()) {
    e.fail(b.status());
    return std::nullopt;
  }
  return *b;
}

/// The row of x's first k dims (flattened) that index tensors inputs[first..first+k) select,
/// as an i64 tensor of the broadcast shape b. Negative indices wrap; with several indices an
/// out-of-range one makes the row -1, so that prims.gather / scatter reject it rather than
/// reading a neighbouring row.
V linearIndex(Emitter& e, const DecompCall& c, V x, size_t first, const Shape& b) {
  const size_t k = c.inputs().size() - first;
  V lin = nullptr, valid = nullptr;
  SymExpr stride(1);
  for (size_t j = k; j-- > 0;) {
    const SymExpr n = e.shape(x)[j];
    V n0 = sizeScalar(e, n);
    V v = e.broadcastTo(e.convert(c.input(first + j), DType::kI64), b);
    V zero = e.scalar(0.0, DType::kI64);
    v = e.where(e.binary("lt", v, zero), e.add(v, n0), v);
    if (k > 1) {
      V inRange = e.binary("bitwise_and", e.binary("ge", v, zero), e.binary("lt", v, n0));
      valid = valid ? e.binary("bitwise_and", inRange, valid) : inRange;
    }
    V term = stride == SymExpr(1) ? v : e.mul(v, sizeScalar(e, stride));
    lin = lin ? e.add(term, lin) : term;
    stride = stride * n;
  }
  if (valid) lin = e.where(valid, lin, e.scalar(-1.0, DType::kI64));
  return lin;
}

/// x viewed as [rows of its first k dims, remaining dims...]; `rows` receives the row count.
V flattenLeading(Emitter& e, V x, size_t k, SymExpr& rows) {
  const Shape& s = e.shape(x);
  rows = SymExpr(1);
  for (size_t d = 0; d < k; ++d) rows = rows * s[d];
  Shape fs{rows};
  fs.insert(fs.end(), s.begin() + static_cast<std::ptrdiff_t>(k), s.end());
  return e.reshape(x, fs);
}

/// [M] row numbers broadcast along the rows of a [rows, rest...] tensor: [M, rest...].
V rowIndex(Emitter& e, V lin, V flatX) {
  const SymExpr m = e.type(lin).numel();
  Shape is = e.shape(flatX);
  is[0] = m;
  return e.broadcastInDim(e.reshape(lin, {m}), is, {0});
}

/// index.Tensor: rows of x (flattened over the indexed dims) at the linearized indices.
Result indexTensor(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const size_t k = c.inputs().size() - 1;
  auto b = indexShape(e, c, 1);
  if (!b) return e.status();
  SymExpr rows;
  V flatX = flattenLeading(e, x, k, rows);
  V lin = linearIndex(e, c, x, 1, *b);
  V g = gatherPrim(e, flatX, rowIndex(e, lin, flatX), 0);
  return one(e, e.reshape(g, c.outType().shape));
}

/// index_put: values (broadcast to the indexing result) scattered into the rows of x
/// flattened over the indexed dims; accumulate sums (or ors, for bool).
Result indexPut(Emitter& e, const DecompCall& c) {
  V x = c.input(0), values = c.input(1);
  const size_t k = c.inputs().size() - 2;
  auto b = indexShape(e, c, 2);
  if (!b) return e.status();
  SymExpr rows;
  V flatX = flattenLeading(e, x, k, rows);
  V lin = linearIndex(e, c, x, 2, *b);
  V idx = rowIndex(e, lin, flatX);
  Shape target = *b;
  target.insert(target.end(), e.shape(x).begin() + static_cast<std::ptrdiff_t>(k), e.shape(x).end());
  V src = e.reshape(e.broadcastTo(values, target), e.shape(idx));
  std::string reduce = "none";
  if (c.getBool("accumulate")) reduce = e.dtype(x) == DType::kBool ? "amax" : "sum";
  return one(e, e.reshape(scatterPrim(e, flatX, idx, src, 0, reduce), e.shape(x)));
}

/// The value that leaves any other unchanged under a scatter reduction.
std::optional<Attribute> identityOf(const std::string& reduce, DType dt) {
  if (reduce == "sum") return ir::isFloating(dt) ? Attribute::fromFloat(-0.0) : Attribute::fromInt(0);
  if (reduce == "prod") return Attribute::fromInt(1);
  const bool isMax = reduce == "amax";
  if (ir::isFloating(dt)) return Attribute::fromFloat(isMax ? -kInf : kInf);
  switch (dt) {
    case DType::kBool: return Attribute::fromBool(!isMax);
    case DType::kU8: return Attribute::fromInt(isMax ? 0 : 255);
    case DType::kI8: return Attribute::fromInt(isMax ? INT8_MIN : INT8_MAX);
    case DType::kI16: return Attribute::fromInt(isMax ? INT16_MIN : INT16_MAX);
    case DType::kI32: return Attribute::fromInt(isMax ? INT32_MIN : INT32_MAX);
    case DType::kI64: return Attribute::fromInt(isMax ? INT64_MIN : INT64_MAX);
    default: return std::nullopt;
  }
}

/// The scatter ops: self, index, and src (a tensor input, or the Scalar attribute `value`).
struct ScatterArgs {
  V self = nullptr, index = nullptr, src = nullptr;
  int64_t dim = 0;
  Shape shape;  ///< self's shape (the result's)
};

ScatterArgs scatterArgs(Emitter& e, const DecompCall& c) {
  ScatterArgs a;
  a.shape = e.shape(c.input(0));
  a.self = atLeast1d(e, c.input(0));
  a.index = atLeast1d(e, c.input(1));
  a.dim = e.wrapDim(c.getInt("dim"), e.rank(a.self));
  if (c.input(2))
    a.src = atLeast1d(e, c.input(2));
  else
    a.src = e.full(e.shape(a.index), c.attr("value"), e.dtype(a.self));
  return a;
}

/// prims.scatter of a constant `fill` at every indexed position (duplicates write the same).
V scatterFill(Emitter& e, V self, V index, int64_t dim, const Attribute& fill, DType dt) {
  return scatterPrim(e, self, index, e.full(e.shape(index), fill, dt), dim, "none");
}

/// scatter with a reduction ("none", "sum", "prod", "amax", "amin", "mean"), as the
/// reference's scatterImpl: include_self false combines only the src values at touched positions.
Result scatterReduce(Emitter& e, const DecompCall& c, const std::string& reduce, bool includeSelf) {
  if (provablyEmpty(e, c.input(1))) return one(e, c.input(0));
  ScatterArgs a = scatterArgs(e, c);
  const DType dt = e.dtype(a.self);
  if (reduce == "none") return one(e, e.reshape(scatterPrim(e, a.self, a.index, a.src, a.dim, "none"), a.shape));
  const std::string combine = reduce == "mean" ? "sum" : reduce;
  V base = a.self;
  if (!includeSelf) {
    auto id = identityOf(combine, dt);
    if (!id) return e.decline("no identity for reduce=" + reduce + " on " + std::string(ir::dtypeName(dt)));
    base = scatterFill(e, base, a.index, a.dim, *id, dt);
  }
  if (reduce == "mean" && dt == DType::kBool) return e.decline("scatter_reduce mean on bool");
  V r = scatterPrim(e, base, a.index, a.src, a.dim, combine);
  if (reduce == "mean") {
    // count = include_self + hits, at least 1 (untouched positions divide by 1).
    V count = e.full(e.shape(a.self), includeSelf ? 1.0 : 0.0, DType::kI64);
    count = scatterPrim(e, count, a.index, e.full(e.shape(a.index), 1.0, DType::kI64), a.dim, "sum");
    count = e.binary("maximum", count, e.scalar(1.0, DType::kI64));
    if (ir::isFloating(dt)) {
      r = e.div(r, e.convert(count, dt));
    } else {  // floor division, as PyTorch's integer mean
      V s = e.convert(r, DType::kI64);
      V q = e.div(s, count);
      V zero = e.scalar(0.0, DType::kI64);
      V adjust = e.binary("bitwise_and", e.binary("ne", e.binary("fmod", s, count), zero), e.binary("lt", s, zero));
      r = e.convert(e.where(adjust, e.sub(q, e.scalar(1.0, DType::kI64)), q), dt);
    }
  }
  return one(e, e.reshape(r, a.shape));
}

Rule scatterRule(const std::string& reduce) {
  return [reduce](Emitter& e, const DecompCall& c) -> Result { return scatterReduce(e, c, reduce, true); };
}

/// scatter.reduce / scatter.value_reduce: "add" sums, "multiply" multiplies.
Result scatterLegacy(Emitter& e, const DecompCall& c) {
  const std::string r = c.getString("reduce");
  return scatterReduce(e, c, r == "add" ? "sum" : "prod", true);
}

Result scatterReduceTwo(Emitter& e, const DecompCall& c) {
  return scatterReduce(e, c, c.getString("reduce"), c.getBool("include_self"));
}

}  // namespace

void addIndexingRules(DecompTable& t) {
  t.add("aten.gather", gather);
  t.add("aten.index_select", indexSelect);
  t.add("aten.embedding", embedding);
  t.add("aten.index.Tensor", indexTensor);
  t.add("aten.index_put", indexPut);
  t.add("aten.scatter.src", scatterRule("none"));
  t.add("aten.scatter.value", scatterRule("none"));
  t.add("aten.scatter_add", scatterRule("sum"));
  t.add("aten.scatter.reduce", scatterLegacy);
  t.add("aten.scatter.value_reduce", scatterLegacy);
  t.add("aten.scatter_reduce.two", scatterReduceTwo);
}

}  // namespace plugsdk::decomp
