// prims.convolution on the GPU through cuDNN: the call's strided descriptors (copied from
// compile_library) and attributes, their values at a launch, and the geometry cuDNN is
// given. cuDNN takes 2-d and 3-d convolutions (a 1-d one gets a unit spatial dim) on packed
// operands whose elements it can index with 32-bit integers: an operand in another layout
// (strided, misaligned) is copied into a packed temporary first (cudnnTransformTensor), and
// a batch too large is run in chunks of images. Pure logic, tested without a GPU
// (tests/conv_plan_test.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/library/matmul_plan.h"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::cuda {

/// A copy of what compile_library borrowed: x [N, C, S...], w [OC, C / groups, K...] and the
/// result [N, OC, S'...] (1 to 3 spatial dims), the attributes as integers.
struct ConvCall {
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<std::string> symbols;
  OperandDesc x, w, out;
  std::vector<int64_t> stride, padding, dilation;  ///< one per spatial dim
  int64_t groups = 1;
  /// Checks ranks, dtypes and attributes (a transposed convolution, symbolic padding: UNIMPLEMENTED).
  static sdk::StatusOr<ConvCall> from(const sdk::LibraryCall& c);
};

/// One operand's values at a launch (elements).
struct TensorValue {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t numel() const;
  /// Row-major with no gaps (size-1 dims' strides ignored).
  bool packed() const;
};

/// `d`'s sizes, strides and offset for `symbols` (a launch's values).
sdk::StatusOr<TensorValue> evalOperand(sdk::Span<const plugsdk_index_insn_t> pool, const OperandDesc& d,
                                       const std::vector<int64_t>& symbols);

/// The operands' values at one launch; the sizes checked against each other.
struct ConvShape {
  TensorValue x, w, out;
  static sdk::StatusOr<ConvShape> eval(const ConvCall& c, sdk::Span<const int64_t> symbols);
};

/// What cuDNN is given: rank 4 or 5 descriptors (a 1-d convolution's unit dim inserted before
/// its one spatial dim) for `images` images at a time.
struct DnnGeometry {
  int rank = 4;                            ///< 4 (2-d) or 5 (3-d)
  std::vector<int> x, xStrides;            ///< x as it lies (for the copy into a packed x, when needed)
  std::vector<int> y, yStrides;            ///< the result as it lies
  std::vector<int> w, wStrides;            ///< the weight as it lies
  std::vector<int> pad, stride, dilation;  ///< rank - 2 each
  bool xPacked = true, yPacked = true, wPacked = true;
  int64_t images = 0;              ///< images per cuDNN call (the batch in chunks)
  int64_t xImage = 0, yImage = 0;  ///< elements between images in x and in the result
  /// The call computed as cuDNN's weight gradient (weightGradientForm): x is the forward's
  /// input [N, C, ...], w its output gradient [N, K, ...], y the weight gradient [K, C, ...].
  bool weightGradient = false;
  std::string describe() const;  ///< "x [..] w [..] -> y [..], pad .. stride .. dilation .., N per call"
};

/// The geometry for `s`, or an error naming a size or stride past 32 bits (one image, or a
/// dim of the weight) that no chunking helps. Images are chunked so that each call's x and
/// result stay below 2^31 elements.
sdk::StatusOr<DnnGeometry> dnnGeometry(const ConvCall& c, const ConvShape& s);

/// A training step's weight gradient reaches the plugin as a plain convolution of the input
/// with channels and batch swapped (x' [C, N, H, W]) by the output gradient, likewise swapped
/// (w' [K, N, H', W'], the "filter" as large as an image), giving the gradient swapped
/// (y' [C, K, R, S]), with stride and dilation exchanged (core/decomp/rules_backward_nn.cc).
/// cuDNN's forward kernels run a filter that size slowly; its weight-gradient kernels compute
/// the same sums. True when `g` has that shape: one group, one call for the batch, and a
/// filter with more points than the result.
bool isWeightGradient(const DnnGeometry& g, int64_t groups);

/// `g` as cuDNN's weight gradient: dims 0 and 1 of each operand swapped back (views: no
/// copy when the forward's tensors are packed), stride and dilation exchanged.
DnnGeometry weightGradientForm(const DnnGeometry& g);

/// The packed strides of `dims` (row-major).
std::vector<int> packedStrides(const std::vector<int>& dims);

}  // namespace plugsdk::cuda
