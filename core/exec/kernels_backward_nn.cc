// Reference kernels of the normalization, convolution and pooling backward ops (float64).
// The three-output ops always compute all three gradients, whatever output_mask says.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/exec/kernel_utils.h"
#include "core/exec/kernels_backward_internal.h"

namespace plugsdk::exec::bwd {

namespace {

using Outputs = std::vector<HostTensor>;

inline size_t at(int64_t i) { return static_cast<size_t>(i); }

StatusOr<Outputs> layerNormBackward(const RefKernelContext& ctx) {
  const auto& dy = ctx.input(0)->doubles();
  const auto& x = ctx.input(1)->doubles();
  const HostTensor& mean = *ctx.input(2);
  const HostTensor& rstd = *ctx.input(3);
  const HostTensor* gamma = ctx.input(4);
  HostTensor dx = ctx.makeOutput(0), dgamma = ctx.makeOutput(1), dbeta = ctx.makeOutput(2);
  int64_t n = shapeNumel(ctx.outShape(1));
  int64_t m = n == 0 ? 0 : ctx.input(1)->numel() / n;
  if (n == 0) m = mean.numel();
  auto& dxv = dx.doubles();
  auto& dgv = dgamma.doubles();
  auto& dbv = dbeta.doubles();
  auto w = [&](int64_t j) { return gamma ? gamma->getDouble(j) : 1.0; };
  const double scale = 1.0 / static_cast<double>(n);
  for (int64_t i = 0; i < m; ++i) {
    double mu = mean.getDouble(i), rs = rstd.getDouble(i);
    const size_t row = at(i * n);
    double ds = 0, db = 0;
    for (int64_t j = 0; j < n; ++j) {
      ds += dy[row + at(j)] * w(j) * x[row + at(j)];
      db += dy[row + at(j)] * w(j);
    }
    // PyTorch's formulation: dx = a * dy * gamma + b * x + c.
    double a = rs;
    double b = (db * mu - ds) * rs * rs * rs * scale;
    double c = -b * mu - db * rs * scale;
    for (int64_t j = 0; j < n; ++j) {
      dxv[row + at(j)] = a * dy[row + at(j)] * w(j) + b * x[row + at(j)] + c;
      dgv[at(j)] += dy[row + at(j)] * (x[row + at(j)] - mu) * rs;
      dbv[at(j)] += dy[row + at(j)];
    }
  }
  return Outputs{std::move(dx), std::move(dgamma), std::move(dbeta)};
}

StatusOr<Outputs> batchNormBackward(const RefKernelContext& ctx) {
  const HostTensor& gIn = *ctx.input(0);
  const auto& dy = gIn.doubles();
  const auto& x = ctx.input(1)->doubles();
  const HostTensor* weight = ctx.input(2);
  const HostTensor* runMean = ctx.input(3);
  const HostTensor* runVar = ctx.input(4);
  const HostTensor* saveMean = ctx.input(5);
  const HostTensor* saveInvstd = ctx.input(6);
  bool train = ctx.getBool("train");
  double eps = ctx.getFloat("eps");
  HostTensor dx = ctx.makeOutput(0), dw = ctx.makeOutput(1), db = ctx.makeOutput(2);
  const auto& shape = gIn.shape();
  int64_t batch = shape[0], channels = shape[1], inner = 1;
  for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
  const double count = static_cast<double>(batch * inner);
  auto& dxv = dx.doubles();
  for (int64_t c = 0; c < channels; ++c) {
    double mean = train ? saveMean->getDouble(c) : runMean->getDouble(c);
    double invstd = train ? saveInvstd->getDouble(c) : 1 / std::sqrt(runVar->getDouble(c) + eps);
    double w = weight ? weight->getDouble(c) : 1.0;
    double sum = 0, dotp = 0;
    for (int64_t b = 0; b < batch; ++b) {
      size_t base = at((b * channels + c) * inner);
      for (int64_t k = 0; k < inner; ++k) {
        sum += dy[base + at(k)];
        dotp += (x[base + at(k)] - mean) * dy[base + at(k)];
      }
    }
    double k = dotp * invstd * invstd / count, gradMean = sum / count;
    for (int64_t b = 0; b < batch; ++b) {
      size_t base = at((b * channels + c) * inner);
      for (int64_t j = 0; j < inner; ++j) {
        size_t e = base + at(j);
        dxv[e] = train ? (dy[e] - gradMean - (x[e] - mean) * k) * invstd * w : dy[e] * invstd * w;
      }
    }
    dw.setDouble(c, dotp * invstd);
    db.setDouble(c, sum);
  }
  return Outputs{std::move(dx), std::move(dw), std::move(db)};
}

// ---- convolution_backward ----------------------------------------------------------------

/// For every (small position, kernel position) pair whose big position lies inside the big
/// extent: the three row-major linear offsets. "Small" is the convolution's output (non-
/// transposed) or input (transposed); "big" the other side; big = small * stride - pad + k * dilation.
struct SpatialPair {
  int64_t small, kernel, big;
};

std::vector<SpatialPair> spatialPairs(const std::vector<int64_t>& small, const std::vector<int64_t>& kernel,
                                      const std::vector<int64_t>& big, const std::vector<int64_t>& stride,
                                      const std::vector<int64_t>& pad, const std::vector<int64_t>& dil) {
  std::vector<SpatialPair> pairs;
  size_t nd = small.size();
  std::vector<int64_t> bigStrides(nd);
  int64_t run = 1;
  for (size_t d = nd; d-- > 0;) {
    bigStrides[d] = run;
    run *= big[d];
  }
  forEachIndex(small, [&](const std::vector<int64_t>& o, int64_t oLin) {
    forEachIndex(kernel, [&](const std::vector<int64_t>& k, int64_t kLin) {
      int64_t off = 0;
      for (size_t d = 0; d < nd; ++d) {
        int64_t i = o[d] * stride[d] - pad[d] + k[d] * dil[d];
        if (i < 0 || i >= big[d]) return;
        off += i * bigStrides[d];
      }
      pairs.push_back({oLin, kLin, off});
    });
  });
  return pairs;
}

StatusOr<Outputs> convolutionBackward(const RefKernelContext& ctx) {
  const HostTensor& gy = *ctx.input(0);
  const HostTensor& x = *ctx.input(1);
  const HostTensor& w = *ctx.input(2);
  ASSIGN_OR_RETURN(auto stride, ctx.evalInts("stride"));
  ASSIGN_OR_RETURN(auto pad, ctx.evalInts("padding"));
  ASSIGN_OR_RETURN(auto dil, ctx.evalInts("dilation"));
  ASSIGN_OR_RETURN(int64_t groups, ctx.evalInt("groups"));
  bool transposed = ctx.getBool("transposed");
  HostTensor gx = ctx.makeOutput(0), gw = ctx.makeOutput(1), gb = ctx.makeOutput(2);

  auto spatial = [](const HostTensor& t) { return std::vector<int64_t>(t.shape().begin() + 2, t.shape().end()); };
  std::vector<int64_t> kernel = spatial(w);
  // Non-transposed: the output (small) is grad_output, the input is big; transposed: the reverse.
  const HostTensor& smallT = transposed ? x : gy;
  const HostTensor& bigT = transposed ? gy : x;
  std::vector<int64_t> small = spatial(smallT), big = spatial(bigT);
  auto pairs = spatialPairs(small, kernel, big, stride, pad, dil);
  int64_t smallN = shapeNumel(small), bigN = shapeNumel(big), kN = shapeNumel(kernel);
  int64_t batch = x.shape()[0];
  int64_t smallC = smallT.shape()[1], bigC = bigT.shape()[1];
  int64_t smallCG = smallC / groups, bigCG = bigC / groups;
  // Weight layout: non-transposed [Cout = small channels, Cin/groups = big channels per group, k...];
  // transposed [Cin = small channels, Cout/groups = big channels per group, k...].
  const auto& wv = w.doubles();
  auto& gwv = gw.doubles();
  // Both layouts have the small-side channel first and the big-side channel (within its group) second.
  const auto& smallV = smallT.doubles();
  const auto& bigV = bigT.doubles();
  // Gradients of the small and big operands: one of them is grad_input, the other is grad_output (read only).
  std::vector<double> gSmall, gBig;
  if (transposed)
    gSmall.assign(smallV.size(), 0.0);
  else
    gBig.assign(bigV.size(), 0.0);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t cs = g * smallCG; cs < (g + 1) * smallCG; ++cs) {
        size_t sBase = at((n * smallC + cs) * smallN);
        for (int64_t cbl = 0; cbl < bigCG; ++cbl) {
          int64_t cb = g * bigCG + cbl;
          size_t bBase = at((n * bigC + cb) * bigN);
          size_t wBase = at((cs * bigCG + cbl) * kN);
          for (const SpatialPair& p : pairs) {
            double s = smallV[sBase + at(p.small)], b = bigV[bBase + at(p.big)], wt = wv[wBase + at(p.kernel)];
            // small = sum(big * w): d/dbig += dsmall * w, d/dw += dsmall * big (non-transposed: small is grad_output);
            // big = sum(small * w) (transposed): d/dsmall += dbig * w, d/dw += dbig * small.
            if (transposed) {
              gSmall[sBase + at(p.small)] += b * wt;
              gwv[wBase + at(p.kernel)] += b * s;
            } else {
              gBig[bBase + at(p.big)] += s * wt;
              gwv[wBase + at(p.kernel)] += s * b;
            }
          }
        }
      }
    }
  }
  gx.doubles() = transposed ? std::move(gSmall) : std::move(gBig);
  // grad_bias: grad_output summed over everything but the channel dim.
  int64_t outC = gy.shape()[1], outN = shapeNumel(spatial(gy));
  const auto& gyv = gy.doubles();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < outC; ++c) {
      double sum = gb.doubles()[at(c)];
      for (int64_t j = 0; j < outN; ++j) sum += gyv[at((n * outC + c) * outN + j)];
      gb.doubles()[at(c)] = sum;
    }
  return Outputs{std::move(gx), std::move(gw), std::move(gb)};
}

