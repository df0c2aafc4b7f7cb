// The compile pipeline of the C++ API: a captured ATen-level graph goes through prim
// reduction and scheduling to a Program, each stage optionally dumped (PLUGSDK_DUMP).
#pragma once

#include <string>

#include "core/decomp/decompose.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/sched/schedule.h"

namespace plugsdk::compile {

struct CompileOptions {
  decomp::DecompOptions decomp;
  sched::ScheduleOptions schedule;
  std::string dumpDir;  ///< empty: no dumps
};

/// Every option that changes the compiled program, as text (dumpDir excluded): part of the
/// persistent cache's key.
std::string optionsFingerprint(const CompileOptions& o);

/// Reads the environment at the API edge: PLUGSDK_DUMP=DIR sets dumpDir.
CompileOptions optionsFromEnvironment();

struct Compiled {
  ir::Graph prims;
  sched::Program program;
  sched::ScheduleStats stats;
};

/// graph -> prims -> program. Errors name the stage and the node.
StatusOr<Compiled> compileGraph(const ir::Context& ctx, const ir::Graph& graph, const CompileOptions& options);

}  // namespace plugsdk::compile
