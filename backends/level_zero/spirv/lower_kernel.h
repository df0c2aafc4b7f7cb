// Kernel IR (the ABI's plugsdk_kernel_t, read through sdk::KernelView) -> a SPIR-V module of
// the OpenCL kernel flavour, validated by SPIRV-Tools. The first mapping: one work-item per
// grid point (global id 0 over the flattened grid, guarded by `< total`), reduction loops as
// structured loops with scalar accumulators, combining stores as atomics or compare-and-swap
// loops. See docs/level-zero-backend.md.
//
// The entry point's parameters, in order (what a launch sets):
//   one CrossWorkgroup pointer per kernel argument, to its storage type (bool as uchar,
//     bf16 as ushort, f16 as half), in the kernel's argument order;
//   the status word (CrossWorkgroup uint*: 0 before the launch; a failing work-item writes
//     backends/llvm_lowering/frame.h's code once, first one wins, and returns);
//   one i64 per size symbol, in the kernel's symbols order.
// The launch, one work-item per point (groupSize 0): at least as many work-items in
// dimension 0 as the grid has points (the product of its extents), any work-group size. A
// work-group per point (groupSize > 0, mapping.h): exactly one work-group of groupSize
// work-items (the module's LocalSize) per point, groups numbered by point in dimension 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/mapping.h"
#include "backends/level_zero/spirv/validate.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero::spirv {

struct SpirvKernel {
  std::vector<uint32_t> words;
  std::string entry;
  std::vector<std::string> checkMessages;  ///< CHECK ordinal -> message (status kStatusCheckBase + ordinal)
  size_t numArgs = 0;
  size_t numSymbols = 0;
  uint32_t groupSize = 0;  ///< 0: a work-item per grid point; else a work-group of this size per point
};

/// Lowers `k` (validated with KernelView::validate) to a module whose one entry point is
/// `entry`, with work-groups of `groupSize` per point (0: a work-item per point; mapping.h),
/// a spread loop dealt in contiguous chunks or strided (CompileOptions::contiguousChunks).
/// UNIMPLEMENTED naming the kernel and statement for what this mapping does not do.
/// `subgroupSlots` (group mode): 0, every combine a tree over the work-group's slots; else
/// sums go through sub-groups first (CompileOptions::minSubgroupSize), then a tree over this
/// many slots (at least the number of sub-groups).
sdk::StatusOr<SpirvKernel> lowerKernel(const sdk::KernelView& k, const std::string& entry, uint32_t groupSize = 0,
                                       bool contiguousChunks = false, uint32_t subgroupSlots = 0);

struct CompileOptions {
  TargetEnv env = TargetEnv::kOpenCL2_0;
  /// SPIRV-Tools' optimizer (optimize.h: kernelPasses), the result validated again; the
  /// plugin's option spirv_opt=off turns it off.
  bool optimize = true;
  /// Row-reduction kernels get a work-group of at most this many work-items per grid point
  /// (chooseMapping; 0: always one work-item per point). The plugin's option group_size.
  uint32_t maxGroupSize = kDefaultGroupSize;
  /// How a spread loop deals its positions: false, work-item t takes t, t + size, ... (a
  /// GPU's neighbouring work-items read neighbouring elements); true, a contiguous chunk each
  /// (a CPU runs the work-items one after another: strided, each pass over the row would
  /// touch every cache line again). Measured on PoCL: docs/level-zero-backend.md.
  bool contiguousChunks = false;
  /// The device's smallest sub-group, for row sums' combine (lower_group.cc): each
  /// work-item's sum reduced over its sub-group first (OpGroupFAdd / OpGroupIAdd, Subgroup
  /// scope), then a tree over groupSize / minSubgroupSize slots, not groupSize. 0: the tree
  /// alone (and for max, min, prod, argmax, argmin always: their NaN and tie rules). A value
  /// at least the group size: the sub-group is the whole work-group (PoCL), no tree.
  uint32_t minSubgroupSize = 0;
};

/// lowerKernel, then validation (and the optimizer, and validation again): INTERNAL with the
/// validator's message and the disassembly for a module SPIRV-Tools rejects (a bug of this
/// backend, never the kernel's).
sdk::StatusOr<SpirvKernel> compileKernel(const sdk::KernelView& k, const std::string& entry,
                                         const CompileOptions& options = {});

}  // namespace plugsdk::level_zero::spirv
