// Decompositions of the normalization, convolution, pooling and attention backward ops into
// prims. Formulas follow the reference kernels (core/exec/kernels_backward_nn.cc); the
// three-output ops compute all three gradients whatever output_mask says, as the reference.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/decomp/rules_backward_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

// ---- norms --------------------------------------------------------------------------------

/// Per row: ds = sum(dy * w * x), db = sum(dy * w); dx = rstd * dy * w + b * x + c with
/// b = (db * mean - ds) * rstd^3 / n, c = -b * mean - db * rstd / n. dgamma = sum over rows of
/// dy * (x - mean) * rstd, dbeta = sum over rows of dy.
Result layerNormBackward(Emitter& e, const DecompCall& c) {
  V x = c.input(1), w = c.input(4);
  const DType cd = opmath(e.dtype(x));
  const Shape xs = e.shape(x);
  const Shape norm = c.getSyms("normalized_shape");
  const auto lead = static_cast<int64_t>(xs.size() - norm.size()), rank = static_cast<int64_t>(xs.size());
  Shape stat(xs.begin(), xs.begin() + lead);
  stat.resize(xs.size(), SymExpr(1));
  const std::vector<int64_t> normDims = range(lead, rank), rowDims = range(0, lead);
  V dy = e.convert(c.input(0), cd);
  x = e.convert(x, cd);
  V mean = e.reshape(e.convert(c.input(2), cd), stat), rstd = e.reshape(e.convert(c.input(3), cd), stat);
  if (w) w = e.convert(w, cd);
  V dyw = w ? e.mul(dy, w) : dy;
  V ds = sumOver(e, e.mul(dyw, x), normDims, true), db = sumOver(e, dyw, normDims, true);
  V scale = ratio(e, 1.0, productOf(norm, 0, norm.size()), cd);
  V b = e.mul(e.mul(e.mul(e.mul(e.sub(e.mul(db, mean), ds), rstd), rstd), rstd), scale);
  V cc = e.sub(e.mul(e.unary("neg", b), mean), e.mul(e.mul(db, rstd), scale));
  V dx = e.add(e.add(w ? e.mul(e.mul(rstd, dy), w) : e.mul(rstd, dy), e.mul(b, x)), cc);
  V dgamma = sumOver(e, e.mul(e.mul(dy, e.sub(x, mean)), rstd), rowDims, false);
  V dbeta = sumOver(e, dy, rowDims, false);
  return e.done(
      {e.convert(dx, c.outType(0).dtype), e.convert(dgamma, c.outType(1).dtype), e.convert(dbeta, c.outType(2).dtype)});
}

/// Per channel: sum = sum(dy), dotp = sum((x - mean) * dy); train: dx = (dy - sum / count -
/// (x - mean) * dotp * invstd^2 / count) * invstd * w, eval: dx = dy * invstd * w
/// (invstd = 1 / sqrt(running_var + eps)); dw = dotp * invstd, db = sum.
Result batchNormBackward(Emitter& e, const DecompCall& c) {
  V x = c.input(1), weight = c.input(2);
  const bool train = c.getBool("train");
  const DType cd = opmath(e.dtype(x));
  const Shape xs = e.shape(x);
  const auto rank = static_cast<int64_t>(xs.size());
  Shape chan(xs.size(), SymExpr(1));
  chan[1] = xs[1];
  std::vector<int64_t> reduceDims = range(0, rank);
  reduceDims.erase(reduceDims.begin() + 1);
  auto perChannel = [&](V v) { return e.reshape(e.convert(v, cd), chan); };
  V dy = e.convert(c.input(0), cd);
  x = e.convert(x, cd);
  V mean = perChannel(train ? c.input(5) : c.input(3));
  V invstd =
      train ? perChannel(c.input(6))
            : e.div(e.scalar(1.0, cd), e.unary("sqrt", e.add(perChannel(c.input(4)), e.scalar(c.getFloat("eps"), cd))));
  V w = weight ? perChannel(weight) : nullptr;
  V count = symScalar(e, productOf(xs, 0, 1) * productOf(xs, 2, xs.size()), cd);
  V centered = e.sub(x, mean);
  V sum = e.sum(dy, reduceDims, true), dotp = e.sum(e.mul(centered, dy), reduceDims, true);
  V dx;
  if (train) {
    V k = e.div(e.mul(e.mul(dotp, invstd), invstd), count), gradMean = e.div(sum, count);
    dx = e.mul(e.sub(e.sub(dy, gradMean), e.mul(centered, k)), invstd);
  } else {
    dx = e.mul(dy, invstd);
  }
  if (w) dx = e.mul(dx, w);
  V dw = e.reshape(e.mul(dotp, invstd), {xs[1]}), db = e.reshape(sum, {xs[1]});
  return e.done(
      {e.convert(dx, c.outType(0).dtype), e.convert(dw, c.outType(1).dtype), e.convert(db, c.outType(2).dtype)});
}

