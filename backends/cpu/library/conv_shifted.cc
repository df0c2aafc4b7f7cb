// Stride-1 convolutions as a GEMM over shifted rows of the zero-padded input (conv_shifted.h).
//
// The im2col GEMM (conv.cc) packs every (input channel, kernel offset) row of B for every
// block of columns and reuses it for only og output channels: with 64 channels that packing
// costs about as much as the multiply-adds it feeds. Here nothing is packed but the weights
// (once per call): the padded copy is a single pass over the input, and the micro-kernel
// reads each B row in place at its offset. The price is the margin columns (2 of every 58
// for a 56-wide 3x3 layer), computed and dropped.
#include "backends/cpu/library/conv_shifted.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace plugsdk::cpu {

namespace {

/// The padded image, split into stride phases: padded position i (per spatial dim) lives in
/// phase i % stride at i / stride, so that a strided window is a shifted row of one phase.
/// dims: a phase plane's; plane: its elements; channel: a channel's phases; image: an
/// image's channels plus the slack the micro-kernel may read past the last column.
struct Padded {
  std::array<int64_t, 3> dims{}, phases{};
  int64_t plane = 0, channel = 0, image = 0;
};

Padded padded(const Geometry& g, int64_t nr) {
  Padded p;
  int64_t phases = 1;
  for (int i = 0; i < 3; ++i) {
    p.phases[i] = g.stride[i];
    p.dims[i] = (g.in[i] + 2 * g.pad[i] + g.stride[i] - 1) / g.stride[i];
    phases *= g.stride[i];
  }
  p.plane = p.dims[0] * p.dims[1] * p.dims[2];
  p.channel = phases * p.plane;
  p.image = g.c * p.channel + nr;
  return p;
}

/// The columns the GEMM computes: up to the last output position in the phase planes'
/// numbering, q = (y0 * dims1 + y1) * dims2 + y2.
int64_t shiftedColumns(const Geometry& g, const Padded& p) {
  return ((g.out[0] - 1) * p.dims[1] + (g.out[1] - 1)) * p.dims[2] + g.out[2];
}

/// Writes the zero-padded, phase-split f32 copy of every image, parallel over (image,
/// channel).
void padInput(const Geometry& g, const TensorRef& x, const Padded& p, float* dst, tbb::task_arena& arena) {
  const float* xf = x.dtype == PLUGSDK_DTYPE_F32 ? reinterpret_cast<const float*>(x.base) : nullptr;
  const bool unitStride = g.stride == std::array<int64_t, 3>{1, 1, 1};
  arena.execute([&] {
    tbb::parallel_for(int64_t{0}, g.n * g.c, [&](int64_t nc) {
      const int64_t n = nc / g.c, c = nc % g.c;
      float* row = dst + n * p.image + c * p.channel;
      for (int64_t b0 = 0; b0 < p.phases[0]; ++b0)
        for (int64_t b1 = 0; b1 < p.phases[1]; ++b1)
          for (int64_t b2 = 0; b2 < p.phases[2]; ++b2)
            for (int64_t r0 = 0; r0 < p.dims[0]; ++r0)
              for (int64_t r1 = 0; r1 < p.dims[1]; ++r1, row += p.dims[2]) {
                // Padded row (r * stride + phase) is input row s, or zeros outside the input.
                const int64_t s0 = r0 * g.stride[0] + b0 - g.pad[0], s1 = r1 * g.stride[1] + b1 - g.pad[1];
                if (s0 < 0 || s0 >= g.in[0] || s1 < 0 || s1 >= g.in[1]) {
                  std::memset(row, 0, static_cast<size_t>(p.dims[2]) * sizeof(float));
                  continue;
                }
                const int64_t from = xAt(g, x, n, c, s0, s1, 0);
                if (unitStride && xf && g.xs[4] == 1) {
                  std::memset(row, 0, static_cast<size_t>(g.pad[2]) * sizeof(float));
                  std::memcpy(row + g.pad[2], xf + from, static_cast<size_t>(g.in[2]) * sizeof(float));
                  std::memset(row + g.pad[2] + g.in[2], 0, static_cast<size_t>(g.pad[2]) * sizeof(float));
                  continue;
                }
                // Element t of the phase row is padded column t * stride + b2, input column s2.
                const auto [lo, hi] = insideRange(b2 - g.pad[2], g.stride[2], g.in[2], p.dims[2]);
                const int64_t first = b2 - g.pad[2];
                for (int64_t t = 0; t < lo; ++t) row[t] = 0.0f;
                if (xf)
                  for (int64_t t = lo; t < hi; ++t) row[t] = xf[from + (first + t * g.stride[2]) * g.xs[4]];
                else
                  for (int64_t t = lo; t < hi; ++t)
                    row[t] =
                        static_cast<float>(loadDouble(x.base, x.dtype, from + (first + t * g.stride[2]) * g.xs[4]));
                for (int64_t t = hi; t < p.dims[2]; ++t) row[t] = 0.0f;
              }
      if (c == g.c - 1)
        std::memset(dst + n * p.image + g.c * p.channel, 0,
                    static_cast<size_t>(p.image - g.c * p.channel) * sizeof(float));
    });
  });
}

/// B's row offsets for the kernel offsets of one group, k = (c, a0, a1, a2) row-major: the
/// window offset e = a * dil lies in phase e % stride, shifted by e / stride.
std::vector<int64_t> rowOffsets(const Geometry& g, const Padded& p) {
  const int64_t cg = g.c / g.groups;
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(cg * g.kVol()));
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t a0 = 0; a0 < g.k[0]; ++a0)
      for (int64_t a1 = 0; a1 < g.k[1]; ++a1)
        for (int64_t a2 = 0; a2 < g.k[2]; ++a2) {
          const int64_t e0 = a0 * g.dil[0], e1 = a1 * g.dil[1], e2 = a2 * g.dil[2];
          const int64_t phase = ((e0 % g.stride[0]) * p.phases[1] + e1 % g.stride[1]) * p.phases[2] + e2 % g.stride[2];
          rows.push_back(c * p.channel + phase * p.plane +
                         ((e0 / g.stride[0]) * p.dims[1] + e1 / g.stride[1]) * p.dims[2] + e2 / g.stride[2]);
        }
  return rows;
}

}  // namespace

