// Library ops as loops, for devices that do not implement them (DecompOptions::expand):
// prims.matmul and prims.convolution become a broadcast product summed over the contracted
// dims -- which the scheduler fuses into one reduction kernel whose loads are index
// arithmetic over the operands, never a materialized product -- and prims.sdpa becomes the
// safe softmax of its scores between two such products. f16/bf16 operands accumulate in
// f32, as the library ops promise; integer ones wrap in their own dtype. On a device that
// implements prims.matmul but not prims.convolution, a convolution becomes im2col (its
// windows gathered into columns) and one prims.matmul with the weight.
#include <cmath>
#include <limits>

#include "core/decomp/decompose.h"
#include "core/decomp/rules_util.h"
#include "core/decomp/sdpa_scores.h"

namespace plugsdk::decomp {
namespace {

using rules::one;
using rules::opmath;
using rules::Result;

using ir::Attribute;
using ir::DType;
using ir::Shape;
using ir::SymExpr;

/// sum over `sumDims` of a * b, each broadcast into `full` along its dims.
V contract(Emitter& e, V a, const std::vector<int64_t>& aDims, V b, const std::vector<int64_t>& bDims,
           const Shape& full, const std::vector<int64_t>& sumDims) {
  return e.sum(e.mul(e.broadcastInDim(a, full, aDims), e.broadcastInDim(b, full, bDims)), sumDims);
}

/// [..., M, K] x [..., K, N] as [..., M, K, N] summed over K, rounded once to `out`.
V matmulLoops(Emitter& e, V a, V b, DType out) {
  if (!e.ok()) return nullptr;
  const DType acc = opmath(e.dtype(a));
  const Shape &sa = e.shape(a), &sb = e.shape(b);
  const int64_t r = static_cast<int64_t>(sa.size());
  Shape full(sa.begin(), sa.end());
  full.push_back(sb.back());
  std::vector<int64_t> aDims, bDims;
  for (int64_t d = 0; d < r; ++d) aDims.push_back(d);
  for (int64_t d = 0; d < r - 2; ++d) bDims.push_back(d);
  bDims.push_back(r - 1);
  bDims.push_back(r);
  return e.convert(contract(e, e.convert(a, acc), aDims, e.convert(b, acc), bDims, full, {r - 1}), out);
}

Result matmul(Emitter& e, const DecompCall& c) {
  return one(e, matmulLoops(e, c.input(0), c.input(1), c.outType(0).dtype));
}

/// One entry per spatial dim (a 1-entry list applies to all).
std::vector<SymExpr> spatialList(const DecompCall& c, const std::string& name, size_t k) {
  std::vector<SymExpr> v = c.getSyms(name);
  if (v.size() == 1) v.assign(k, v[0]);
  return v;
}

/// The as_strided windows [N, G, Cg, O..., K...] of x (already padded: [N, C, P...]) for a
/// weight [G, OCg, Cg, K...].
V windowsOf(Emitter& e, V x, V w, const std::vector<SymExpr>& stride, const std::vector<SymExpr>& dilation,
            const Shape& outSpatial) {
  const Shape &xs = e.shape(x), &ws = e.shape(w);
  const size_t k = xs.size() - 2;
  const SymExpr &g = ws[0], &cg = ws[2];
  std::vector<SymExpr> rowStride(k, SymExpr(1));
  for (size_t i = k - 1; i-- > 0;) rowStride[i] = rowStride[i + 1] * xs[3 + i];
  const SymExpr plane = rowStride[0] * xs[2];
  Shape size{xs[0], g, cg}, strides{xs[1] * plane, cg * plane, plane};
  for (size_t i = 0; i < k; ++i) {
    size.push_back(outSpatial[i]);
    strides.push_back(stride[i] * rowStride[i]);
  }
  for (size_t i = 0; i < k; ++i) {
    size.push_back(ws[3 + i]);
    strides.push_back(dilation[i] * rowStride[i]);
  }
  return e.op("prims.as_strided", {x}, {{"size", Attribute::fromInts(size)}, {"stride", Attribute::fromInts(strides)}});
}

/// A direct convolution of x (already padded: [N, C, P...]) with w [G, OCg, Cg, K...]:
/// the windows times the weight, summed over Cg and K.
V directConvolution(Emitter& e, V x, V w, const std::vector<SymExpr>& stride, const std::vector<SymExpr>& dilation,
                    const Shape& outSpatial) {
  if (!e.ok()) return nullptr;
  const Shape &xs = e.shape(x), &ws = e.shape(w);
  const size_t k = xs.size() - 2;
  const SymExpr &g = ws[0], &ocg = ws[1], &cg = ws[2];
  V windows = windowsOf(e, x, w, stride, dilation, outSpatial);
  // full = [N, G, OCg, Cg, O..., K...]
  Shape full{xs[0], g, ocg, cg};
  std::vector<int64_t> xDims{0, 1, 3}, wDims{1, 2, 3}, sumDims{3};
  const auto ki = static_cast<int64_t>(k);
  for (int64_t i = 0; i < ki; ++i) {
    full.push_back(outSpatial[static_cast<size_t>(i)]);
    xDims.push_back(4 + i);
  }
  for (int64_t i = 0; i < ki; ++i) {
    full.push_back(ws[3 + static_cast<size_t>(i)]);
    xDims.push_back(4 + ki + i);
    wDims.push_back(4 + ki + i);
    sumDims.push_back(4 + ki + i);
  }
  V y = contract(e, windows, xDims, w, wDims, full, sumDims);  // [N, G, OCg, O...]
  Shape out{xs[0], g * ocg};
  out.insert(out.end(), outSpatial.begin(), outSpatial.end());
  return e.reshape(y, out);
}

/// The same as one matmul (im2col). Two layouts of the columns:
/// - a row per input channel and kernel offset, [N, G, Cg*K, O]: the weight [G, OCg, Cg*K]
///   times them (broadcast over N) gives [N, G, OCg, O], the result's [N, OC, O...] as it
///   lies. Taken when a row of O points starts 16-byte aligned (GEMM libraries' fast kernels
///   need it), so the consumers read the result in their own order;
/// - otherwise a row per output point, [N, G, O, Cg*K], times the weight as [G, Cg*K, OCg]
///   (a transposed view): [N, G, O, OCg], one GEMM of N*O rows when G is 1, read by the
///   consumers through a permute. resnet's 14x14 and 7x7 stages (rows of 196 and 49
///   points: 392 and 98 bytes in bf16) took one small GEMM per image on slow kernels.
/// In the operands' own dtype: prims.matmul accumulates f16/bf16 in f32 and rounds once, as
/// the loops would.
V im2colConvolution(Emitter& e, V x, V w, const std::vector<SymExpr>& stride, const std::vector<SymExpr>& dilation,
                    const Shape& outSpatial) {
  if (!e.ok()) return nullptr;
  const Shape xs = e.shape(x), ws = e.shape(w);
  const size_t k = xs.size() - 2;
  V windows = windowsOf(e, x, w, stride, dilation, outSpatial);  // [N, G, Cg, O..., K...]
  SymExpr kernel(1), points(1);
  for (size_t i = 0; i < k; ++i) {
    kernel = kernel * ws[3 + i];
    points = points * outSpatial[i];
  }
  const std::optional<int64_t> o = points.constant();
  const bool pointRows = o && (*o * ir::dtypeSize(e.dtype(x))) % 16 != 0;
  std::vector<int64_t> perm{0, 1};
  if (!pointRows) perm.push_back(2);
  for (size_t i = 0; i < k; ++i) perm.push_back(static_cast<int64_t>((pointRows ? 3 : 3 + k) + i));
  if (pointRows) perm.push_back(2);
  for (size_t i = 0; i < k; ++i) perm.push_back(static_cast<int64_t>((pointRows ? 3 + k : 3) + i));
  V w3 = e.reshape(w, {ws[0], ws[1], ws[2] * kernel});
  V y;  // [N, G, OCg, O]
  if (pointRows) {
    V cols = e.reshape(e.permute(windows, perm), {xs[0], ws[0], points, ws[2] * kernel});
    y = e.permute(e.matmul(cols, e.transpose(w3, -2, -1)), {0, 1, 3, 2});
  } else {
    V cols = e.reshape(e.permute(windows, perm), {xs[0], ws[0], ws[2] * kernel, points});
    y = e.matmul(w3, cols);
  }
  Shape out{xs[0], ws[0] * ws[1]};
  out.insert(out.end(), outSpatial.begin(), outSpatial.end());
  return e.reshape(y, out);
}

Result convolution(Emitter& e, const DecompCall& c) {
  V x = c.input(0), w = c.input(1);
  const DType out = e.dtype(x), acc = opmath(out);
  const size_t k = static_cast<size_t>(e.rank(x)) - 2;
  const std::vector<SymExpr> stride = spatialList(c, "stride", k), padding = spatialList(c, "padding", k),
                             dilation = spatialList(c, "dilation", k);
  const SymExpr groups = c.getSym("groups");
  const Shape& outShape = c.outType().shape;
  const Shape outSpatial(outShape.begin() + 2, outShape.end());
  // With prims.matmul on the device: im2col and one matmul, in the operands' dtype.
  const bool transposed = c.getBool("transposed");
  const bool viaMatmul = !transposed && e.keepsPrim("prims.matmul");
  if (!viaMatmul && !transposed) {
    x = e.convert(x, acc);
    w = e.convert(w, acc);
  }
  const Shape ws = e.shape(w);
  Shape low(k + 2, SymExpr(0)), high(k + 2, SymExpr(0)), interior(k + 2, SymExpr(0));
  Shape w5;
  if (!transposed) {
    // [OC, Cg, K...] -> [G, OCg, Cg, K...]
    w5 = {groups, SymExpr::floorDiv(ws[0], groups)};
    w5.insert(w5.end(), ws.begin() + 1, ws.end());
    for (size_t i = 0; i < k; ++i) low[2 + i] = high[2 + i] = padding[i];
    w = e.reshape(w, w5);
    if (!e.ok()) return e.status();
    bool padded = false;
    for (const SymExpr& p : padding) padded = padded || !p.isZero();
    if (padded) x = e.pad(x, low, high, ir::isFloating(acc) ? Attribute::fromFloat(0.0) : Attribute::fromInt(0));
    if (viaMatmul) return one(e, e.convert(im2colConvolution(e, x, w, stride, dilation, outSpatial), out));
    return one(e, e.convert(directConvolution(e, x, w, stride, dilation, outSpatial), out));
  }
  // Transposed: a plain convolution (stride 1) of the input dilated by the stride (interior
  // zeros) and padded by dilation * (K - 1) - padding (+ output_padding after), by the weight
  // flipped with its channel dims swapped per group. It is emitted as that prims.convolution,
  // in the operands' dtype: a device whose library takes plain convolutions but not transposed
  // ones (a training step's input gradients) runs it there; elsewhere it expands as above.
  const std::vector<SymExpr> outPad = spatialList(c, "output_padding", k);
  std::vector<SymExpr> edges;
  bool dilated = false;
  for (size_t i = 0; i < k; ++i) {
    const SymExpr edge = dilation[i] * (ws[2 + i] - SymExpr(1)) - padding[i];
    if (!e.provedGE(edge, SymExpr(0)))
      return e.decline(
          "transposed convolution with padding larger than dilation * (kernel - 1) (or not provably "
          "smaller)");
    edges.push_back(edge);
    high[2 + i] = outPad[i];
    interior[2 + i] = stride[i] - SymExpr(1);
    dilated = dilated || !outPad[i].isZero() || !interior[2 + i].isZero();
  }
  // [Cin, OCg, K...] = [G, Cg, OCg, K...] -> [G * OCg, Cg, K...], spatial dims reversed
  const SymExpr cg = SymExpr::floorDiv(ws[0], groups);
  Shape wg{groups, cg};
  wg.insert(wg.end(), ws.begin() + 1, ws.end());
  std::vector<int64_t> perm{0, 2, 1}, rev;
  for (size_t i = 0; i < k; ++i) {
    perm.push_back(static_cast<int64_t>(3 + i));
    rev.push_back(static_cast<int64_t>(3 + i));
  }
  w = e.op("prims.rev", {e.permute(e.reshape(w, wg), perm)}, {{"dims", Attribute::fromInts(rev)}});
  if (!e.ok()) return e.status();
  Shape plain{groups * ws[1], cg};
  plain.insert(plain.end(), ws.begin() + 2, ws.end());
  w = e.reshape(w, plain);
  if (dilated)  // the interior zeros and output_padding's extra high edge; the rest is the convolution's padding
    x = e.op("prims.pad", {x},
             {{"padding_value", ir::isFloating(out) ? Attribute::fromFloat(0.0) : Attribute::fromInt(0)},
              {"low", Attribute::fromInts(low)},
              {"high", Attribute::fromInts(high)},
              {"interior", Attribute::fromInts(interior)}});
  const std::vector<SymExpr> ones(k, SymExpr(1)), zeros(k, SymExpr(0));
  return one(e, e.op("prims.convolution", {x, w},
                     {{"stride", Attribute::fromInts(ones)},
                      {"padding", Attribute::fromInts(edges)},
                      {"dilation", Attribute::fromInts(dilation)},
                      {"transposed", Attribute::fromBool(false)},
                      {"output_padding", Attribute::fromInts(zeros)},
                      {"groups", Attribute::fromInt(c.getInt("groups"))}}));
}

/// softmax(scale * q k^T + mask) v with the reference's safe softmax: a row whose scores are
/// all -inf gives zeros and a logsumexp of 0; dropout keeps weight (..., l, s) where the
/// f64 counter-based uniform at its row-major position is below 1 - p.
Result sdpa(Emitter& e, const DecompCall& c) {
  V q = c.input(0), k = c.input(1), v = c.input(2), mask = c.input(3);
  const DType out = e.dtype(q), acc = opmath(out);
  const Shape& qs = e.shape(q);
  const size_t r = qs.size();
  const double scale = c.isNone("scale") ? 0.0 : c.getFloat("scale");
  const SymExpr& s = e.shape(k)[r - 2];
  // f16/bf16 on a device that keeps prims.matmul with an f32 result: the products of the
  // operands as they are, accumulated and returned in f32 (exact scores for the softmax and its
  // logsumexp), and the weights rounded to the operands' dtype for the product with v, as a
  // flash-attention kernel does. Otherwise every product in f32.
  const bool mixed = acc != out && e.keepsMixedMatmul();
  if (!mixed) {
    q = e.convert(q, acc);
    k = e.convert(k, acc);
    v = e.convert(v, acc);
  }
  // The batch dims as one: q, k and v are often views (heads sliced out of one projection)
  // whose batch strides do not nest, which a strided-batch GEMM would take one matrix at a
  // time; the reshape copies them only then (a view otherwise).
  Shape batch(qs.begin(), qs.end() - 2);
  SymExpr flat(1);
  for (const SymExpr& d : batch) flat = flat * d;
  auto flatten = [&](V x) {
    if (r <= 3 || !x) return x;
    const Shape& xs = e.shape(x);
    return e.reshape(x, {flat, xs[r - 2], xs[r - 1]});
  };
  auto unflatten = [&](V x) {
    if (r <= 3 || !x) return x;
    Shape full = batch;
    full.push_back(e.shape(x)[1]);
    full.push_back(e.shape(x)[2]);
    return e.reshape(x, full);
  };
  // With matmul kept, keys padded with zero rows to a multiple of 8: the scores' and the
  // weights' rows then start 16-byte aligned, which GEMM libraries need for their fast
  // kernels (S = 197 gave 4-byte rows). The padded keys' scores are masked to -inf, so the
  // softmax, its logsumexp and the weights (0 there) run over the padded rows in one kernel.
  // Not with dropout: its generator is indexed by positions in the unpadded [..., L, S].
  const int64_t align = 8;
  const double dropout = c.getFloat("dropout_p");
  const SymExpr padS = mixed && dropout == 0 && s.isConstant() && *s.constant() % align != 0
                           ? SymExpr(align - *s.constant() % align)
                           : SymExpr(0);
  const SymExpr sp = s + padS;
  auto padKeys = [&](V x) { return padDim(e, x, -2, padS); };  // [B, S, E] -> [B, S + padS, E]
  V sc = unflatten(e.matmul(flatten(q), e.transpose(padKeys(flatten(k)), -2, -1), acc));  // [..., L, S + padS]
  if (!e.ok()) return e.status();
  const Shape scores = e.shape(sc);
  // The default scale 1 / sqrt(E), computed in double as the reference does.
  const SymExpr& emb = qs[r - 1];
  if (c.isNone("scale") && !emb.isConstant())
    return e.decline("sdpa with a symbolic embedding size and no explicit scale");
  const double scaleValue = c.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(*emb.constant())) : scale;
  V scaleV = e.scalar(scaleValue, acc);
  sc = e.mul(sc, scaleV);
  const V negInf = e.scalar(-std::numeric_limits<double>::infinity(), acc);
  sc = maskScores(e, sc, s, sp, c.getBool("is_causal"), mask, acc);
  V mx = e.amax(sc, {-1}, true);
  V allMasked = e.binary("eq", mx, negInf);
  V shift = e.where(allMasked, e.scalar(0.0, acc), mx);
  V ex = e.unary("exp", e.sub(sc, shift));
  V sum = e.sum(ex, {-1}, true);
  V p = e.where(e.broadcastTo(allMasked, scores), e.scalar(0.0, acc), e.div(ex, sum));
  V lse = e.squeezeDims(e.where(allMasked, e.scalar(0.0, acc), e.add(e.unary("log", sum), shift)), {-1});
  if (dropout > 0) {
    const double keep = 1.0 - dropout;
    std::vector<SymExpr> shape(scores.begin(), scores.end());
    V u = e.op("prims.rand", {},
               {{"shape", Attribute::fromInts(shape)},
                {"seed", Attribute::fromInt(c.getInt("seed"))},
                {"dtype", Attribute::fromDType(DType::kF64)}});
    V kept = e.binary("lt", u, e.scalar(keep, DType::kF64));
    p = e.where(kept, e.div(p, e.scalar(keep, acc)), e.scalar(0.0, acc));
  }
  V o = unflatten(mixed ? e.matmul(flatten(e.convert(p, out)), padKeys(flatten(v))) : e.matmul(flatten(p), flatten(v)));
  return e.done({e.convert(o, c.outType(0).dtype), e.convert(lse, c.outType(1).dtype)});
}

}  // namespace

void addLibraryExpansionRules(DecompTable& t) {
  t.add("prims.matmul", matmul);
  t.add("prims.convolution", convolution);
  t.add("prims.sdpa", sdpa);
}

}  // namespace plugsdk::decomp