// ---- convolution_backward -----------------------------------------------------------------

V conv(Emitter& e, V input, V weight, const std::vector<int64_t>& stride, const std::vector<SymExpr>& padding,
       const std::vector<int64_t>& dilation, bool transposed, const std::vector<SymExpr>& outputPadding,
       int64_t groups) {
  return e.op("prims.convolution", {input, weight},
              {{"stride", Attribute::fromInts(stride)},
               {"padding", Attribute::fromInts(padding)},
               {"dilation", Attribute::fromInts(dilation)},
               {"transposed", Attribute::fromBool(transposed)},
               {"output_padding", Attribute::fromInts(outputPadding)},
               {"groups", Attribute::fromInt(groups)}});
}

/// a[:, :, :size_2, :size_3, ...]: the spatial dims cropped to `target`'s (one prims.slice).
V cropSpatial(Emitter& e, V a, const Shape& target) {
  if (!a) return nullptr;
  Shape start(e.shape(a).size(), SymExpr(0)), limit = e.shape(a);
  bool same = true;
  for (size_t i = 2; i < limit.size(); ++i) {
    same = same && e.provedEQ(limit[i], target[i]);
    limit[i] = target[i];
  }
  if (same) return a;
  return e.op("prims.slice", {a},
              {{"start_indices", Attribute::fromInts(start)}, {"limit_indices", Attribute::fromInts(limit)}});
}

