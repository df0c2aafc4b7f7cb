// prims.convolution on the CPU. Non-transposed f32 / f16 / bf16 convolutions run as im2col
// + GEMM per image and group (a 1x1, stride-1, unpadded f32 convolution reads its input in
// place); everything else (transposed, f64, integers) as direct loops in double or
// wrapping int64, parallel over output channels. Spatial ranks 1 and 2 are run as rank 3
// with leading unit dims.
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/cpu/library/library_ops.h"
#include "backends/cpu/runtime/launch.h"

namespace plugsdk::cpu {

namespace {

struct Geometry {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  // Strides (elements) of x, w, out: [batch, channel, s0, s1, s2] / [c0, c1, k0, k1, k2].
  std::array<int64_t, 5> xs{}, ws{}, os{};
  int64_t inP() const { return in[0] * in[1] * in[2]; }
  int64_t outP() const { return out[0] * out[1] * out[2]; }
  int64_t kVol() const { return k[0] * k[1] * k[2]; }
};

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

/// Direct convolution (transposed too) in double or wrapping int64: out is accumulated in a
/// row-major temporary, then stored.
sdk::Status direct(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out, bool transposed,
                   tbb::task_arena& arena) {
  const bool fp = isFloatDtype(x.dtype);
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, P = g.outP();
  arena.execute([&] {
    tbb::parallel_for(int64_t{0}, g.n * g.o, [&](int64_t no) {
      const int64_t n = no / g.o, o = no % g.o, grp = o / og, oi = o % og;
      std::vector<double> accF(fp ? static_cast<size_t>(P) : 0, 0.0);
      std::vector<uint64_t> accI(fp ? 0 : static_cast<size_t>(P), 0);
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t c = grp * cg + ci;
        for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
          for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
            for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
              // Non-transposed: w[o, ci, k]; transposed: w[c, oi, k].
              const int64_t wAt = w.offset + (transposed ? c * g.ws[0] + oi * g.ws[1] : o * g.ws[0] + ci * g.ws[1]) +
                                  k0 * g.ws[2] + k1 * g.ws[3] + k2 * g.ws[4];
              const double wf = fp ? loadDouble(w.base, w.dtype, wAt) : 0;
              const int64_t wi = fp ? 0 : loadInt(w.base, w.dtype, wAt);
              for (int64_t p = 0; p < P; ++p) {
                const int64_t y[3] = {p / (g.out[1] * g.out[2]), (p / g.out[2]) % g.out[1], p % g.out[2]};
                int64_t i[3];
                bool inside = true;
                const int64_t kk[3] = {k0, k1, k2};
                for (int d = 0; d < 3 && inside; ++d) {
                  if (!transposed) {
                    i[d] = y[d] * g.stride[d] - g.pad[d] + kk[d] * g.dil[d];
                  } else {
                    // y = i * stride - pad + k * dil  =>  i = (y + pad - k * dil) / stride, exactly.
                    const int64_t t = y[d] + g.pad[d] - kk[d] * g.dil[d];
                    if (t < 0 || t % g.stride[d] != 0) {
                      inside = false;
                      break;
                    }
                    i[d] = t / g.stride[d];
                  }
                  inside = i[d] >= 0 && i[d] < g.in[d];
                }
                if (!inside) continue;
                const int64_t xi = xAt(g, x, n, c, i[0], i[1], i[2]);
                if (fp)
                  accF[static_cast<size_t>(p)] += loadDouble(x.base, x.dtype, xi) * wf;
                else
                  accI[static_cast<size_t>(p)] +=
                      static_cast<uint64_t>(loadInt(x.base, x.dtype, xi)) * static_cast<uint64_t>(wi);
              }
            }
      }
      for (int64_t p = 0; p < P; ++p) {
        const int64_t at = out.offset + n * g.os[0] + o * g.os[1] + (p / (g.out[1] * g.out[2])) * g.os[2] +
                           ((p / g.out[2]) % g.out[1]) * g.os[3] + (p % g.out[2]) * g.os[4];
        if (fp)
          storeDouble(out.base, out.dtype, at, accF[static_cast<size_t>(p)]);
        else
          storeInt(out.base, out.dtype, at, static_cast<int64_t>(accI[static_cast<size_t>(p)]));
      }
    });
  });
  return sdk::Status::ok();
}

