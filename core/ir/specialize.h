// Re-typing a captured graph: the same nodes over new input types, with size symbols
// replaced by constants or kept. How the compile cache turns one captured graph into the
// specializations its guards select (core/guard/function.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::ir {

/// A copy of `graph` whose inputs have `inputTypes` and whose size symbols are replaced as
/// `symbols` says (in attributes, e.g. a view's size list); every node's output types are
/// inferred again. Fails, naming the node, where the graph cannot take the new types (a
/// view whose sizes were captured as constants, a matmul whose dims no longer agree).
StatusOr<Graph> specializeGraph(const Context& ctx, const Graph& graph, const std::vector<TensorType>& inputTypes,
                                const std::map<std::string, SymExpr>& symbols);

}  // namespace plugsdk::ir
