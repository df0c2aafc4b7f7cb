// The convolution geometry and the helpers the CPU convolution paths share (conv_geometry.h).
#include "backends/cpu/library/conv_geometry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cpu/runtime/launch.h"

namespace plugsdk::cpu {

sdk::StatusOr<Geometry> geometry(const TensorRef& x, const TensorRef& w, const TensorRef& out, const Attributes& a) {
  const size_t sd = x.shape.size() - 2;
  if (x.shape.size() < 3 || x.shape.size() > 5 || w.shape.size() != x.shape.size() ||
      out.shape.size() != x.shape.size())
    return sdk::invalidArgument("convolution operands must have 1 to 3 spatial dims and equal ranks");
  Geometry g;
  sdk::StatusOr<std::vector<int64_t>> stride = a.getInts("stride"), pad = a.getInts("padding"),
                                      dil = a.getInts("dilation");
  sdk::StatusOr<int64_t> groups = a.getInt("groups");
  for (const sdk::Status& s : {stride.status(), pad.status(), dil.status(), groups.status()})
    if (!s.isOk()) return s;
  auto expand = [&](const std::vector<int64_t>& v, std::array<int64_t, 3>& to) {
    for (size_t i = 0; i < sd; ++i) to[3 - sd + i] = v.size() == 1 ? v[0] : v.at(i);
  };
  if ((stride->size() != sd && stride->size() != 1) || (pad->size() != sd && pad->size() != 1) ||
      (dil->size() != sd && dil->size() != 1))
    return sdk::invalidArgument("convolution stride/padding/dilation do not match the spatial rank");
  expand(*stride, g.stride);
  expand(*pad, g.pad);
  expand(*dil, g.dil);
  g.groups = *groups;
  g.n = x.shape[0];
  g.c = x.shape[1];
  g.o = out.shape[1];
  for (size_t i = 0; i < sd; ++i) {
    g.in[3 - sd + i] = x.shape[2 + i];
    g.k[3 - sd + i] = w.shape[2 + i];
    g.out[3 - sd + i] = out.shape[2 + i];
  }
  // The added leading unit dims get the stride a row-major layout would give them, so that
  // contiguity checks see through them.
  auto strides5 = [&](const TensorRef& t, const std::array<int64_t, 3>& size, std::array<int64_t, 5>& s) {
    s = {t.strides[0], t.strides[1], 0, 0, 0};
    for (size_t i = 0; i < sd; ++i) s[2 + 3 - sd + i] = t.strides[2 + i];
    for (size_t i = 3 - sd; i-- > 0;) s[2 + i] = s[3 + i] * size[i + 1];
  };
  strides5(x, g.in, g.xs);
  strides5(w, g.k, g.ws);
  strides5(out, g.out, g.os);
  if (g.groups <= 0 || g.c % g.groups != 0 || g.o % g.groups != 0)
    return sdk::invalidArgument("convolution groups do not divide the channels");
  return g;
}

int64_t xAt(const Geometry& g, const TensorRef& x, int64_t n, int64_t c, int64_t i0, int64_t i1, int64_t i2) {
  return x.offset + n * g.xs[0] + c * g.xs[1] + i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4];
}

std::pair<int64_t, int64_t> insideRange(int64_t first, int64_t step, int64_t limit, int64_t count) {
  int64_t lo = first >= 0 ? 0 : (-first + step - 1) / step;
  int64_t hi = first >= limit ? 0 : (limit - first + step - 1) / step;
  lo = std::min(lo, count);
  return {lo, std::clamp(hi, lo, count)};
}

void copyWeights(const Geometry& g, const TensorRef& w, float* dst) {
  const int64_t d0 = w.shape[0], d1 = w.shape[1], kv = g.kVol();
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j)
      for (int64_t q = 0; q < kv; ++q)
        dst[(i * d1 + j) * kv + q] =
            static_cast<float>(loadDouble(w.base, w.dtype,
                                          w.offset + i * g.ws[0] + j * g.ws[1] + (q / (g.k[1] * g.k[2])) * g.ws[2] +
                                              ((q / g.k[2]) % g.k[1]) * g.ws[3] + (q % g.k[2]) * g.ws[4]));
}

double panelFill(int64_t cols, int64_t nr) {
  return static_cast<double>(cols) / static_cast<double>((cols + nr - 1) / nr * nr);
}

bool weightsFlat(const Geometry& g) {
  const int64_t kv = g.kVol();
  return g.ws[4] == 1 && g.ws[3] == g.k[2] && g.ws[2] == g.k[1] * g.k[2] && g.ws[1] == kv;
}

GemmOperand weightOperand(const Geometry& g, const TensorRef& w, const float* copy, int64_t grp) {
  const int64_t og = g.o / g.groups, K = g.c / g.groups * g.kVol();
  if (copy) return {copy + grp * og * K, GemmElement::kF32, K, 1, 0};
  return {w.base + (w.offset + grp * og * g.ws[0]) * dtypeBytes(w.dtype), gemmElementOf(w.dtype), g.ws[0], 1, 0};
}

bool outputDirect(const Geometry& g, const TensorRef& out) {
  return out.dtype == PLUGSDK_DTYPE_F32 && g.os[4] == 1 && g.os[3] == g.out[2] && g.os[2] == g.out[1] * g.out[2] &&
         g.os[1] == g.outP();
}

bool epilogueFuses(const Geometry& g, const TensorRef& out, const LibraryContext& ctx) {
  return outputDirect(g, out) && ctx.epilogue && ctx.epilogue->inner() == g.out[2] &&
         ctx.epilogue->outer() == g.n * g.o * g.out[0] * g.out[1];
}

void runEpilogueOn(const Geometry& g, const LibraryContext& ctx, int64_t n, int64_t channel, int64_t p0, int64_t p1) {
  const int64_t row0 = (n * g.o + channel) * g.out[0] * g.out[1];
  for (int64_t p = p0; p < p1;) {
    const int64_t r = p / g.out[2], c0 = p % g.out[2], c1 = std::min(g.out[2], c0 + (p1 - p));
    ctx.epilogue->runRange(row0 + r, row0 + r + 1, c0, c1);
    p += c1 - c0;
  }
}

}  // namespace plugsdk::cpu
