// Decompositions of normalization and softmax into prims, in the reference's evaluation order
// (core/exec/kernels_nn_norm.cc): two-pass statistics (mean = sum / n, then the mean of squared
// deviations), rstd = 1 / sqrt(var + eps), out = (x - mean) * rstd * weight + bias; softmax
// subtracts the (NaN-propagating) max, exponentiates and divides by the sum. f16 / bf16
// compute in f32 as PyTorch does.
#include <cmath>
#include <limits>

#include "core/decomp/rules_nn_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// The number of elements of `shape` in `dims`, as a zero-dim constant of `dtype`.
V countOf(Emitter& e, const Shape& shape, const std::vector<int64_t>& dims, DType dtype) {
  SymExpr n(1);
  for (int64_t d : dims) n = n * shape[static_cast<size_t>(d)];
  return symScalar(e, n, dtype);
}

struct Moments {
  V mean, m2, rstd;  ///< kept dims; m2: sum of squared deviations
};

/// Mean, sum of squared deviations and 1 / sqrt(m2 / n + eps) of x over `dims` (kept as 1).
Moments moments(Emitter& e, V x, const std::vector<int64_t>& dims, double eps) {
  const DType dt = e.dtype(x);
  V n = countOf(e, e.shape(x), dims, dt);
  Moments m;
  m.mean = e.div(e.sum(x, dims, true), n);
  V dev = e.sub(x, m.mean);
  m.m2 = e.sum(e.mul(dev, dev), dims, true);
  V var = e.div(m.m2, n);
  m.rstd = e.div(e.scalar(1.0, dt), e.unary("sqrt", e.add(var, e.scalar(eps, dt))));
  return m;
}

/// (x - mean) * rstd * weight + bias (weight and bias optional, already shaped to broadcast).
V normalize(Emitter& e, V x, V mean, V rstd, V weight, V bias) {
  V out = e.mul(e.sub(x, mean), rstd);
  if (weight) out = e.mul(out, weight);
  if (bias) out = e.add(out, bias);
  return out;
}

/// A per-channel [C] parameter shaped [1, C, 1, ...] for a rank-r input, in dtype dt.
V perChannel(Emitter& e, V p, int r, DType dt) {
  if (!p) return nullptr;
  Shape s(static_cast<size_t>(r), SymExpr(1));
  s[1] = e.shape(p)[0];
  return e.reshape(e.convert(p, dt), s);
}

enum class Mode { kAttr, kTraining, kEval };  ///< where `training` comes from

/// The batch norm family. `rmIndex`: where running_mean / running_var are (or -1);
/// `functional`: outputs 3 and 4 are the updated running stats.
Rule batchNorm(int rmIndex, bool functional, Mode mode) {
  return [=](Emitter& e, const DecompCall& c) -> Result {
    V input = c.input(0);
    const DType dt = e.dtype(input), ct = opmath(dt), st = c.outType(1).dtype;
    const int r = e.rank(input);
    const bool training = mode == Mode::kAttr ? c.getBool("training") : mode == Mode::kTraining;
    const double eps = c.getFloat("eps"), mom = c.getFloat("momentum");
    V x = e.convert(input, ct);
    V rm = rmIndex >= 0 ? c.input(static_cast<size_t>(rmIndex)) : nullptr;
    V rv = rmIndex >= 0 ? c.input(static_cast<size_t>(rmIndex) + 1) : nullptr;
    V w = perChannel(e, c.input(1), r, ct), b = perChannel(e, c.input(2), r, ct);
    std::vector<V> outs;
    if (training) {
      std::vector<int64_t> dims{0};
      for (int d = 2; d < r; ++d) dims.push_back(d);
      Moments m = moments(e, x, dims, eps);
      outs.push_back(e.convert(normalize(e, x, m.mean, m.rstd, w, b), dt));
      const Shape stat = c.outType(1).shape;
      outs.push_back(e.convert(e.reshape(m.mean, stat), st));
      outs.push_back(e.convert(e.reshape(m.rstd, stat), st));
      if (functional) {
        // Running variance takes the unbiased variance (0 / 0 = NaN for one element).
        SymExpr n(1);
        for (int64_t d : dims) n = n * e.shape(x)[static_cast<size_t>(d)];
        V unbiased = e.div(e.reshape(m.m2, stat), symScalar(e, n - SymExpr(1), ct));
        V keep = e.scalar(1.0 - mom, ct), step = e.scalar(mom, ct);
        V newMean = e.add(e.mul(keep, e.convert(rm, ct)), e.mul(step, e.reshape(m.mean, stat)));
        V newVar = e.add(e.mul(keep, e.convert(rv, ct)), e.mul(step, unbiased));
        outs.push_back(e.convert(newMean, e.dtype(rm)));
        outs.push_back(e.convert(newVar, e.dtype(rv)));
      }
    } else {
      V mean = perChannel(e, rm, r, ct);
      V var = perChannel(e, rv, r, ct);
      V rstd = e.div(e.scalar(1.0, ct), e.unary("sqrt", e.add(var, e.scalar(eps, ct))));
      outs.push_back(e.convert(normalize(e, x, mean, rstd, w, b), dt));
      outs.push_back(e.full(c.outType(1).shape, 0.0, st));
      outs.push_back(e.full(c.outType(2).shape, 0.0, st));
      if (functional) {
        outs.push_back(rm);
        outs.push_back(rv);
      }
    }
    return e.done(outs);
  };
}

