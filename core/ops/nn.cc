// ATen-level nn ops: registerNNOps, and the matrix-product family (mm, bmm, addmm, baddbmm,
// dot, mv) with their shape checks. Other nn ops live in nn_conv.cc, nn_norm.cc, nn_attention.cc.
#include "core/ops/aten_ops.h"
#include "core/ops/nn_common.h"

namespace plugsdk::ops {

namespace nn {
namespace {

std::string dimsText(const TensorType* t) {
  std::string s;
  for (size_t i = 0; i < t->shape.size(); ++i) s += (i ? "x" : "") + t->shape[i].toString();
  return s;
}

/// Matrix operands: integer and floating dtypes, never bool (PyTorch has no bool matmul).
Status requireMatmulDType(const InferContext& ctx, const TensorType* t, const std::string& what) {
  if (t->dtype == DType::kBool) return ctx.error(what + " has dtype bool, which matrix products do not support");
  return Status::ok();
}

/// The inner dims `a` (of `aName`) and `b` (of `bName`) of a product must agree.
Status requireInner(const InferContext& ctx, const TensorType* a, const std::string& aName, const SymExpr& ad,
                    const TensorType* b, const std::string& bName, const SymExpr& bd) {
  auto eq = ir::proveEQ(ad, bd, ctx.assumptions());
  if (eq && *eq) return Status::ok();
  return ctx.error(aName + " and " + bName + " shapes cannot be multiplied (" + dimsText(a) + " and " + dimsText(b) +
                   "): inner dims " + ad.toString() + " and " + bd.toString() +
                   (eq ? " differ" : " are not provably equal"));
}

/// `self` of addmm/baddbmm must broadcast to `out` without growing it.
Status requireBroadcastsTo(const InferContext& ctx, const TensorType* self, const Shape& out) {
  auto bad = [&](const std::string& why) {
    return ctx.error("self " + self->toString() + " cannot be broadcast to the product shape " +
                     ir::shapeToString(out) + why);
  };
  if (self->rank() > static_cast<int>(out.size())) return bad(": too many dims");
  auto b = ir::broadcastShapes(self->shape, out, ctx.assumptions());
  if (!b.isOk()) return bad(" (" + b.status().message() + ")");
  for (size_t i = 0; i < out.size(); ++i) {
    auto eq = ir::proveEQ((*b)[i], out[i], ctx.assumptions());
    if (!eq || !*eq) return bad(": dim " + std::to_string(i) + " would become " + (*b)[i].toString());
  }
  return Status::ok();
}

StatusOr<std::vector<TensorType>> inferMm(const InferContext& ctx) {
  const TensorType *a = ctx.input(0), *b = ctx.input(1);
  RETURN_IF_ERROR(requireRank(ctx, a, "self", 2));
  RETURN_IF_ERROR(requireRank(ctx, b, "mat2", 2));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "self", b, "mat2"));
  RETURN_IF_ERROR(requireInner(ctx, a, "self", a->shape[1], b, "mat2", b->shape[0]));
  return std::vector<TensorType>{TensorType{a->dtype, {a->shape[0], b->shape[1]}, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferBmm(const InferContext& ctx) {
  const TensorType *a = ctx.input(0), *b = ctx.input(1);
  RETURN_IF_ERROR(requireRank(ctx, a, "self", 3));
  RETURN_IF_ERROR(requireRank(ctx, b, "mat2", 3));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "self", b, "mat2"));
  RETURN_IF_ERROR(
      requireSameSize(ctx, a->shape[0], b->shape[0], "batch sizes of self and mat2 (bmm does not broadcast)"));
  RETURN_IF_ERROR(requireInner(ctx, a, "self", a->shape[2], b, "mat2", b->shape[1]));
  return std::vector<TensorType>{TensorType{a->dtype, {a->shape[0], a->shape[1], b->shape[2]}, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferAddmm(const InferContext& ctx) {
  const TensorType *self = ctx.input(0), *a = ctx.input(1), *b = ctx.input(2);
  RETURN_IF_ERROR(requireRank(ctx, a, "mat1", 2));
  RETURN_IF_ERROR(requireRank(ctx, b, "mat2", 2));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "mat1"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "mat1", b, "mat2"));
  RETURN_IF_ERROR(requireSameDType(ctx, self, "self", b, "mat2"));
  RETURN_IF_ERROR(requireInner(ctx, a, "mat1", a->shape[1], b, "mat2", b->shape[0]));
  Shape out{a->shape[0], b->shape[1]};
  RETURN_IF_ERROR(requireBroadcastsTo(ctx, self, out));
  return std::vector<TensorType>{TensorType{a->dtype, out, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferBaddbmm(const InferContext& ctx) {
  const TensorType *self = ctx.input(0), *a = ctx.input(1), *b = ctx.input(2);
  RETURN_IF_ERROR(requireRank(ctx, a, "batch1", 3));
  RETURN_IF_ERROR(requireRank(ctx, b, "batch2", 3));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "batch1"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "batch1", b, "batch2"));
  RETURN_IF_ERROR(requireSameDType(ctx, self, "self", a, "batch1"));
  RETURN_IF_ERROR(requireSameSize(ctx, a->shape[0], b->shape[0], "batch sizes of batch1 and batch2"));
  RETURN_IF_ERROR(requireInner(ctx, a, "batch1", a->shape[2], b, "batch2", b->shape[1]));
  Shape out{a->shape[0], a->shape[1], b->shape[2]};
  RETURN_IF_ERROR(requireBroadcastsTo(ctx, self, out));
  return std::vector<TensorType>{TensorType{a->dtype, out, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferDot(const InferContext& ctx) {
  const TensorType *a = ctx.input(0), *b = ctx.input(1);
  RETURN_IF_ERROR(requireRank(ctx, a, "self", 1));
  RETURN_IF_ERROR(requireRank(ctx, b, "tensor", 1));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "self", b, "tensor"));
  RETURN_IF_ERROR(requireSameSize(ctx, a->shape[0], b->shape[0], "sizes of self and tensor"));
  return std::vector<TensorType>{TensorType{a->dtype, {}, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferMv(const InferContext& ctx) {
  const TensorType *a = ctx.input(0), *b = ctx.input(1);
  RETURN_IF_ERROR(requireRank(ctx, a, "self", 2));
  RETURN_IF_ERROR(requireRank(ctx, b, "vec", 1));
  RETURN_IF_ERROR(requireMatmulDType(ctx, a, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, a, "self", b, "vec"));
  RETURN_IF_ERROR(requireInner(ctx, a, "self", a->shape[1], b, "vec", b->shape[0]));
  return std::vector<TensorType>{TensorType{a->dtype, {a->shape[0]}, std::nullopt}};
}

}  // namespace

Status registerMatmulOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(
      reg.add("aten.mm(Tensor self, Tensor mat2) -> Tensor", inferMm, "nn", "matrix product of [n, m] and [m, p]"));
  RETURN_IF_ERROR(reg.add("aten.bmm(Tensor self, Tensor mat2) -> Tensor", inferBmm, "nn",
                          "batched matrix product of [b, n, m] and [b, m, p] (no broadcasting)"));
  RETURN_IF_ERROR(
      reg.add("aten.addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
              inferAddmm, "nn", "beta * self + alpha * (mat1 @ mat2); self broadcasts; beta = 0 ignores self"));
  RETURN_IF_ERROR(
      reg.add("aten.baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
              inferBaddbmm, "nn", "beta * self + alpha * bmm(batch1, batch2); self broadcasts"));
  RETURN_IF_ERROR(reg.add("aten.dot(Tensor self, Tensor tensor) -> Tensor", inferDot, "nn",
                          "inner product of two 1-D tensors (a 0-dim result)"));
  RETURN_IF_ERROR(
      reg.add("aten.mv(Tensor self, Tensor vec) -> Tensor", inferMv, "nn", "matrix-vector product of [n, m] and [m]"));
  return Status::ok();
}

}  // namespace nn

Status registerNNOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(nn::registerMatmulOps(reg));
  RETURN_IF_ERROR(nn::registerConvPoolOps(reg));
  RETURN_IF_ERROR(nn::registerNormOps(reg));
  RETURN_IF_ERROR(nn::registerAttentionLossOps(reg));
  return Status::ok();
}

}  // namespace plugsdk::ops
