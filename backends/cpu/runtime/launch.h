// Running a compiled kernel: the grid evaluated for the launch's symbol values, the work
// split into tasks for oneTBB (the number of tasks chosen from the work's size, so small
// launches run on the calling thread), the first error any task reports turned into a
// Status naming the kernel. A PreparedLaunch can also run parts of its grid: a library
// call runs its fused epilogue on each block of its result as soon as the block is final.
#pragma once

#include <cstdint>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "backends/cpu/kernel_compiler.h"

namespace plugsdk::cpu {

/// Element-operations below which a launch runs on the calling thread (a task costs a few
/// microseconds to hand out; this is about 10 us of work).
constexpr int64_t kMinParallelWork = 1 << 15;

/// One launch of a kernel, ready to run: arguments, symbols, the evaluated grid.
class PreparedLaunch {
 public:
  /// Evaluates the grid; errors name the kernel.
  static sdk::StatusOr<PreparedLaunch> prepare(const CompiledKernel& k, std::vector<void*> args,
                                               std::vector<int64_t> symbols);
  PreparedLaunch(PreparedLaunch&& o) noexcept;
  PreparedLaunch(const PreparedLaunch&) = delete;

  const std::vector<int64_t>& grid() const { return grid_; }
  int64_t outer() const { return outer_; }  ///< the product of all grid dims but the last
  int64_t inner() const { return inner_; }  ///< the last grid dim (1 for rank 0)

  /// Runs outer points [o0, o1) x inner [i0, i1) on the calling thread (thread-safe: parts
  /// may run concurrently).
  void runRange(int64_t o0, int64_t o1, int64_t i0, int64_t i1) const;
  /// Runs outer points [o0, o1) (every inner point), in parallel inside `arena` when the
  /// work is large enough.
  void runParallel(tbb::task_arena& arena, int64_t o0, int64_t o1) const;
  /// The first error any part reported (a failed CHECK, a division by zero), or OK.
  sdk::Status status() const;

 private:
  PreparedLaunch(const CompiledKernel& k) : k_(&k) {}
  const CompiledKernel* k_;
  std::vector<void*> args_;
  std::vector<int64_t> symbols_, grid_;
  int64_t outer_ = 1, inner_ = 1, perPoint_ = 1;
  mutable int32_t status_ = 0;
  lowering::CallFrame frame_{};
};

/// Runs `k` with argument base pointers `args` (launch offsets applied) and `symbols`,
/// inside `arena` (whose concurrency bounds the threads used).
sdk::Status launchKernel(const CompiledKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         tbb::task_arena& arena);

}  // namespace plugsdk::cpu
