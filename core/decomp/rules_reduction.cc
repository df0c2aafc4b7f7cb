// Decompositions of the ATen-level reduction ops into prims. Sums, products and extremes map
// onto prims.sum / prod / amax / amin over the reduced dims (inputs converted to the output
// dtype first, as the reference kernels load them); mean and var divide by the group size;
// cumsum is a masked sum over an [.., n, n] domain (there is no scan prim); logsumexp is the
// stable max-shifted form of the reference kernel.
#include <algorithm>
#include <limits>
#include <optional>

#include "core/decomp/rules_util.h"
#include "core/ops/reduction_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The reduced dims of a reduction op (its "dim" argument read as inference reads it), in
/// increasing order; empty for a rank-0 input. nullopt (with the error recorded) on failure.
std::optional<std::vector<int64_t>> reducedDims(Emitter& e, const DecompCall& c, V x) {
  auto mask = ops::red::reducedDims(c, e.rank(x));
  if (!mask.isOk()) {
    e.fail(mask.status());
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (size_t d = 0; d < mask->size(); ++d)
    if ((*mask)[d]) dims.push_back(static_cast<int64_t>(d));
  return dims;
}

/// keepdim, false for ops without the argument (whole-tensor reductions).
bool keepdimOf(const DecompCall& c) { return c.def().schema.findArg("keepdim") ? c.getBool("keepdim") : false; }

/// A rank-0 tensor holding the size expression n (a constant, or iota's symbolic start).
V sizeScalar(Emitter& e, const SymExpr& n, DType dtype) {
  if (auto k = n.constant()) return e.scalar(static_cast<double>(*k), dtype);
  V v = e.op("prims.iota", {},
             {{"length", Attribute::fromSym(SymExpr(1))},
              {"start", Attribute::fromSym(n)},
              {"dtype", Attribute::fromDType(DType::kI64)}});
  return e.convert(e.reshape(v, {}), dtype);
}

/// The number of elements each output element reduces.
SymExpr groupSize(Emitter& e, V x, const std::vector<int64_t>& dims) {
  SymExpr n(1);
  for (int64_t d : dims) n = n * e.shape(x)[static_cast<size_t>(d)];
  return n;
}

/// prims.sum / prims.prod reduce no dims when given none; Emitter::reduce reads [] as "all".
/// For a rank-0 input both mean the identity.
V reduceDims(Emitter& e, const std::string& prim, V x, const std::vector<int64_t>& dims, bool keepdim) {
  if (dims.empty()) return x;
  return e.reduce(prim, x, dims, keepdim);
}

/// amax / amin over dims that may be empty: a reduced dim not provably >= 1 gets one extra
/// element of `identity` at its end, so the extreme prim always has something to reduce.
V extremeWithIdentity(Emitter& e, const std::string& prim, V x, const std::vector<int64_t>& dims, bool keepdim,
                      const Attribute& identity) {
  if (dims.empty()) return x;
  std::vector<SymExpr> low(static_cast<size_t>(e.rank(x)), SymExpr(0)), high = low;
  bool padded = false;
  for (int64_t d : dims) {
    if (!e.provedGE(e.shape(x)[static_cast<size_t>(d)], SymExpr(1))) {
      high[static_cast<size_t>(d)] = SymExpr(1);
      padded = true;
    }
  }
  return e.reduce(prim, padded ? e.pad(x, low, high, identity) : x, dims, keepdim);
}

/// sum / prod (all their overloads): the input converted to the output dtype, then reduced.
/// A bool result (dtype=bool) accumulates in i64 and tests for nonzero, as the reference's
/// integer accumulator stored into bool does.
Rule accumulate(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    auto dims = reducedDims(e, c, c.input(0));
    if (!dims) return e.status();
    V x = e.convert(c.input(0), dt);
    if (dt == DType::kBool) {
      V r = reduceDims(e, prim, e.convert(x, DType::kI64), *dims, keepdimOf(c));
      return one(e, e.convert(r, DType::kBool));
    }
    return one(e, reduceDims(e, prim, x, *dims, keepdimOf(c)));
  };
}