/// The im2col matrix of one group, packed for the GEMM straight from the input: B(k, j) is
/// x[n, c, window position of output position j, kernel offset of k] (0 in the padding),
/// k = (c, k0, k1, k2) and j = (y0, y1, y2) row-major. It is never stored whole. With
/// `folded`, the columns run over every image, j = (n, y0, y1, y2), and `n` is ignored.
void packIm2col(const Geometry& g, const TensorRef& x, int64_t grp, int64_t n, bool folded, int64_t k0, int64_t depth,
                int64_t j0, int64_t count, int w, float* dst) {
  const int64_t cg = g.c / g.groups;
  const float* xf = x.dtype == PLUGSDK_DTYPE_F32 ? reinterpret_cast<const float*>(x.base) : nullptr;
  const int64_t panels = (count + w - 1) / w;
  // The columns are runs along output rows (one or two per panel of 32 columns for rows of
  // 56), decoded once; each k then costs no division (the inner loops are copies).
  struct Run {
    float* at;  // in the panel of k = 0
    int64_t len, n, y0, y1, y2;
  };
  std::vector<Run> runs;
  const int64_t P = g.outP();
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t rows = std::min<int64_t>(w, count - p * w);
    for (int64_t i = 0, j = j0 + p * w; i < rows;) {
      const int64_t y2 = j % g.out[2], y1 = (j / g.out[2]) % g.out[1], y0 = (j / (g.out[1] * g.out[2])) % g.out[0];
      const int64_t len = std::min(rows - i, g.out[2] - y2);  // a run never crosses a row (nor an image)
      runs.push_back({dst + p * w * depth + i, len, folded ? j / P : n, y0, y1, y2});
      i += len;
      j += len;
    }
    if (rows < w)  // the last panel's padding columns, for every k
      for (int64_t kk = 0; kk < depth; ++kk)
        for (int64_t i = rows; i < w; ++i) dst[p * w * depth + kk * w + i] = 0.0f;
  }
  const int64_t s2 = g.stride[2];
  // k = ((ci * k0 + a0) * k1 + a1) * k2 + a2, stepped without dividing.
  int64_t a2 = k0 % g.k[2], a1 = (k0 / g.k[2]) % g.k[1], a0 = (k0 / (g.k[1] * g.k[2])) % g.k[0], ci = k0 / g.kVol();
  for (int64_t kk = 0; kk < depth; ++kk) {
    const int64_t base0 = xAt(g, x, 0, grp * cg + ci, 0, 0, 0);
    const int64_t off0 = a0 * g.dil[0] - g.pad[0], off1 = a1 * g.dil[1] - g.pad[1], off2 = a2 * g.dil[2] - g.pad[2];
    for (const Run& r : runs) {
      float* o = r.at + kk * w;
      const int64_t base = base0 + r.n * g.xs[0];
      const int64_t i0 = r.y0 * g.stride[0] + off0, i1 = r.y1 * g.stride[1] + off1;
      if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) {
        for (int64_t t = 0; t < r.len; ++t) o[t] = 0.0f;
        continue;
      }
      const int64_t row = base + i0 * g.xs[2] + i1 * g.xs[3];
      // Output columns y2 + t whose input column first + t * s2 lies in [0, in2): [lo, hi).
      const int64_t first = r.y2 * s2 + off2;
      int64_t lo, hi;
      if (s2 == 1) {
        lo = first >= 0 ? 0 : -first;
        hi = g.in[2] - first;
      } else {
        lo = first >= 0 ? 0 : (-first + s2 - 1) / s2;
        hi = first >= g.in[2] ? 0 : (g.in[2] - first + s2 - 1) / s2;
      }
      lo = std::min(lo, r.len);
      hi = std::clamp(hi, lo, r.len);
      for (int64_t t = 0; t < lo; ++t) o[t] = 0.0f;
      if (xf && s2 == 1 && g.xs[4] == 1) {
        std::memcpy(o + lo, xf + row + first + lo, static_cast<size_t>(hi - lo) * sizeof(float));
      } else if (xf) {
        for (int64_t t = lo; t < hi; ++t) o[t] = xf[row + (first + t * s2) * g.xs[4]];
      } else {
        for (int64_t t = lo; t < hi; ++t)
          o[t] = static_cast<float>(loadDouble(x.base, x.dtype, row + (first + t * s2) * g.xs[4]));
      }
      for (int64_t t = hi; t < r.len; ++t) o[t] = 0.0f;
    }
    if (++a2 == g.k[2]) {
      a2 = 0;
      if (++a1 == g.k[1]) {
        a1 = 0;
        if (++a0 == g.k[0]) {
          a0 = 0;
          ++ci;
        }
      }
    }
  }
}