std::optional<std::vector<int64_t>> constants(const std::vector<SymExpr>& v) {
  std::vector<int64_t> out;
  for (const SymExpr& s : v) {
    auto c = s.constant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

/// grad_input: the adjoint convolution (non-transposed forward: a transposed convolution of
/// grad_output with the same weight, output_padding restoring the input size; transposed
/// forward: a plain convolution of grad_output, cropped to the input size).
/// grad_weight: a convolution of the "big" operand (input, or grad_output of a transposed
/// forward) by the "small" one (grad_output, or input), batch and channel dims swapped, groups
/// folded into the channel dim, stride and dilation exchanged, cropped to the kernel size.
/// grad_bias: grad_output summed over all dims but 1.
Result convolutionBackward(Emitter& e, const DecompCall& c) {
  V gy = c.input(0), x = c.input(1), w = c.input(2);
  const bool transposed = c.getBool("transposed");
  const int64_t groups = c.getSym("groups").constant().value_or(1);
  const auto stride = constants(c.getSyms("stride")), dilation = constants(c.getSyms("dilation"));
  if (!stride || !dilation)
    return e.decline("convolution_backward needs constant stride and dilation (prims.convolution takes int[]), got " +
                     c.attr("stride").toString() + " and " + c.attr("dilation").toString());
  const std::vector<SymExpr> padding = c.getSyms("padding");
  const Shape xs = e.shape(x), ws = e.shape(w), gs = e.shape(gy);
  const size_t sp = xs.size() - 2;
  const auto rank = static_cast<int64_t>(xs.size());

  // grad_bias
  std::vector<int64_t> notChannel = range(0, rank);
  notChannel.erase(notChannel.begin() + 1);
  V gb = e.sum(gy, notChannel);

  // grad_input
  V gx;
  if (!transposed) {
    std::vector<SymExpr> outPad;
    bool provable = true;
    for (size_t i = 0; i < sp; ++i) {
      const int64_t s = (*stride)[i], d = (*dilation)[i];
      SymExpr op = xs[2 + i] - ((gs[2 + i] - 1) * s - padding[i] * 2 + (ws[2 + i] - 1) * d + 1);
      provable =
          provable && e.provedGE(op, SymExpr(0)) && (e.provedGE(SymExpr(s - 1), op) || e.provedGE(SymExpr(d - 1), op));
      outPad.push_back(op);
    }
    if (provable) {
      gx = conv(e, gy, w, *stride, padding, *dilation, true, outPad, groups);
    } else {
      // Symbolic sizes where output_padding (the remainder (in + 2 pad - d (k - 1) - 1) mod stride)
      // cannot be proven below stride: the full adjoint (no padding, no output_padding) covers
      // input positions -pad .. (out - 1) stride + d (k - 1) - pad; stride - 1 zeros after it
      // reach past the input's end, and the window [pad, pad + in) is grad_input.
      std::vector<SymExpr> zeros(sp, SymExpr(0)), low(xs.size(), SymExpr(0)), high(xs.size(), SymExpr(0));
      V fullAdjoint = conv(e, gy, w, *stride, zeros, *dilation, true, zeros, groups);
      for (size_t i = 0; i < sp; ++i) high[2 + i] = SymExpr((*stride)[i] - 1);
      V padded = e.pad(fullAdjoint, low, high, Attribute::fromFloat(0.0));
      Shape start(xs.size(), SymExpr(0)), limit = e.shape(padded);
      for (size_t i = 0; i < sp; ++i) {
        start[2 + i] = padding[i];
        limit[2 + i] = padding[i] + xs[2 + i];
      }
      gx = e.op("prims.slice", {padded},
                {{"start_indices", Attribute::fromInts(start)}, {"limit_indices", Attribute::fromInts(limit)}});
    }
  } else {
    gx = conv(e, gy, w, *stride, padding, *dilation, false, std::vector<SymExpr>(sp, SymExpr(0)), groups);
    gx = cropSpatial(e, gx, xs);
  }

  // grad_weight
  V small = transposed ? x : gy, big = transposed ? gy : x;
  const Shape bs = e.shape(big);
  const SymExpr& batch = xs[0];
  const SymExpr bigCG = SymExpr::floorDiv(bs[1], SymExpr(groups));
  std::vector<int64_t> swap01 = range(0, rank);
  std::swap(swap01[0], swap01[1]);
  V bigT;
  if (groups == 1) {
    bigT = e.permute(big, swap01);
  } else {
    Shape split{batch, SymExpr(groups), bigCG};
    split.insert(split.end(), bs.begin() + 2, bs.end());
    std::vector<int64_t> perm{2, 1, 0};
    for (int64_t i = 3; i < rank + 1; ++i) perm.push_back(i);
    Shape folded{bigCG, SymExpr(groups) * batch};
    folded.insert(folded.end(), bs.begin() + 2, bs.end());
    bigT = e.reshape(e.permute(e.reshape(big, split), perm), folded);
  }
  V smallT = e.permute(small, swap01);
  V gw = conv(e, bigT, smallT, *dilation, padding, *stride, false, std::vector<SymExpr>(sp, SymExpr(0)), groups);
  gw = e.permute(cropSpatial(e, gw, ws), swap01);
  return e.done({gx, gw, gb});
}

// ---- pooling ------------------------------------------------------------------------------

/// The planes of a pooling gradient: self [..., H, W] viewed as [P, H * W].
struct Planes {
  Shape self;
  SymExpr count, ih, iw, oh, ow;
};
Planes planesOf(Emitter& e, V g, V self) {
  const Shape& s = e.shape(self);
  const Shape& o = e.shape(g);
  const size_t r = s.size();
  return {s, productOf(s, 0, r - 2), s[r - 2], s[r - 1], o[r - 2], o[r - 1]};
}

/// Adds src [P, oh, ow, kh, kw] into zeros of the input planes at window positions hpos
/// [oh, kh] and wpos [ow, kw] (i64) where `valid` [oh, ow, kh, kw] holds; the scatter runs in
/// (plane, oh, ow, kh, kw) order, the reference kernels' order.
V windowScatter(Emitter& e, const Planes& p, V src, V hpos, V wpos, V valid) {
  const Shape& hs = e.shape(hpos);
  const Shape& ws = e.shape(wpos);
  const Shape full{p.oh, p.ow, hs[1], ws[1]};
  V h = e.broadcastInDim(hpos, full, {0, 2}), w = e.broadcastInDim(wpos, full, {1, 3});
  V lin = e.add(e.mul(h, symScalar(e, p.iw, DType::kI64)), w);
  lin = e.where(valid, lin, e.scalar(0.0, DType::kI64));
  const SymExpr n = p.oh * p.ow * hs[1] * ws[1];
  V index = e.broadcastInDim(e.reshape(lin, {n}), {p.count, n}, {1});
  const DType dt = e.dtype(src);
  Shape srcShape{p.count, p.oh, p.ow, hs[1], ws[1]};
  V masked = e.where(e.broadcastInDim(valid, srcShape, {1, 2, 3, 4}), e.broadcastTo(src, srcShape), e.scalar(0.0, dt));
  V out = scatter(e, e.full({p.count, p.ih * p.iw}, 0.0, dt), index, e.reshape(masked, {p.count, n}), 1, "sum");
  return e.reshape(out, p.self);
}

/// grad_output added to the argmax positions of each input plane (scatter-add in order).
Result maxPool2dBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0), self = c.input(1);
  Planes p = planesOf(e, g, self);
  const SymExpr outPlane = p.oh * p.ow;
  V out = scatter(e, e.full({p.count, p.ih * p.iw}, 0.0, e.dtype(self)), e.reshape(c.input(2), {p.count, outPlane}),
                  e.reshape(g, {p.count, outPlane}), 1, "sum");
  return one(e, e.reshape(out, p.self));
}

