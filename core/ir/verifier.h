// The graph verifier: SSA form, known ops, arity, attribute kinds, and inferred output
// types against the declared ones. Errors name the node (and its source line) and the problem.
#pragma once

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::ir {

Status verifyGraph(const Context& ctx, const Graph& graph);

/// Checks a node's inputs and attributes against its schema and returns the inferred output
/// types. Used by the verifier, the parser (to fill in omitted types) and the builder.
StatusOr<std::vector<TensorType>> checkAndInfer(const Context& ctx, const OpDef& def, const std::vector<Value*>& inputs,
                                                AttrMap& attrs, const std::string& where);

}  // namespace plugsdk::ir
