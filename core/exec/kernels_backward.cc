// Reference kernels of the backward ops (float64 / exact integers): activation, softmax and
// loss gradients and the embedding gradient. Norms, convolution, pooling: kernels_backward_nn.cc.
#include <cmath>
#include <optional>
#include <string>

#include "core/exec/kernel_utils.h"
#include "core/exec/kernels.h"
#include "core/exec/kernels_backward_internal.h"

namespace plugsdk::exec {

namespace bwd {

namespace {

using Outputs = std::vector<HostTensor>;

/// A Scalar attribute converted to the compute dtype `dt`, as PyTorch converts it before
/// comparing or multiplying (rounded to f32/f16/bf16 precision; truncated for integers).
/// A symbolic integer is evaluated with the bound size symbols.
StatusOr<double> scalarIn(const RefKernelContext& ctx, const std::string& name, DType dt) {
  const ir::Attribute& a = ctx.attr(name);
  std::optional<int64_t> i = a.asInt();
  if (a.kind() == ir::Attribute::Kind::kSym) {
    ASSIGN_OR_RETURN(i, ctx.evalInt(name));
  }
  if (ir::isFloating(dt)) return roundToFloatType(i ? static_cast<double>(*i) : ctx.getFloat(name), dt);
  if (i) return static_cast<double>(wrapToIntType(*i, dt));
  return static_cast<double>(doubleToIntType(ctx.getFloat(name), dt));
}

/// Element `off` of `t` converted to the floating compute dtype `dt`.
double valueIn(const HostTensor& t, int64_t off, DType dt) {
  double v = t.getDouble(off);
  return t.isFloating() ? v : roundToFloatType(v, dt);
}

/// out[i] = f(grad_output, x) over the broadcast shape, in float64.
template <typename F>
StatusOr<Outputs> pointwiseGrad(const RefKernelContext& ctx, F f) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& x = *ctx.input(1);
  HostTensor out = ctx.makeOutput();
  DType dt = out.dtype();
  auto gs = broadcastStrides(g.shape(), out.shape());
  auto xs = broadcastStrides(x.shape(), out.shape());
  forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    out.setDouble(i, f(valueIn(g, offsetOf(idx, gs), dt), valueIn(x, offsetOf(idx, xs), dt)));
  });
  return Outputs{std::move(out)};
}

StatusOr<Outputs> thresholdBackward(const RefKernelContext& ctx) {
  DType dt = ctx.outDType();
  ASSIGN_OR_RETURN(double th, scalarIn(ctx, "threshold", dt));
  if (ir::isFloating(dt)) return pointwiseGrad(ctx, [th](double g, double x) { return x <= th ? 0.0 : g; });
  // Integer tensors: exact int64 values (both inputs are integral when the result is).
  const HostTensor& g = *ctx.input(0);
  const HostTensor& x = *ctx.input(1);
  HostTensor out = ctx.makeOutput();
  int64_t thi = static_cast<int64_t>(th);
  auto gs = broadcastStrides(g.shape(), out.shape());
  auto xs = broadcastStrides(x.shape(), out.shape());
  forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    out.setInt(i, x.getInt(offsetOf(idx, xs)) <= thi ? 0 : g.getInt(offsetOf(idx, gs)));
  });
  return Outputs{std::move(out)};
}

StatusOr<Outputs> geluBackward(const RefKernelContext& ctx) {
  if (ctx.getString("approximate") == "tanh") {
    const double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
    return pointwiseGrad(ctx, [=](double dy, double x) {
      double xSq = x * x, xCube = xSq * x;
      double inner = kBeta * (x + kKappa * xCube);
      double tanhInner = std::tanh(inner);
      double left = 0.5 * x, right = 1 + tanhInner;
      double leftDerivative = 0.5 * right;
      double tanhDerivative = 1 - tanhInner * tanhInner;
      double innerDerivative = kBeta * (1 + 3 * kKappa * xSq);
      double rightDerivative = left * tanhDerivative * innerDerivative;
      return dy * (leftDerivative + rightDerivative);
    });
  }
  const double kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  return pointwiseGrad(ctx, [=](double dy, double x) {
    double cdf = 0.5 * (1 + std::erf(x * M_SQRT1_2));
    double pdf = kBeta * std::exp(x * x * -0.5);
    return dy * (cdf + x * pdf);
  });
}