/// [offset, offset + step, ...] of `n` i64 values.
V ramp(Emitter& e, const SymExpr& n, int64_t step, int64_t offset) {
  return e.op("prims.iota", {},
              {{"length", Attribute::fromSym(n)},
               {"start", Attribute::fromInt(offset)},
               {"step", Attribute::fromInt(step)},
               {"dtype", Attribute::fromDType(DType::kI64)}});
}

/// Each window's share grad / divisor added to its positions inside the input: the window of
/// output (oh, ow) starts at (oh * stride - pad) and spans kernel_size; the divisor is
/// divisor_override, or the window clipped to the padded input (count_include_pad) or to the
/// input itself.
Result avgPool2dBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0), self = c.input(1);
  const auto k = c.getIntPair("kernel_size"), s = c.getIntPair("stride", k), pad = c.getIntPair("padding");
  const bool countIncludePad = c.getBool("count_include_pad");
  const DType dt = e.dtype(self);
  Planes p = planesOf(e, g, self);
  const V zero = e.scalar(0.0, DType::kI64);
  V lens[2], clipped[2], pos[2], inside[2];
  const SymExpr outs[2] = {p.oh, p.ow}, ins[2] = {p.ih, p.iw};
  for (int i = 0; i < 2; ++i) {
    V in = symScalar(e, ins[i], DType::kI64);
    V h0 = ramp(e, outs[i], s[i], -pad[i]);
    V h1 = e.binary("minimum", e.add(h0, e.scalar(static_cast<double>(k[i]), DType::kI64)),
                    symScalar(e, ins[i] + pad[i], DType::kI64));
    lens[i] = e.sub(h1, h0);
    clipped[i] = e.sub(e.binary("minimum", h1, in), e.binary("maximum", h0, zero));
    // window positions [out, k]
    pos[i] = e.add(e.unsqueeze(h0, 1), e.reshape(e.iota(SymExpr(k[i])), {SymExpr(1), SymExpr(k[i])}));
    inside[i] = e.binary("bitwise_and", e.binary("ge", pos[i], zero), e.binary("lt", pos[i], in));
  }
  V factor;
  if (!c.isNone("divisor_override"))
    factor = e.scalar(static_cast<double>(c.getInt("divisor_override")), DType::kI64);
  else if (countIncludePad)
    factor = e.mul(e.unsqueeze(lens[0], 1), lens[1]);
  else
    factor = e.mul(e.unsqueeze(clipped[0], 1), clipped[1]);
  V delta = e.div(g, e.convert(factor, dt));  // [..., oh, ow]
  V src = e.reshape(delta, {p.count, p.oh, p.ow, SymExpr(1), SymExpr(1)});
  const Shape full{p.oh, p.ow, SymExpr(k[0]), SymExpr(k[1])};
  V valid =
      e.binary("bitwise_and", e.broadcastInDim(inside[0], full, {0, 2}), e.broadcastInDim(inside[1], full, {1, 3}));
  return one(e, windowScatter(e, p, src, pos[0], pos[1], valid));
}

