// Reference kernels for convolution (direct loops over 1-3 spatial dims, groups, transposed)
// and 2-d pooling (max with indices, average, adaptive average), matching PyTorch's CPU code.
#include <cmath>
#include <limits>

#include "core/exec/kernels_nn_common.h"

namespace plugsdk::exec::nn {
namespace {

int64_t floorDivPos(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }  // b > 0
int64_t ceilDivPos(int64_t a, int64_t b) { return -floorDivPos(-a, b); }

/// The range [lo, hi) of i in [0, n) for which i * s + off lies in [0, limit).
void validRange(int64_t n, int64_t s, int64_t off, int64_t limit, int64_t& lo, int64_t& hi) {
  lo = std::max<int64_t>(0, ceilDivPos(-off, s));
  hi = std::min<int64_t>(n, floorDivPos(limit - 1 - off, s) + 1);
  if (hi < lo) hi = lo;
}

/// Convolution geometry with the spatial dims right-aligned into three (leading ones are 1).
struct ConvGeom {
  int64_t n = 0, cin = 0, cout = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kSize() const { return k[0] * k[1] * k[2]; }
};

StatusOr<ConvGeom> convGeom(const RefKernelContext& ctx) {
  const HostTensor &x = *ctx.input(0), &w = *ctx.input(1);
  const auto& os = ctx.outShape();
  ConvGeom g;
  const size_t sp = static_cast<size_t>(x.rank() - 2), off = 3 - sp;
  g.n = x.shape()[0];
  g.cin = x.shape()[1];
  g.cout = os[1];
  ASSIGN_OR_RETURN(g.groups, ctx.evalInt("groups"));
  ASSIGN_OR_RETURN(auto stride, ctx.evalInts("stride"));
  ASSIGN_OR_RETURN(auto padding, ctx.evalInts("padding"));
  ASSIGN_OR_RETURN(auto dilation, ctx.evalInts("dilation"));
  auto pick = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; };
  for (size_t i = 0; i < sp; ++i) {
    g.in[off + i] = x.shape()[2 + i];
    g.out[off + i] = os[2 + i];
    g.k[off + i] = w.shape()[2 + i];
    g.s[off + i] = pick(stride, i);
    g.p[off + i] = pick(padding, i);
    g.d[off + i] = pick(dilation, i);
  }
  return g;
}

template <typename T>
void convForward(const ConvGeom& g, const std::vector<T>& x, const std::vector<T>& w, std::vector<T>& out) {
  const int64_t cinG = g.cin / g.groups, coutG = g.cout / g.groups;
  const int64_t IS = g.inSize(), OS = g.outSize(), KS = g.kSize();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oc = 0; oc < g.cout; ++oc) {
      const int64_t grp = oc / coutG;
      T* o = out.data() + (n * g.cout + oc) * OS;
      for (int64_t icl = 0; icl < cinG; ++icl) {
        const T* xp = x.data() + (n * g.cin + grp * cinG + icl) * IS;
        const T* wp = w.data() + (oc * cinG + icl) * KS;
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh)
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const T wv = wp[(kd * g.k[1] + kh) * g.k[2] + kw];
              // PyTorch multiplies zero padding by the weight too: a NaN/inf weight poisons
              // outputs whose window touches the padding.
              bool poison = false;
              if constexpr (std::is_same_v<T, double>) poison = !std::isfinite(wv);
              const int64_t offW = kw * g.d[2] - g.p[2];
              int64_t lo, hi;
              validRange(g.out[2], g.s[2], offW, g.in[2], lo, hi);
              for (int64_t od = 0; od < g.out[0]; ++od) {
                const int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
                for (int64_t oh = 0; oh < g.out[1]; ++oh) {
                  const int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
                  T* orow = o + (od * g.out[1] + oh) * g.out[2];
                  const bool rowOk = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
                  if (!rowOk) {
                    if (poison)
                      for (int64_t ow = 0; ow < g.out[2]; ++ow) orow[ow] += wv * T(0);
                    continue;
                  }
                  const T* xrow = xp + (id * g.in[1] + ih) * g.in[2];
                  for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += wv * xrow[ow * g.s[2] + offW];
                  if (poison) {
                    for (int64_t ow = 0; ow < lo; ++ow) orow[ow] += wv * T(0);
                    for (int64_t ow = hi; ow < g.out[2]; ++ow) orow[ow] += wv * T(0);
                  }
                }
              }
            }
      }
    }
}

