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
// The launch runs at least as many work-items in dimension 0 as the grid has points (the
// product of its extents: SpirvKernel::points tells how to compute it), any work-group size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/validate.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero::spirv {

struct SpirvKernel {
  std::vector<uint32_t> words;
  std::string entry;
  std::vector<std::string> checkMessages;  ///< CHECK ordinal -> message (status kStatusCheckBase + ordinal)
  size_t numArgs = 0;
  size_t numSymbols = 0;
};

/// Lowers `k` (validated with KernelView::validate) to a module whose one entry point is
/// `entry`. UNIMPLEMENTED naming the kernel and statement for what this mapping does not do.
sdk::StatusOr<SpirvKernel> lowerKernel(const sdk::KernelView& k, const std::string& entry);

struct CompileOptions {
  TargetEnv env = TargetEnv::kOpenCL2_0;
  /// SPIRV-Tools' optimizer (optimize.h: kernelPasses), the result validated again; the
  /// plugin's option spirv_opt=off turns it off.
  bool optimize = true;
};

/// lowerKernel, then validation (and the optimizer, and validation again): INTERNAL with the
/// validator's message and the disassembly for a module SPIRV-Tools rejects (a bug of this
/// backend, never the kernel's).
sdk::StatusOr<SpirvKernel> compileKernel(const sdk::KernelView& k, const std::string& entry,
                                         const CompileOptions& options = {});

}  // namespace plugsdk::level_zero::spirv
