// ATen-level nn ops, part 2: convolution (1-3 spatial dims, groups, transposed) and 2-d
// pooling (max with indices, average, adaptive average), with symbolic output-size formulas.
#include "core/ops/aten_ops.h"
#include "core/ops/nn_common.h"

namespace plugsdk::ops::nn {
namespace {
std::string str(int64_t v) { return std::to_string(v); }
}  // namespace

StatusOr<std::vector<TensorType>> inferConvolution(const InferContext& ctx) {
  const TensorType *input = ctx.input(0), *weight = ctx.input(1), *bias = ctx.input(2);
  const int r = input->rank();
  if (r < 3 || r > 5)
    return ctx.error("input must be 3-D, 4-D or 5-D (batch, channels, 1 to 3 spatial dims), got " + input->toString());
  if (weight->rank() != r)
    return ctx.error("expected a " + str(r) + "-D weight for a " + str(r) + "-D input, got weight " +
                     weight->toString());
  if (input->dtype == DType::kBool) return ctx.error("input has dtype bool, which convolution does not support");
  RETURN_IF_ERROR(requireSameDType(ctx, input, "input", weight, "weight"));
  if (bias && bias->dtype == DType::kBool) return ctx.error("bias has dtype bool, which convolution does not support");
  const size_t k = static_cast<size_t>(r - 2);
  ASSIGN_OR_RETURN(auto stride, expandList(ctx, "stride", k));
  ASSIGN_OR_RETURN(auto padding, expandList(ctx, "padding", k));
  ASSIGN_OR_RETURN(auto dilation, expandList(ctx, "dilation", k));
  const bool transposed = ctx.getBool("transposed");
  std::vector<SymExpr> outPad(k, SymExpr(0));
  if (transposed) {
    ASSIGN_OR_RETURN(outPad, expandList(ctx, "output_padding", k));
  }
  const SymExpr groups = ctx.getSym("groups");
  RETURN_IF_ERROR(requireAtLeast(ctx, groups, 1, "groups"));
  for (size_t i = 0; i < k; ++i) {
    RETURN_IF_ERROR(requireAtLeast(ctx, stride[i], 1, "stride"));
    RETURN_IF_ERROR(requireAtLeast(ctx, dilation[i], 1, "dilation"));
    RETURN_IF_ERROR(requireAtLeast(ctx, padding[i], 0, "padding (negative padding is not supported)"));
  }
  const SymExpr& cin = input->shape[1];
  auto divisible = [&](const SymExpr& v, const std::string& what) -> Status {
    auto eq = ir::proveEQ(SymExpr::mod(v, groups), SymExpr(0), ctx.assumptions());
    if (eq && *eq) return Status::ok();
    return ctx.error(what + " (" + v.toString() + ") must be divisible by groups = " + groups.toString() +
                     (eq ? "" : " (not provably)"));
  };
  SymExpr cout;
  if (!transposed) {
    cout = weight->shape[0];
    RETURN_IF_ERROR(divisible(cout, "weight dim 0 (output channels)"));
    RETURN_IF_ERROR(
        requireSameSize(ctx, cin, weight->shape[1] * groups, "input channels (input dim 1) and weight dim 1 * groups"));
  } else {
    RETURN_IF_ERROR(requireSameSize(ctx, cin, weight->shape[0],
                                    "input channels (input dim 1) and weight dim 0 of a transposed convolution"));
    RETURN_IF_ERROR(divisible(cin, "input channels"));
    cout = weight->shape[1] * groups;
  }
  if (bias) RETURN_IF_ERROR(requireVector(ctx, bias, "bias", cout, "output channels"));
  Shape out{input->shape[0], cout};
  for (size_t i = 0; i < k; ++i) {
    const SymExpr& in = input->shape[2 + i];
    const SymExpr& ks = weight->shape[2 + i];
    RETURN_IF_ERROR(requireAtLeast(ctx, ks, 1, "kernel size (weight dim " + str(static_cast<int64_t>(2 + i)) + ")"));
    SymExpr eff = dilation[i] * (ks - 1) + 1;  // the dilated kernel extent
    SymExpr o;
    if (!transposed) {
      SymExpr padded = in + padding[i] * 2;
      auto fits = ir::proveGE(padded, eff, ctx.assumptions());
      if (fits && !*fits)
        return ctx.error("spatial dim " + str(static_cast<int64_t>(i)) + ": padded input size " + padded.toString() +
                         " is smaller than the dilated kernel size " + eff.toString());
      o = SymExpr::floorDiv(padded - eff, stride[i]) + 1;
    } else {
      // output_padding must be smaller than stride or dilation (PyTorch's rule).
      auto lessS = ir::proveGE(stride[i] - 1, outPad[i], ctx.assumptions());
      auto lessD = ir::proveGE(dilation[i] - 1, outPad[i], ctx.assumptions());
      RETURN_IF_ERROR(requireAtLeast(ctx, outPad[i], 0, "output_padding"));
      if (!((lessS && *lessS) || (lessD && *lessD)))
        return ctx.error("output_padding must be smaller than either stride or dilation, got output_padding " +
                         outPad[i].toString() + ", stride " + stride[i].toString() + ", dilation " +
                         dilation[i].toString());
      o = (in - 1) * stride[i] - padding[i] * 2 + eff + outPad[i];
    }
    auto pos = ir::proveGE(o, SymExpr(1), ctx.assumptions());
    if (pos && !*pos)
      return ctx.error("spatial dim " + str(static_cast<int64_t>(i)) + ": calculated output size " + o.toString() +
                       " is too small");
    out.push_back(o);
  }
  return std::vector<TensorType>{TensorType{input->dtype, out, std::nullopt}};
}

namespace {

// ---- pooling ----------------------------------------------------------------------

/// A static int-list attribute of 1 or 2 values expanded to 2 ([] gives `fallback`).
StatusOr<std::vector<int64_t>> pair(const InferContext& ctx, const std::string& name,
                                    const std::vector<int64_t>* fallback = nullptr) {
  const ir::Attribute& a = ctx.attr(name);
  auto v = a.asIntList();
  if (!v) return ctx.error(name + " must be a list of constant ints, got " + a.toString());
  if (v->empty() && fallback) return *fallback;
  if (v->size() == 1) return std::vector<int64_t>{(*v)[0], (*v)[0]};
  if (v->size() != 2) return ctx.error(name + " must be a single int or a list of two ints, got " + a.toString());
  return *v;
}

/// 3-D (C, H, W) or 4-D (N, C, H, W) input whose non-batch dims are not provably zero.
Status checkPoolInput(const InferContext& ctx, const TensorType* t) {
  if (t->rank() != 3 && t->rank() != 4)
    return ctx.error("expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got " + t->toString());
  for (int d = t->rank() - 3; d < t->rank(); ++d)
    if (t->shape[static_cast<size_t>(d)].constant() == 0)
      return ctx.error("input dim " + str(d) + " is empty; only the batch dim may be 0, got " + t->toString());
  return Status::ok();
}

/// PyTorch's pooling_output_shape: floor((in + 2p - d(k-1) - 1 [+ s-1 if ceil]) / s) + 1, minus
/// one in ceil mode when the last window would start beyond the padded input.
StatusOr<SymExpr> poolOutSize(const InferContext& ctx, const SymExpr& in, int64_t k, int64_t s, int64_t p, int64_t d,
                              bool ceil, const std::string& dimName) {
  SymExpr o = SymExpr::floorDiv(in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0), SymExpr(s)) + 1;
  if (ceil && s + p - d * (k - 1) - 2 >= 0) {  // otherwise the last window always starts inside
    auto past = ir::proveGE((o - 1) * s, in + p, ctx.assumptions());
    if (!past)
      return ctx.error("ceil_mode output size along " + dimName + " cannot be decided for the symbolic size " +
                       in.toString());
    if (*past) o = o - 1;
  }
  auto pos = ir::proveGE(o, SymExpr(1), ctx.assumptions());
  if (pos && !*pos)
    return ctx.error("given input size " + in.toString() + " along " + dimName + ", the calculated output size " +
                     o.toString() + " is too small");
  return o;
}

struct PoolParams {
  std::vector<int64_t> kernel, stride, padding, dilation;
};

StatusOr<PoolParams> poolParams(const InferContext& ctx, bool hasDilation, bool effectiveHalf) {
  PoolParams pp;
  ASSIGN_OR_RETURN(pp.kernel, pair(ctx, "kernel_size"));
  ASSIGN_OR_RETURN(pp.stride, pair(ctx, "stride", &pp.kernel));
  ASSIGN_OR_RETURN(pp.padding, pair(ctx, "padding"));
  pp.dilation = {1, 1};
  if (hasDilation) {
    ASSIGN_OR_RETURN(pp.dilation, pair(ctx, "dilation"));
  }
  for (int i = 0; i < 2; ++i) {
    if (pp.kernel[i] <= 0) return ctx.error("kernel_size must be positive, got " + ctx.attr("kernel_size").toString());
    if (pp.stride[i] <= 0) return ctx.error("stride must be positive, got " + ctx.attr("stride").toString());
    if (pp.dilation[i] <= 0) return ctx.error("dilation must be positive, got " + ctx.attr("dilation").toString());
    if (pp.padding[i] < 0) return ctx.error("padding must be non-negative, got " + ctx.attr("padding").toString());
    int64_t half = effectiveHalf ? ((pp.kernel[i] - 1) * pp.dilation[i] + 1) / 2 : pp.kernel[i] / 2;
    if (pp.padding[i] > half)
      return ctx.error("pad should be at most half of " + std::string(effectiveHalf ? "effective " : "") +
                       "kernel size, got padding " + str(pp.padding[i]) + " for kernel size " + str(pp.kernel[i]) +
                       (effectiveHalf ? " and dilation " + str(pp.dilation[i]) : ""));
  }
  return pp;
}

StatusOr<Shape> pooledShape(const InferContext& ctx, const TensorType* in, const PoolParams& pp, bool ceil) {
  Shape out = in->shape;
  const size_t h = out.size() - 2;
  for (size_t i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(out[h + i], poolOutSize(ctx, in->shape[h + i], pp.kernel[i], pp.stride[i], pp.padding[i],
                                             pp.dilation[i], ceil, i == 0 ? "height" : "width"));
  }
  return out;
}

StatusOr<std::vector<TensorType>> inferMaxPool2d(const InferContext& ctx) {
  const TensorType* in = ctx.input(0);
  RETURN_IF_ERROR(checkPoolInput(ctx, in));
  if (in->dtype == DType::kBool) return ctx.error("input has dtype bool, which max_pool2d does not support");
  ASSIGN_OR_RETURN(PoolParams pp, poolParams(ctx, true, true));
  ASSIGN_OR_RETURN(Shape out, pooledShape(ctx, in, pp, ctx.getBool("ceil_mode")));
  return std::vector<TensorType>{TensorType{in->dtype, out, std::nullopt}, TensorType{DType::kI64, out, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferAvgPool2d(const InferContext& ctx) {
  const TensorType* in = ctx.input(0);
  RETURN_IF_ERROR(checkPoolInput(ctx, in));
  if (!ir::isFloating(in->dtype) && in->dtype != DType::kI64)
    return ctx.error("input must be floating or i64 (as in PyTorch), got " + in->toString());
  ASSIGN_OR_RETURN(PoolParams pp, poolParams(ctx, false, false));
  if (!ctx.isNone("divisor_override") && ctx.getInt("divisor_override") == 0)
    return ctx.error("divisor_override must be non-zero");
  ASSIGN_OR_RETURN(Shape out, pooledShape(ctx, in, pp, ctx.getBool("ceil_mode")));
  return std::vector<TensorType>{TensorType{in->dtype, out, std::nullopt}};
}

StatusOr<std::vector<TensorType>> inferAdaptiveAvgPool2d(const InferContext& ctx) {
  const TensorType* in = ctx.input(0);
  RETURN_IF_ERROR(checkPoolInput(ctx, in));
  RETURN_IF_ERROR(requireFloating(ctx, in, "input"));
  std::vector<SymExpr> os = ctx.getSyms("output_size");
  if (os.size() == 1) os.push_back(os[0]);
  if (os.size() != 2) return ctx.error("output_size must have 2 elements, got " + ctx.attr("output_size").toString());
  for (const SymExpr& o : os) RETURN_IF_ERROR(requireAtLeast(ctx, o, 0, "output_size"));
  Shape out = in->shape;
  out[out.size() - 2] = os[0];
  out[out.size() - 1] = os[1];
  return std::vector<TensorType>{TensorType{in->dtype, out, std::nullopt}};
}

}  // namespace

Status registerConvPoolOps(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(reg.add(
      "aten.convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
      "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
      inferConvolution, "nn",
      "N-d convolution (1 to 3 spatial dims) with groups, dilation, padding; transposed = true is the deconvolution"));
  RETURN_IF_ERROR(reg.add(
      "aten.max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=[0, 0], "
      "int[2] dilation=[1, 1], bool ceil_mode=False) -> (Tensor, Tensor)",
      inferMaxPool2d, "nn", "2-d max pooling; also returns i64 indices h * W + w into each input plane; NaN wins"));
  RETURN_IF_ERROR(
      reg.add("aten.avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=[0, 0], "
              "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
              inferAvgPool2d, "nn", "2-d average pooling (i64 input divides with truncation, as PyTorch)"));
  RETURN_IF_ERROR(reg.add("aten._adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                          inferAdaptiveAvgPool2d, "nn",
                          "2-d adaptive average pooling: bin i covers [floor(i*in/out), ceil((i+1)*in/out))"));
  return Status::ok();
}

}  // namespace plugsdk::ops::nn