StatusOr<Outputs> hardtanhBackward(const RefKernelContext& ctx) {
  DType dt = ctx.outDType();
  ASSIGN_OR_RETURN(double lo, scalarIn(ctx, "min_val", dt));
  ASSIGN_OR_RETURN(double hi, scalarIn(ctx, "max_val", dt));
  // Strictly inside (min_val, max_val) passes; NaN gives 0 as PyTorch's vectorized CPU kernel does
  // (its scalar tail loop, used for the last few elements, passes NaN through instead).
  return pointwiseGrad(ctx, [=](double g, double x) { return (x > lo && x < hi) ? g : 0.0; });
}

StatusOr<Outputs> leakyReluBackward(const RefKernelContext& ctx) {
  ASSIGN_OR_RETURN(double slope, scalarIn(ctx, "negative_slope", ctx.outDType()));
  return pointwiseGrad(ctx, [=](double g, double x) { return x > 0 ? g : g * slope; });
}

/// Splits a shape around `dim` into (outer, size, inner); a 0-dim tensor is one element.
void splitAround(const std::vector<int64_t>& shape, int64_t dim, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < dim)
      outer *= shape[static_cast<size_t>(i)];
    else if (i == dim)
      n = shape[static_cast<size_t>(i)];
    else
      inner *= shape[static_cast<size_t>(i)];
  }
}

