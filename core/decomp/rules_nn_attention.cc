// Decompositions of attention, dropout and the losses into prims: both attention ops become
// prims.sdpa once their operands are broadcast to one batch shape (grouped-query heads repeated
// with broadcast_in_dim + reshape) and the mask to the weights' shape; native_dropout draws
// prims.rand with the node's seed (the reference's stream); the losses follow the reference
// kernels in core/exec/kernels_nn_attention.cc.
#include <cmath>
#include <limits>

#include "core/decomp/rules_nn_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// [..., H, S, X] key / value heads repeated in place to H * g heads (head h serves query
/// heads h * g ... h * g + g - 1, PyTorch's repeat_interleave for enable_gqa).
V repeatHeads(Emitter& e, V t, const SymExpr& queryHeads) {
  const Shape& s = e.shape(t);
  const size_t r = s.size();
  const SymExpr heads = s[r - 3];
  if (heads == SymExpr(1) || e.provedEQ(heads, queryHeads)) return t;
  Shape wide(s.begin(), s.end() - 2);
  wide.push_back(SymExpr::floorDiv(queryHeads, heads));
  wide.insert(wide.end(), s.end() - 2, s.end());
  std::vector<int64_t> dims;
  for (size_t i = 0; i < r; ++i) dims.push_back(static_cast<int64_t>(i < r - 2 ? i : i + 1));
  Shape merged(s.begin(), s.end() - 3);
  merged.insert(merged.end(), {queryHeads, s[r - 2], s[r - 1]});
  return e.reshape(e.broadcastInDim(t, wide, dims), merged);
}

/// `t` [..., A, B] broadcast to batch dims `batch` + [A, B].
V toBatch(Emitter& e, V t, const Shape& batch) {
  Shape s = batch;
  const Shape& ts = e.shape(t);
  s.insert(s.end(), ts.end() - 2, ts.end());
  return e.broadcastTo(t, s);
}

/// prims.sdpa on operands already of one batch shape; the mask is bool or q's dtype.
std::vector<V> sdpaPrim(Emitter& e, const DecompCall& c, V q, V k, V v, V mask, double dropout, bool causal) {
  ir::AttrMap attrs{{"dropout_p", Attribute::fromFloat(dropout)}, {"is_causal", Attribute::fromBool(causal)}};
  if (!c.isNone("scale")) attrs["scale"] = Attribute::fromFloat(c.getFloat("scale"));
  return e.apply("prims.sdpa", {q, k, v, mask}, attrs);
}

/// The mask broadcast to the weights [batch..., L, S], a floating one in q's dtype.
V weightsMask(Emitter& e, V mask, V q, const Shape& batch, const SymExpr& l, const SymExpr& s) {
  if (!mask) return nullptr;
  if (e.dtype(mask) != DType::kBool) mask = e.convert(mask, e.dtype(q));
  Shape w = batch;
  w.insert(w.end(), {l, s});
  return e.broadcastTo(mask, w);
}

Result sdpa(Emitter& e, const DecompCall& c) {
  V q = c.input(0), k = c.input(1), v = c.input(2);
  const double p = c.getFloat("dropout_p");
  if (p >= 1.0) return e.decline("scaled_dot_product_attention: prims.sdpa takes dropout_p < 1");
  const Shape& os = c.outType().shape;
  const Shape batch(os.begin(), os.end() - 2);
  if (c.getBool("enable_gqa") && e.rank(q) >= 3) {
    const SymExpr hq = e.shape(q)[static_cast<size_t>(e.rank(q) - 3)];
    if (e.rank(k) >= 3) k = repeatHeads(e, k, hq);
    if (e.rank(v) >= 3) v = repeatHeads(e, v, hq);
  }
  q = toBatch(e, q, batch);
  k = toBatch(e, k, batch);
  v = toBatch(e, v, batch);
  const Shape& qs = e.shape(q);
  const Shape& ks = e.shape(k);
  V mask = weightsMask(e, c.input(3), q, batch, qs[qs.size() - 2], ks[ks.size() - 2]);
  auto outs = sdpaPrim(e, c, q, k, v, mask, p, c.getBool("is_causal"));
  return e.done({outs.empty() ? nullptr : outs[0]});
}

/// The CPU flash form: 4-D operands of one batch and head count; outputs and logsumexp. A
/// mask with is_causal (prims.sdpa takes one or the other) gets -inf added above the
/// top-left aligned diagonal, as the reference adds the mask to a -inf score there.
Result flashAttention(Emitter& e, const DecompCall& c) {
  V q = c.input(0), k = c.input(1), v = c.input(2);
  const Shape& qs = e.shape(q);
  const Shape batch{qs[0], qs[1]};
  const SymExpr l = qs[2], s = e.shape(k)[2];
  V mask = weightsMask(e, c.input(3), q, batch, l, s);
  bool causal = c.getBool("is_causal");
  if (mask && causal) {
    V row = e.reshape(e.iota(l), {l, SymExpr(1)}), col = e.reshape(e.iota(s), {SymExpr(1), s});
    const DType dt = e.dtype(q);
    V above =
        e.where(e.binary("gt", col, row), e.scalar(-std::numeric_limits<double>::infinity(), dt), e.scalar(0.0, dt));
    mask = e.add(mask, above);
    causal = false;
  }
  return e.done(sdpaPrim(e, c, q, k, v, mask, c.getFloat("dropout_p"), causal));
}

