// ATen-level nn ops, part 3: normalization (batch norm in its eval / training / functional
// forms, layer norm, group norm) and _softmax / _log_softmax / _safe_softmax.
#include "core/ops/nn_common.h"

namespace plugsdk::ops::nn {
namespace {

/// Checks shared by the batch-norm variants; returns the dtype of the statistics outputs.
/// Inputs: 0 input, 1 weight?, 2 bias?, and the running stats at `rmIndex`, `rmIndex + 1`
/// (absent when `rmIndex` < 0 or the optional inputs are none).
StatusOr<DType> checkBatchNorm(const InferContext& ctx, int rmIndex) {
  const TensorType* input = ctx.input(0);
  if (input->rank() < 2) return ctx.error("input must have at least 2 dims (N, C, ...), got " + input->toString());
  RETURN_IF_ERROR(requireFloating(ctx, input, "input"));
  const SymExpr& c = input->shape[1];
  const TensorType* rm = rmIndex >= 0 ? ctx.input(static_cast<size_t>(rmIndex)) : nullptr;
  const TensorType* rv = rmIndex >= 0 ? ctx.input(static_cast<size_t>(rmIndex) + 1) : nullptr;
  std::vector<std::pair<const TensorType*, std::string>> params{
      {ctx.input(1), "weight"}, {ctx.input(2), "bias"}, {rm, "running_mean"}, {rv, "running_var"}};
  for (const auto& [p, name] : params)
    if (p) RETURN_IF_ERROR(requireVector(ctx, p, name, c, "channels (input dim 1)"));
  if ((rm == nullptr) != (rv == nullptr))
    return ctx.error("running_mean and running_var must both be given or both be none");
  if (!rm && !ctx.getBool("training"))
    return ctx.error("running_mean and running_var are required when training is false");
  if (ctx.getBool("training")) {
    if (input->numel().constant() == 0)
      return ctx.error("training needs at least one input element, got " + input->toString());
  }
  return normParamDType(ctx, input, params);
}

/// Output, save_mean, save_invstd: the statistics are [C] in training and [0] in eval.
std::vector<TensorType> batchNormOutputs(const TensorType* input, DType statType, bool training) {
  Shape stat{training ? input->shape[1] : SymExpr(0)};
  return {TensorType{input->dtype, input->shape, std::nullopt}, TensorType{statType, stat, std::nullopt},
          TensorType{statType, stat, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferBatchNormNoTraining(const InferContext& ctx) {
  ASSIGN_OR_RETURN(DType st, checkBatchNorm(ctx, 3));
  return batchNormOutputs(ctx.input(0), st, false);
}

StatusOr<std::vector<TensorType>> inferBatchNormFunctional(const InferContext& ctx) {
  ASSIGN_OR_RETURN(DType st, checkBatchNorm(ctx, 3));
  auto out = batchNormOutputs(ctx.input(0), st, ctx.getBool("training"));
  out.push_back(TensorType{ctx.input(3)->dtype, ctx.input(3)->shape, std::nullopt});
  out.push_back(TensorType{ctx.input(4)->dtype, ctx.input(4)->shape, std::nullopt});
  return out;
}

StatusOr<std::vector<TensorType>> inferBatchNormNoStats(const InferContext& ctx) {
  ASSIGN_OR_RETURN(DType st, checkBatchNorm(ctx, -1));
  return batchNormOutputs(ctx.input(0), st, true);
}

StatusOr<std::vector<TensorType>> inferNativeBatchNorm(const InferContext& ctx) {
  ASSIGN_OR_RETURN(DType st, checkBatchNorm(ctx, 3));
  return batchNormOutputs(ctx.input(0), st, ctx.getBool("training"));
}

StatusOr<std::vector<TensorType>> inferLayerNorm(const InferContext& ctx) {
  const TensorType *input = ctx.input(0), *weight = ctx.input(1), *bias = ctx.input(2);
  RETURN_IF_ERROR(requireFloating(ctx, input, "input"));
  std::vector<SymExpr> ns = ctx.getSyms("normalized_shape");
  if (ns.empty()) return ctx.error("normalized_shape must have at least one element");
  const std::string nsText = ir::shapeToString(ns);
  if (static_cast<size_t>(input->rank()) < ns.size())
    return ctx.error("normalized_shape " + nsText + " has more dims than the input " + input->toString());
  const size_t axis = static_cast<size_t>(input->rank()) - ns.size();
  for (size_t i = 0; i < ns.size(); ++i)
    RETURN_IF_ERROR(requireSameSize(ctx, input->shape[axis + i], ns[i],
                                    "input dim " + std::to_string(axis + i) + " and normalized_shape[" +
                                        std::to_string(i) + "] (input " + input->toString() + ", normalized_shape " +
                                        nsText + ")"));
  for (const auto& [p, name] : {std::pair{weight, std::string("weight")}, std::pair{bias, std::string("bias")}}) {
    if (!p) continue;
    if (p->shape.size() != ns.size())
      return ctx.error(name + " must have the normalized_shape " + nsText + ", got " + p->toString());
    for (size_t i = 0; i < ns.size(); ++i)
      RETURN_IF_ERROR(
          requireSameSize(ctx, p->shape[i], ns[i], name + " dim " + std::to_string(i) + " and normalized_shape"));
  }
  ASSIGN_OR_RETURN(DType st, normParamDType(ctx, input, {{weight, "weight"}, {bias, "bias"}}));
  Shape stat(input->shape.begin(), input->shape.begin() + static_cast<std::ptrdiff_t>(axis));
  stat.resize(input->shape.size(), SymExpr(1));
  return std::vector<TensorType>{TensorType{input->dtype, input->shape, std::nullopt},
                                 TensorType{st, stat, std::nullopt}, TensorType{st, stat, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferGroupNorm(const InferContext& ctx) {
  const TensorType *input = ctx.input(0), *weight = ctx.input(1), *bias = ctx.input(2);
  RETURN_IF_ERROR(requireFloating(ctx, input, "input"));
  if (input->rank() < 2) return ctx.error("input must have at least 2 dims (N, C, ...), got " + input->toString());
  SymExpr n = ctx.getSym("N"), c = ctx.getSym("C"), hw = ctx.getSym("HxW");
  int64_t group = ctx.getInt("group");
  if (group < 1) return ctx.error("group must be positive, got " + std::to_string(group));
  RETURN_IF_ERROR(requireSameSize(ctx, input->shape[0], n, "input dim 0 and N"));
  RETURN_IF_ERROR(requireSameSize(ctx, input->shape[1], c, "input dim 1 and C"));
  RETURN_IF_ERROR(requireSameSize(ctx, input->numel(), n * c * hw, "input numel and N * C * HxW"));
  auto div = ir::proveEQ(SymExpr::mod(c, SymExpr(group)), SymExpr(0), ctx.assumptions());
  if (!div || !*div)
    return ctx.error("the number of channels C = " + c.toString() +
                     " must be divisible by group = " + std::to_string(group) + (div ? "" : " (not provably)"));
  if (weight) RETURN_IF_ERROR(requireVector(ctx, weight, "weight", c, "C"));
  if (bias) RETURN_IF_ERROR(requireVector(ctx, bias, "bias", c, "C"));
  ASSIGN_OR_RETURN(DType st, normParamDType(ctx, input, {{weight, "weight"}, {bias, "bias"}}));
  Shape stat{n, SymExpr(group)};
  return std::vector<TensorType>{TensorType{input->dtype, input->shape, std::nullopt},
                                 TensorType{st, stat, std::nullopt}, TensorType{st, stat, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferSoftmax(const InferContext& ctx) {
  const TensorType* self = ctx.input(0);
  RETURN_IF_ERROR(requireFloating(ctx, self, "self"));
  auto d = ir::wrapDim(ctx.getInt("dim"), self->rank());
  if (!d.isOk()) return d.status().withContext(ctx.schema().name);
  DType out = self->dtype;
  if (ctx.getBool("half_to_float")) {
    if (self->dtype != DType::kF16) return ctx.error("half_to_float needs an f16 input, got " + self->toString());
    out = DType::kF32;
  }
  return std::vector<TensorType>{TensorType{out, self->shape, std::nullopt}};
}

/// _safe_softmax: with a dtype, the input (any dtype) is converted to it first, so only the
/// result dtype must be floating; without one the input must be.
StatusOr<std::vector<TensorType>> inferSafeSoftmax(const InferContext& ctx) {
  const TensorType* self = ctx.input(0);
  DType out = self->dtype;
  if (ctx.isNone("dtype")) {
    RETURN_IF_ERROR(requireFloating(ctx, self, "self (with dtype none)"));
  } else {
    out = ctx.getDType("dtype");
    if (!ir::isFloating(out)) return ctx.error("dtype must be floating, got " + std::string(ir::dtypeName(out)));
  }
  auto d = ir::wrapDim(ctx.getInt("dim"), self->rank());
  if (!d.isOk()) return d.status().withContext(ctx.schema().name);
  return std::vector<TensorType>{TensorType{out, self->shape, std::nullopt}};
}

}  // namespace

Status registerNormOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(
      reg.add("aten._native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
              "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
              inferBatchNormNoTraining, "nn",
              "batch norm with running statistics (eval); the two stats outputs are empty [0]"));
  RETURN_IF_ERROR(
      reg.add("aten._native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, "
              "Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) "
              "-> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)",
              inferBatchNormFunctional, "nn",
              "batch norm returning (out, save_mean, save_invstd, new running_mean, new running_var (unbiased))"));
  RETURN_IF_ERROR(
      reg.add("aten._native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, "
              "float momentum, float eps) -> (Tensor, Tensor, Tensor)",
              inferBatchNormNoStats, "nn", "training-mode batch norm without running statistics"));
  RETURN_IF_ERROR(
      reg.add("aten.native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
              "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
              inferNativeBatchNorm, "nn",
              "batch norm (out, save_mean, save_invstd); functional: running stats are not updated"));
  RETURN_IF_ERROR(
      reg.add("aten.native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
              "float eps) -> (Tensor, Tensor, Tensor)",
              inferLayerNorm, "nn", "layer norm over the trailing normalized_shape dims (out, mean, rstd)"));
  RETURN_IF_ERROR(
      reg.add("aten.native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
              "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
              inferGroupNorm, "nn", "group norm (out, mean [N, group], rstd [N, group])"));
  RETURN_IF_ERROR(reg.add("aten._softmax(Tensor self, int dim, bool half_to_float) -> Tensor", inferSoftmax, "nn",
                          "softmax along dim (max-subtracted); half_to_float turns an f16 input into an f32 result"));
  RETURN_IF_ERROR(reg.add("aten._log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", inferSoftmax, "nn",
                          "log-softmax along dim (max-subtracted)"));
  RETURN_IF_ERROR(reg.add("aten._safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                          inferSafeSoftmax, "nn",
                          "softmax along dim (self converted to dtype first) that gives 0 instead of NaN for rows "
                          "whose inputs are all -inf"));
  return Status::ok();
}

}  // namespace plugsdk::ops::nn
