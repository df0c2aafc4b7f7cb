// prims.convolution on the CPU. f32 / f16 / bf16 convolutions run as im2col + GEMM per image
// and group (a 1x1, stride-1, unpadded f32 convolution reads its input in place), transposed
// ones as GEMM + col2im (the input gradients of training); f64 and integers as direct loops
// in double or wrapping int64, parallel over (image, output channel). Spatial ranks 1 and 2
// are run as rank 3 with leading unit dims.
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/library/conv_geometry.h"
#include "backends/cpu/library/conv_shifted.h"
#include "backends/cpu/library/library_ops.h"
#include "backends/cpu/runtime/launch.h"

namespace plugsdk::cpu {

namespace {

/// Direct convolution (transposed too) in double or wrapping int64, parallel over (image,
/// output channel); the accumulator is that channel's output plane. A convolution reads
/// x[i] for out[y] with i = y * stride - pad + k * dil (a gather over output positions); a
/// transposed one adds x[i] * w into out[y] at the same relation read the other way (a scatter
/// over input positions). Either way the innermost loop runs over a range of the last spatial
/// dim computed once, with no per-element division or bounds test.
sdk::Status direct(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out, bool transposed,
                   tbb::task_arena& arena) {
  const bool fp = isFloatDtype(x.dtype);
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, P = g.outP();
  const std::array<int64_t, 3>& rows = transposed ? g.in : g.out;  // the positions the loops walk
  const double* xd = x.dtype == PLUGSDK_DTYPE_F64 ? reinterpret_cast<const double*>(x.base) : nullptr;
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
              const uint64_t wi = fp ? 0 : static_cast<uint64_t>(loadInt(w.base, w.dtype, wAt));
              const int64_t off[3] = {k0 * g.dil[0] - g.pad[0], k1 * g.dil[1] - g.pad[1], k2 * g.dil[2] - g.pad[2]};
              for (int64_t r0 = 0; r0 < rows[0]; ++r0)
                for (int64_t r1 = 0; r1 < rows[1]; ++r1) {
                  // Gather: r is the output position y, the input is i = r * s + off. Scatter:
                  // r is the input position i, the output is y = r * s + off.
                  const int64_t a0 = r0 * g.stride[0] + off[0], a1 = r1 * g.stride[1] + off[1];
                  const std::array<int64_t, 3>& other = transposed ? g.out : g.in;
                  if (a0 < 0 || a0 >= other[0] || a1 < 0 || a1 >= other[1]) continue;
                  const auto [lo, hi] = insideRange(off[2], g.stride[2], other[2], rows[2]);
                  const int64_t i0 = transposed ? r0 : a0, i1 = transposed ? r1 : a1;
                  const int64_t y0 = transposed ? a0 : r0, y1 = transposed ? a1 : r1;
                  const int64_t xRow = xAt(g, x, n, c, i0, i1, 0), accRow = (y0 * g.out[1] + y1) * g.out[2];
                  // x[t] feeds acc[t]: the input and accumulator indices of range position t.
                  const int64_t xStep = (transposed ? 1 : g.stride[2]) * g.xs[4],
                                xFirst = xRow + (transposed ? 0 : off[2]) * g.xs[4];
                  const int64_t accStep = transposed ? g.stride[2] : 1, accFirst = accRow + (transposed ? off[2] : 0);
                  if (xd) {
                    for (int64_t t = lo; t < hi; ++t)
                      accF[static_cast<size_t>(accFirst + t * accStep)] += xd[xFirst + t * xStep] * wf;
                  } else if (fp) {
                    for (int64_t t = lo; t < hi; ++t)
                      accF[static_cast<size_t>(accFirst + t * accStep)] +=
                          loadDouble(x.base, x.dtype, xFirst + t * xStep) * wf;
                  } else {
                    for (int64_t t = lo; t < hi; ++t)
                      accI[static_cast<size_t>(accFirst + t * accStep)] +=
                          static_cast<uint64_t>(loadInt(x.base, x.dtype, xFirst + t * xStep)) * wi;
                  }
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
  const bool wFlat = weightsFlat(g);
  const bool outDirect = outputDirect(g, out);
  const bool pointwise = kv == 1 && g.stride == std::array<int64_t, 3>{1, 1, 1} &&
                         g.pad == std::array<int64_t, 3>{0, 0, 0} && x.dtype == PLUGSDK_DTYPE_F32 && g.xs[4] == 1 &&
                         g.xs[3] == g.in[2] && g.xs[2] == g.in[1] * g.in[2];
  float* wcopy = wFlat ? nullptr : static_cast<float*>(ctx.scratch->get(2, static_cast<size_t>(g.o * K) * 4));
  float* ctemp = outDirect ? nullptr : static_cast<float*>(ctx.scratch->get(3, static_cast<size_t>(g.n * og * P) * 4));
  if ((!wFlat && !wcopy) || (!outDirect && !ctemp))
    return sdk::resourceExhausted("convolution: no memory for its weights or result in f32");
  if (!wFlat) copyWeights(g, w, wcopy);
  const bool fuse = epilogueFuses(g, out, ctx);
  auto epilogue = [&](int64_t n, int64_t channel, int64_t p0, int64_t p1) {
    runEpilogueOn(g, ctx, n, channel, p0, p1);
  };
  // Few positions per image (deep layers: 7 x 7 = 49) fill the micro-kernel's column panels
  // badly (49 columns take two 32-wide panels): the images are then folded into the
  // columns, one GEMM of N * P columns into a temporary, each block copied out (from L2)
  // as it finishes.
  const int64_t nr = ctx.gemm->shape.nr;
  auto fill = [nr](int64_t cols) { return panelFill(cols, nr); };
  const bool fold = !pointwise && outDirect && g.n > 1 && fill(P) < 0.95 && fill(g.n * P) > fill(P);
  float* ftemp = fold ? static_cast<float*>(ctx.scratch->get(4, static_cast<size_t>(og * g.n * P) * 4)) : nullptr;
  if (fold && !ftemp) return sdk::resourceExhausted("convolution: no memory for its folded result");
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    GemmProblem pr;
    pr.batch = fold ? 1 : g.n;
    pr.m = og;
    pr.n = fold ? g.n * P : P;
    pr.k = K;
    pr.a = weightOperand(g, w, wcopy, grp);
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

/// Transposed convolution as GEMM + col2im. Per group, a chunk of images is one batched
/// GEMM: the columns cols[(oi, q), p] = sum_ci w[grp * cg + ci, oi, q] * x[n, grp * cg + ci, p]
/// over input positions p ([og * kvol, cg] @ [cg, P_in], the weights read in place when each
/// [oi, q...] block is row-major; few positions per image fold the images into the columns).
/// Then each column adds into the output positions
/// y = p * stride - pad + q * dil it reaches (col2im), parallel over (image, output channel),
/// each task owning its output plane, accumulated in f32 like the GEMM.
sdk::Status transposedViaGemm(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out,
                              const LibraryContext& ctx) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, kv = g.kVol(), M = og * kv, Pin = g.inP(), Pout = g.outP();
  const bool wFlat = weightsFlat(g);
  const bool xFlat = g.xs[4] == 1 && g.xs[3] == g.in[2] && g.xs[2] == g.in[1] * g.in[2];
  // Images per GEMM: a chunk's columns stay under 8 Mi floats (32 MiB).
  const int64_t chunk = std::clamp<int64_t>((int64_t{8} << 20) / std::max<int64_t>(1, M * Pin), 1, g.n);
  const size_t colBytes = static_cast<size_t>(chunk * M * Pin) * sizeof(float);
  float* wcopy = wFlat ? nullptr : static_cast<float*>(ctx.scratch->get(2, static_cast<size_t>(g.c * M) * 4));
  float* cols = static_cast<float*>(ctx.scratch->get(5, colBytes));
  if (!cols || (!wFlat && !wcopy))
    return sdk::resourceExhausted("transposed convolution: no memory for its columns (" + std::to_string(colBytes) +
                                  " bytes)");
  if (!wFlat) copyWeights(g, w, wcopy);
  const bool outF32 =
      out.dtype == PLUGSDK_DTYPE_F32 && g.os[4] == 1 && g.os[3] == g.out[2] && g.os[2] == g.out[1] * g.out[2];
  const int64_t nr = ctx.gemm->shape.nr;
  auto fill = [nr](int64_t cols) { return panelFill(cols, nr); };
  for (int64_t grp = 0; grp < g.groups; ++grp)
    for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
      const int64_t nb = std::min(chunk, g.n - n0);
      GemmProblem pr;
      pr.batch = nb;
      pr.m = M;
      pr.n = Pin;
      pr.k = cg;
      if (wFlat)
        pr.a = {w.base + (w.offset + grp * cg * g.ws[0]) * dtypeBytes(w.dtype), gemmElementOf(w.dtype), 1, g.ws[0], 0};
      else
        pr.a = {wcopy + grp * cg * M, GemmElement::kF32, 1, M, 0};
      // Few input positions per image (deep layers: 1 x 1, 2 x 2) fill the micro-kernel's
      // column panels badly: the chunk's images are then folded into the columns, j = (b, p).
      const bool fold = nb > 1 && fill(Pin) < 0.95 && fill(nb * Pin) > fill(Pin);
      if (xFlat && !fold) {
        pr.b = {x.base + xAt(g, x, n0, grp * cg, 0, 0, 0) * dtypeBytes(x.dtype), gemmElementOf(x.dtype), g.xs[1], 1,
                g.xs[0]};
      } else {
        if (fold) {
          pr.batch = 1;
          pr.n = nb * Pin;
        }
        pr.b.pack = [&, grp, n0, fold](int64_t b, int64_t k0, int64_t depth, int64_t j0, int64_t count, int width,
                                       float* dst) {
          const int64_t panels = (count + width - 1) / width;
          for (int64_t p = 0; p < panels; ++p)
            for (int64_t i = 0; i < width; ++i) {
              const int64_t j = j0 + p * width + i, img = n0 + (fold ? j / Pin : b), q = fold ? j % Pin : j;
              const bool real = p * width + i < count;
              const int64_t at =
                  real ? xAt(g, x, img, grp * cg + k0, q / (g.in[1] * g.in[2]), (q / g.in[2]) % g.in[1], q % g.in[2])
                       : 0;
              for (int64_t kk = 0; kk < depth; ++kk)
                dst[(p * depth + kk) * width + i] =
                    real ? static_cast<float>(loadDouble(x.base, x.dtype, at + kk * g.xs[1])) : 0.0f;
            }
        };
      }
      pr.c = cols;
      pr.ldc = pr.n;
      pr.batchStrideC = M * Pin;
      GemmOptions opt;
      opt.arena = ctx.arena;
      sdk::Status st = gemm(*ctx.gemm, pr, opt);
      if (!st.isOk()) return st;
      ctx.arena->execute([&] {
        tbb::parallel_for(int64_t{0}, nb * og, [&](int64_t task) {
          const int64_t b = task / og, oi = task % og, o = grp * og + oi;
          std::vector<float> acc(static_cast<size_t>(Pout), 0.0f);
          for (int64_t q = 0; q < kv; ++q) {
            const int64_t off[3] = {(q / (g.k[1] * g.k[2])) * g.dil[0] - g.pad[0],
                                    ((q / g.k[2]) % g.k[1]) * g.dil[1] - g.pad[1], (q % g.k[2]) * g.dil[2] - g.pad[2]};
            const int64_t m = oi * kv + q;
            const float* col = fold ? cols + m * nb * Pin + b * Pin : cols + (b * M + m) * Pin;
            const auto [lo, hi] = insideRange(off[2], g.stride[2], g.out[2], g.in[2]);
            for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
              for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
                const int64_t y0 = i0 * g.stride[0] + off[0], y1 = i1 * g.stride[1] + off[1];
                if (y0 < 0 || y0 >= g.out[0] || y1 < 0 || y1 >= g.out[1]) continue;
                float* row = acc.data() + (y0 * g.out[1] + y1) * g.out[2] + off[2];
                const float* src = col + (i0 * g.in[1] + i1) * g.in[2];
                for (int64_t t = lo; t < hi; ++t) row[t * g.stride[2]] += src[t];
              }
          }
          const int64_t base = out.offset + (n0 + b) * g.os[0] + o * g.os[1];
          if (outF32) {
            std::memcpy(reinterpret_cast<float*>(out.base) + base, acc.data(), static_cast<size_t>(Pout) * 4);
            return;
          }
          for (int64_t p = 0; p < Pout; ++p)
            storeDouble(out.base, out.dtype,
                        base + (p / (g.out[1] * g.out[2])) * g.os[2] + ((p / g.out[2]) % g.out[1]) * g.os[3] +
                            (p % g.out[2]) * g.os[4],
                        acc[static_cast<size_t>(p)]);
        });
      });
    }
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
  if (floatPath && *transposed) return transposedViaGemm(*g, x, w, out, ctx);
  if (floatPath && ctx.shiftedConv && shiftedRowsApplies(*g, *ctx.gemm)) return viaShiftedRows(*g, x, w, out, ctx);
  if (floatPath) return viaGemm(*g, x, w, out, ctx);
  return direct(*g, x, w, out, *transposed, *ctx.arena);
}

}  // namespace plugsdk::cpu
