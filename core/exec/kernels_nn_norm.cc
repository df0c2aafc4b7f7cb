// Reference kernels for normalization (batch norm variants, layer norm, group norm, in float64
// with two-pass statistics: mean, then squared deviations) and _softmax / _log_softmax / _safe_softmax.
#include <cmath>
#include <limits>

#include "core/exec/kernels_nn_common.h"

namespace plugsdk::exec::nn {
namespace {

/// Mean and biased variance of `n` elements at x[base + i * stride] for i < n. For n == 0
/// the mean is 0 and the variance NaN (so rstd is NaN), as PyTorch's layer norm reports.
struct Moments {
  double mean = 0, m2 = 0;  ///< m2: sum of squared deviations
  int64_t n = 0;
  double var() const { return n == 0 ? std::numeric_limits<double>::quiet_NaN() : m2 / static_cast<double>(n); }
};

template <typename Index>
Moments moments(const HostTensor& x, int64_t n, Index index) {
  Moments m;
  m.n = n;
  if (n == 0) return m;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x.getDouble(index(i));
  m.mean = sum / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    double dv = x.getDouble(index(i)) - m.mean;
    m.m2 += dv * dv;
  }
  return m;
}

/// Batch norm. Inputs: input, weight?, bias?, then running_mean, running_var at `rmIndex`
/// (or none). `training` says which statistics normalize; `functional` adds the updated
/// running stats as outputs 3 and 4.
StatusOr<std::vector<HostTensor>> batchNorm(const RefKernelContext& ctx, int rmIndex, bool training, bool functional) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor *w = ctx.input(1), *b = ctx.input(2);
  const HostTensor* rm = rmIndex >= 0 ? ctx.input(static_cast<size_t>(rmIndex)) : nullptr;
  const HostTensor* rv = rmIndex >= 0 ? ctx.input(static_cast<size_t>(rmIndex) + 1) : nullptr;
  const double eps = ctx.getFloat("eps"), mom = ctx.getFloat("momentum");
  const int64_t n = x.shape()[0], c = x.shape()[1], s = prodRange(x.shape(), 2, x.shape().size());
  if (training && n * s == 0)
    return invalidArgument(ctx.schema().name + ": training needs at least one element per channel, got input " +
                           x.typeString());
  if (!training && (!rm || !rv))
    return invalidArgument(ctx.schema().name + ": eval mode needs running_mean and running_var");
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < ctx.numOutputs(); ++i) outs.push_back(ctx.makeOutput(i));
  HostTensor& out = outs[0];
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean, invstd;
    if (training) {
      Moments m = moments(x, n * s, [&](int64_t i) { return ((i / s) * c + ch) * s + i % s; });
      mean = m.mean;
      invstd = 1.0 / std::sqrt(m.var() + eps);
      outs[1].setDouble(ch, mean);
      outs[2].setDouble(ch, invstd);
      if (functional) {
        // Running variance is updated with the unbiased variance (0 / 0 = NaN for one element).
        outs[3].setDouble(ch, (1 - mom) * rm->getDouble(ch) + mom * mean);
        outs[4].setDouble(ch, (1 - mom) * rv->getDouble(ch) + mom * (m.m2 / static_cast<double>(n * s - 1)));
      }
    } else {
      mean = rm->getDouble(ch);
      invstd = 1.0 / std::sqrt(rv->getDouble(ch) + eps);
      if (functional) {
        outs[3].setDouble(ch, rm->getDouble(ch));
        outs[4].setDouble(ch, rv->getDouble(ch));
      }
    }
    const double wv = paramOr(w, ch, 1.0), bv = paramOr(b, ch, 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        const int64_t e = (i * c + ch) * s + j;
        out.setDouble(e, (x.getDouble(e) - mean) * invstd * wv + bv);
      }
  }
  return outs;
}

StatusOr<std::vector<HostTensor>> layerNorm(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor *w = ctx.input(1), *b = ctx.input(2);
  const double eps = ctx.getFloat("eps");
  const size_t axis = x.shape().size() - ctx.getSyms("normalized_shape").size();
  const int64_t rows = prodRange(x.shape(), 0, axis), cols = prodRange(x.shape(), axis, x.shape().size());
  HostTensor out = ctx.makeOutput(0), mean = ctx.makeOutput(1), rstd = ctx.makeOutput(2);
  for (int64_t r = 0; r < rows; ++r) {
    Moments m = moments(x, cols, [&](int64_t i) { return r * cols + i; });
    const double rs = 1.0 / std::sqrt(m.var() + eps);
    mean.setDouble(r, m.mean);
    rstd.setDouble(r, rs);
    for (int64_t i = 0; i < cols; ++i) {
      const int64_t e = r * cols + i;
      out.setDouble(e, (x.getDouble(e) - m.mean) * rs * paramOr(w, i, 1.0) + paramOr(b, i, 0.0));
    }
  }
  return std::vector<HostTensor>{std::move(out), std::move(mean), std::move(rstd)};
}

