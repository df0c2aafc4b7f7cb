// ATen-level backward ops: activation gradients, softmax gradients, loss gradients and the
// embedding gradient (schemas and shape/dtype inference). Norms, convolution and pooling: backward_nn.cc.
#include <optional>

#include "core/ops/aten_ops.h"
#include "core/ops/backward_internal.h"

namespace plugsdk::ops {

namespace bwd {

namespace {

/// An elementwise gradient of (grad_output, x): broadcast shapes, promoted dtype (PyTorch's
/// TensorIterator binary-op rules). `floatOnly`: the op has no integer kernel in PyTorch.
ir::InferFn pointwiseGrad(bool floatOnly, const char* xName) {
  std::string x = xName;
  return [floatOnly, x](const InferContext& ctx) -> StatusOr<Types> {
    const TensorType* g = ctx.input(0);
    const TensorType* self = ctx.input(1);
    auto shape = ir::broadcastShapes(g->shape, self->shape, ctx.assumptions());
    if (!shape.isOk()) return opError(ctx, shape.status());
    DType dt = ir::resultType({{g, nullptr}, {self, nullptr}});
    if (dt == DType::kBool || (floatOnly && !ir::isFloating(dt)))
      return ctx.error(std::string("not implemented for dtype ") + std::string(ir::dtypeName(dt)) + " (grad_output " +
                       g->toString() + ", " + x + " " + self->toString() + "); a floating dtype is required");
    return Types{makeType(dt, *shape)};
  };
}

StatusOr<Types> inferGeluBackward(const InferContext& ctx) {
  std::string a = ctx.getString("approximate");
  if (a != "none" && a != "tanh") return ctx.error("approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
  return pointwiseGrad(true, "self")(ctx);
}

StatusOr<Types> inferLeakyReluBackward(const InferContext& ctx) {
  if (ctx.getBool("self_is_result") && ctx.getFloat("negative_slope") < 0)
    return ctx.error(
        "self_is_result (the in-place forward) with a negative negative_slope is not supported: the "
        "input cannot be recovered from the result");
  return pointwiseGrad(true, "self")(ctx);
}

/// _softmax_backward_data / _log_softmax_backward_data: grad_output and output of equal shape and
/// dtype. The result has grad_output's dtype, except for the half_to_float form (f32 grads of an
/// f16/bf16 softmax), where it has input_dtype.
StatusOr<Types> inferSoftmaxBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* out = ctx.input(1);
  RETURN_IF_ERROR(requireFloating(ctx, g, "grad_output"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_output", out, "output"));
  RETURN_IF_ERROR(requireSameShape(ctx, g, "grad_output", out, "output"));
  auto dim = ir::wrapDim(ctx.getInt("dim"), g->rank());
  if (!dim.isOk()) return opError(ctx, dim.status());
  DType inDt = ctx.getDType("input_dtype");
  if (!ir::isFloating(inDt))
    return ctx.error("input_dtype must be a floating dtype, got " + std::string(ir::dtypeName(inDt)));
  bool halfToFloat = g->dtype == DType::kF32 && (inDt == DType::kF16 || inDt == DType::kBF16);
  return Types{makeType(halfToFloat ? inDt : g->dtype, g->shape)};
}

StatusOr<Types> inferEmbeddingDenseBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* idx = ctx.input(1);
  RETURN_IF_ERROR(requireFloating(ctx, g, "grad_output"));
  if (idx->dtype != DType::kI64 && idx->dtype != DType::kI32)
    return ctx.error("indices must be i64 or i32, got " + idx->toString());
  if (g->rank() < 1) return ctx.error("grad_output must have at least 1 dim (the embedding dim), got " + g->toString());
  SymExpr numWeights = ctx.getSym("num_weights");
  if (auto c = numWeights.constant(); c && *c < 0)
    return ctx.error("num_weights must be >= 0, got " + std::to_string(*c));
  const SymExpr& d = g->shape.back();
  auto eq = ir::proveEQ(g->numel(), idx->numel() * d, ctx.assumptions());
  if (!eq || !*eq)
    return ctx.error("grad_output " + g->toString() + " must hold one row of size " + d.toString() +
                     " per index of indices " + idx->toString() + (eq ? "" : " (not provably)"));
  return Types{makeType(g->dtype, {numWeights, d})};
}

/// nll_loss_backward: self [N, C] with target [N], or self [C] with a 0-dim target.
StatusOr<Types> inferNllLossBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* self = ctx.input(1);
  const TensorType* target = ctx.input(2);
  const TensorType* weight = ctx.input(3);
  const TensorType* totalWeight = ctx.input(4);
  RETURN_IF_ERROR(checkReduction(ctx));
  RETURN_IF_ERROR(requireFloating(ctx, self, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_output", self, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, totalWeight, "total_weight", self, "self"));
  if (self->rank() < 1 || self->rank() > 2) return ctx.error("self must be 1-D or 2-D, got " + self->toString());
  if (target->dtype != DType::kI64 && target->dtype != DType::kU8)
    return ctx.error("target must be i64 (or u8), got " + target->toString());
  const SymExpr& classes = self->shape.back();
  if (self->rank() == 2) {
    if (target->rank() != 1) return ctx.error("target must be 1-D for a 2-D self, got " + target->toString());
    RETURN_IF_ERROR(requireSameSize(ctx, self->shape[0], target->shape[0], "self dim 0 and target size"));
  } else if (target->rank() != 0) {
    return ctx.error("target must be 0-D for a 1-D self, got " + target->toString());
  }
  if (weight) {
    RETURN_IF_ERROR(requireSameDType(ctx, weight, "weight", self, "self"));
    RETURN_IF_ERROR(requireVector(ctx, weight, "weight", classes, "the class count"));
  }
  RETURN_IF_ERROR(requireOneElement(ctx, totalWeight, "total_weight"));
  if (ctx.getInt("reduction") == 0 && self->rank() == 2) {
    if (g->rank() != 1) return ctx.error("grad_output must be 1-D [N] for reduction none, got " + g->toString());
    RETURN_IF_ERROR(requireSameSize(ctx, g->shape[0], self->shape[0], "grad_output size and self dim 0"));
  } else {
    RETURN_IF_ERROR(requireOneElement(ctx, g, "grad_output"));
  }
  return Types{makeType(self->dtype, self->shape)};
}

/// mse_loss_backward: the three inputs broadcast together; one dtype.
StatusOr<Types> inferMseLossBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* self = ctx.input(1);
  const TensorType* target = ctx.input(2);
  RETURN_IF_ERROR(checkReduction(ctx));
  if (self->dtype == DType::kBool) return ctx.error("self must not be bool, got " + self->toString());
  RETURN_IF_ERROR(requireSameDType(ctx, target, "target", self, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_output", self, "self"));
  auto shape = ir::broadcastAll({self, target, g}, ctx.assumptions());
  if (!shape.isOk()) return opError(ctx, shape.status());
  return Types{makeType(self->dtype, *shape)};
}

/// native_dropout_backward: grad_output * mask * scale, mask bool.
StatusOr<Types> inferDropoutBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* mask = ctx.input(1);
  RETURN_IF_ERROR(requireFloating(ctx, g, "grad_output"));
  if (mask->dtype != DType::kBool) return ctx.error("mask must be bool, got " + mask->toString());
  auto shape = ir::broadcastShapes(g->shape, mask->shape, ctx.assumptions());
  if (!shape.isOk()) return opError(ctx, shape.status());
  return Types{makeType(g->dtype, *shape)};
}

/// Clamps a slice bound like Python slicing: negative counts from the end, then [0, size].
/// nullopt when that depends on unknown sizes (the kernel checks the length at run time).
std::optional<SymExpr> clampSliceBound(const InferContext& ctx, const SymExpr& v, const SymExpr& size) {
  auto c = v.constant();
  if (c && *c >= (int64_t{1} << 62)) return size;  // FX writes "to the end" as INT64_MAX
  SymExpr e = c && *c < 0 ? size + v : v;
  auto nonNeg = ir::proveGE(e, SymExpr(0), ctx.assumptions());
  if (!nonNeg) return std::nullopt;
  if (!*nonNeg) return SymExpr(0);
  auto inside = ir::proveGE(size, e, ctx.assumptions());
  if (!inside) return std::nullopt;
  return *inside ? e : size;
}

/// The input_sizes attribute (the forward input's shape), with dim wrapped; grad_output must
/// match it on every dim but `dim`.
StatusOr<int64_t> checkScatterBack(const InferContext& ctx, const std::vector<SymExpr>& sizes, bool dropsDim) {
  const TensorType* g = ctx.input(0);
  if (sizes.empty()) return ctx.error("input_sizes must have at least one dim, got []");
  for (const SymExpr& d : sizes)
    if (auto c = d.constant(); c && *c < 0)
      return ctx.error("input_sizes must not be negative, got " + ctx.attr("input_sizes").toString());
  auto dim = ir::wrapDim(ctx.getInt("dim"), static_cast<int64_t>(sizes.size()));
  if (!dim.isOk()) return opError(ctx, dim.status());
  size_t want = dropsDim ? sizes.size() - 1 : sizes.size();
  if (static_cast<size_t>(g->rank()) != want)
    return ctx.error("grad_output " + g->toString() + " must have " + std::to_string(want) + " dims for input_sizes " +
                     ctx.attr("input_sizes").toString());
  for (size_t i = 0, j = 0; i < sizes.size(); ++i) {
    if (static_cast<int64_t>(i) == *dim) {
      if (!dropsDim) ++j;
      continue;
    }
    RETURN_IF_ERROR(
        requireSameSize(ctx, g->shape[j], sizes[i],
                        "grad_output dim " + std::to_string(j) + " and input_sizes[" + std::to_string(i) + "]"));
    ++j;
  }
  return *dim;
}

StatusOr<Types> inferSelectBackward(const InferContext& ctx) {
  std::vector<SymExpr> sizes = ctx.getSyms("input_sizes");
  ASSIGN_OR_RETURN(int64_t dim, checkScatterBack(ctx, sizes, true));
  const SymExpr& size = sizes[static_cast<size_t>(dim)];
  SymExpr index = ctx.getSym("index");
  // index must lie in [-size, size): an error when provably outside (run time checks the rest).
  auto below = ir::proveGE(index, -size, ctx.assumptions());
  auto above = ir::proveGE(index, size, ctx.assumptions());
  if ((below && !*below) || (above && *above))
    return ctx.error("index " + index.toString() + " is out of range for dim " + std::to_string(dim) + " of size " +
                     size.toString());
  return Types{makeType(ctx.input(0)->dtype, sizes)};
}

StatusOr<Types> inferSliceBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  std::vector<SymExpr> sizes = ctx.getSyms("input_sizes");
  ASSIGN_OR_RETURN(int64_t dim, checkScatterBack(ctx, sizes, false));
  const SymExpr& size = sizes[static_cast<size_t>(dim)];
  auto step = ctx.getSym("step").constant();
  if (!step || *step < 1) return ctx.error("step must be a constant >= 1, got " + ctx.attr("step").toString());
  auto start = clampSliceBound(ctx, ctx.getSym("start"), size);
  auto end = clampSliceBound(ctx, ctx.getSym("end"), size);
  std::optional<bool> nonEmpty;
  if (start && end) nonEmpty = ir::proveGE(*end, *start, ctx.assumptions());
  if (nonEmpty) {
    SymExpr len = *nonEmpty ? SymExpr::floorDiv(*end - *start + (*step - 1), SymExpr(*step)) : SymExpr(0);
    RETURN_IF_ERROR(requireSameSize(ctx, g->shape[static_cast<size_t>(dim)], len,
                                    "grad_output dim " + std::to_string(dim) + " and the slice length"));
  }
  return Types{makeType(g->dtype, sizes)};
}

}  // namespace

Status registerPointwiseLossBackwardOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(reg.add("aten.threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
                          pointwiseGrad(false, "self"), "backward",
                          "relu/threshold gradient: 0 where self <= threshold, else grad_output"));
  RETURN_IF_ERROR(reg.add("aten.gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor",
                          inferGeluBackward, "backward", "gelu gradient (exact erf form or tanh approximation)"));
  RETURN_IF_ERROR(reg.add("aten.tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
                          pointwiseGrad(true, "output"), "backward", "tanh gradient from its output: g * (1 - y^2)"));
  RETURN_IF_ERROR(reg.add("aten.sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
                          pointwiseGrad(true, "output"), "backward",
                          "sigmoid gradient from its output: g * (1 - y) * y"));
  RETURN_IF_ERROR(reg.add("aten.silu_backward(Tensor grad_output, Tensor self) -> Tensor", pointwiseGrad(true, "self"),
                          "backward", "silu gradient: g * s * (1 + x * (1 - s)), s = sigmoid(x)"));
  RETURN_IF_ERROR(
      reg.add("aten.hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
              pointwiseGrad(true, "self"), "backward",
              "hardtanh gradient: grad_output where min_val < self < max_val, else 0 (NaN too)"));
  RETURN_IF_ERROR(reg.add(
      "aten.leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor",
      inferLeakyReluBackward, "backward", "leaky_relu gradient: g where self > 0, else g * negative_slope"));
  RETURN_IF_ERROR(reg.add(
      "aten._softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
      inferSoftmaxBackward, "backward", "softmax gradient from its output: y * (g - sum(g * y, dim))"));
  RETURN_IF_ERROR(reg.add(
      "aten._log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
      inferSoftmaxBackward, "backward", "log_softmax gradient from its output: g - exp(y) * sum(g, dim)"));
  RETURN_IF_ERROR(reg.add(
      "aten.embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
      "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor",
      inferEmbeddingDenseBackward, "backward", "embedding weight gradient: rows of grad_output summed per index"));
  RETURN_IF_ERROR(
      reg.add("aten.nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
              "int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor",
              inferNllLossBackward, "backward", "nll_loss gradient: -weight[t] * g at the target class"));
  RETURN_IF_ERROR(
      reg.add("aten.mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
              inferMseLossBackward, "backward", "mse_loss gradient: 2 * (self - target) * g (/ numel for mean)"));
  RETURN_IF_ERROR(reg.add("aten.native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
                          inferDropoutBackward, "backward", "dropout gradient: grad_output * mask * scale"));
  RETURN_IF_ERROR(reg.add(
      "aten.select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
      inferSelectBackward, "backward", "select gradient: zeros of input_sizes with grad_output at index along dim"));
  RETURN_IF_ERROR(
      reg.add("aten.slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, "
              "SymInt end, SymInt step) -> Tensor",
              inferSliceBackward, "backward",
              "slice gradient: zeros of input_sizes with grad_output in the slice (python-style bounds)"));
  return Status::ok();
}

}  // namespace bwd

Status registerBackwardOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(bwd::registerPointwiseLossBackwardOps(reg));
  RETURN_IF_ERROR(bwd::registerNNBackwardOps(reg));
  return Status::ok();
}

}  // namespace plugsdk::ops
