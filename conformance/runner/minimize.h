// The minimizer: shrinks a failing graph to a small one that still fails, by delta debugging
// over the graph. It knows nothing of devices: "still fails" is a predicate the caller gives
// (plugsdk-fuzz compares failure classes on a plugin; the unit test uses a synthetic one).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::conformance {

/// True when a candidate graph still fails the way the original did.
using StillFails = std::function<bool(const ir::Graph&)>;
/// Progress lines ("minimize: 12 nodes left (cut at %relu_3)").
using MinimizeProgress = std::function<void(const std::string&)>;

/// One edit of a graph, applied by rebuildGraph. Values are those of the graph being edited.
struct GraphEdit {
  std::vector<const ir::Value*> outputs;   ///< the new outputs (empty: keep the graph's)
  std::vector<const ir::Value*> asInputs;  ///< values that become graph inputs of the same type
  std::vector<std::pair<const ir::Value*, const ir::Value*>> replace;   ///< uses of .first read .second
  std::vector<std::pair<const ir::Value*, ir::TensorType>> inputTypes;  ///< new types for inputs
  bool keepInputs = false;                                              ///< keep every input of the graph, used or not
};

/// A new graph: the edit applied, everything the outputs do not need dropped (unused inputs
/// too), every node's output type inferred again, and the result verified.
StatusOr<ir::Graph> rebuildGraph(const ir::Context& ctx, const ir::Graph& g, const GraphEdit& edit);

/// A structural copy of g (rebuildGraph with no edit).
StatusOr<ir::Graph> copyGraph(const ir::Context& ctx, const ir::Graph& g);

/// Shrinks g, which must fail (stillFails(g)), until no step makes it smaller:
///   0. removing unused inputs; 1. the shortest failing prefix of the nodes (its live values become outputs), found by
///      bisection; 2. each output alone, then dropping outputs one at a time; 3. the longest
///      failing suffix (values from before it become inputs), by bisection; 4. cutting at
///      single values; 5. bypassing nodes whose output has an input's type; 6. smaller input
///      sizes (every dim of one size at once, then single dims; candidates whose shape
///      attributes no longer fit are rejected by inference).
/// Every candidate is verified before stillFails sees it. The first graph stillFails sees
/// keeps every input of g (inputs are often drawn per input list, as randomInputs does, so
/// the data stays that of g until an input goes). Returns the smallest failing graph.
StatusOr<ir::Graph> minimizeGraph(const ir::Context& ctx, const ir::Graph& g, const StillFails& stillFails,
                                  const MinimizeProgress& progress = {});

}  // namespace plugsdk::conformance
