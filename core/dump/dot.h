// Graphviz renderings of the stages, so a user can see what was captured, what it decomposed
// into and what was fused -- the way people look at FX graphs drawn from torch.compile.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/sched/program.h"

namespace plugsdk::dump {

/// A graph as dot: inputs as ellipses, nodes as boxes (op and output types), value edges.
std::string graphToDot(const ir::Graph& g);
/// The prim graph with each kernel (and library call) of `p` drawn as a cluster around the
/// prim nodes it computes: what was fused with what.
std::string fusedGraphToDot(const ir::Graph& prims, const sched::Program& p);

}  // namespace plugsdk::dump
