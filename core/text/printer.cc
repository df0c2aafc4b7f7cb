// Canonical printing of graphs.
#include "core/text/printer.h"

#include "core/ir/op_registry.h"

namespace plugsdk::text {

namespace {
bool isDefault(const ir::Node& n, const std::string& name, const ir::Attribute& value) {
  if (!n.def()) return false;
  const ir::ArgSpec* a = n.def()->schema.findArg(name);
  return a && a->defaultValue && *a->defaultValue == value;
}
}  // namespace

std::string printGraph(const ir::Graph& g) {
  std::string s = "graph @" + g.name() + "(";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ir::Value* v = g.inputs()[i];
    s += (i ? ", " : "") + v->ref() + ": " + v->type().toString();
  }
  s += ") {\n";
  for (const auto& n : g.nodes()) {
    s += "  ";
    for (size_t i = 0; i < n->outputs().size(); ++i) s += (i ? ", " : "") + n->outputs()[i]->ref();
    s += " = " + n->op() + "(";
    for (size_t i = 0; i < n->inputs().size(); ++i)
      s += (i ? ", " : "") + (n->inputs()[i] ? n->inputs()[i]->ref() : std::string("none"));
    s += ")";
    std::string attrs;
    for (const auto& [name, value] : n->attrs()) {
      if (isDefault(*n, name, value)) continue;
      attrs += (attrs.empty() ? "" : ", ") + name + " = " + value.toString();
    }
    if (!attrs.empty()) s += " {" + attrs + "}";
    s += " :";
    for (size_t i = 0; i < n->outputs().size(); ++i) s += (i ? ", " : " ") + n->outputs()[i]->type().toString();
    s += "\n";
  }
  s += "  return";
  for (size_t i = 0; i < g.outputs().size(); ++i) s += (i ? ", " : " ") + g.outputs()[i]->ref();
  s += "\n}\n";
  return s;
}

}  // namespace plugsdk::text