/// Implicit GEMM: per group, out[n, group's channels, :] = W_group [og, cg * kvol] @ B_n
/// [cg * kvol, P] for every image n as the GEMM's batch, B packed from the input by
/// packIm2col (a 1x1, stride-1, unpadded f32 convolution reads the input through strides).
/// A fused epilogue runs on each block of the result as the GEMM finishes it.
sdk::Status viaGemm(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out,
                    const LibraryContext& ctx) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, P = g.outP(), kv = g.kVol(), K = cg * kv;
  // A reads the weights in place when each group's [cg, k...] block is row-major.
  const bool wFlat = g.ws[4] == 1 && g.ws[3] == g.k[2] && g.ws[2] == g.k[1] * g.k[2] && g.ws[1] == kv;
  const bool outDirect = out.dtype == PLUGSDK_DTYPE_F32 && g.os[4] == 1 && g.os[3] == g.out[2] &&
                         g.os[2] == g.out[1] * g.out[2] && g.os[1] == P;
  const bool pointwise = kv == 1 && g.stride == std::array<int64_t, 3>{1, 1, 1} &&
                         g.pad == std::array<int64_t, 3>{0, 0, 0} && x.dtype == PLUGSDK_DTYPE_F32 && g.xs[4] == 1 &&
                         g.xs[3] == g.in[2] && g.xs[2] == g.in[1] * g.in[2];
  float* wcopy = wFlat ? nullptr : static_cast<float*>(ctx.scratch->get(2, static_cast<size_t>(g.o * K) * 4));
  float* ctemp = outDirect ? nullptr : static_cast<float*>(ctx.scratch->get(3, static_cast<size_t>(g.n * og * P) * 4));
  if ((!wFlat && !wcopy) || (!outDirect && !ctemp))
    return sdk::resourceExhausted("convolution: no memory for its weights or result in f32");
  if (!wFlat)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t q = 0; q < kv; ++q)
          wcopy[(o * cg + ci) * kv + q] =
              static_cast<float>(loadDouble(w.base, w.dtype,
                                            w.offset + o * g.ws[0] + ci * g.ws[1] + (q / (g.k[1] * g.k[2])) * g.ws[2] +
                                                ((q / g.k[2]) % g.k[1]) * g.ws[3] + (q % g.k[2]) * g.ws[4]));
  // The epilogue's grid is the output's [N, O, s...]: outer points are (n, o, s but the
  // last), inner points the last spatial dim, so a block of (channels x positions) is a
  // set of row pieces.
  const bool fuse = outDirect && ctx.epilogue && ctx.epilogue->inner() == g.out[2] &&
                    ctx.epilogue->outer() == g.n * g.o * g.out[0] * g.out[1];
  const int64_t rowsPerChannel = g.out[0] * g.out[1];
  auto epilogue = [&](int64_t n, int64_t channel, int64_t p0, int64_t p1) {
    const int64_t row0 = (n * g.o + channel) * rowsPerChannel;
    for (int64_t p = p0; p < p1;) {
      const int64_t r = p / g.out[2], c0 = p % g.out[2], c1 = std::min(g.out[2], c0 + (p1 - p));
      ctx.epilogue->runRange(row0 + r, row0 + r + 1, c0, c1);
      p += c1 - c0;
    }
  };
  // Few positions per image (deep layers: 7 x 7 = 49) fill the micro-kernel's column panels
  // badly (49 columns take two 32-wide panels): the images are then folded into the
  // columns, one GEMM of N * P columns into a temporary, each block copied out (from L2)
  // as it finishes.
  const int64_t nr = ctx.gemm->shape.nr;
  auto fill = [&](int64_t cols) { return static_cast<double>(cols) / static_cast<double>((cols + nr - 1) / nr * nr); };
  const bool fold = !pointwise && outDirect && g.n > 1 && fill(P) < 0.95 && fill(g.n * P) > fill(P);
  float* ftemp = fold ? static_cast<float*>(ctx.scratch->get(4, static_cast<size_t>(og * g.n * P) * 4)) : nullptr;
  if (fold && !ftemp) return sdk::resourceExhausted("convolution: no memory for its folded result");
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    GemmProblem pr;
    pr.batch = fold ? 1 : g.n;
    pr.m = og;
    pr.n = fold ? g.n * P : P;
    pr.k = K;
    if (wFlat)
      pr.a = {w.base + (w.offset + grp * og * g.ws[0]) * dtypeBytes(w.dtype), gemmElementOf(w.dtype), g.ws[0], 1, 0};
    else
      pr.a = {wcopy + grp * og * K, GemmElement::kF32, K, 1, 0};
    if (pointwise) {
      pr.b = {x.base + xAt(g, x, 0, grp * cg, 0, 0, 0) * 4, GemmElement::kF32, g.xs[1], 1, g.xs[0]};
    } else {
      pr.b.pack = [&, grp](int64_t n, int64_t k0, int64_t depth, int64_t j0, int64_t count, int width, float* dst) {
        packIm2col(g, x, grp, n, fold, k0, depth, j0, count, width, dst);
      };
    }
    float* outBase = outDirect ? reinterpret_cast<float*>(out.base) + out.offset + grp * og * g.os[1] : nullptr;
    if (fold) {
      pr.c = ftemp;
      pr.ldc = g.n * P;
      pr.batchStrideC = 0;
    } else if (outDirect) {
      pr.c = outBase;
      pr.ldc = P;
      pr.batchStrideC = g.os[0];
    } else {
      pr.c = ctemp;
      pr.ldc = P;
      pr.batchStrideC = og * P;
    }
    GemmOptions opt;
    opt.arena = ctx.arena;
    if (fold)
      opt.onBlockDone = [&, grp, outBase](int64_t, int64_t m0, int64_t m1, int64_t j0, int64_t j1) {
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t j = j0; j < j1;) {
            const int64_t n = j / P, p0 = j % P, p1 = std::min(P, p0 + (j1 - j));
            std::memcpy(outBase + n * g.os[0] + m * g.os[1] + p0, ftemp + m * pr.ldc + j,
                        static_cast<size_t>(p1 - p0) * sizeof(float));
            if (fuse) epilogue(n, grp * og + m, p0, p1);
            j += p1 - p0;
          }
      };
    else if (fuse)
      opt.onBlockDone = [&, grp](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
        for (int64_t m = m0; m < m1; ++m) epilogue(n, grp * og + m, p0, p1);
      };
    sdk::Status st = gemm(*ctx.gemm, pr, opt);
    if (!st.isOk()) return st;
    if (outDirect) continue;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t oi = 0; oi < og; ++oi)
        for (int64_t p = 0; p < P; ++p)
          storeDouble(out.base, out.dtype,
                      out.offset + n * g.os[0] + (grp * og + oi) * g.os[1] + (p / (g.out[1] * g.out[2])) * g.os[2] +
                          ((p / g.out[2]) % g.out[1]) * g.os[3] + (p % g.out[2]) * g.os[4],
                      ctemp[(n * og + oi) * P + p]);
  }
  if (fuse) *ctx.epilogueDone = true;
  return sdk::Status::ok();
}

}  // namespace

sdk::Status runConvolution(const TensorRef& x, const TensorRef& w, const TensorRef& out, const Attributes& attrs,
                           const LibraryContext& ctx) {
  sdk::StatusOr<Geometry> g = geometry(x, w, out, attrs);
  if (!g.isOk()) return g.status();
  sdk::StatusOr<bool> transposed = attrs.getBool("transposed");
  if (!transposed.isOk()) return transposed.status();
  if (g->n == 0 || g->o == 0 || g->outP() == 0) return sdk::Status::ok();
  const bool floatPath =
      (x.dtype == PLUGSDK_DTYPE_F32 || x.dtype == PLUGSDK_DTYPE_F16 || x.dtype == PLUGSDK_DTYPE_BF16) &&
      out.dtype != PLUGSDK_DTYPE_F64 && isFloatDtype(out.dtype);
  if (!*transposed && floatPath) return viaGemm(*g, x, w, out, ctx);
  return direct(*g, x, w, out, *transposed, *ctx.arena);
}

}  // namespace plugsdk::cpu