template <typename T>
void convTransposed(const ConvGeom& g, const std::vector<T>& x, const std::vector<T>& w, std::vector<T>& out) {
  const int64_t cinG = g.cin / g.groups, coutG = g.cout / g.groups;
  const int64_t IS = g.inSize(), OS = g.outSize(), KS = g.kSize();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t ic = 0; ic < g.cin; ++ic) {
      const int64_t grp = ic / cinG;
      const T* xp = x.data() + (n * g.cin + ic) * IS;
      for (int64_t ocl = 0; ocl < coutG; ++ocl) {
        T* o = out.data() + (n * g.cout + grp * coutG + ocl) * OS;
        const T* wp = w.data() + (ic * coutG + ocl) * KS;
        for (int64_t kd = 0; kd < g.k[0]; ++kd)
          for (int64_t kh = 0; kh < g.k[1]; ++kh)
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const T wv = wp[(kd * g.k[1] + kh) * g.k[2] + kw];
              const int64_t offW = kw * g.d[2] - g.p[2];
              int64_t lo, hi;
              validRange(g.in[2], g.s[2], offW, g.out[2], lo, hi);
              for (int64_t id = 0; id < g.in[0]; ++id) {
                const int64_t od = id * g.s[0] - g.p[0] + kd * g.d[0];
                if (od < 0 || od >= g.out[0]) continue;
                for (int64_t ih = 0; ih < g.in[1]; ++ih) {
                  const int64_t oh = ih * g.s[1] - g.p[1] + kh * g.d[1];
                  if (oh < 0 || oh >= g.out[1]) continue;
                  const T* xrow = xp + (id * g.in[1] + ih) * g.in[2];
                  T* orow = o + (od * g.out[1] + oh) * g.out[2];
                  for (int64_t iw = lo; iw < hi; ++iw) orow[iw * g.s[2] + offW] += wv * xrow[iw];
                }
              }
            }
      }
    }
}

template <typename T>
StatusOr<HostTensor> convolution(const RefKernelContext& ctx) {
  ASSIGN_OR_RETURN(ConvGeom g, convGeom(ctx));
  HostTensor out = ctx.makeOutput();
  std::vector<T> o(static_cast<size_t>(out.numel()), T(0));
  if (const HostTensor* bias = ctx.input(2)) {
    // The bias converts to the output dtype first (an integer conv truncates a float bias).
    HostTensor b(out.dtype(), {bias->numel()});
    for (int64_t c = 0; c < bias->numel(); ++c) b.setDouble(c, bias->getDouble(c));
    const std::vector<T> bv = elements<T>(b);
    const int64_t OS = g.outSize();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t c = 0; c < g.cout; ++c)
        for (int64_t i = 0; i < OS; ++i) o[static_cast<size_t>((n * g.cout + c) * OS + i)] = bv[static_cast<size_t>(c)];
  }
  const std::vector<T> x = elements<T>(*ctx.input(0)), w = elements<T>(*ctx.input(1));
  if (ctx.getBool("transposed"))
    convTransposed(g, x, w, o);
  else
    convForward(g, x, w, o);
  for (int64_t i = 0; i < out.numel(); ++i) store(out, i, o[static_cast<size_t>(i)]);
  return out;
}

}  // namespace

StatusOr<std::vector<HostTensor>> convolutionKernel(const RefKernelContext& ctx) {
  auto r = ctx.input(0)->isFloating() ? convolution<double>(ctx) : convolution<uint64_t>(ctx);
  if (!r.isOk()) return r.status();
  return std::vector<HostTensor>{std::move(r).value()};
}