bool shiftedRowsApplies(const Geometry& g, const GemmKernels& kernels) {
  const bool unitStride = g.stride == std::array<int64_t, 3>{1, 1, 1};
  if ((unitStride && g.kVol() == 1) || !kernels.microIndirect) return false;
  if (g.o / g.groups < kernels.shape.mr) return false;
  const Padded p = padded(g, kernels.shape.nr);
  return static_cast<double>(shiftedColumns(g, p)) <= 1.2 * static_cast<double>(g.outP());
}

sdk::Status viaShiftedRows(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out,
                           const LibraryContext& ctx) {
  const int64_t cg = g.c / g.groups, og = g.o / g.groups, K = cg * g.kVol();
  const Padded pd = padded(g, ctx.gemm->shape.nr);
  const int64_t cols = shiftedColumns(g, pd);
  const bool wFlat = weightsFlat(g), outDirect = outputDirect(g, out), fuse = epilogueFuses(g, out, ctx);
  float* wcopy = wFlat ? nullptr : static_cast<float*>(ctx.scratch->get(2, static_cast<size_t>(g.o * K) * 4));
  float* xpad = static_cast<float*>(ctx.scratch->get(6, static_cast<size_t>(g.n * pd.image) * 4));
  float* ctemp = static_cast<float*>(ctx.scratch->get(7, static_cast<size_t>(g.n * og * cols) * 4));
  if ((!wFlat && !wcopy) || !xpad || !ctemp)
    return sdk::resourceExhausted("convolution: no memory for its padded input (" + std::to_string(g.n * pd.image * 4) +
                                  " bytes) or result");
  if (!wFlat) copyWeights(g, w, wcopy);
  padInput(g, x, pd, xpad, *ctx.arena);
  const std::vector<int64_t> rows = rowOffsets(g, pd);
  const int64_t rowWidth = pd.dims[2], planeRows = pd.dims[1];
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    GemmProblem pr;
    pr.batch = g.n;
    pr.m = og;
    pr.n = cols;
    pr.k = K;
    pr.a = weightOperand(g, w, wcopy, grp);
    pr.b.data = xpad + grp * cg * pd.channel;
    pr.b.batchStride = pd.image;
    pr.b.rowOffsets = rows.data();
    pr.c = ctemp;
    pr.ldc = cols;
    pr.batchStrideC = og * cols;
    GemmOptions opt;
    opt.arena = ctx.arena;
    // Each finished block: its columns' rows within the output copied out, margins dropped.
    opt.onBlockDone = [&, grp](int64_t n, int64_t m0, int64_t m1, int64_t j0, int64_t j1) {
      for (int64_t m = m0; m < m1; ++m) {
        const int64_t channel = grp * og + m;
        const float* src = ctemp + (n * og + m) * cols;
        for (int64_t j = j0; j < j1;) {
          const int64_t row = j / rowWidth, y2 = j % rowWidth, y1 = row % planeRows, y0 = row / planeRows;
          const int64_t end = std::min(j1, (row + 1) * rowWidth);
          if (y1 < g.out[1] && y2 < g.out[2]) {
            const int64_t len = std::min(end - j, g.out[2] - y2), p0 = (y0 * g.out[1] + y1) * g.out[2] + y2;
            if (outDirect) {
              std::memcpy(reinterpret_cast<float*>(out.base) + out.offset + n * g.os[0] + channel * g.os[1] + p0,
                          src + j, static_cast<size_t>(len) * sizeof(float));
              if (fuse) runEpilogueOn(g, ctx, n, channel, p0, p0 + len);
            } else {
              const int64_t at = out.offset + n * g.os[0] + channel * g.os[1] + y0 * g.os[2] + y1 * g.os[3];
              for (int64_t t = 0; t < len; ++t) storeDouble(out.base, out.dtype, at + (y2 + t) * g.os[4], src[j + t]);
            }
          }
          j = end;
        }
      }
    };
    PLUGSDK_RETURN_IF_ERROR(gemm(*ctx.gemm, pr, opt));
  }
  if (fuse) *ctx.epilogueDone = true;
  return sdk::Status::ok();
}

}  // namespace plugsdk::cpu
