// PLUGSDK_DUMP=DIR: every compile writes its stages under DIR/<graph name>/ as text and as
// Graphviz (.dot, and .svg when the `dot` tool is on PATH):
//   1-input.pgraph/.dot/.svg   the graph as captured
//   2-prims.pgraph/.dot/.svg   after prim reduction
//   3-program.txt              the scheduled program (kernels, calls, buffers, memory plan)
//   3-fused.dot/.svg           the prim graph with one cluster per kernel: what was fused
// The directory comes from the caller (the CLI and the Python package read the environment
// variable; the core takes it as an option), so nothing here is global.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/sched/program.h"
#include "core/support/status.h"

namespace plugsdk::dump {

class Dumper {
 public:
  /// An empty dir disables dumping.
  explicit Dumper(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }

  Status input(const ir::Graph& g) const;
  Status prims(const ir::Graph& g) const;
  Status program(const ir::Graph& prims, const sched::Program& p) const;
  /// Whether .svg files were written (false when graphviz is missing: .dot files only).
  static bool svgAvailable();

 private:
  Status write(const std::string& graphName, const std::string& file, const std::string& text) const;
  Status writeDot(const std::string& graphName, const std::string& stem, const std::string& dot) const;
  std::string dir_;
};

}  // namespace plugsdk::dump