// ---- pooling -----------------------------------------------------------------------------

/// Number of (H, W) planes and the plane sizes of self and grad_output (3-D or 4-D).
struct Planes {
  int64_t count, ih, iw, oh, ow;
};
Planes planesOf(const HostTensor& self, const HostTensor& g) {
  const auto& s = self.shape();
  const auto& o = g.shape();
  size_t r = s.size();
  Planes p{1, s[r - 2], s[r - 1], o[r - 2], o[r - 1]};
  for (size_t i = 0; i + 2 < r; ++i) p.count *= s[i];
  return p;
}

StatusOr<Outputs> maxPool2dBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& self = *ctx.input(1);
  const HostTensor& indices = *ctx.input(2);
  HostTensor out = ctx.makeOutput();
  Planes p = planesOf(self, g);
  int64_t inPlane = p.ih * p.iw, outPlane = p.oh * p.ow;
  auto& ov = out.doubles();
  const auto& gv = g.doubles();
  for (int64_t c = 0; c < p.count; ++c) {
    for (int64_t j = 0; j < outPlane; ++j) {
      int64_t e = c * outPlane + j;
      int64_t idx = indices.getInt(e);
      if (idx < 0 || idx >= inPlane)
        return outOfRange(ctx.schema().name + ": index " + std::to_string(idx) + " at position " + std::to_string(e) +
                          " of indices is outside the input plane of " + std::to_string(p.ih) + "x" +
                          std::to_string(p.iw) + " elements");
      ov[at(c * inPlane + idx)] += gv[at(e)];
    }
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> avgPool2dBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& self = *ctx.input(1);
  const auto k = ctx.getIntPair("kernel_size"), s = ctx.getIntPair("stride", k), pad = ctx.getIntPair("padding");
  bool countIncludePad = ctx.getBool("count_include_pad");
  bool hasDivisor = !ctx.isNone("divisor_override");
  int64_t divisor = hasDivisor ? ctx.getInt("divisor_override") : 0;
  HostTensor out = ctx.makeOutput();
  Planes p = planesOf(self, g);
  auto& ov = out.doubles();
  const auto& gv = g.doubles();
  for (int64_t c = 0; c < p.count; ++c) {
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        int64_t h0 = oh * s[0] - pad[0], w0 = ow * s[1] - pad[1];
        int64_t h1 = std::min(h0 + k[0], p.ih + pad[0]), w1 = std::min(w0 + k[1], p.iw + pad[1]);
        int64_t poolSize = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, p.ih), w1 = std::min(w1, p.iw);
        int64_t factor = hasDivisor ? divisor : countIncludePad ? poolSize : (h1 - h0) * (w1 - w0);
        if (h1 <= h0 || w1 <= w0) continue;  // an empty window (possible with ceil_mode) gets nothing
        double delta = gv[at((c * p.oh + oh) * p.ow + ow)] / static_cast<double>(factor);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) ov[at((c * p.ih + h) * p.iw + w)] += delta;
      }
    }
  }
  return Outputs{std::move(out)};
}

