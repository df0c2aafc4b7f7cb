// max-autotune: a specialization compiled under several schedule configurations (fusion
// settings: how much is recomputed per consumer, horizontal fusion, multi-reductions), each
// timed on the device over synthetic inputs of the call's sizes, the fastest kept. The
// variants are device-neutral data; what wins depends on the device's kernels.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/plugin/device_program.h"

namespace plugsdk::cache {

struct ScheduleVariant {
  std::string name;  ///< "default", "recompute=0", ...
  compile::CompileOptions options;
};

/// The variants tried: `base` first, then changes to its fusion caps.
std::vector<ScheduleVariant> scheduleVariants(const compile::CompileOptions& base);

struct TunedProgram {
  std::unique_ptr<plugin::DeviceProgram> program;
  sched::Program scheduled;                            ///< the winner as scheduled (for the disk cache)
  std::vector<std::pair<std::string, double>> millis;  ///< each variant's median time (ms); -1: failed to compile
  std::string winner;
};

/// Compiles `graph` under every variant, times each (median of `repeats` runs of the whole
/// program on inputs of `inputShapes`: floats normal, integers 0) and keeps the fastest.
/// Fails only when no variant compiles.
StatusOr<TunedProgram> autotune(const ir::Context& ctx, const plugin::Device& device, const ir::Graph& graph,
                                const std::vector<ScheduleVariant>& variants,
                                const std::vector<std::vector<int64_t>>& inputShapes, int repeats = 5);

}  // namespace plugsdk::cache
