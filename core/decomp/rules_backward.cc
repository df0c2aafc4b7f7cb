// Decompositions of the ATen-level backward ops into prims: activation, softmax and loss
// gradients, the embedding gradient, dropout, select and slice gradients. Norms,
// convolution, pooling and attention: rules_backward_nn.cc. Formulas follow the reference
// kernels (core/exec/kernels_backward.cc) in their evaluation order.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "core/decomp/rules_backward_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// What an elementwise gradient formula sees: grad_output and x in the compute dtype `cd`
/// (f32 for f16/bf16 results), the output dtype `dt` and a constant maker.
struct Grad {
  Emitter& e;
  const DecompCall& c;
  V g, x;
  DType dt, cd;
  V k(double v) const { return e.scalar(v, cd); }
  /// A Scalar attribute as the reference reads it: converted to the output dtype, then held in cd.
  V attr(const std::string& name) const { return e.convert(scalarOf(e, c, name, dt), cd); }
};

/// out = f(grad_output, x) over the broadcast shape. Integer inputs of a floating result convert
/// to the result dtype first (as the reference reads them), then to the compute dtype.
Rule pointwiseGrad(std::function<V(const Grad&)> f) {
  return [f = std::move(f)](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype, cd = opmath(dt);
    Grad gr{e, c, e.convert(e.convert(c.input(0), dt), cd), e.convert(e.convert(c.input(1), dt), cd), dt, cd};
    return one(e, e.broadcastTo(e.convert(f(gr), dt), c.outType().shape));
  };
}

V thresholdGrad(const Grad& a) {
  Emitter& e = a.e;
  return e.where(e.binary("le", a.x, a.attr("threshold")), a.k(0.0), a.g);
}

V geluGrad(const Grad& a) {
  Emitter& e = a.e;
  V x = a.x;
  if (a.c.getString("approximate") == "tanh") {
    const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
    V xSq = e.mul(x, x), xCube = e.mul(xSq, x);
    V inner = e.mul(a.k(kBeta), e.add(x, e.mul(a.k(kKappa), xCube)));
    V tanhInner = e.unary("tanh", inner);
    V left = e.mul(a.k(0.5), x), right = e.add(a.k(1.0), tanhInner);
    V leftDerivative = e.mul(a.k(0.5), right);
    V tanhDerivative = e.sub(a.k(1.0), e.mul(tanhInner, tanhInner));
    V innerDerivative = e.mul(a.k(kBeta), e.add(a.k(1.0), e.mul(a.k(3 * kKappa), xSq)));
    V rightDerivative = e.mul(e.mul(left, tanhDerivative), innerDerivative);
    return e.mul(a.g, e.add(leftDerivative, rightDerivative));
  }
  const double kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  V cdf = e.mul(a.k(0.5), e.add(a.k(1.0), e.unary("erf", e.mul(x, a.k(M_SQRT1_2)))));
  V pdf = e.mul(a.k(kBeta), e.unary("exp", e.mul(e.mul(x, x), a.k(-0.5))));
  return e.mul(a.g, e.add(cdf, e.mul(x, pdf)));
}

V siluGrad(const Grad& a) {
  Emitter& e = a.e;
  V sigmoid = e.div(a.k(1.0), e.add(a.k(1.0), e.unary("exp", e.unary("neg", a.x))));
  return e.mul(e.mul(a.g, sigmoid), e.add(a.k(1.0), e.mul(a.x, e.sub(a.k(1.0), sigmoid))));
}

/// Strictly inside (min_val, max_val) passes; NaN gives 0.
V hardtanhGrad(const Grad& a) {
  Emitter& e = a.e;
  V inside = e.binary("bitwise_and", e.binary("gt", a.x, a.attr("min_val")), e.binary("lt", a.x, a.attr("max_val")));
  return e.where(inside, a.g, a.k(0.0));
}

V leakyReluGrad(const Grad& a) {
  Emitter& e = a.e;
  return e.where(e.binary("gt", a.x, a.k(0.0)), a.g, e.mul(a.g, a.attr("negative_slope")));
}

/// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g), along dim. A 0-dim tensor
/// is one element.
template <bool kLog>
Result softmaxBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0), y = c.input(1);
  const Shape shape = e.shape(g);
  const DType cd = opmath(e.dtype(g));
  g = e.convert(g, cd);
  y = e.convert(y, cd);
  int64_t dim = c.getInt("dim");
  if (shape.empty()) {
    if (dim != 0 && dim != -1) return c.error("dim " + std::to_string(dim) + " is out of range for a 0-dim tensor");
    g = e.reshape(g, {SymExpr(1)});
    y = e.reshape(y, {SymExpr(1)});
    dim = 0;
  }
  V r = kLog ? e.sub(g, e.mul(e.unary("exp", y), e.sum(g, {dim}, true)))
             : e.mul(y, e.sub(g, e.sum(e.mul(g, y), {dim}, true)));
  return one(e, e.convert(e.reshape(r, shape), c.outType().dtype));
}