StatusOr<std::vector<HostTensor>> groupNorm(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const HostTensor *w = ctx.input(1), *b = ctx.input(2);
  const double eps = ctx.getFloat("eps");
  const int64_t n = x.shape()[0], c = x.shape()[1], hw = prodRange(x.shape(), 2, x.shape().size());
  const int64_t groups = ctx.getInt("group"), perGroup = c / groups;
  HostTensor out = ctx.makeOutput(0), mean = ctx.makeOutput(1), rstd = ctx.makeOutput(2);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (i * c + g * perGroup) * hw;  // the group's channels are one contiguous block
      Moments m = moments(x, perGroup * hw, [&](int64_t k) { return base + k; });
      const double rs = 1.0 / std::sqrt(m.var() + eps);
      mean.setDouble(i * groups + g, m.mean);
      rstd.setDouble(i * groups + g, rs);
      for (int64_t ch = g * perGroup; ch < (g + 1) * perGroup; ++ch)
        for (int64_t k = 0; k < hw; ++k) {
          const int64_t e = (i * c + ch) * hw + k;
          out.setDouble(e, (x.getDouble(e) - m.mean) * rs * paramOr(w, ch, 1.0) + paramOr(b, ch, 0.0));
        }
    }
  return std::vector<HostTensor>{std::move(out), std::move(mean), std::move(rstd)};
}

/// softmax / log_softmax along `dim`, subtracting the (NaN-propagating) maximum first.
/// `safe` (_safe_softmax): the input is first converted to the output dtype where that differs
/// (an explicit cast, so it rounds), and rows whose inputs are all -inf give 0 instead of NaN.
StatusOr<std::vector<HostTensor>> softmaxAlong(const RefKernelContext& ctx, bool log, bool safe) {
  const HostTensor& x = *ctx.input(0);
  const int64_t rank = x.rank();
  int64_t dim = ctx.getInt("dim");
  if (dim < 0) dim += rank == 0 ? 1 : rank;
  const size_t d = static_cast<size_t>(dim);
  const int64_t outer = prodRange(x.shape(), 0, d), size = rank == 0 ? 1 : x.shape()[d];
  const int64_t inner = rank == 0 ? 1 : prodRange(x.shape(), d + 1, x.shape().size());
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  HostTensor out = ctx.makeOutput();
  const bool cast = safe && out.dtype() != x.dtype();
  auto value = [&](int64_t i) { return cast ? roundToFloatType(x.getDouble(i), out.dtype()) : x.getDouble(i); };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * size * inner + in;
      double mx = kNegInf;
      bool allNegInf = true;  // judged on the input before any conversion, as PyTorch
      for (int64_t i = 0; i < size; ++i) {
        const double v = value(base + i * inner);
        if (std::isnan(v) || v > mx) mx = std::isnan(mx) ? mx : v;
        allNegInf = allNegInf && x.getDouble(base + i * inner) == kNegInf;
      }
      if (safe && allNegInf) {
        for (int64_t i = 0; i < size; ++i) out.setDouble(base + i * inner, 0.0);
        continue;
      }
      double sum = 0;
      for (int64_t i = 0; i < size; ++i) sum += std::exp(value(base + i * inner) - mx);
      const double logSum = std::log(sum);
      for (int64_t i = 0; i < size; ++i) {
        const double z = value(base + i * inner) - mx;
        out.setDouble(base + i * inner, log ? z - logSum : std::exp(z) / sum);
      }
    }
  return std::vector<HostTensor>{std::move(out)};
}

}  // namespace

void registerNormKernels(RefKernelTable& t) {
  t.add("aten._native_batch_norm_legit_no_training",
        [](const RefKernelContext& ctx) { return batchNorm(ctx, 3, false, false); });
  t.add("aten._native_batch_norm_legit_functional",
        [](const RefKernelContext& ctx) { return batchNorm(ctx, 3, ctx.getBool("training"), true); });
  t.add("aten._native_batch_norm_legit.no_stats",
        [](const RefKernelContext& ctx) { return batchNorm(ctx, -1, true, false); });
  t.add("aten.native_batch_norm",
        [](const RefKernelContext& ctx) { return batchNorm(ctx, 3, ctx.getBool("training"), false); });
  t.add("aten.native_layer_norm", layerNorm);
  t.add("aten.native_group_norm", groupNorm);
  t.add("aten._softmax", [](const RefKernelContext& ctx) { return softmaxAlong(ctx, false, false); });
  t.add("aten._log_softmax", [](const RefKernelContext& ctx) { return softmaxAlong(ctx, true, false); });
  t.add("aten._safe_softmax", [](const RefKernelContext& ctx) { return softmaxAlong(ctx, false, true); });
}

}  // namespace plugsdk::exec::nn
