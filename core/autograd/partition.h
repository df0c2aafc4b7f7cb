// The forward/backward partitioner: splits a joint graph (joint.h) into a forward program
// that computes the outputs and saves what the backward needs, and a backward program that
// reads the saved values and the tangents and computes the gradients.
//
// What to save is a minimum cut over memory, as AOTAutograd's partitioner does: every
// forward value the backward reads must either be saved or recomputed in the backward from
// values that are; the cut minimizes the bytes saved. Library ops (matmul, convolution,
// sdpa), reductions and scatter are never recomputed (their cost is not memory traffic);
// pointwise and structure prims are, where that saves bytes. Forward inputs cost nothing
// to keep (the caller holds them anyway).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/autograd/joint.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::autograd {

struct PartitionOptions {
  /// true: the min cut; false: save every forward value the backward reads.
  bool recompute = true;
  /// Sizes assumed for symbolic dims when counting bytes (a symbol not listed counts 64).
  std::map<std::string, int64_t> symbolHints;
};

struct PartitionStats {
  int64_t savedBytes = 0;             ///< forward values saved for the backward (activations)
  int64_t savedBytesNoRecompute = 0;  ///< the same, saving every value the backward reads
  int64_t savedInputBytes = 0;        ///< forward inputs the backward reads (alive anyway)
  int saved = 0, savedNoRecompute = 0;
  int recomputed = 0;  ///< forward nodes the backward computes again
};

struct TrainingGraphs {
  /// Inputs: the forward's inputs. Outputs: its outputs, then the saved values.
  ir::Graph forward;
  /// Inputs: the saved forward inputs, the saved values, then one tangent per differentiable
  /// output. Outputs: one gradient per entry of gradOf. Empty (no nodes, no inputs) when gradOf
  /// is: no output depends on an input that requires grad, or only through zero gradients.
  ir::Graph backward;
  size_t numForwardOutputs = 0;
  std::vector<int> savedInputs;  ///< forward input indices, the backward's first inputs
  size_t numSavedValues = 0;
  std::vector<int> tangentOf, gradOf;  ///< as in JointGraph
  /// Per gradient output: the tangents (indices into tangentOf) it depends on. A caller whose
  /// tangents for all of them are absent (an output the loss did not use) knows it is zero.
  std::vector<std::vector<int>> gradTangents;
  PartitionStats stats;
};

StatusOr<TrainingGraphs> partitionJoint(const ir::Context& ctx, const JointGraph& joint,
                                        const PartitionOptions& options = {});

}  // namespace plugsdk::autograd