/// Bin o of n over size m covers [floor(o * m / n), ceil((o + 1) * m / n)); each bin's share
/// grad / rows / cols is added to its positions. Window lengths vary, so the sizes must be
/// constants (the longest window bounds the scatter).
Result adaptiveAvgPool2dBackward(Emitter& e, const DecompCall& c) {
  V g = c.input(0), self = c.input(1);
  const DType dt = e.dtype(self);
  Planes p = planesOf(e, g, self);
  const SymExpr outs[2] = {p.oh, p.ow}, ins[2] = {p.ih, p.iw};
  V lens[2], pos[2], inside[2];
  for (int i = 0; i < 2; ++i) {
    auto on = outs[i].constant(), in = ins[i].constant();
    if (!on || !in || *on < 1)
      return e.decline("_adaptive_avg_pool2d_backward needs constant spatial sizes (the window length varies), got " +
                       ins[i].toString() + " -> " + outs[i].toString());
    int64_t longest = 0;
    for (int64_t o = 0; o < *on; ++o) longest = std::max(longest, ((o + 1) * *in + *on - 1) / *on - (o * *in) / *on);
    V o = e.iota(outs[i]);
    V n = e.scalar(static_cast<double>(*on), DType::kI64);
    V h0 = e.div(e.mul(o, e.scalar(static_cast<double>(*in), DType::kI64)), n);
    V h1 = e.div(e.add(e.mul(e.add(o, e.scalar(1.0, DType::kI64)), e.scalar(static_cast<double>(*in), DType::kI64)),
                       e.scalar(static_cast<double>(*on - 1), DType::kI64)),
                 n);
    lens[i] = e.sub(h1, h0);
    pos[i] = e.add(e.unsqueeze(h0, 1), e.reshape(e.iota(SymExpr(longest)), {SymExpr(1), SymExpr(longest)}));
    inside[i] = e.binary("lt", pos[i], e.unsqueeze(h1, 1));
  }
  V delta = e.div(e.div(g, e.unsqueeze(e.convert(lens[0], dt), 1)), e.convert(lens[1], dt));
  V src = e.reshape(delta, {p.count, p.oh, p.ow, SymExpr(1), SymExpr(1)});
  const Shape full{p.oh, p.ow, e.shape(pos[0])[1], e.shape(pos[1])[1]};
  V valid =
      e.binary("bitwise_and", e.broadcastInDim(inside[0], full, {0, 2}), e.broadcastInDim(inside[1], full, {1, 3}));
  return one(e, windowScatter(e, p, src, pos[0], pos[1], valid));
}

