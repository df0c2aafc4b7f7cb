// How a kernel's grid points map onto work-items (docs/level-zero-backend.md, "How a kernel
// maps onto work-groups"): one work-item per point, or, for a kernel whose loops read rows
// (row reductions: softmax, norms, sums over the last dims), a work-group per point whose
// work-items share each loop's iterations and combine their accumulators through Workgroup
// memory (lower_group.cc). The cuda backend's kLoop / kGrid vote, by the same rule:
// accesses in loops that are contiguous along the loop's last variable vote for the
// work-group, those contiguous along the grid's last variable (column reductions) against.
#pragma once

#include <cstdint>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero::spirv {

/// The work-group size a row-reduction kernel gets at most (a power of two).
constexpr uint32_t kDefaultGroupSize = 256;
/// Loops shorter than this (every extent known) stay in one work-item per point.
constexpr int64_t kMinSpreadExtent = 16;

struct Mapping {
  /// 0: one work-item per grid point, any work-group size. Else a work-group of exactly this
  /// many work-items (a power of two, the module's LocalSize) per grid point.
  uint32_t groupSize = 0;
};

/// The mapping of `k` with work-groups of at most `maxGroupSize` (0: never a work-group):
/// the largest power of two not above the longest loop's extent when every extent is known.
Mapping chooseMapping(const sdk::KernelView& k, uint32_t maxGroupSize);

}  // namespace plugsdk::level_zero::spirv
