// The .pgraph parser. Produces a verified Graph; every error names line:column and what
// was expected (syntax) or the node and the problem (semantics).
#pragma once

#include <string_view>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::text {

/// Parses one graph. Output types after ':' are optional: when omitted they are inferred,
/// when given they must agree with inference.
StatusOr<ir::Graph> parseGraph(const ir::Context& ctx, std::string_view src);
/// Reads and parses a file (errors are prefixed with the path).
StatusOr<ir::Graph> parseGraphFile(const ir::Context& ctx, const std::string& path);

/// Parses a size expression such as "2*s0+1" or "(s0+1)//2".
StatusOr<ir::SymExpr> parseSymExpr(std::string_view src);

}  // namespace plugsdk::text
