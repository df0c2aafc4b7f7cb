// Running a compiled kernel: the grid evaluated for the launch's symbol values, the work
// split into tasks for oneTBB (the number of tasks chosen from the work's size, so small
// launches run on the calling thread), the first error any task reports turned into a
// Status naming the kernel.
#pragma once

#include <cstdint>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "backends/cpu/kernel_compiler.h"

namespace plugsdk::cpu {

/// Element-operations below which a launch runs on the calling thread (a task costs a few
/// microseconds to hand out; this is about 10 us of work).
constexpr int64_t kMinParallelWork = 1 << 15;

/// Runs `k` with argument base pointers `args` (launch offsets applied) and `symbols`,
/// inside `arena` (whose concurrency bounds the threads used).
sdk::Status launchKernel(const CompiledKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         tbb::task_arena& arena);

}  // namespace plugsdk::cpu