StatusOr<Outputs> adaptiveAvgPool2dBackward(const RefKernelContext& ctx) {
  const HostTensor& g = *ctx.input(0);
  const HostTensor& self = *ctx.input(1);
  HostTensor out = ctx.makeOutput();
  Planes p = planesOf(self, g);
  auto& ov = out.doubles();
  const auto& gv = g.doubles();
  auto start = [](int64_t o, int64_t outSize, int64_t inSize) { return (o * inSize) / outSize; };
  auto end = [](int64_t o, int64_t outSize, int64_t inSize) { return ((o + 1) * inSize + outSize - 1) / outSize; };
  for (int64_t c = 0; c < p.count; ++c) {
    for (int64_t oh = 0; oh < p.oh; ++oh) {
      int64_t h0 = start(oh, p.oh, p.ih), h1 = end(oh, p.oh, p.ih);
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        int64_t w0 = start(ow, p.ow, p.iw), w1 = end(ow, p.ow, p.iw);
        double delta =
            gv[at((c * p.oh + oh) * p.ow + ow)] / static_cast<double>(h1 - h0) / static_cast<double>(w1 - w0);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) ov[at((c * p.ih + h) * p.iw + w)] += delta;
      }
    }
  }
  return Outputs{std::move(out)};
}

// ---- _scaled_dot_product_flash_attention_for_cpu_backward --------------------------------

