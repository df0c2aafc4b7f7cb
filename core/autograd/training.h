// Training graphs from an ATen-level graph: prim reduction, the joint graph (VJP rules) and
// the partition into forward and backward, timed per stage. What CompiledFunction compiles
// for a call whose inputs require grad, and what `plugsdk autograd` reports.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/autograd/partition.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"

namespace plugsdk::autograd {

struct Training {
  TrainingGraphs graphs;
  size_t jointNodes = 0;
  std::vector<std::pair<std::string, double>> stageSeconds;  ///< prims, joint, partition
};

StatusOr<Training> buildTraining(const ir::Context& ctx, const ir::Graph& graph, const JointSpec& spec,
                                 const PartitionOptions& options = {});

}  // namespace plugsdk::autograd