/// Rows of grad_output summed into a zero [num_weights, D] by index (scatter-add in index
/// order, as the reference); rows at padding_idx are dropped; scale_grad_by_freq divides each
/// row by its index's count.
Result embeddingDenseBackward(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype, cd = opmath(dt);
  V idx = c.input(1);
  const SymExpr numWeights = c.getSym("num_weights"), d = e.shape(c.input(0)).back();
  const SymExpr n = e.type(idx).numel();
  V flat = e.convert(e.reshape(idx, {n}), DType::kI64);
  V rows = e.convert(e.reshape(c.input(0), {n, d}), cd);
  if (c.getBool("scale_grad_by_freq")) {
    V counts = scatter(e, e.full({numWeights}, 0.0, DType::kI64), flat, e.full({n}, 1.0, DType::kI64), 0, "sum");
    V count = e.convert(e.op("prims.gather", {counts, flat}, {{"dim", Attribute::fromInt(0)}}), cd);
    rows = e.mul(rows, e.unsqueeze(e.div(e.scalar(1.0, cd), count), 1));
  }
  V padded = e.binary("eq", flat, symScalar(e, c.getSym("padding_idx"), DType::kI64));
  V src = e.where(e.unsqueeze(padded, 1), e.scalar(0.0, cd), rows);
  V index = e.broadcastInDim(flat, {n, d}, {0});
  V out = scatter(e, e.full({numWeights, d}, 0.0, cd), index, src, 0, "sum");
  return one(e, e.convert(out, dt));
}

/// One value per row at its target class (scatter into zeros); ignored rows stay 0.
Result nllLossBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0), self = c.input(1), weight = c.input(3), totalWeight = c.input(4);
  const DType dt = c.outType().dtype, cd = opmath(dt);
  const Shape& ss = e.shape(self);
  const SymExpr rows = ss.size() == 2 ? ss[0] : SymExpr(1), classes = ss.back();
  const int64_t reduction = c.getInt("reduction");
  const bool perRow = reduction == 0 && ss.size() == 2;
  V target = e.convert(e.reshape(c.input(2), {rows}), DType::kI64);
  V ignored = e.binary("eq", target, symScalar(e, c.getSym("ignore_index"), DType::kI64));
  V index = e.where(ignored, e.scalar(0.0, DType::kI64), target);  // in range for the gathers
  V w = weight ? e.op("prims.gather", {e.convert(weight, cd), index}, {{"dim", Attribute::fromInt(0)}}) : nullptr;
  V value;
  if (perRow) {
    V gr = e.convert(g, cd);
    value = w ? e.mul(e.unary("neg", w), gr) : e.unary("neg", gr);
  } else {
    V gv = e.convert(e.reshape(g, {}), cd);
    V grad = e.unary("neg", reduction == 1 ? e.div(gv, e.convert(e.reshape(totalWeight, {}), cd)) : gv);
    value = w ? e.mul(w, grad) : e.broadcastTo(grad, {rows});
  }
  V src = e.reshape(e.where(ignored, e.scalar(0.0, cd), value), {rows, SymExpr(1)});
  V out = scatter(e, e.full({rows, classes}, 0.0, cd), e.reshape(index, {rows, SymExpr(1)}), src, 1, "none");
  return one(e, e.convert(e.reshape(out, ss), dt));
}

/// norm * (self - target) * grad_output, norm = 2 / self.numel() for mean, else 2 (integers:
/// norm truncated to the dtype, then wrapping arithmetic).
Result mseLossBackward(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  const bool mean = c.getInt("reduction") == 1;
  const SymExpr numel = e.type(c.input(1)).numel();
  V norm;
  if (ir::isFloating(dt)) {
    norm = mean ? ratio(e, 2.0, numel, dt) : e.scalar(2.0, dt);
  } else if (!mean) {
    norm = e.scalar(2.0, dt);
  } else if (auto n = numel.constant()) {
    norm = e.full({}, Attribute::fromInt(*n == 0 ? 0 : static_cast<int64_t>(2.0 / static_cast<double>(*n))), dt);
  } else {
    return e.decline(
        "integer mse_loss_backward with reduction mean needs a constant element count (2 / numel is "
        "truncated at compile time), got " +
        numel.toString());
  }
  V x = e.convert(c.input(1), dt), t = e.convert(c.input(2), dt), g = e.convert(c.input(0), dt);
  return one(e, e.broadcastTo(e.mul(e.mul(norm, e.sub(x, t)), g), c.outType().shape));
}

/// grad_output * mask * scale (a dropped NaN or inf gradient still gives NaN).
Result dropoutBackward(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype, cd = opmath(dt);
  V g = e.convert(c.input(0), cd), m = e.convert(c.input(1), cd);
  V r = e.mul(e.mul(g, m), e.scalar(c.getFloat("scale"), cd));
  return one(e, e.broadcastTo(e.convert(r, dt), c.outType().shape));
}