/// mean: the sum in the output dtype (f16 / bf16 accumulate in f32) divided by the group size.
Result mean(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  auto dims = reducedDims(e, c, c.input(0));
  if (!dims) return e.status();
  const DType ct = opmath(dt);
  V x = e.convert(e.convert(c.input(0), dt), ct);
  V s = reduceDims(e, "sum", x, *dims, keepdimOf(c));
  V m = e.div(s, sizeScalar(e, groupSize(e, x, *dims), ct));
  return one(e, e.convert(m, dt));
}

/// amax / amin / max / min: the extreme prim in the input dtype (bool included).
Rule extreme(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    auto dims = reducedDims(e, c, c.input(0));
    if (!dims) return e.status();
    return one(e, reduceDims(e, prim, c.input(0), *dims, keepdimOf(c)));
  };
}

/// The first index of the extreme along `dim` (bool compares as u8: prims.argmax takes no bool).
V argExtreme(Emitter& e, const std::string& prim, V x, int64_t dim, bool keepdim) {
  if (e.dtype(x) == DType::kBool) x = e.convert(x, DType::kU8);
  return e.argReduce(prim, x, dim, keepdim);
}

/// max.dim / min.dim: (amax, argmax) over one dim. A rank-0 input is its own max at index 0.
Rule extremeDim(const std::string& valuePrim, const std::string& indexPrim) {
  return [valuePrim, indexPrim](Emitter& e, const DecompCall& c) -> Result {
    V x = c.input(0);
    const bool keepdim = c.getBool("keepdim");
    if (e.rank(x) == 0) {
      e.wrapDim(c.getInt("dim"), 1);  // rank 0 accepts dim 0 and -1
      return e.done({x, e.full({}, 0.0, DType::kI64)});
    }
    const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
    return e.done({e.reduce(valuePrim, x, {dim}, keepdim), argExtreme(e, indexPrim, x, dim, keepdim)});
  };
}

/// argmax / argmin: over one dim, or over the flattened tensor when dim is none (keepdim then
/// keeps every dim as size 1).
Rule argRule(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    V x = c.input(0);
    const bool keepdim = c.getBool("keepdim");
    if (!c.isNone("dim") && e.rank(x) > 0)
      return one(e, argExtreme(e, prim, x, e.wrapDim(c.getInt("dim"), e.rank(x)), keepdim));
    if (!c.isNone("dim")) e.wrapDim(c.getInt("dim"), 1);
    V flat = e.reshape(x, {e.type(x).numel()});
    V r = argExtreme(e, prim, flat, 0, false);
    return one(e, e.reshape(r, c.outType().shape));
  };
}

/// var / std: two passes as the reference (the mean, then the sum of squared deviations),
/// divided by max(0, N - correction); correction none = 1.
Rule variance(bool takeSqrt) {
  return [takeSqrt](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    const DType ct = opmath(dt);
    auto dims = reducedDims(e, c, c.input(0));
    if (!dims) return e.status();
    V x = e.convert(c.input(0), ct);
    const double correction = c.isNone("correction") ? 1.0 : c.getFloat("correction");
    const SymExpr n = groupSize(e, x, *dims);
    V mean = e.div(reduceDims(e, "sum", x, *dims, true), sizeScalar(e, n, ct));
    V dev = e.sub(x, mean);
    V m2 = reduceDims(e, "sum", e.mul(dev, dev), *dims, c.getBool("keepdim"));
    V divisor;
    if (auto k = n.constant())
      divisor = e.scalar(std::max(0.0, static_cast<double>(*k) - correction), ct);
    else
      divisor = e.binary("maximum", e.sub(sizeScalar(e, n, ct), e.scalar(correction, ct)), e.scalar(0.0, ct));
    V v = e.div(m2, divisor);
    if (takeSqrt) v = e.unary("sqrt", v);
    return one(e, e.convert(v, dt));
  };
}

/// any / all: the max / min of truthiness (an empty group gives false / true); u8 input gives u8.
Rule anyAll(bool isAny) {
  return [isAny](Emitter& e, const DecompCall& c) -> Result {
    auto dims = reducedDims(e, c, c.input(0));
    if (!dims) return e.status();
    V r = extremeWithIdentity(e, isAny ? "amax" : "amin", truthy(e, c.input(0)), *dims, keepdimOf(c),
                              Attribute::fromBool(!isAny));
    return one(e, e.convert(r, c.outType().dtype));
  };
}

