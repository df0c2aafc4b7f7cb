// prims.convolution as the level_zero plugin runs it: the call's strided descriptors and
// attributes (copied at compile_library), their values at a launch, and the launches of the
// implicit-GEMM kernel (conv_spirv.h) they become. Pure logic, tested without a device.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backends/level_zero/library/conv_spirv.h"
#include "backends/level_zero/library/operand.h"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::level_zero::library {

/// A copy of what compile_library borrowed: x [N, C, S...], w [OC, C / groups, K...] and the
/// result [N, OC, S'...] (1 to 3 spatial dims, f32), the attributes as integers.
struct ConvCall {
  std::vector<plugsdk_index_insn_t> pool;
  OperandDesc x, w, out;
  std::vector<int64_t> stride, padding, dilation;  ///< one per spatial dim
  int64_t groups = 1;
  /// INVALID_ARGUMENT / UNIMPLEMENTED naming what the kernel does not take (another dtype, a
  /// transposed convolution, padding given by a size expression).
  static sdk::StatusOr<ConvCall> from(const sdk::LibraryCall& c);
};

/// One launch of the kernel: where x, w and y start (elements past the buffers' launch
/// offsets), the work-groups, and the kernel's i64 parameters (ConvScalar order).
struct ConvLaunch {
  int64_t xOffset = 0, wOffset = 0, yOffset = 0;
  std::array<uint64_t, 3> groups{};
  std::array<int64_t, kConvScalars> scalars{};
};

/// The launches for these symbol values: none when the result is empty; several when the
/// column tiles or the groups pass kMaxGroups. An error names the operand whose expression failed or
/// the sizes that disagree.
sdk::StatusOr<std::vector<ConvLaunch>> planConvLaunches(const ConvCall& c, sdk::Span<const int64_t> symbols);

}  // namespace plugsdk::level_zero::library