/// With P = exp(scale * q k^T + mask - logsumexp) (causal: 0 above the diagonal, top-left aligned),
/// D = rowsum(dO * O), dS = P * (dO v^T - D): dq = scale * dS k, dk = scale * dS^T q, dv = P^T dO.
StatusOr<Outputs> flashAttentionCpuBackward(const RefKernelContext& ctx) {
  if (ctx.getFloat("dropout_p") > 0)
    return unimplemented(ctx.schema().name +
                         ": dropout_p > 0 is not supported by the reference executor (the dropout "
                         "mask of the forward cannot be reproduced)");
  const HostTensor& go = *ctx.input(0);
  const HostTensor& q = *ctx.input(1);
  const HostTensor& k = *ctx.input(2);
  const HostTensor& v = *ctx.input(3);
  const HostTensor& out = *ctx.input(4);
  const HostTensor& lse = *ctx.input(5);
  const HostTensor* mask = ctx.input(6);
  bool causal = ctx.getBool("is_causal");
  const auto& qs = q.shape();
  int64_t bh = qs[0] * qs[1], l = qs[2], e = qs[3], s = k.shape()[2], ev = v.shape()[3];
  double scale = ctx.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(e)) : ctx.getFloat("scale");
  std::vector<int64_t> maskStrides;
  if (mask) maskStrides = broadcastStrides(mask->shape(), {qs[0], qs[1], l, s});
  HostTensor dq = ctx.makeOutput(0), dk = ctx.makeOutput(1), dv = ctx.makeOutput(2);
  const auto &qv = q.doubles(), &kv = k.doubles(), &vv = v.doubles(), &gov = go.doubles(), &ov = out.doubles();
  auto &dqv = dq.doubles(), &dkv = dk.doubles(), &dvv = dv.doubles();
  std::vector<double> p(at(s));
  for (int64_t b = 0; b < bh; ++b) {
    int64_t batch = b / qs[1], head = b % qs[1];
    for (int64_t i = 0; i < l; ++i) {
      const size_t qi = at((b * l + i) * e), oi = at((b * l + i) * ev);
      double lseI = lse.getDouble(b * l + i);
      for (int64_t j = 0; j < s; ++j) {
        if (causal && j > i) {
          p[at(j)] = 0;
          continue;
        }
        double dot = 0;
        for (int64_t c = 0; c < e; ++c) dot += qv[qi + at(c)] * kv[at((b * s + j) * e + c)];
        double score = dot * scale;
        if (mask) {
          int64_t mo = batch * maskStrides[0] + head * maskStrides[1] + i * maskStrides[2] + j * maskStrides[3];
          if (mask->dtype() == DType::kBool)
            score = mask->getInt(mo) ? score : -INFINITY;
          else
            score += mask->getDouble(mo);
        }
        p[at(j)] = std::exp(score - lseI);
      }
      double d = 0;
      for (int64_t c = 0; c < ev; ++c) d += gov[oi + at(c)] * ov[oi + at(c)];
      for (int64_t j = 0; j < s; ++j) {
        if (causal && j > i) break;  // masked out by causality: no contribution at all
        double pj = p[at(j)];
        const size_t kj = at((b * s + j) * e), vj = at((b * s + j) * ev);
        double dp = 0;
        for (int64_t c = 0; c < ev; ++c) {
          dp += gov[oi + at(c)] * vv[vj + at(c)];
          dvv[vj + at(c)] += pj * gov[oi + at(c)];
        }
        double ds = pj * (dp - d);
        for (int64_t c = 0; c < e; ++c) {
          dqv[qi + at(c)] += ds * kv[kj + at(c)] * scale;
          dkv[kj + at(c)] += ds * qv[qi + at(c)] * scale;
        }
      }
    }
  }
  return Outputs{std::move(dq), std::move(dk), std::move(dv)};
}

}  // namespace

void registerNNBackwardKernels(RefKernelTable& t) {
  t.add("aten.native_layer_norm_backward", layerNormBackward);
  t.add("aten.native_batch_norm_backward", batchNormBackward);
  t.add("aten.convolution_backward", convolutionBackward);
  t.add("aten.max_pool2d_with_indices_backward", maxPool2dBackward);
  t.add("aten.avg_pool2d_backward", avgPool2dBackward);
  t.add("aten._adaptive_avg_pool2d_backward", adaptiveAvgPool2dBackward);
  t.add("aten._scaled_dot_product_flash_attention_for_cpu_backward", flashAttentionCpuBackward);
}

}  // namespace plugsdk::exec::bwd
