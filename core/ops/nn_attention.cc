// ATen-level nn ops, part 4: scaled_dot_product_attention and its CPU flash form, native_dropout
// (with a seeded, counter-based mask) and the losses (nll_loss_forward, mse_loss, binary_cross_entropy).
#include "core/ops/nn_common.h"

namespace plugsdk::ops::nn {
namespace {

/// Broadcasts two batch shapes, naming them in the error.
StatusOr<Shape> broadcastBatch(const InferContext& ctx, const Shape& a, const std::string& aName, const Shape& b,
                               const std::string& bName) {
  auto r = ir::broadcastShapes(a, b, ctx.assumptions());
  if (!r.isOk())
    return ctx.error("batch dims of " + aName + " and " + bName + " do not broadcast: " + r.status().message());
  return r;
}

/// attn_mask must broadcast to the attention weights' shape `weights` without growing it.
Status requireMaskBroadcasts(const InferContext& ctx, const TensorType* mask, const Shape& weights) {
  auto b = ir::broadcastShapes(mask->shape, weights, ctx.assumptions());
  bool ok = b.isOk() && mask->rank() <= static_cast<int>(weights.size());
  for (size_t i = 0; ok && i < weights.size(); ++i) {
    auto eq = ir::proveEQ((*b)[i], weights[i], ctx.assumptions());
    ok = eq && *eq;
  }
  if (!ok)
    return ctx.error("attn_mask " + mask->toString() + " does not broadcast to the attention weights shape " +
                     ir::shapeToString(weights));
  return Status::ok();
}

StatusOr<std::vector<TensorType>> inferSdpa(const InferContext& ctx) {
  const TensorType *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
  for (const auto& [t, name] : {std::pair{q, "query"}, std::pair{k, "key"}, std::pair{v, "value"}}) {
    if (t->rank() < 2)
      return ctx.error(std::string(name) + " must have at least 2 dims (..., seq, embed), got " + t->toString());
    RETURN_IF_ERROR(requireFloating(ctx, t, name));
  }
  if (q->dtype != k->dtype || q->dtype != v->dtype)
    return ctx.error("expected query, key and value to have the same dtype, got " + q->toString() + ", " +
                     k->toString() + " and " + v->toString());
  auto last = [](const TensorType* t, int fromEnd) { return t->shape[t->shape.size() - static_cast<size_t>(fromEnd)]; };
  RETURN_IF_ERROR(requireSameSize(ctx, last(q, 1), last(k, 1), "embedding dims (last dims) of query and key"));
  RETURN_IF_ERROR(requireSameSize(ctx, last(k, 2), last(v, 2), "sequence lengths (dim -2) of key and value"));
  const SymExpr l = last(q, 2), s = last(k, 2), ev = last(v, 1);
  Shape qb(q->shape.begin(), q->shape.end() - 2), kb(k->shape.begin(), k->shape.end() - 2),
      vb(v->shape.begin(), v->shape.end() - 2);
  if (ctx.getBool("enable_gqa") && !qb.empty()) {
    // Grouped-query attention: key/value heads (dim -3) repeat to the query's head count.
    for (auto& [b, name] : {std::pair<Shape*, std::string>{&kb, "key"}, std::pair<Shape*, std::string>{&vb, "value"}}) {
      if (b->empty()) continue;
      const SymExpr& hq = qb.back();
      const SymExpr hk = b->back();
      auto eq = ir::proveEQ(hq, hk, ctx.assumptions());
      if (eq && *eq) continue;
      auto div =
          hk.isZero() ? std::optional<bool>(false) : ir::proveEQ(SymExpr::mod(hq, hk), SymExpr(0), ctx.assumptions());
      if (!div || !*div)
        return ctx.error("enable_gqa: the number of " + name + " heads (" + hk.toString() +
                         ") must divide the number of query heads (" + hq.toString() + ")");
      b->back() = hq;
    }
  }
  ASSIGN_OR_RETURN(Shape kvb, broadcastBatch(ctx, kb, "key", vb, "value"));
  ASSIGN_OR_RETURN(Shape ob, broadcastBatch(ctx, qb, "query", kvb, "key/value"));
  if (mask) {
    if (mask->dtype != DType::kBool && !ir::isFloating(mask->dtype))
      return ctx.error("attn_mask must be bool (true = attend) or floating (added to the scores), got " +
                       mask->toString());
    if (ctx.getBool("is_causal")) return ctx.error("attn_mask must be none when is_causal is true");
    Shape weights = ob;
    weights.push_back(l);
    weights.push_back(s);
    RETURN_IF_ERROR(requireMaskBroadcasts(ctx, mask, weights));
  }
  double p = ctx.getFloat("dropout_p");
  if (!(p >= 0.0 && p <= 1.0)) return ctx.error("dropout_p must be in [0, 1], got " + ir::formatDouble(p));
  Shape out = ob;
  out.push_back(l);
  out.push_back(ev);
  return std::vector<TensorType>{TensorType{q->dtype, out, std::nullopt}};
}

/// PyTorch's CPU flash kernel: 4-D [batch, heads, seq, head size] inputs of one floating
/// dtype and one head size (batch and heads equal, no broadcasting), a floating mask (f32 or
/// the query's dtype) of rank 2 or 4. logsumexp is [batch, heads, query length] in the
/// accumulation type (f64 for f64 inputs, else f32), as torch's eager kernel returns it.
StatusOr<std::vector<TensorType>> inferFlashAttentionCpu(const InferContext& ctx) {
  const TensorType *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2), *mask = ctx.input(3);
  for (const auto& [t, name] : {std::pair{q, "query"}, std::pair{k, "key"}, std::pair{v, "value"}})
    if (t->rank() != 4)
      return ctx.error(std::string(name) + " must be 4-D [batch, heads, seq, head size], got " + t->toString());
  RETURN_IF_ERROR(requireFloating(ctx, q, "query"));
  RETURN_IF_ERROR(requireSameDType(ctx, q, "query", k, "key"));
  RETURN_IF_ERROR(requireSameDType(ctx, q, "query", v, "value"));
  for (const auto& [t, name] : {std::pair{k, std::string("key")}, std::pair{v, std::string("value")}}) {
    RETURN_IF_ERROR(requireSameSize(ctx, t->shape[0], q->shape[0], name + " dim 0 and query dim 0 (the batch)"));
    RETURN_IF_ERROR(requireSameSize(ctx, t->shape[1], q->shape[1], name + " dim 1 and query dim 1 (the heads)"));
    RETURN_IF_ERROR(requireSameSize(ctx, t->shape[3], q->shape[3], name + " dim 3 and query dim 3 (the head size)"));
  }
  RETURN_IF_ERROR(requireSameSize(ctx, v->shape[2], k->shape[2], "value dim 2 and key dim 2 (the key length)"));
  const SymExpr &batch = q->shape[0], &heads = q->shape[1], &l = q->shape[2];
  if (mask) {
    if (mask->dtype != DType::kF32 && mask->dtype != q->dtype)
      return ctx.error("attn_mask must be f32 or have the query's dtype (bool masks are not accepted), got " +
                       mask->toString() + " for query " + q->toString());
    if (mask->rank() != 2 && mask->rank() != 4)
      return ctx.error("attn_mask must be 2-D or 4-D, got " + mask->toString());
    RETURN_IF_ERROR(requireMaskBroadcasts(ctx, mask, {batch, heads, l, k->shape[2]}));
  }
  double p = ctx.getFloat("dropout_p");
  if (!(p >= 0.0 && p < 1.0)) return ctx.error("dropout_p must be in [0, 1), got " + ir::formatDouble(p));
  const DType lseType = q->dtype == DType::kF64 ? DType::kF64 : DType::kF32;
  return std::vector<TensorType>{TensorType{q->dtype, q->shape, std::nullopt},
                                 TensorType{lseType, {batch, heads, l}, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferNativeDropout(const InferContext& ctx) {
  const TensorType* in = ctx.input(0);
  RETURN_IF_ERROR(requireFloating(ctx, in, "input"));
  bool train = ctx.isNone("train") || ctx.getBool("train");
  double p = ctx.getFloat("p");
  if (train && !(p >= 0.0 && p <= 1.0)) return ctx.error("p must be in [0, 1], got " + ir::formatDouble(p));
  return std::vector<TensorType>{TensorType{in->dtype, in->shape, std::nullopt},
                                 TensorType{DType::kBool, in->shape, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferNllLoss(const InferContext& ctx) {
  const TensorType *self = ctx.input(0), *target = ctx.input(1), *weight = ctx.input(2);
  if (self->rank() < 1 || self->rank() > 2)
    return ctx.error("self must be 1-D (C) or 2-D (N, C), got " + self->toString());
  RETURN_IF_ERROR(requireFloating(ctx, self, "self"));
  if (target->dtype != DType::kI64 && target->dtype != DType::kU8)
    return ctx.error("target must be i64 (or u8) class indices, got " + target->toString());
  if (self->rank() == 1) {
    if (target->rank() != 0) return ctx.error("a 1-D self needs a 0-D target, got " + target->toString());
  } else {
    if (target->rank() != 1) return ctx.error("a 2-D self needs a 1-D target of N elements, got " + target->toString());
    RETURN_IF_ERROR(requireSameSize(ctx, self->shape[0], target->shape[0], "batch sizes of self (dim 0) and target"));
  }
  if (weight) {
    RETURN_IF_ERROR(requireVector(ctx, weight, "weight", self->shape.back(), "classes (self dim -1)"));
    RETURN_IF_ERROR(requireSameDType(ctx, self, "self", weight, "weight"));
  }
  RETURN_IF_ERROR(checkReduction(ctx));
  Shape out;
  if (ctx.getInt("reduction") == 0 && self->rank() == 2) out = {self->shape[0]};
  return std::vector<TensorType>{TensorType{self->dtype, out, std::nullopt}, TensorType{self->dtype, {}, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferMseLoss(const InferContext& ctx) {
  const TensorType *self = ctx.input(0), *target = ctx.input(1);
  DType dt = ir::promoteTypes(self->dtype, target->dtype);
  if (!ir::isFloating(dt))
    return ctx.error("needs a floating self or target, got " + self->toString() + " and " + target->toString());
  RETURN_IF_ERROR(checkReduction(ctx));
  auto shape = ir::broadcastShapes(self->shape, target->shape, ctx.assumptions());
  if (!shape.isOk()) return ctx.error("self and target: " + shape.status().message());
  Shape out = ctx.getInt("reduction") == 0 ? *shape : Shape{};
  return std::vector<TensorType>{TensorType{dt, out, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferBce(const InferContext& ctx) {
  const TensorType *self = ctx.input(0), *target = ctx.input(1), *weight = ctx.input(2);
  RETURN_IF_ERROR(requireFloating(ctx, self, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, self, "self", target, "target"));
  if (weight) RETURN_IF_ERROR(requireFloating(ctx, weight, "weight"));
  RETURN_IF_ERROR(checkReduction(ctx));
  auto shape = ir::broadcastAll({self, target, weight}, ctx.assumptions());
  if (!shape.isOk()) return ctx.error("self, target and weight: " + shape.status().message());
  Shape out = ctx.getInt("reduction") == 0 ? *shape : Shape{};
  return std::vector<TensorType>{TensorType{self->dtype, out, std::nullopt}};
}

}  // namespace

Status registerAttentionLossOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(reg.add(
      "aten.scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
      "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
      inferSdpa, "nn",
      "softmax(q @ k^T * scale + mask) @ v; bool mask true = attend; fully masked rows give 0; dropout_p > 0 has no "
      "reference kernel"));
  RETURN_IF_ERROR(
      reg.add("aten._scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
              "float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) "
              "-> (Tensor output, Tensor logsumexp)",
              inferFlashAttentionCpu, "nn",
              "attention as PyTorch's CPU flash kernel: 4-D inputs of one head size, a floating mask, output and "
              "logsumexp [B, H, L] (f64 for f64 inputs, else f32; 0 for fully masked rows); dropout_p > 0 has no "
              "reference kernel"));
  RETURN_IF_ERROR(
      reg.add("aten.native_dropout(Tensor input, float p, bool? train, *, int seed=0) -> (Tensor, Tensor)",
              inferNativeDropout, "nn",
              "dropout returning (out, bool keep mask); the mask is a deterministic function of (seed, element index): "
              "keep iff splitmix64 uniform < 1 - p"));
  RETURN_IF_ERROR(reg.add(
      "aten.nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
      "-> (Tensor output, Tensor total_weight)",
      inferNllLoss, "nn", "negative log-likelihood loss over log-probabilities (reduction 0 none, 1 mean, 2 sum)"));
  RETURN_IF_ERROR(reg.add("aten.mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", inferMseLoss, "nn",
                          "mean squared error (self and target broadcast)"));
  RETURN_IF_ERROR(
      reg.add("aten.binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
              inferBce, "nn", "binary cross entropy of probabilities in [0, 1] (log clamped at -100)"));
  return Status::ok();
}

}  // namespace plugsdk::ops::nn