Result layerNorm(Emitter& e, const DecompCall& c) {
  V input = c.input(0);
  const DType dt = e.dtype(input), ct = opmath(dt), st = c.outType(1).dtype;
  const int r = e.rank(input);
  const int axis = r - static_cast<int>(c.getSyms("normalized_shape").size());
  std::vector<int64_t> dims;
  SymExpr cols(1);
  for (int d = axis; d < r; ++d) {
    dims.push_back(d);
    cols = cols * e.shape(input)[static_cast<size_t>(d)];
  }
  const Shape stat = c.outType(1).shape;
  if (cols.constant() == 0) {  // as the reference: mean 0, rstd NaN
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return e.done({e.convert(input, dt), e.full(stat, 0.0, st), e.full(stat, nan, st)});
  }
  V x = e.convert(input, ct);
  Moments m = moments(e, x, dims, c.getFloat("eps"));
  V w = c.input(1) ? e.convert(c.input(1), ct) : nullptr, b = c.input(2) ? e.convert(c.input(2), ct) : nullptr;
  V out = normalize(e, x, m.mean, m.rstd, w, b);
  return e.done({e.convert(out, dt), e.convert(m.mean, st), e.convert(m.rstd, st)});
}

/// Group norm: x viewed as [N, G, C / G, HxW], statistics over the last two dims.
Result groupNorm(Emitter& e, const DecompCall& c) {
  V input = c.input(0);
  const DType dt = e.dtype(input), ct = opmath(dt), st = c.outType(1).dtype;
  const int64_t g = c.getInt("group");
  const SymExpr n = c.getSym("N"), ch = c.getSym("C"), hw = c.getSym("HxW");
  const SymExpr perGroup = SymExpr::floorDiv(ch, SymExpr(g));
  V x = e.reshape(e.convert(input, ct), {n, SymExpr(g), perGroup, hw});
  Moments m = moments(e, x, {2, 3}, c.getFloat("eps"));
  auto param = [&](V p) -> V {
    return p ? e.reshape(e.convert(p, ct), {SymExpr(1), SymExpr(g), perGroup, SymExpr(1)}) : nullptr;
  };
  V out = normalize(e, x, m.mean, m.rstd, param(c.input(1)), param(c.input(2)));
  const Shape stat = c.outType(1).shape;
  return e.done({e.convert(e.reshape(out, e.shape(input)), dt), e.convert(e.reshape(m.mean, stat), st),
                 e.convert(e.reshape(m.rstd, stat), st)});
}

/// softmax (or log_softmax) of x along dim, computed in x's dtype.
V softmaxOf(Emitter& e, V x, int64_t dim, bool log) {
  if (!e.ok()) return nullptr;
  if (e.shape(x)[static_cast<size_t>(dim)].constant() == 0) return x;  // nothing to normalize
  V z = e.sub(x, e.amax(x, {dim}, true));
  V sum = e.sum(e.unary("exp", z), {dim}, true);
  return log ? e.sub(z, e.unary("log", sum)) : e.div(e.unary("exp", z), sum);
}

Rule softmax(bool log) {
  return [log](Emitter& e, const DecompCall& c) -> Result {
    V input = c.input(0);
    const DType dt = c.outType().dtype, ct = opmath(dt);
    const Shape shape = e.shape(input);
    V x = e.convert(input, ct);
    if (shape.empty()) x = e.reshape(x, {SymExpr(1)});
    const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(x));
    return one(e, e.convert(e.reshape(softmaxOf(e, x, dim, log), shape), dt));
  };
}

/// _safe_softmax: softmax of self converted to dtype, 0 for rows whose inputs are all -inf
/// (judged before the conversion, as PyTorch).
Result safeSoftmax(Emitter& e, const DecompCall& c) {
  V input = c.input(0);
  const DType dt = c.outType().dtype, ct = opmath(dt);
  const Shape shape = e.shape(input);
  V self = shape.empty() ? e.reshape(input, {SymExpr(1)}) : input;
  const int64_t dim = e.wrapDim(c.getInt("dim"), e.rank(self));
  V x = e.convert(e.convert(self, dt), ct);  // the cast to dtype rounds first
  V out = softmaxOf(e, x, dim, false);
  if (ir::isFloating(e.dtype(self))) {
    V negInf = e.binary("eq", self, e.scalar(-std::numeric_limits<double>::infinity(), e.dtype(self)));
    V masked = e.reduce("amin", negInf, {dim}, true);
    out = e.where(masked, e.scalar(0.0, ct), out);
  }
  return one(e, e.convert(e.reshape(out, shape), dt));
}

}  // namespace

void addNormRules(DecompTable& t) {
  t.add("aten._native_batch_norm_legit_no_training", batchNorm(3, false, Mode::kEval));
  t.add("aten._native_batch_norm_legit_functional", batchNorm(3, true, Mode::kAttr));
  t.add("aten._native_batch_norm_legit.no_stats", batchNorm(-1, false, Mode::kTraining));
  t.add("aten.native_batch_norm", batchNorm(3, false, Mode::kAttr));
  t.add("aten.native_layer_norm", layerNorm);
  t.add("aten.native_group_norm", groupNorm);
  t.add("aten._softmax", softmax(false));
  t.add("aten._log_softmax", softmax(true));
  t.add("aten._safe_softmax", safeSoftmax);
}

}  // namespace plugsdk::decomp
