// graphToDot and fusedGraphToDot.
#include "core/dump/dot.h"

#include <map>
#include <set>

namespace plugsdk::dump {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string nodeId(const ir::Value* v) { return "\"v_" + escape(v->name()) + "\""; }

std::string nodeLabel(const ir::Node& n) {
  std::string label = escape(n.op());
  for (const ir::Value* o : n.outputs()) label += "\\n" + escape(o->ref() + ": " + o->type().toString());
  return label;
}

/// The node statement for n, named after its first output.
std::string nodeStmt(const ir::Node& n, const std::string& indent) {
  return indent + nodeId(n.outputs()[0]) + " [shape=box, label=\"" + nodeLabel(n) + "\"];\n";
}

void header(std::string& out, const ir::Graph& g) {
  out += "digraph \"" + escape(g.name()) + "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n";
  for (const ir::Value* in : g.inputs())
    out +=
        "  " + nodeId(in) + " [shape=ellipse, label=\"" + escape(in->ref() + ": " + in->type().toString()) + "\"];\n";
}

void edges(std::string& out, const ir::Graph& g) {
  for (const auto& n : g.nodes())
    for (const ir::Value* in : n->inputs()) {
      if (!in) continue;
      const ir::Value* src = in->producer() ? in->producer()->outputs()[0] : in;
      out += "  " + nodeId(src) + " -> " + nodeId(n->outputs()[0]) + ";\n";
    }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const ir::Value* v = g.outputs()[i];
    const ir::Value* src = v->producer() ? v->producer()->outputs()[0] : v;
    out += "  \"out_" + std::to_string(i) + "\" [shape=doublecircle, label=\"out " + std::to_string(i) + "\"];\n";
    out += "  " + nodeId(src) + " -> \"out_" + std::to_string(i) + "\";\n";
  }
}

}  // namespace

std::string graphToDot(const ir::Graph& g) {
  std::string out;
  header(out, g);
  for (const auto& n : g.nodes()) out += nodeStmt(*n, "  ");
  edges(out, g);
  return out + "}\n";
}

std::string fusedGraphToDot(const ir::Graph& prims, const sched::Program& p) {
  std::string out;
  header(out, prims);
  std::map<std::string, const ir::Node*> byValue;
  for (const auto& n : prims.nodes())
    for (const ir::Value* o : n->outputs()) byValue[o->name()] = n.get();
  std::set<const ir::Node*> placed;
  for (size_t si = 0; si < p.steps.size(); ++si) {
    const sched::Step& s = p.steps[si];
    const std::string title = s.kind == sched::Step::Kind::kLaunch
                                  ? "kernel @" + p.kernels[static_cast<size_t>(s.launch.kernel)].name
                                  : s.call.op + (s.call.epilogue >= 0 ? " + epilogue" : "");
    out += "  subgraph \"cluster_" + std::to_string(si) + "\" {\n    label=\"step " + std::to_string(si) + ": " +
           escape(title) + "\";\n    style=rounded; color=\"" +
           (s.kind == sched::Step::Kind::kLaunch ? "steelblue" : "darkorange") + "\";\n";
    for (const std::string& v : s.values) {
      auto it = byValue.find(v);
      if (it == byValue.end() || placed.count(it->second)) continue;  // computed again: drawn in its first kernel
      placed.insert(it->second);
      out += nodeStmt(*it->second, "    ");
    }
    out += "  }\n";
  }
  // Not computed by any kernel: views that library calls read as strides.
  for (const auto& n : prims.nodes())
    if (!placed.count(n.get()))
      out += "  " + nodeId(n->outputs()[0]) + " [shape=box, style=dashed, label=\"" + nodeLabel(*n) +
             "\\n(strided view)\"];\n";
  edges(out, prims);
  return out + "}\n";
}

}  // namespace plugsdk::dump
