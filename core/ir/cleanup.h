// Graph cleanup after a rewriting pass: common-subexpression elimination and dead-node
// removal, done together because both are one rebuild of the graph.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace plugsdk::ir {

/// A copy of `g` where nodes applying the same op to the same inputs with the same
/// attributes are merged (every op in the IR is a pure function of its inputs and
/// attributes; random ops take their seed as an attribute), and only nodes the outputs
/// depend on remain. Values that are graph outputs take `outputNames[i]` as their name
/// where no input or other output already has it; other values are renumbered.
Graph cleanupGraph(const Graph& g, const std::vector<std::string>& outputNames = {});

}  // namespace plugsdk::ir