/// native_dropout: element i is kept iff uniformAt(seed, i) < 1 - p (prims.rand in f64 with
/// the node's seed), kept ones scaled by 1 / (1 - p) (0 when p == 1).
Result nativeDropout(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const Shape& s = e.shape(x);
  const bool train = c.isNone("train") || c.getBool("train");
  if (!train) return e.done({x, e.full(s, 1.0, DType::kBool)});
  const DType dt = e.dtype(x), ct = opmath(dt);
  const double keep = 1.0 - c.getFloat("p");
  V u = e.op("prims.rand", {},
             {{"shape", Attribute::fromInts(s)},
              {"seed", Attribute::fromInt(c.getInt("seed"))},
              {"dtype", Attribute::fromDType(DType::kF64)}});
  V kept = e.binary("lt", u, e.scalar(keep, DType::kF64));
  V out = e.mul(e.mul(e.convert(x, ct), e.convert(kept, ct)), e.scalar(keep == 0 ? 0.0 : 1.0 / keep, ct));
  return e.done({e.convert(out, dt), kept});
}

/// sum (reduction 2) or mean (1) of all elements, or the elements broadcast to `shape` (0).
V reduceLoss(Emitter& e, V l, int64_t reduction, const Shape& shape) {
  if (reduction == 0) return e.broadcastTo(l, shape);
  V sum = e.sum(l, {});
  if (reduction == 2) return sum;
  return e.div(sum, symScalar(e, e.type(l).numel(), e.dtype(l)));
}

/// nll_loss_forward: -x[i, t_i] * w[t_i] over targets that are not ignore_index (gathered at
/// a safe index 0 for the ignored ones, then zeroed), summed, and divided by the summed
/// weights for the mean; reduction none of a 2-D input keeps one loss per row.
Result nllLoss(Emitter& e, const DecompCall& c) {
  V x = c.input(0), target = c.input(1), w = c.input(2);
  const DType dt = e.dtype(x);
  const int64_t reduction = c.getInt("reduction");
  const bool rows = e.rank(x) == 2;
  const SymExpr n = rows ? e.shape(x)[0] : SymExpr(1);
  if (!rows) x = e.reshape(x, {SymExpr(1), e.shape(x)[0]});
  V t = e.reshape(e.convert(target, DType::kI64), {n});
  V valid = e.binary("ne", t, symScalar(e, c.getSym("ignore_index"), DType::kI64));
  V safe = e.where(valid, t, e.scalar(0.0, DType::kI64));
  V picked =
      e.reshape(e.op("prims.gather", {x, e.reshape(safe, {n, SymExpr(1)})}, {{"dim", Attribute::fromInt(1)}}), {n});
  V zero = e.scalar(0.0, dt);
  V weight = w ? e.op("prims.gather", {w, safe}, {{"dim", Attribute::fromInt(0)}}) : e.scalar(1.0, dt);
  V term = e.unary("neg", picked);
  if (w) term = e.mul(term, weight);
  term = e.where(valid, term, zero);
  if (reduction == 0 && rows) return e.done({term, e.full({}, 0.0, dt)});
  V total = e.sum(e.where(valid, weight, zero), {});
  V out = e.sum(term, {});
  if (reduction == 1) out = e.div(out, total);
  return e.done({out, total});
}

Result mseLoss(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V d = e.sub(e.convert(c.input(0), dt), e.convert(c.input(1), dt));
  return one(e, reduceLoss(e, e.mul(d, d), c.getInt("reduction"), c.outType().shape));
}

/// binary_cross_entropy: (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100), times weight.
Result bceLoss(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = c.input(0), t = e.convert(c.input(1), dt);
  V floor = e.scalar(-100.0, dt);
  V logNot = e.binary("maximum", e.unary("log1p", e.unary("neg", x)), floor);
  V logX = e.binary("maximum", e.unary("log", x), floor);
  V l = e.sub(e.mul(e.sub(t, e.scalar(1.0, dt)), logNot), e.mul(t, logX));
  if (V w = c.input(2)) l = e.mul(l, e.convert(w, dt));
  return one(e, reduceLoss(e, l, c.getInt("reduction"), c.outType().shape));
}

}  // namespace

void addAttentionRules(DecompTable& t) {
  t.add("aten.scaled_dot_product_attention", sdpa);
  t.add("aten._scaled_dot_product_flash_attention_for_cpu", flashAttention);
  t.add("aten.native_dropout", nativeDropout);
  t.add("aten.nll_loss_forward", nllLoss);
  t.add("aten.mse_loss", mseLoss);
  t.add("aten.binary_cross_entropy", bceLoss);
}

}  // namespace plugsdk::decomp
