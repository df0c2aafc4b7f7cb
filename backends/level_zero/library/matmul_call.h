// prims.matmul as the level_zero plugin runs it: the call's strided descriptors (copied from
// compile_library), their values at a launch, and the launches of the tiled kernel
// (matmul_spirv.h) they become: the innermost batch dim as the third group id, the outer
// batch dims looped over by the host. Pure logic, tested without a device.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backends/level_zero/library/matmul_spirv.h"
#include "backends/level_zero/library/operand.h"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::level_zero::library {

/// A copy of what compile_library borrowed: a [..., M, K], b [..., K, N], the result
/// [..., M, N] (equal ranks >= 2, f32), and their index pool.
struct MatmulCall {
  std::vector<plugsdk_index_insn_t> pool;
  OperandDesc a, b, out;
  /// INVALID_ARGUMENT / UNIMPLEMENTED naming what the tiled kernel does not take.
  static sdk::StatusOr<MatmulCall> from(const sdk::LibraryCall& c);
};

/// One launch of the tiled kernel: where a, b and c start (elements past the buffers'
/// launch offsets), the work-groups, and the kernel's i64 parameters in their order.
struct MatmulLaunch {
  int64_t aOffset = 0, bOffset = 0, cOffset = 0;
  std::array<uint64_t, 3> groups{};
  std::array<int64_t, kMatmulScalars> scalars{};
};

/// The launches for these symbol values (none when the result is empty; a zero K still
/// launches, writing zeros). An error names the operand and dim whose expression failed or
/// the sizes that disagree.
sdk::StatusOr<std::vector<MatmulLaunch>> planLaunches(const MatmulCall& c, sdk::Span<const int64_t> symbols);

}  // namespace plugsdk::level_zero::library