namespace {

// ---- pooling ----------------------------------------------------------------------

/// An int-list attribute expanded to two values (`fallback` for []).
std::vector<int64_t> pair2(const RefKernelContext& ctx, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = ctx.getInts(name);
  if (v.empty()) return fallback;
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

struct Planes {
  int64_t planes, ih, iw, oh, ow;
};
Planes planesOf(const RefKernelContext& ctx) {
  const auto &is = ctx.input(0)->shape(), &os = ctx.outShape();
  size_t r = is.size();
  return {prodRange(is, 0, r - 2), is[r - 2], is[r - 1], os[r - 2], os[r - 1]};
}

StatusOr<std::vector<HostTensor>> maxPool2d(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const auto k = pair2(ctx, "kernel_size", {}), s = pair2(ctx, "stride", k), p = pair2(ctx, "padding", {0, 0}),
             d = pair2(ctx, "dilation", {1, 1});
  const Planes pl = planesOf(ctx);
  HostTensor out = ctx.makeOutput(0), idx = ctx.makeOutput(1);
  const bool fp = x.isFloating();
  for (int64_t c = 0; c < pl.planes; ++c)
    for (int64_t oh = 0; oh < pl.oh; ++oh)
      for (int64_t ow = 0; ow < pl.ow; ++ow) {
        int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        const int64_t h1 = std::min(h0 + (k[0] - 1) * d[0] + 1, pl.ih),
                      w1 = std::min(w0 + (k[1] - 1) * d[1] + 1, pl.iw);
        while (h0 < 0) h0 += d[0];
        while (w0 < 0) w0 += d[1];
        int64_t best = h0 * pl.iw + w0;
        double bestF = -std::numeric_limits<double>::infinity();
        int64_t bestI = std::numeric_limits<int64_t>::min();
        for (int64_t h = h0; h < h1; h += d[0])
          for (int64_t w = w0; w < w1; w += d[1]) {
            const int64_t i = h * pl.iw + w, e = c * pl.ih * pl.iw + i;
            if (fp) {
              const double v = x.getDouble(e);
              if (v > bestF || std::isnan(v)) bestF = v, best = i;  // the last NaN wins, as PyTorch
            } else if (x.getInt(e) > bestI) {
              bestI = x.getInt(e), best = i;
            }
          }
        const int64_t o = (c * pl.oh + oh) * pl.ow + ow;
        if (fp)
          out.setDouble(o, bestF);
        else
          out.setInt(o, bestI);
        idx.setInt(o, best);
      }
  return std::vector<HostTensor>{std::move(out), std::move(idx)};
}

StatusOr<std::vector<HostTensor>> avgPool2d(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const auto k = pair2(ctx, "kernel_size", {}), s = pair2(ctx, "stride", k), p = pair2(ctx, "padding", {0, 0});
  const bool includePad = ctx.getBool("count_include_pad");
  const bool hasOverride = !ctx.isNone("divisor_override");
  const int64_t divisor = hasOverride ? ctx.getInt("divisor_override") : 0;
  const Planes pl = planesOf(ctx);
  HostTensor out = ctx.makeOutput();
  const bool fp = x.isFloating();
  for (int64_t c = 0; c < pl.planes; ++c)
    for (int64_t oh = 0; oh < pl.oh; ++oh)
      for (int64_t ow = 0; ow < pl.ow; ++ow) {
        const int64_t o = (c * pl.oh + oh) * pl.ow + ow;
        int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        int64_t h1 = std::min(h0 + k[0], pl.ih + p[0]), w1 = std::min(w0 + k[1], pl.iw + p[1]);
        const int64_t poolSize = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, pl.ih);
        w1 = std::min(w1, pl.iw);
        if (h0 >= h1 || w0 >= w1) continue;  // stays 0
        const int64_t factor = hasOverride ? divisor : includePad ? poolSize : (h1 - h0) * (w1 - w0);
        double sumF = 0;
        uint64_t sumI = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) {
            const int64_t e = (c * pl.ih + h) * pl.iw + w;
            if (fp)
              sumF += x.getDouble(e);
            else
              sumI += wrapU(x.getInt(e));
          }
        if (fp) {
          out.setDouble(o, sumF / static_cast<double>(factor));
        } else {
          const int64_t sum = wrapS(sumI);  // C++ division truncates toward zero, as PyTorch's i64 kernel
          out.setInt(o, factor == -1 ? wrapS(0 - sumI) : sum / factor);
        }
      }
  return std::vector<HostTensor>{std::move(out)};
}

StatusOr<std::vector<HostTensor>> adaptiveAvgPool2d(const RefKernelContext& ctx) {
  const HostTensor& x = *ctx.input(0);
  const Planes pl = planesOf(ctx);
  HostTensor out = ctx.makeOutput();
  // Bin i of n over a length-l axis: [floor(i * l / n), ceil((i + 1) * l / n)).
  auto start = [](int64_t i, int64_t n, int64_t l) { return (i / n) * l + ((i % n) * l) / n; };
  auto end = [](int64_t i, int64_t n, int64_t l) { return 1 + ((i + 1) * l - 1) / n; };
  for (int64_t c = 0; c < pl.planes; ++c)
    for (int64_t oh = 0; oh < pl.oh; ++oh)
      for (int64_t ow = 0; ow < pl.ow; ++ow) {
        const int64_t h0 = start(oh, pl.oh, pl.ih), h1 = end(oh, pl.oh, pl.ih);
        const int64_t w0 = start(ow, pl.ow, pl.iw), w1 = end(ow, pl.ow, pl.iw);
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += x.getDouble((c * pl.ih + h) * pl.iw + w);
        out.setDouble((c * pl.oh + oh) * pl.ow + ow, sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return std::vector<HostTensor>{std::move(out)};
}

}  // namespace

void registerConvPoolKernels(RefKernelTable& t) {
  t.add("aten.convolution", convolutionKernel);
  t.add("aten.max_pool2d_with_indices", maxPool2d);
  t.add("aten.avg_pool2d", avgPool2d);
  t.add("aten._adaptive_avg_pool2d", adaptiveAvgPool2d);
}

}  // namespace plugsdk::exec::nn