/// cumsum: out[.., i, ..] = sum over j <= i of x[.., j, ..], as a sum over a broadcast
/// [.., n, n] domain masked by iota(n)[j] <= iota(n)[i] (where, not multiply: a later inf or
/// NaN must not leak into earlier sums). O(n^2) work, but one fusable reduction.
Result cumsum(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  if (dt == DType::kBool) return e.decline("cumsum with dtype=bool (prims.sum takes no bool)");
  V x = e.convert(c.input(0), dt);
  if (e.rank(x) == 0) {
    e.wrapDim(c.getInt("dim"), 1);
    return one(e, x);
  }
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
  if (!e.ok()) return e.status();
  const Shape& s = e.shape(x);
  const SymExpr n = s[static_cast<size_t>(dim)];
  // Domain: x's shape with dim split into (i, j): i at `dim`, j at `dim + 1`.
  Shape domain = s;
  domain.insert(domain.begin() + dim + 1, n);
  std::vector<int64_t> xDims;
  for (int64_t d = 0; d < e.rank(x); ++d) xDims.push_back(d < dim ? d : d + 1);
  V xb = e.broadcastInDim(x, domain, xDims);
  V iota = e.iota(n);
  V mask = e.binary("le", e.broadcastInDim(iota, {n, n}, {1}), e.broadcastInDim(iota, {n, n}, {0}));
  V maskb = e.broadcastInDim(mask, domain, {dim, dim + 1});
  return one(e, e.reduce("sum", e.where(maskb, xb, e.scalar(0.0, dt)), {dim + 1}, false));
}

/// logsumexp: log(sum(exp(x - m))) + m with m the group max, 0 where infinite (all -inf rows
/// give -inf, a +inf gives +inf, NaN propagates); empty groups give -inf, as the reference.
Result logsumexp(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  const DType ct = opmath(dt);
  auto dims = reducedDims(e, c, c.input(0));
  if (!dims) return e.status();
  const bool keepdim = c.getBool("keepdim");
  V x = e.convert(c.input(0), ct);
  V m = extremeWithIdentity(e, "amax", x, *dims, true, Attribute::fromFloat(-kInf));
  V zero = e.scalar(0.0, ct);
  m = e.where(e.binary("eq", e.unary("abs", m), e.scalar(kInf, ct)), zero, m);
  V s = reduceDims(e, "sum", e.unary("exp", e.sub(x, m)), *dims, keepdim);
  if (!keepdim && !dims->empty()) m = e.reshape(m, e.shape(s));
  return one(e, e.convert(e.add(e.unary("log", s), m), dt));
}

}  // namespace

void addReductionRules(DecompTable& t) {
  for (const char* op : {"aten.sum.dim_IntList", "aten.sum"}) t.add(op, accumulate("sum"));
  for (const char* op : {"aten.prod.dim_int", "aten.prod"}) t.add(op, accumulate("prod"));
  for (const char* op : {"aten.mean.dim", "aten.mean"}) t.add(op, mean);
  for (const char* op : {"aten.amax", "aten.max"}) t.add(op, extreme("amax"));
  for (const char* op : {"aten.amin", "aten.min"}) t.add(op, extreme("amin"));
  t.add("aten.max.dim", extremeDim("amax", "argmax"));
  t.add("aten.min.dim", extremeDim("amin", "argmin"));
  t.add("aten.argmax", argRule("argmax"));
  t.add("aten.argmin", argRule("argmin"));
  t.add("aten.var.correction", variance(false));
  t.add("aten.std.correction", variance(true));
  for (const char* op : {"aten.any.dim", "aten.any"}) t.add(op, anyAll(true));
  for (const char* op : {"aten.all.dim", "aten.all"}) t.add(op, anyAll(false));
  t.add("aten.cumsum", cumsum);
  t.add("aten.logsumexp", logsumexp);
}

}  // namespace plugsdk::decomp