/// A python-style slice bound clamped to [0, size]; nullopt when that depends on unknown sizes.
std::optional<SymExpr> clampBound(const Emitter& e, const SymExpr& v, const SymExpr& size) {
  auto c = v.constant();
  if (c && *c >= (int64_t{1} << 62)) return size;  // "to the end"
  SymExpr x = c && *c < 0 ? size + v : v;
  if (!e.provedGE(x, SymExpr(0))) return e.provedGE(SymExpr(-1), x) ? std::optional<SymExpr>(SymExpr(0)) : std::nullopt;
  if (e.provedGE(size, x)) return x;
  if (e.provedGE(x, size)) return size;
  return std::nullopt;
}

/// grad_output with a unit dim at `dim`, padded with zeros to input_sizes.
Result selectBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0);
  const Shape sizes = c.getSyms("input_sizes");
  const int64_t dim = e.wrapDim(c.getInt("dim"), static_cast<int64_t>(sizes.size()));
  if (!e.ok()) return e.status();
  const SymExpr& size = sizes[static_cast<size_t>(dim)];
  SymExpr index = c.getSym("index");
  if (!e.provedGE(index, SymExpr(0))) {
    if (!e.provedGE(SymExpr(-1), index))
      return e.decline("select_backward needs an index of known sign, got " + index.toString());
    index = index + size;
  }
  Shape unit = e.shape(g);
  unit.insert(unit.begin() + dim, SymExpr(1));
  std::vector<SymExpr> low(sizes.size(), SymExpr(0)), high(sizes.size(), SymExpr(0));
  low[static_cast<size_t>(dim)] = index;
  high[static_cast<size_t>(dim)] = size - index - 1;
  return one(e, e.pad(e.reshape(g, unit), low, high, zeroOf(e.dtype(g))));
}

/// grad_output padded with zeros to input_sizes: low = start, step - 1 zeros between
/// elements (interior padding), the rest after.
Result sliceBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0);
  const Shape sizes = c.getSyms("input_sizes");
  const int64_t dim = e.wrapDim(c.getInt("dim"), static_cast<int64_t>(sizes.size()));
  if (!e.ok()) return e.status();
  const auto d = static_cast<size_t>(dim);
  const SymExpr& size = sizes[d];
  const int64_t step = c.getSym("step").constant().value_or(1);
  const SymExpr len = e.shape(g)[d];
  if (len.constant() == 0) return one(e, e.full(sizes, zeroOf(e.dtype(g)), e.dtype(g)));
  auto start = clampBound(e, c.getSym("start"), size);
  if (!start)
    return e.decline("slice_backward cannot clamp start " + c.getSym("start").toString() + " to [0, " +
                     size.toString() + "] (unknown sign)");
  if (step > 1 && !e.provedGE(len, SymExpr(1)))
    return e.decline("slice_backward with step > 1 needs a slice length provably >= 1, got " + len.toString());
  std::vector<SymExpr> low(sizes.size(), SymExpr(0)), high(sizes.size(), SymExpr(0));
  std::vector<int64_t> interior(sizes.size(), 0);
  low[d] = *start;
  interior[d] = step - 1;
  high[d] = step > 1 ? size - *start - (len - 1) * step - 1 : size - *start - len;
  return one(e, e.op("prims.pad", {g},
                     {{"padding_value", zeroOf(e.dtype(g))},
                      {"low", Attribute::fromInts(low)},
                      {"high", Attribute::fromInts(high)},
                      {"interior", Attribute::fromInts(interior)}}));
}

}  // namespace

void addBackwardRules(DecompTable& t) {
  t.add("aten.threshold_backward", [](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    if (ir::isFloating(dt)) return pointwiseGrad(thresholdGrad)(e, c);
    // Integers: exact, in the result dtype.
    V g = e.convert(c.input(0), dt), x = e.convert(c.input(1), dt);
    V r = e.where(e.binary("le", x, scalarOf(e, c, "threshold", dt)), e.scalar(0.0, dt), g);
    return one(e, e.broadcastTo(r, c.outType().shape));
  });
  t.add("aten.gelu_backward", pointwiseGrad(geluGrad));
  t.add("aten.tanh_backward",
        pointwiseGrad([](const Grad& a) { return a.e.mul(a.g, a.e.sub(a.k(1.0), a.e.mul(a.x, a.x))); }));
  t.add("aten.sigmoid_backward",
        pointwiseGrad([](const Grad& a) { return a.e.mul(a.e.mul(a.g, a.e.sub(a.k(1.0), a.x)), a.x); }));
  t.add("aten.silu_backward", pointwiseGrad(siluGrad));
  t.add("aten.hardtanh_backward", pointwiseGrad(hardtanhGrad));
  t.add("aten.leaky_relu_backward", pointwiseGrad(leakyReluGrad));
  t.add("aten._softmax_backward_data", softmaxBackward<false>);
  t.add("aten._log_softmax_backward_data", softmaxBackward<true>);
  t.add("aten.embedding_dense_backward", embeddingDenseBackward);
  t.add("aten.nll_loss_backward", nllLossBackward);
  t.add("aten.mse_loss_backward", mseLossBackward);
  t.add("aten.native_dropout_backward", dropoutBackward);
  t.add("aten.select_backward", selectBackward);
  t.add("aten.slice_backward", sliceBackward);
  addBackwardNNRules(t);
}

}  // namespace plugsdk::decomp