// ---- _scaled_dot_product_flash_attention_for_cpu_backward ---------------------------------

/// P = exp(scale * q k^T + mask - logsumexp) (causal: 0 above the diagonal, top-left aligned),
/// D = rowsum(dO * O), dS = P * (dO v^T - D): dq = scale * dS k, dk = scale * dS^T q, dv = P^T dO.
Result flashAttentionBackward(Emitter& e, const DecompCall& c) {
  if (c.getFloat("dropout_p") > 0)
    return e.decline("dropout_p > 0: the forward's dropout mask cannot be reproduced (the op carries no seed)");
  V go = c.input(0), q = c.input(1), k = c.input(2), v = c.input(3), out = c.input(4), lse = c.input(5),
    mask = c.input(6);
  const DType dt = e.dtype(q), cd = opmath(dt);
  const Shape& qs = e.shape(q);
  double scale;
  if (c.isNone("scale")) {
    auto headSize = qs[3].constant();
    if (!headSize) return e.decline("the default scale 1/sqrt(E) needs a constant head size, got " + qs[3].toString());
    scale = 1.0 / std::sqrt(static_cast<double>(*headSize));
  } else {
    scale = c.getFloat("scale");
  }
  go = e.convert(go, cd);
  q = e.convert(q, cd);
  k = e.convert(k, cd);
  v = e.convert(v, cd);
  out = e.convert(out, cd);
  V sc = e.scalar(scale, cd);
  V score = e.mul(e.matmul(q, e.transpose(k, 2, 3)), sc);  // [B, H, L, S]
  const Shape scores = e.shape(score);
  if (mask) {
    if (e.dtype(mask) == DType::kBool)
      score = e.where(mask, score, e.scalar(-std::numeric_limits<double>::infinity(), cd));
    else
      score = e.add(score, e.convert(mask, cd));
  }
  V p = e.unary("exp", e.sub(score, e.unsqueeze(e.convert(lse, cd), 3)));
  V above = nullptr;
  if (c.getBool("is_causal")) {
    const SymExpr &l = scores[2], &s = scores[3];
    above = e.binary("gt", e.broadcastInDim(e.iota(s), {l, s}, {1}), e.broadcastInDim(e.iota(l), {l, s}, {0}));
    p = e.where(above, e.scalar(0.0, cd), p);
  }
  V d = e.sum(e.mul(go, out), {3}, true);
  V dp = e.matmul(go, e.transpose(v, 2, 3));
  V ds = e.mul(p, e.sub(dp, d));
  if (above) ds = e.where(above, e.scalar(0.0, cd), ds);
  V dv = e.matmul(e.transpose(p, 2, 3), go);
  V dq = e.mul(e.matmul(ds, k), sc);
  V dk = e.mul(e.matmul(e.transpose(ds, 2, 3), q), sc);
  return e.done(
      {e.convert(dq, c.outType(0).dtype), e.convert(dk, c.outType(1).dtype), e.convert(dv, c.outType(2).dtype)});
}

}  // namespace

void addBackwardNNRules(DecompTable& t) {
  t.add("aten.native_layer_norm_backward", layerNormBackward);
  t.add("aten.native_batch_norm_backward", batchNormBackward);
  t.add("aten.convolution_backward", convolutionBackward);
  t.add("aten.max_pool2d_with_indices_backward", maxPool2dBackward);
  t.add("aten.avg_pool2d_backward", avgPool2dBackward);
  t.add("aten._adaptive_avg_pool2d_backward", adaptiveAvgPool2dBackward);
  t.add("aten._scaled_dot_product_flash_attention_for_cpu_backward", flashAttentionBackward);
}

}  // namespace plugsdk::decomp