template <bool kLog>
StatusOr<Outputs> softmaxBackward(const RefKernelContext& ctx) {
  const auto& g = ctx.input(0)->doubles();
  const auto& y = ctx.input(1)->doubles();
  HostTensor out = ctx.makeOutput();
  int64_t rank = ctx.input(0)->rank();
  int64_t dim = ctx.getInt("dim");
  if (dim < 0) dim += rank == 0 ? 1 : rank;
  int64_t outer, n, inner;
  splitAround(ctx.input(0)->shape(), dim, outer, n, inner);
  auto& o = out.doubles();
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      size_t base = static_cast<size_t>(a * n * inner + b), step = static_cast<size_t>(inner);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        size_t j = base + static_cast<size_t>(k) * step;
        sum += kLog ? g[j] : g[j] * y[j];
      }
      for (int64_t k = 0; k < n; ++k) {
        size_t j = base + static_cast<size_t>(k) * step;
        o[j] = kLog ? g[j] - std::exp(y[j]) * sum : y[j] * (g[j] - sum);
      }
    }
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> embeddingDenseBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& idx = *ctx.input(1);
  ASSIGN_OR_RETURN(int64_t paddingIdx, ctx.evalInt("padding_idx"));
  HostTensor out = ctx.makeOutput();
  int64_t numWeights = out.shape()[0], d = out.shape()[1];
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t k = idx.getInt(i);
    if (k < 0 || k >= numWeights)
      return outOfRange(ctx.schema().name + ": index " + std::to_string(k) + " at position " + std::to_string(i) +
                        " of indices is out of range for num_weights " + std::to_string(numWeights));
  }
  std::vector<int64_t> counts;
  bool byFreq = ctx.getBool("scale_grad_by_freq");
  if (byFreq) {
    counts.assign(static_cast<size_t>(numWeights), 0);
    for (int64_t i = 0; i < idx.numel(); ++i) ++counts[static_cast<size_t>(idx.getInt(i))];
  }
  const auto& gv = g.doubles();
  auto& ov = out.doubles();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t k = idx.getInt(i);
    if (k == paddingIdx) continue;
    double scale = byFreq ? 1.0 / static_cast<double>(counts[static_cast<size_t>(k)]) : 1.0;
    for (int64_t j = 0; j < d; ++j) ov[static_cast<size_t>(k * d + j)] += gv[static_cast<size_t>(i * d + j)] * scale;
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> nllLossBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& self = *ctx.input(1);
  const HostTensor& target = *ctx.input(2);
  const HostTensor* weight = ctx.input(3);
  const HostTensor& totalWeight = *ctx.input(4);
  int64_t reduction = ctx.getInt("reduction");
  ASSIGN_OR_RETURN(int64_t ignoreIndex, ctx.evalInt("ignore_index"));
  HostTensor out = ctx.makeOutput();
  int64_t rows = self.rank() == 2 ? self.shape()[0] : 1;
  int64_t classes = self.shape().back();
  bool perRow = reduction == 0 && self.rank() == 2;
  double grad = 0;
  if (!perRow) {
    double gv = g.getDouble(0), tw = totalWeight.getDouble(0);
    grad = -(reduction == 1 ? gv / tw : gv);
  }
  for (int64_t i = 0; i < rows; ++i) {
    int64_t t = target.getInt(i);
    if (t == ignoreIndex) continue;
    if (t < 0 || t >= classes)
      return outOfRange(ctx.schema().name + ": target " + std::to_string(t) + " at position " + std::to_string(i) +
                        " is out of bounds for " + std::to_string(classes) + " classes");
    double w = weight ? weight->getDouble(t) : 1.0;
    out.setDouble(i * classes + t, perRow ? -w * g.getDouble(i) : w * grad);
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> mseLossBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& x = *ctx.input(1);
  const HostTensor& t = *ctx.input(2);
  HostTensor out = ctx.makeOutput();
  double norm = ctx.getInt("reduction") == 1 ? 2.0 / static_cast<double>(x.numel()) : 2.0;
  auto gs = broadcastStrides(g.shape(), out.shape());
  auto xs = broadcastStrides(x.shape(), out.shape());
  auto ts = broadcastStrides(t.shape(), out.shape());
  if (out.isFloating()) {
    forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
      out.setDouble(
          i, norm * (x.getDouble(offsetOf(idx, xs)) - t.getDouble(offsetOf(idx, ts))) * g.getDouble(offsetOf(idx, gs)));
    });
  } else {
    // Integer tensors: norm converted to the dtype (truncated), then wrapping integer arithmetic.
    uint64_t n = static_cast<uint64_t>(doubleToIntType(norm, out.dtype()));
    forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
      uint64_t d =
          static_cast<uint64_t>(x.getInt(offsetOf(idx, xs))) - static_cast<uint64_t>(t.getInt(offsetOf(idx, ts)));
      out.setInt(i, static_cast<int64_t>(n * wrapToIntType(static_cast<int64_t>(d), out.dtype()) *
                                         static_cast<uint64_t>(g.getInt(offsetOf(idx, gs)))));
    });
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> dropoutBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& mask = *ctx.input(1);
  double scale = ctx.getFloat("scale");
  HostTensor out = ctx.makeOutput();
  auto gs = broadcastStrides(g.shape(), out.shape());
  auto ms = broadcastStrides(mask.shape(), out.shape());
  // grad * mask * scale: a dropped NaN or inf gradient still gives NaN (x * 0), as in PyTorch.
  forEachIndex(out.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    double m = mask.getInt(offsetOf(idx, ms)) ? 1.0 : 0.0;
    out.setDouble(i, g.getDouble(offsetOf(idx, gs)) * m * scale);
  });
  return Outputs{std::move(out)};
}

/// Copies grad_output into a zero tensor of input_sizes: grad index j along `dim` lands at
/// first + j * step (select: one position, the dim dropped from grad_output).
Outputs scatterBack(const RefKernelContext& ctx, int64_t dim, int64_t first, int64_t step, bool dropsDim) {
  const HostTensor& g = *ctx.input(0);
  HostTensor out = ctx.makeOutput();
  std::vector<int64_t> strides = out.strides();
  std::vector<int64_t> gToOut;  // out strides seen from grad_output's dims
  for (size_t i = 0; i < strides.size(); ++i) {
    if (static_cast<int64_t>(i) == dim && dropsDim) continue;
    gToOut.push_back(static_cast<int64_t>(i) == dim ? strides[i] * step : strides[i]);
  }
  int64_t base = first * strides[static_cast<size_t>(dim)];
  forEachIndex(g.shape(), [&](const std::vector<int64_t>& idx, int64_t i) {
    int64_t o = base + offsetOf(idx, gToOut);
    if (out.isFloating())
      out.doubles()[static_cast<size_t>(o)] = g.getDouble(i);
    else
      out.setInt(o, g.getInt(i));
  });
  return Outputs{std::move(out)};
}

