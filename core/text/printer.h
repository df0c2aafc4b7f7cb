// The .pgraph printer: canonical text (attributes sorted by name, schema defaults omitted,
// every output typed) that parses back to an equal graph.
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace plugsdk::text {

std::string printGraph(const ir::Graph& graph);

}  // namespace plugsdk::text
