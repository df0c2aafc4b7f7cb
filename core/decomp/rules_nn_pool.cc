// Decompositions of 2-d pooling into prims. max_pool2d_with_indices and avg_pool2d pad the input
// (with the dtype's lowest value or 0) so that every window lies inside, view the windows with
// prims.as_strided as [..., OH, OW, KH, KW] and reduce them; which window positions lie in the
// real input is iota arithmetic. _adaptive_avg_pool2d selects each bin with iota comparisons.
// Everything mirrors the reference kernels in core/exec/kernels_nn_conv.cc.
#include <limits>

#include "core/decomp/rules_nn_internal.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// An int[2] attribute with one value repeated ([] gives `fallback`).
std::vector<int64_t> pair(const DecompCall& c, const std::string& name, const std::vector<int64_t>& fallback) {
  std::vector<int64_t> v = c.getInts(name);
  if (v.empty()) return fallback;
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

/// The lowest value of a dtype, as a padding that never wins a max.
Attribute lowest(DType dt) {
  switch (dt) {
    case DType::kU8: return Attribute::fromInt(0);
    case DType::kI8: return Attribute::fromInt(-128);
    case DType::kI16: return Attribute::fromInt(-32768);
    case DType::kI32: return Attribute::fromInt(std::numeric_limits<int32_t>::min());
    case DType::kI64: return Attribute::fromInt(std::numeric_limits<int64_t>::min());
    default: return Attribute::fromFloat(-kInf);
  }
}

/// Pooling geometry: the windows of output position o along a spatial dim start at
/// o * stride - pad (in input coordinates) and read kernel elements dilation apart.
struct Pool {
  std::vector<int64_t> k, s, p, d;
  bool ceil = false;
  SymExpr in[2], out[2];
  Shape lead;  ///< the batch / channel dims before H and W
};

Pool poolOf(Emitter& e, const DecompCall& c, bool hasDilation) {
  Pool pl;
  pl.k = pair(c, "kernel_size", {});
  pl.s = pair(c, "stride", pl.k);
  pl.p = pair(c, "padding", {0, 0});
  pl.d = hasDilation ? pair(c, "dilation", {1, 1}) : std::vector<int64_t>{1, 1};
  pl.ceil = c.getBool("ceil_mode");
  const Shape& is = e.shape(c.input(0));
  const Shape& os = c.outType().shape;
  const size_t r = is.size();
  pl.lead.assign(is.begin(), is.end() - 2);
  for (size_t i = 0; i < 2; ++i) {
    pl.in[i] = is[r - 2 + i];
    pl.out[i] = os[r - 2 + i];
  }
  return pl;
}

/// The windows of x as [..., OH, OW, KH, KW]: x padded by p before and by whatever the last
/// window needs after (ceil mode reads past the padding) with `value`, then an as_strided view.
V windows(Emitter& e, V x, const Pool& pl, const Attribute& value) {
  if (!e.ok()) return nullptr;
  const size_t r = static_cast<size_t>(e.rank(x));
  Shape low(r, SymExpr(0)), high(r, SymExpr(0));
  Shape padded = e.shape(x);
  for (size_t i = 0; i < 2; ++i) {
    const SymExpr extent = (pl.out[i] - SymExpr(1)) * pl.s[i] + SymExpr((pl.k[i] - 1) * pl.d[i] + 1);
    const SymExpr more = extent - pl.in[i] - SymExpr(pl.p[i]);
    // Exact when decidable; else a bound: the last window ends by in + 2p (in + 2p + s - 1
    // in ceil mode), by the output size formula.
    SymExpr hi(0);
    if (e.provedGE(more, SymExpr(0)))
      hi = more;
    else if (!e.provedGE(SymExpr(0), more))
      hi = SymExpr(pl.p[i] + (pl.ceil ? pl.s[i] - 1 : 0));
    low[r - 2 + i] = SymExpr(pl.p[i]);
    high[r - 2 + i] = hi;
    padded[r - 2 + i] = pl.in[i] + SymExpr(pl.p[i]) + hi;
  }
  if (!low[r - 2].isZero() || !low[r - 1].isZero() || !high[r - 2].isZero() || !high[r - 1].isZero())
    x = e.pad(x, low, high, value);
  const SymExpr hp = padded[r - 2], wp = padded[r - 1];
  Shape size = pl.lead, stride(pl.lead.size(), SymExpr(0));
  SymExpr run = hp * wp;
  for (size_t j = pl.lead.size(); j-- > 0;) {
    stride[j] = run;
    run = run * pl.lead[j];
  }
  size.insert(size.end(), {pl.out[0], pl.out[1], SymExpr(pl.k[0]), SymExpr(pl.k[1])});
  stride.insert(stride.end(), {wp * pl.s[0], SymExpr(pl.s[1]), wp * pl.d[0], SymExpr(pl.d[1])});
  return e.op("prims.as_strided", {x}, {{"size", Attribute::fromInts(size)}, {"stride", Attribute::fromInts(stride)}});
}

/// Input coordinate of window start o * s - p along spatial dim i, as an i64 [O] tensor.
V windowStart(Emitter& e, const Pool& pl, size_t i) {
  return iotaFrom(e, pl.out[i], SymExpr(-pl.p[i]), SymExpr(pl.s[i]));
}

/// [O, K] bool: element k of window o along spatial dim i lies in the input.
V inside(Emitter& e, const Pool& pl, size_t i) {
  V start = e.reshape(windowStart(e, pl, i), {pl.out[i], SymExpr(1)});
  V offs = e.reshape(iotaFrom(e, SymExpr(pl.k[i]), SymExpr(0), SymExpr(pl.d[i])), {SymExpr(1), SymExpr(pl.k[i])});
  V pos = e.add(start, offs);
  return e.binary("bitwise_and", e.binary("ge", pos, e.scalar(0.0, DType::kI64)),
                  e.binary("lt", pos, symScalar(e, pl.in[i], DType::kI64)));
}

/// max_pool2d_with_indices. Indices: as the reference, the last NaN of the window if any, else
/// the first in-input position holding the max, found as the argmax of a score (2KK + j for a
/// NaN, KK - j for a max, else 0). Values: x at those indices (the max; NaN wins).
Result maxPool(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  const DType dt = e.dtype(x);
  const Pool pl = poolOf(e, c, true);
  const int64_t kk = pl.k[0] * pl.k[1];
  V win = windows(e, x, pl, lowest(dt));
  Shape flat = pl.lead;
  flat.insert(flat.end(), {pl.out[0], pl.out[1], SymExpr(kk)});
  win = e.reshape(win, flat);
  V values = e.amax(win, {-1});
  V vh = e.reshape(inside(e, pl, 0), {pl.out[0], SymExpr(1), SymExpr(pl.k[0]), SymExpr(1)});
  V vw = e.reshape(inside(e, pl, 1), {SymExpr(1), pl.out[1], SymExpr(1), SymExpr(pl.k[1])});
  V valid = e.reshape(e.binary("bitwise_and", vh, vw), {pl.out[0], pl.out[1], SymExpr(kk)});
  V j = e.iota(SymExpr(kk));
  V isMax = e.binary("bitwise_and", e.binary("eq", win, e.unsqueeze(values, -1)), valid);
  V score = e.where(isMax, e.sub(e.scalar(static_cast<double>(kk), DType::kI64), j), e.scalar(0.0, DType::kI64));
  if (ir::isFloating(dt))
    score = e.where(e.binary("ne", win, win), e.add(e.scalar(2.0 * static_cast<double>(kk), DType::kI64), j), score);
  V best = e.argReduce("argmax", score, -1, false);
  V kh = e.div(best, e.scalar(static_cast<double>(pl.k[1]), DType::kI64));
  V kw = e.sub(best, e.mul(kh, e.scalar(static_cast<double>(pl.k[1]), DType::kI64)));
  auto times = [&](V v, int64_t k) { return k == 1 ? v : e.mul(v, e.scalar(static_cast<double>(k), DType::kI64)); };
  V h = e.add(e.reshape(windowStart(e, pl, 0), {pl.out[0], SymExpr(1)}), times(kh, pl.d[0]));
  V w = e.add(windowStart(e, pl, 1), times(kw, pl.d[1]));
  V index = e.add(e.mul(h, symScalar(e, pl.in[1], DType::kI64)), w);
  // The values returned are x gathered at the index (the max, or the window's NaN), so that a
  // gradient flows through one gather: its VJP adds each output's gradient once, at its index,
  // where the window max's would scatter a one-hot over every window position.
  Shape plane = pl.lead, outPlane = pl.lead, outShape = pl.lead;
  plane.push_back(pl.in[0] * pl.in[1]);
  outPlane.push_back(pl.out[0] * pl.out[1]);
  outShape.insert(outShape.end(), {pl.out[0], pl.out[1]});
  V picked = e.op("prims.gather", {e.reshape(x, plane), e.reshape(index, outPlane)},
                  {{"dim", Attribute::fromInt(static_cast<int64_t>(pl.lead.size()))}});
  return e.done({e.reshape(picked, outShape), index});
}

/// avg_pool2d: window sums (over zero padding) divided by the reference's divisor: the window
/// clipped to the padded input (count_include_pad), to the input, or divisor_override.
/// Windows wholly outside the input give 0. i64 divides with truncation.
Result avgPool(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  const DType ct = ir::isFloating(dt) ? opmath(dt) : dt;
  const Pool pl = poolOf(e, c, false);
  V x = e.convert(c.input(0), ct);
  V sum = e.sum(windows(e, x, pl, ir::isFloating(ct) ? Attribute::fromFloat(0.0) : Attribute::fromInt(0)), {-2, -1});
  V zero = e.scalar(0.0, DType::kI64);
  V pool[2], count[2], empty[2];
  for (size_t i = 0; i < 2; ++i) {
    V start = windowStart(e, pl, i);
    V end = e.binary("minimum", e.add(start, e.scalar(static_cast<double>(pl.k[i]), DType::kI64)),
                     symScalar(e, pl.in[i] + SymExpr(pl.p[i]), DType::kI64));
    pool[i] = e.sub(end, start);
    V lo = e.binary("maximum", start, zero), hi = e.binary("minimum", end, symScalar(e, pl.in[i], DType::kI64));
    count[i] = e.sub(hi, lo);
    empty[i] = e.binary("le", hi, lo);
  }
  const Shape colShape{pl.out[0], SymExpr(1)};
  auto outer = [&](const std::string& prim, V a, V b) { return e.binary(prim, e.reshape(a, colShape), b); };
  V isEmpty = outer("bitwise_or", empty[0], empty[1]);
  V factor;
  if (!c.isNone("divisor_override"))
    factor = e.scalar(static_cast<double>(c.getInt("divisor_override")), DType::kI64);
  else if (c.getBool("count_include_pad"))
    factor = outer("mul", pool[0], pool[1]);
  else
    factor = outer("mul", count[0], count[1]);
  factor = e.where(isEmpty, e.scalar(1.0, DType::kI64), factor);
  V out = e.div(sum, e.convert(factor, ct));
  out = e.where(isEmpty, e.scalar(0.0, ct), out);
  return one(e, e.convert(out, dt));
}

/// [O, I] bool: input position i lies in bin o, [floor(o * I / O), ceil((o + 1) * I / O)),
/// and the bin lengths [O].
std::pair<V, V> bins(Emitter& e, const SymExpr& in, const SymExpr& out) {
  V n = symScalar(e, out, DType::kI64);
  V start = e.div(iotaFrom(e, out, SymExpr(0), in), n);
  V end = e.add(e.div(iotaFrom(e, out, in - SymExpr(1), in), n), e.scalar(1.0, DType::kI64));
  V pos = e.reshape(e.iota(in), {SymExpr(1), in});
  const Shape col{out, SymExpr(1)};
  V member =
      e.binary("bitwise_and", e.binary("ge", pos, e.reshape(start, col)), e.binary("lt", pos, e.reshape(end, col)));
  return {member, e.sub(end, start)};
}

/// _adaptive_avg_pool2d: each bin's sum (over the whole plane, zeros outside the bin, so the
/// additions happen in the reference's order) divided by the bin's size.
Result adaptiveAvgPool(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype, ct = opmath(dt);
  V x = e.convert(c.input(0), ct);
  const Shape& is = e.shape(x);
  const size_t r = is.size();
  const SymExpr h = is[r - 2], w = is[r - 1];
  const SymExpr oh = c.outType().shape[r - 2], ow = c.outType().shape[r - 1];
  auto [mh, lh] = bins(e, h, oh);
  auto [mw, lw] = bins(e, w, ow);
  V mask = e.binary("bitwise_and", e.reshape(mh, {oh, SymExpr(1), h, SymExpr(1)}),
                    e.reshape(mw, {SymExpr(1), ow, SymExpr(1), w}));
  Shape xs(is.begin(), is.end() - 2);
  xs.insert(xs.end(), {SymExpr(1), SymExpr(1), h, w});
  V sum = e.sum(e.where(mask, e.reshape(x, xs), e.scalar(0.0, ct)), {-2, -1});
  V count = e.mul(e.reshape(lh, {oh, SymExpr(1)}), lw);
  return one(e, e.convert(e.div(sum, e.convert(count, ct)), dt));
}

}  // namespace

void addPoolRules(DecompTable& t) {
  t.add("aten.max_pool2d_with_indices", maxPool);
  t.add("aten.avg_pool2d", avgPool);
  t.add("aten._adaptive_avg_pool2d", adaptiveAvgPool);
}

}  // namespace plugsdk::decomp
