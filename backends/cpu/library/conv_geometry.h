// The shape of one prims.convolution as the CPU backend's convolution paths see it
// (conv.cc, conv_shifted.cc): sizes and strides in rank 3 (1-d and 2-d convolutions get
// leading unit dims), and the helpers the paths share: element offsets, weight copies and
// the fused epilogue run on pieces of the output.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "backends/cpu/library/elements.h"
#include "backends/cpu/library/gemm.h"
#include "backends/cpu/library/library_call.h"
#include "backends/cpu/library/library_ops.h"

namespace plugsdk::cpu {

struct Geometry {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  // Strides (elements) of x, w, out: [batch, channel, s0, s1, s2] / [c0, c1, k0, k1, k2].
  std::array<int64_t, 5> xs{}, ws{}, os{};
  int64_t inP() const { return in[0] * in[1] * in[2]; }
  int64_t outP() const { return out[0] * out[1] * out[2]; }
  int64_t kVol() const { return k[0] * k[1] * k[2]; }
};

/// The geometry of out = conv(x, w) under the op's attributes (stride, padding, dilation,
/// groups); INVALID_ARGUMENT for ranks or attributes that do not fit.
sdk::StatusOr<Geometry> geometry(const TensorRef& x, const TensorRef& w, const TensorRef& out, const Attributes& a);

/// The element offset of x[n, c, i0, i1, i2].
int64_t xAt(const Geometry& g, const TensorRef& x, int64_t n, int64_t c, int64_t i0, int64_t i1, int64_t i2);

/// The positions t in [0, count) where first + t * step lies in [0, limit): [lo, hi).
std::pair<int64_t, int64_t> insideRange(int64_t first, int64_t step, int64_t limit, int64_t count);

/// The weights [d0, d1, k...] (either layout: [O, C/groups, k...] or, transposed,
/// [C, O/groups, k...]) copied row-major into f32, for a GEMM operand read in place.
void copyWeights(const Geometry& g, const TensorRef& w, float* dst);

/// The weights of group `grp` as a GEMM's A operand [og, cg * kvol]. `copy` is null when
/// each group's block is row-major (read in place, f32, f16 or bf16), else the whole weight
/// tensor copied by copyWeights.
GemmOperand weightOperand(const Geometry& g, const TensorRef& w, const float* copy, int64_t grp);

/// Whether weightOperand can read the weights in place (no copy needed).
bool weightsFlat(const Geometry& g);

/// The share of a GEMM's column panels (nr wide) that `cols` columns fill.
double panelFill(int64_t cols, int64_t nr);

/// Whether out is f32 and row-major over (channel, positions) within each image, so a GEMM
/// can write it directly.
bool outputDirect(const Geometry& g, const TensorRef& out);

/// Whether the call's epilogue can run on pieces of the output as they are final: its grid
/// is the output's [N, O, s...] (outer points (n, o, s but the last), inner the last spatial
/// dim) and the output is written directly.
bool epilogueFuses(const Geometry& g, const TensorRef& out, const LibraryContext& ctx);

/// Runs the fused epilogue on output positions [p0, p1) (row-major over the spatial dims)
/// of channel `channel` of image n.
void runEpilogueOn(const Geometry& g, const LibraryContext& ctx, int64_t n, int64_t channel, int64_t p0, int64_t p1);

}  // namespace plugsdk::cpu
