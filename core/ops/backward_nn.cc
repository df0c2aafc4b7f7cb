// ATen-level backward ops of the normalization, convolution and pooling layers: schemas and
// shape/dtype inference. The three-output ops always compute all outputs (see checkOutputMask).
#include <optional>

#include "core/ops/backward_internal.h"

namespace plugsdk::ops::bwd {

namespace {

std::string dimText(size_t i) { return std::to_string(i); }

/// The dtype of a norm op's parameter gradients: the weight's dtype if given, else the input's.
/// Parameters must match the input dtype, or be f32 for an f16/bf16 input (mixed precision).
Status checkParamDType(const InferContext& ctx, const TensorType* input, const TensorType* p, const std::string& what) {
  if (!p) return Status::ok();
  bool reduced = input->dtype == DType::kF16 || input->dtype == DType::kBF16;
  if (p->dtype == input->dtype || (reduced && p->dtype == DType::kF32)) return Status::ok();
  return ctx.error(what + " has dtype " + std::string(ir::dtypeName(p->dtype)) + " but input is " + input->toString() +
                   " (parameters must match the input dtype, or be f32 for an f16/bf16 input)");
}

// ---- native_layer_norm_backward ----------------------------------------------------------

StatusOr<Types> inferLayerNormBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* x = ctx.input(1);
  const TensorType* mean = ctx.input(2);
  const TensorType* rstd = ctx.input(3);
  const TensorType* weight = ctx.input(4);
  const TensorType* bias = ctx.input(5);
  RETURN_IF_ERROR(checkOutputMask(ctx));
  RETURN_IF_ERROR(requireFloating(ctx, x, "input"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_out", x, "input"));
  RETURN_IF_ERROR(requireSameShape(ctx, g, "grad_out", x, "input"));
  RETURN_IF_ERROR(requireFloating(ctx, mean, "mean"));
  RETURN_IF_ERROR(requireFloating(ctx, rstd, "rstd"));
  std::vector<SymExpr> norm = ctx.getSyms("normalized_shape");
  if (norm.size() > x->shape.size())
    return ctx.error("normalized_shape " + ctx.attr("normalized_shape").toString() + " has more dims than input " +
                     x->toString());
  size_t lead = x->shape.size() - norm.size();
  for (size_t i = 0; i < norm.size(); ++i)
    RETURN_IF_ERROR(requireSameSize(ctx, x->shape[lead + i], norm[i],
                                    "input dim " + dimText(lead + i) + " and normalized_shape[" + dimText(i) + "]"));
  SymExpr rows(1);
  for (size_t i = 0; i < lead; ++i) rows = rows * x->shape[i];
  RETURN_IF_ERROR(requireSameSize(ctx, mean->numel(), rows, "mean element count and the number of normalized rows"));
  RETURN_IF_ERROR(requireSameSize(ctx, rstd->numel(), rows, "rstd element count and the number of normalized rows"));
  for (const auto& [p, name] : {std::pair{weight, std::string("weight")}, std::pair{bias, std::string("bias")}}) {
    if (!p) continue;
    RETURN_IF_ERROR(checkParamDType(ctx, x, p, name));
    bool same = p->shape.size() == norm.size();
    for (size_t i = 0; same && i < norm.size(); ++i) {
      auto eq = ir::proveEQ(p->shape[i], norm[i], ctx.assumptions());
      same = eq && *eq;
    }
    if (!same)
      return ctx.error(name + " " + p->toString() + " must have the normalized_shape " +
                       ctx.attr("normalized_shape").toString());
  }
  return Types{makeType(x->dtype, x->shape), makeType(weight ? weight->dtype : x->dtype, norm),
               makeType(bias ? bias->dtype : (weight ? weight->dtype : x->dtype), norm)};
}

// ---- native_batch_norm_backward ----------------------------------------------------------

StatusOr<Types> inferBatchNormBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* x = ctx.input(1);
  RETURN_IF_ERROR(checkOutputMask(ctx));
  RETURN_IF_ERROR(requireFloating(ctx, x, "input"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_out", x, "input"));
  RETURN_IF_ERROR(requireSameShape(ctx, g, "grad_out", x, "input"));
  if (x->rank() < 2) return ctx.error("input must have at least 2 dims [N, C, ...], got " + x->toString());
  const SymExpr& c = x->shape[1];
  const char* names[] = {"weight", "running_mean", "running_var", "save_mean", "save_invstd"};
  for (size_t i = 0; i < 5; ++i) {
    const TensorType* p = ctx.input(2 + i);
    if (!p) continue;
    RETURN_IF_ERROR(checkParamDType(ctx, x, p, names[i]));
    RETURN_IF_ERROR(requireVector(ctx, p, names[i], c, "the channel count (input dim 1)"));
  }
  bool train = ctx.getBool("train");
  if (train && (!ctx.input(5) || !ctx.input(6)))
    return ctx.error("train = true needs save_mean and save_invstd (the batch statistics of the forward)");
  if (!train && (!ctx.input(3) || !ctx.input(4))) return ctx.error("train = false needs running_mean and running_var");
  const TensorType* weight = ctx.input(2);
  DType pdt = weight ? weight->dtype : x->dtype;
  return Types{makeType(x->dtype, x->shape), makeType(pdt, {c}), makeType(pdt, {c})};
}

// ---- convolution_backward ----------------------------------------------------------------

/// A list attribute with exactly `n` entries.
StatusOr<std::vector<SymExpr>> exactList(const InferContext& ctx, const std::string& name, size_t n) {
  std::vector<SymExpr> v = ctx.getSyms(name);
  if (v.size() != n)
    return ctx.error(name + " must have " + std::to_string(n) + " entries (one per spatial dim), got " +
                     ctx.attr(name).toString());
  return v;
}

Status requireNonNegative(const InferContext& ctx, const SymExpr& v, int64_t lo, const std::string& what) {
  auto ge = ir::proveGE(v, SymExpr(lo), ctx.assumptions());
  if (ge && *ge) return Status::ok();
  return ctx.error(what + " must be >= " + std::to_string(lo) + ", got " + v.toString() +
                   (ge ? "" : " (not provably)"));
}

StatusOr<Types> inferConvolutionBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* x = ctx.input(1);
  const TensorType* w = ctx.input(2);
  RETURN_IF_ERROR(checkOutputMask(ctx));
  RETURN_IF_ERROR(requireFloating(ctx, x, "input"));
  RETURN_IF_ERROR(requireSameDType(ctx, w, "weight", x, "input"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_output", x, "input"));
  if (x->rank() < 3)
    return ctx.error("input must be [N, C, spatial...] with at least one spatial dim, got " + x->toString());
  if (w->rank() != x->rank())
    return ctx.error("weight " + w->toString() + " must have the rank of input " + x->toString());
  if (g->rank() != x->rank())
    return ctx.error("grad_output " + g->toString() + " must have the rank of input " + x->toString());
  size_t sp = x->shape.size() - 2;
  ASSIGN_OR_RETURN(auto stride, exactList(ctx, "stride", sp));
  ASSIGN_OR_RETURN(auto padding, exactList(ctx, "padding", sp));
  ASSIGN_OR_RETURN(auto dilation, exactList(ctx, "dilation", sp));
  bool transposed = ctx.getBool("transposed");
  std::vector<SymExpr> outPad = ctx.getSyms("output_padding");
  if (transposed || !outPad.empty()) {
    ASSIGN_OR_RETURN(outPad, exactList(ctx, "output_padding", sp));
  }
  for (size_t i = 0; i < sp; ++i) {
    RETURN_IF_ERROR(requireNonNegative(ctx, stride[i], 1, "stride[" + dimText(i) + "]"));
    RETURN_IF_ERROR(requireNonNegative(ctx, dilation[i], 1, "dilation[" + dimText(i) + "]"));
    RETURN_IF_ERROR(requireNonNegative(ctx, padding[i], 0, "padding[" + dimText(i) + "]"));
    if (transposed) RETURN_IF_ERROR(requireNonNegative(ctx, outPad[i], 0, "output_padding[" + dimText(i) + "]"));
  }
  auto groupsC = ctx.getSym("groups").constant();
  if (!groupsC || *groupsC < 1)
    return ctx.error("groups must be a constant >= 1, got " + ctx.attr("groups").toString());
  SymExpr groups(*groupsC);
  // Channels: non-transposed weight [Cout, Cin/groups, k...]; transposed [Cin, Cout/groups, k...].
  SymExpr cin = x->shape[1], cout;
  if (!transposed) {
    cout = w->shape[0];
    RETURN_IF_ERROR(requireSameSize(ctx, w->shape[1] * groups, cin, "weight dim 1 * groups and input channels"));
    RETURN_IF_ERROR(requireSameSize(ctx, SymExpr::mod(cout, groups), SymExpr(0),
                                    "weight dim 0 (output channels) modulo groups and 0"));
  } else {
    cout = w->shape[1] * groups;
    RETURN_IF_ERROR(requireSameSize(ctx, w->shape[0], cin, "weight dim 0 and input channels"));
    RETURN_IF_ERROR(requireSameSize(ctx, SymExpr::mod(cin, groups), SymExpr(0), "input channels modulo groups and 0"));
  }
  RETURN_IF_ERROR(requireSameSize(ctx, g->shape[0], x->shape[0], "grad_output dim 0 and input dim 0 (batch)"));
  RETURN_IF_ERROR(requireSameSize(ctx, g->shape[1], cout, "grad_output dim 1 and the output channels"));
  for (size_t i = 0; i < sp; ++i) {
    const SymExpr& in = x->shape[2 + i];
    SymExpr span = dilation[i] * (w->shape[2 + i] - 1);
    SymExpr out = transposed ? (in - 1) * stride[i] - padding[i] * 2 + span + outPad[i] + 1
                             : SymExpr::floorDiv(in + padding[i] * 2 - span - 1, stride[i]) + 1;
    RETURN_IF_ERROR(requireSameSize(ctx, g->shape[2 + i], out,
                                    "grad_output dim " + dimText(2 + i) + " and the convolution's output size"));
  }
  if (!ctx.isNone("bias_sizes")) {
    std::vector<SymExpr> bs = ctx.getSyms("bias_sizes");
    if (bs.size() != 1)
      return ctx.error("bias_sizes must be [output channels], got " + ctx.attr("bias_sizes").toString());
    RETURN_IF_ERROR(requireSameSize(ctx, bs[0], cout, "bias_sizes[0] and the output channels"));
  }
  return Types{makeType(x->dtype, x->shape), makeType(w->dtype, w->shape), makeType(g->dtype, {cout})};
}

// ---- pooling -----------------------------------------------------------------------------

struct Pool2d {
  int64_t k[2], s[2], p[2], d[2];
};

/// Reads a 1- or 2-entry list (one entry means both dims); `empty` is used for [] when given.
Status readPair(const InferContext& ctx, const std::string& name, int64_t out[2], const int64_t* empty = nullptr) {
  const ir::Attribute& a = ctx.attr(name);
  auto v = a.asIntList();
  if (!v) return ctx.error(name + " must be a list of constants, got " + a.toString());
  if (v->empty() && empty) {
    out[0] = empty[0];
    out[1] = empty[1];
    return Status::ok();
  }
  if (v->size() != 1 && v->size() != 2) return ctx.error(name + " must have 1 or 2 entries, got " + a.toString());
  out[0] = (*v)[0];
  out[1] = v->back();
  return Status::ok();
}

StatusOr<Pool2d> readPool2d(const InferContext& ctx, bool hasDilation) {
  Pool2d q{};
  RETURN_IF_ERROR(readPair(ctx, "kernel_size", q.k));
  RETURN_IF_ERROR(readPair(ctx, "stride", q.s, q.k));
  RETURN_IF_ERROR(readPair(ctx, "padding", q.p));
  q.d[0] = q.d[1] = 1;
  if (hasDilation) RETURN_IF_ERROR(readPair(ctx, "dilation", q.d));
  for (int i = 0; i < 2; ++i) {
    std::string which = i == 0 ? " (height)" : " (width)";
    if (q.k[i] <= 0) return ctx.error("kernel_size must be > 0, got " + std::to_string(q.k[i]) + which);
    if (q.s[i] <= 0) return ctx.error("stride must be > 0, got " + std::to_string(q.s[i]) + which);
    if (q.d[i] <= 0) return ctx.error("dilation must be > 0, got " + std::to_string(q.d[i]) + which);
    if (q.p[i] < 0) return ctx.error("padding must be >= 0, got " + std::to_string(q.p[i]) + which);
    int64_t halfKernel = hasDilation ? ((q.k[i] - 1) * q.d[i] + 1) / 2 : q.k[i] / 2;
    if (q.p[i] > halfKernel)
      return ctx.error("padding must be at most half of the (effective) kernel size, got padding " +
                       std::to_string(q.p[i]) + ", kernel_size " + std::to_string(q.k[i]) + which);
  }
  return q;
}

/// PyTorch's pooling_output_shape, on symbolic sizes.
StatusOr<SymExpr> pooledSize(const InferContext& ctx, const SymExpr& in, const Pool2d& q, int i, bool ceilMode) {
  SymExpr num = in + 2 * q.p[i] - q.d[i] * (q.k[i] - 1) - 1 + (ceilMode ? q.s[i] - 1 : 0);
  SymExpr out = SymExpr::floorDiv(num, SymExpr(q.s[i])) + 1;
  if (ceilMode) {
    // The last window must start inside the input or the left padding.
    auto ge = ir::proveGE((out - 1) * q.s[i], in + q.p[i], ctx.assumptions());
    if (!ge) return ctx.error("cannot decide the ceil_mode output size for the symbolic input size " + in.toString());
    if (*ge) out = out - 1;
  }
  auto pos = ir::proveGE(out, SymExpr(1), ctx.assumptions());
  if (pos && !*pos)
    return ctx.error("pooled output size " + out.toString() + " is too small for input size " + in.toString());
  return out;
}

/// grad_output (and indices) against self and the pooling parameters.
Status checkPooledGrad(const InferContext& ctx, const TensorType* g, const TensorType* self, const Pool2d* q,
                       bool ceilMode) {
  RETURN_IF_ERROR(requireFloating(ctx, self, "self"));
  RETURN_IF_ERROR(requireSameDType(ctx, g, "grad_output", self, "self"));
  if (self->rank() != 3 && self->rank() != 4)
    return ctx.error("self must be 3-D [C, H, W] or 4-D [N, C, H, W], got " + self->toString());
  if (g->rank() != self->rank())
    return ctx.error("grad_output " + g->toString() + " must have the rank of self " + self->toString());
  size_t r = self->shape.size();
  for (size_t i = 0; i + 2 < r; ++i)
    RETURN_IF_ERROR(requireSameSize(ctx, g->shape[i], self->shape[i],
                                    "grad_output dim " + dimText(i) + " and self dim " + dimText(i)));
  if (!q) return Status::ok();
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(SymExpr out, pooledSize(ctx, self->shape[r - 2 + i], *q, i, ceilMode));
    RETURN_IF_ERROR(requireSameSize(ctx, g->shape[r - 2 + i], out,
                                    "grad_output dim " + dimText(r - 2 + i) + " and the pooled output size"));
  }
  return Status::ok();
}

StatusOr<Types> inferMaxPool2dBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* self = ctx.input(1);
  const TensorType* indices = ctx.input(2);
  ASSIGN_OR_RETURN(Pool2d q, readPool2d(ctx, true));
  RETURN_IF_ERROR(checkPooledGrad(ctx, g, self, &q, ctx.getBool("ceil_mode")));
  if (indices->dtype != DType::kI64) return ctx.error("indices must be i64, got " + indices->toString());
  RETURN_IF_ERROR(requireSameShape(ctx, indices, "indices", g, "grad_output"));
  return Types{makeType(self->dtype, self->shape)};
}

StatusOr<Types> inferAvgPool2dBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* self = ctx.input(1);
  ASSIGN_OR_RETURN(Pool2d q, readPool2d(ctx, false));
  if (!ctx.isNone("divisor_override") && ctx.getInt("divisor_override") == 0)
    return ctx.error("divisor_override must not be 0");
  RETURN_IF_ERROR(checkPooledGrad(ctx, g, self, &q, ctx.getBool("ceil_mode")));
  return Types{makeType(self->dtype, self->shape)};
}

StatusOr<Types> inferAdaptiveAvgPool2dBackward(const InferContext& ctx) {
  const TensorType* g = ctx.input(0);
  const TensorType* self = ctx.input(1);
  RETURN_IF_ERROR(checkPooledGrad(ctx, g, self, nullptr, false));
  return Types{makeType(self->dtype, self->shape)};
}

// ---- _scaled_dot_product_flash_attention_for_cpu_backward --------------------------------

StatusOr<Types> inferFlashAttentionCpuBackward(const InferContext& ctx) {
  const TensorType* go = ctx.input(0);
  const TensorType* q = ctx.input(1);
  const TensorType* k = ctx.input(2);
  const TensorType* v = ctx.input(3);
  const TensorType* out = ctx.input(4);
  const TensorType* lse = ctx.input(5);
  const TensorType* mask = ctx.input(6);
  RETURN_IF_ERROR(requireFloating(ctx, q, "query"));
  const std::pair<const TensorType*, const char*> same[] = {{k, "key"}, {v, "value"}, {go, "grad_out"}, {out, "out"}};
  for (const auto& [t, name] : same) RETURN_IF_ERROR(requireSameDType(ctx, t, name, q, "query"));
  RETURN_IF_ERROR(requireFloating(ctx, lse, "logsumexp"));
  for (const auto& [t, name] : {std::pair{q, "query"}, {k, "key"}, {v, "value"}, {go, "grad_out"}, {out, "out"}})
    if (t->rank() != 4)
      return ctx.error(std::string(name) + " must be 4-D [batch, heads, seq, dim], got " + t->toString());
  const SymExpr &batch = q->shape[0], &heads = q->shape[1], &l = q->shape[2], &e = q->shape[3], &s = k->shape[2];
  const SymExpr& ev = v->shape[3];
  for (size_t i = 0; i < 2; ++i) {
    std::string d = "dim " + std::to_string(i);
    RETURN_IF_ERROR(requireSameSize(ctx, k->shape[i], q->shape[i], "key " + d + " and query " + d));
    RETURN_IF_ERROR(requireSameSize(ctx, v->shape[i], q->shape[i], "value " + d + " and query " + d));
  }
  RETURN_IF_ERROR(requireSameSize(ctx, k->shape[3], e, "key dim 3 and query dim 3 (the head size)"));
  RETURN_IF_ERROR(requireSameSize(ctx, v->shape[2], s, "value dim 2 and key dim 2 (the key length)"));
  TensorType outType = makeType(q->dtype, {batch, heads, l, ev});
  RETURN_IF_ERROR(requireSameShape(ctx, go, "grad_out", &outType, "[batch, heads, query length, value head size]"));
  RETURN_IF_ERROR(requireSameShape(ctx, out, "out", &outType, "[batch, heads, query length, value head size]"));
  TensorType lseType = makeType(lse->dtype, {batch, heads, l});
  RETURN_IF_ERROR(requireSameShape(ctx, lse, "logsumexp", &lseType, "[batch, heads, query length]"));
  if (mask) {
    if (mask->dtype != DType::kBool) RETURN_IF_ERROR(requireSameDType(ctx, mask, "attn_mask", q, "query"));
    Shape scores{batch, heads, l, s};
    auto b = ir::broadcastShapes(mask->shape, scores, ctx.assumptions());
    bool fits = b.isOk() && b->size() == scores.size();
    for (size_t i = 0; fits && i < scores.size(); ++i) fits = (*b)[i] == scores[i];
    if (!fits)
      return ctx.error("attn_mask " + mask->toString() + " must broadcast to the scores' shape " +
                       ir::shapeToString(scores));
  }
  double p = ctx.getFloat("dropout_p");
  if (!(p >= 0 && p < 1)) return ctx.error("dropout_p must be in [0, 1), got " + ir::formatDouble(p));
  return Types{makeType(q->dtype, q->shape), makeType(k->dtype, k->shape), makeType(v->dtype, v->shape)};
}

}  // namespace

Status registerNNBackwardOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(
      reg.add("aten.native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
              "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, int[] output_mask) "
              "-> (Tensor, Tensor, Tensor)",
              inferLayerNormBackward, "backward",
              "layer_norm gradients (input, weight, bias); output_mask is ATen's bool[3] as 0/1 ints, "
              "all three are always computed"));
  RETURN_IF_ERROR(
      reg.add("aten.native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
              "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
              "bool train, float eps, int[] output_mask) -> (Tensor, Tensor, Tensor)",
              inferBatchNormBackward, "backward",
              "batch_norm gradients (input, weight, bias); output_mask as 0/1 ints, all always computed"));
  RETURN_IF_ERROR(
      reg.add("aten.convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
              "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
              "bool transposed, SymInt[] output_padding, SymInt groups, int[] output_mask) "
              "-> (Tensor, Tensor, Tensor)",
              inferConvolutionBackward, "backward",
              "convolution gradients (input, weight, bias), 1-d/2-d/3-d, groups, transposed; "
              "output_mask as 0/1 ints, all always computed"));
  RETURN_IF_ERROR(
      reg.add("aten.max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[] kernel_size, "
              "int[] stride, int[] padding, int[] dilation, bool ceil_mode, Tensor indices) -> Tensor",
              inferMaxPool2dBackward, "backward",
              "max_pool2d gradient: grad_output scattered (added) to the argmax positions in indices"));
  RETURN_IF_ERROR(
      reg.add("aten.avg_pool2d_backward(Tensor grad_output, Tensor self, int[] kernel_size, int[] stride, "
              "int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
              inferAvgPool2dBackward, "backward", "avg_pool2d gradient: each window's share of grad_output"));
  RETURN_IF_ERROR(reg.add("aten._adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
                          inferAdaptiveAvgPool2dBackward, "backward",
                          "adaptive_avg_pool2d gradient: each bin's share of grad_output"));
  RETURN_IF_ERROR(
      reg.add("aten._scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
              "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, "
              "Tensor? attn_mask=None, float? scale=None) -> (Tensor, Tensor, Tensor)",
              inferFlashAttentionCpuBackward, "backward",
              "attention gradients (query, key, value) from the forward's out and logsumexp; causal is "
              "top-left aligned; the reference executor has no dropout"));
  return Status::ok();
}

}  // namespace plugsdk::ops::bwd
