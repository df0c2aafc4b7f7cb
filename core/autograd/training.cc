// buildTraining: decompose -> buildJoint -> partitionJoint.
#include "core/autograd/training.h"

#include <chrono>

#include "core/decomp/decompose.h"

namespace plugsdk::autograd {
namespace {
double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

StatusOr<Training> buildTraining(const ir::Context& ctx, const ir::Graph& graph, const JointSpec& spec,
                                 const PartitionOptions& options) {
  Training t;
  auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(ir::Graph prims, decomp::decompose(ctx, decomp::makeDefaultDecompositions(), graph));
  t.stageSeconds.push_back({"prims", secondsSince(t0)});
  t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(JointGraph joint, buildJoint(ctx, prims, spec, makeVjpTable()));
  t.jointNodes = joint.graph.nodes().size();
  t.stageSeconds.push_back({"joint", secondsSince(t0)});
  t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(t.graphs, partitionJoint(ctx, joint, options));
  t.stageSeconds.push_back({"partition", secondsSince(t0)});
  return t;
}

}  // namespace plugsdk::autograd
