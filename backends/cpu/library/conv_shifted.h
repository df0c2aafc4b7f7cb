// Stride-1 convolutions as a GEMM that packs nothing: B's rows are read in place from a
// zero-padded copy of the input through a table of row offsets (conv_shifted.cc).
#pragma once

#include "backends/cpu/library/conv_geometry.h"
#include "backends/cpu/library/gemm.h"

namespace plugsdk::cpu {

/// Whether the shifted-rows path runs this (non-transposed, floating) convolution: stride 1,
/// a window larger than one element, at least a micro-kernel's rows of output channels per
/// group, and at most 20% of the computed columns wasted on the padded rows' margins.
bool shiftedRowsApplies(const Geometry& g, const GemmKernels& kernels);

/// out = conv(x, w) by the shifted-rows GEMM. With the image zero-padded to Pd0 x Pd1 x Pd2
/// and output positions numbered over the padded row width, q = (y0 * Pd1 + y1) * Pd2 + y2,
/// the input that position q reads for kernel offset k = (c, a0, a1, a2) is the padded
/// image's element rows[k] + q, rows[k] = c * plane + (a0 * d0 * Pd1 + a1 * d1) * Pd2 + a2 * d2:
/// B(k, q) is a row of the padded input shifted by a constant. Columns whose y1 or y2 lie in
/// the margin are computed and dropped when each block of the result is copied out (the
/// fused epilogue runs then).
sdk::Status viaShiftedRows(const Geometry& g, const TensorRef& x, const TensorRef& w, const TensorRef& out,
                           const LibraryContext& ctx);

}  // namespace plugsdk::cpu