int64_t wrappedDim(const RefKernelContext& ctx, size_t rank) {
  int64_t dim = ctx.getInt("dim");
  return dim < 0 ? dim + static_cast<int64_t>(rank) : dim;
}

StatusOr<Outputs> selectBackward(const RefKernelContext& ctx) {
  const auto& shape = ctx.outShape();
  int64_t dim = wrappedDim(ctx, shape.size());
  int64_t size = shape[static_cast<size_t>(dim)];
  ASSIGN_OR_RETURN(int64_t index, ctx.evalInt("index"));
  if (index < -size || index >= size)
    return outOfRange(ctx.schema().name + ": index " + std::to_string(index) + " is out of range for dim " +
                      std::to_string(dim) + " of size " + std::to_string(size));
  return scatterBack(ctx, dim, index < 0 ? index + size : index, 1, true);
}

StatusOr<Outputs> sliceBackward(const RefKernelContext& ctx) {
  const auto& shape = ctx.outShape();
  int64_t dim = wrappedDim(ctx, shape.size());
  int64_t size = shape[static_cast<size_t>(dim)];
  ASSIGN_OR_RETURN(int64_t start, ctx.evalInt("start"));
  ASSIGN_OR_RETURN(int64_t end, ctx.evalInt("end"));
  ASSIGN_OR_RETURN(int64_t step, ctx.evalInt("step"));
  auto clamp = [size](int64_t v) {
    if (v < 0) v = v < -size ? 0 : v + size;
    return v > size ? size : v;
  };
  start = clamp(start);
  end = clamp(end);
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  int64_t got = ctx.input(0)->shape()[static_cast<size_t>(dim)];
  if (got != len)
    return invalidArgument(ctx.schema().name + ": grad_output dim " + std::to_string(dim) + " is " +
                           std::to_string(got) + " but the slice [" + std::to_string(start) + ":" +
                           std::to_string(end) + ":" + std::to_string(step) + "] of size " + std::to_string(size) +
                           " has " + std::to_string(len));
  return scatterBack(ctx, dim, start, step, false);
}

}  // namespace

void registerPointwiseLossBackwardKernels(RefKernelTable& t) {
  t.add("aten.threshold_backward", thresholdBackward);
  t.add("aten.gelu_backward", geluBackward);
  t.add("aten.tanh_backward", [](const RefKernelContext& ctx) {
    return pointwiseGrad(ctx, [](double g, double y) { return g * (1 - y * y); });
  });
  t.add("aten.sigmoid_backward", [](const RefKernelContext& ctx) {
    return pointwiseGrad(ctx, [](double g, double y) { return g * (1 - y) * y; });
  });
  t.add("aten.silu_backward", [](const RefKernelContext& ctx) {
    return pointwiseGrad(ctx, [](double dy, double x) {
      double sigmoid = 1 / (1 + std::exp(-x));
      return dy * sigmoid * (1 + x * (1 - sigmoid));
    });
  });
  t.add("aten.hardtanh_backward", hardtanhBackward);
  t.add("aten.leaky_relu_backward", leakyReluBackward);
  t.add("aten._softmax_backward_data", softmaxBackward<false>);
  t.add("aten._log_softmax_backward_data", softmaxBackward<true>);
  t.add("aten.embedding_dense_backward", embeddingDenseBackward);
  t.add("aten.nll_loss_backward", nllLossBackward);
  t.add("aten.mse_loss_backward", mseLossBackward);
  t.add("aten.native_dropout_backward", dropoutBackward);
  t.add("aten.select_backward", selectBackward);
  t.add("aten.slice_backward", sliceBackward);
}

}  // namespace bwd

void registerBackwardKernels(RefKernelTable& t) {
  bwd::registerPointwiseLossBackwardKernels(t);
  bwd::registerNNBackwardKernels(t);
}

}  // namespace plugsdk::exec
