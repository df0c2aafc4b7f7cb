// What launching a lowered kernel takes, whichever runtime runs it (OpenCL or Level Zero):
// the grid (one work-item per point, or a work-group of groupSize per point:
// spirv/lower_kernel.h's mappings) and the entry point's
// parameters in lower_kernel.h's order: one pointer per argument (a launch's byte offsets
// applied), the status word's address, one i64 per size symbol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero {

struct LaunchShape {
  std::string name;  ///< the kernel's, for messages
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_index_expr_t> grid;
  size_t numArgs = 0, numSymbols = 0;
  /// 0: one work-item per point, any work-group size; else exactly one work-group of this
  /// many work-items per point (the module's LocalSize: spirv/mapping.h).
  uint32_t groupSize = 0;

  static LaunchShape of(const sdk::KernelView& k);
  /// The grid's points for these symbol values (0: nothing to run): the work-items, or the
  /// work-groups when groupSize > 0.
  sdk::StatusOr<uint64_t> points(const std::vector<int64_t>& symbols) const;
};

/// One entry point parameter: `size` bytes at `value` (a pointer parameter's value is the
/// address of the pointer, as clSetKernelArg and zeKernelSetArgumentValue take it).
struct KernelParam {
  bool pointer;
  size_t size;
  const void* value;
};

/// The parameters in lower_kernel.h's order. They point into `args`, `status` and
/// `symbols`, which must outlive the returned vector's use.
std::vector<KernelParam> kernelParams(const std::vector<void*>& args, void* const& status,
                                      const std::vector<int64_t>& symbols);

}  // namespace plugsdk::level_zero
