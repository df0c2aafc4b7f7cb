// The joint graph: a prim graph's forward and its backward in one graph, built from the VJP
// table (vjp.h) by reverse accumulation. Its inputs are the forward's inputs followed by one
// tangent (the incoming cotangent) per differentiable output; its outputs are the forward's
// outputs followed by the gradient of each input that requires one and that any
// differentiable output depends on. The partitioner (partition.h) splits it into a forward
// that saves what the backward needs and a backward that reads it.
#pragma once

#include <string>
#include <vector>

#include "core/autograd/vjp.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::autograd {

struct JointSpec {
  /// Per forward input: whether its gradient is wanted (only floating inputs can have one).
  std::vector<bool> requiresGrad;
  /// Per forward output: false keeps it out of the backward (no tangent), e.g. a buffer's
  /// updated value. Empty: every floating output that depends on a grad input is differentiable.
  std::vector<bool> differentiableOutputs;
};

struct JointGraph {
  ir::Graph graph;
  size_t numForwardInputs = 0;
  size_t numForwardOutputs = 0;
  /// Tangent input j (graph input numForwardInputs + j) is the cotangent of forward output tangentOf[j].
  std::vector<int> tangentOf;
  /// Gradient output j (graph output numForwardOutputs + j) is the gradient of forward input gradOf[j].
  std::vector<int> gradOf;
};

/// Builds the joint graph of a prim graph (decompose ATen-level graphs first). Errors name the
/// forward node whose rule failed, or the prim without a rule.
StatusOr<JointGraph> buildJoint(const ir::Context& ctx, const ir::Graph& prims, const JointSpec& spec,
                                const VjpTable& table);

}  // namespace plugsdk::autograd
