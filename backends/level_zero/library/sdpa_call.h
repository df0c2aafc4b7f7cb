// prims.sdpa as the level_zero plugin runs it: the call's strided descriptors and attributes
// (copied at compile_library), their values at a launch, and the launches of the
// flash-attention kernel (sdpa_spirv.h) they become: the two innermost batch dims as the
// groups' y and z (one past kMaxGroups is looped instead), the others looped by the host.
// Pure logic, tested without a device.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/level_zero/library/operand.h"
#include "backends/level_zero/library/sdpa_spirv.h"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::level_zero::library {

/// A copy of what compile_library borrowed: q [..., L, E], k [..., S, E], v [..., S, Ev], an
/// optional mask [..., L, S] (bool or f32), the result [..., L, Ev] and the f32 logsumexp
/// [..., L]; the attributes.
struct SdpaCall {
  std::vector<plugsdk_index_insn_t> pool;
  OperandDesc q, k, v, mask, out, lse;
  SdpaMask maskKind = SdpaMask::kNone;
  bool causal = false;
  std::optional<double> scale;  ///< none: 1 / sqrt(E)
  /// INVALID_ARGUMENT / UNIMPLEMENTED naming what the kernel does not take (another dtype,
  /// dropout).
  static sdk::StatusOr<SdpaCall> from(const sdk::LibraryCall& c);
};

/// The operands in the order of the kernel's pointers (the mask's absent without one).
enum SdpaOperand { kSdpaOpQ, kSdpaOpK, kSdpaOpV, kSdpaOpMask, kSdpaOpOut, kSdpaOpLse, kSdpaOps };

/// One launch: where each operand starts (elements past its buffer's launch offset), the
/// work-groups, and the kernel's i64 parameters (SdpaScalar order).
struct SdpaLaunch {
  std::array<int64_t, kSdpaOps> offsets{};
  std::array<uint64_t, 3> groups{};
  std::array<int64_t, kSdpaScalars> scalars{};
};

/// The launches for these symbol values (none when there is no query row or batch element).
/// An error names the operand whose expression failed, the sizes that disagree, or a head
/// dim past kSdpaHeadDimMax.
sdk::StatusOr<std::vector<SdpaLaunch>> planSdpaLaunches(const SdpaCall& c, sdk::Span<const int64_t> symbols);

}  // namespace plugsdk::level_zero::library
