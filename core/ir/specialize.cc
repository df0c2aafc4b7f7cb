#include "core/ir/specialize.h"

#include <unordered_map>

#include "core/ir/verifier.h"

namespace plugsdk::ir {
namespace {

Attribute substitute(const Attribute& a, const std::map<std::string, SymExpr>& symbols) {
  if (symbols.empty()) return a;
  if (a.kind() == Attribute::Kind::kSym) return Attribute::fromSym(a.asSym()->substitute(symbols));
  if (a.kind() == Attribute::Kind::kIntList) {
    std::vector<SymExpr> v = *a.asSymList();
    for (SymExpr& e : v) e = e.substitute(symbols);
    return Attribute::fromInts(std::move(v));
  }
  return a;
}

}  // namespace

StatusOr<Graph> specializeGraph(const Context& ctx, const Graph& graph, const std::vector<TensorType>& inputTypes,
                                const std::map<std::string, SymExpr>& symbols) {
  if (inputTypes.size() != graph.inputs().size())
    return invalidArgument("specializing graph '" + graph.name() + "': " + std::to_string(inputTypes.size()) +
                           " input types for " + std::to_string(graph.inputs().size()) + " inputs");
  Graph out(graph.name());
  std::unordered_map<const Value*, Value*> map;
  for (size_t i = 0; i < inputTypes.size(); ++i) {
    const Value* v = graph.inputs()[i];
    map[v] = out.addInput(v->name(), inputTypes[i]);
  }
  for (const auto& n : graph.nodes()) {
    const OpDef* def = n->def() ? n->def() : ctx.ops.find(n->op());
    if (def == nullptr) return invalidArgument(n->describe() + ": unknown op " + n->op());
    std::vector<Value*> ins;
    for (const Value* v : n->inputs()) ins.push_back(v ? map.at(v) : nullptr);
    AttrMap attrs;
    for (const auto& [k, a] : n->attrs()) attrs[k] = substitute(a, symbols);
    ASSIGN_OR_RETURN(std::vector<TensorType> types, checkAndInfer(ctx, *def, ins, attrs, n->describe()));
    std::vector<std::string> names;
    for (const Value* o : n->outputs()) names.push_back(o->name());
    if (types.size() != names.size())
      return invalidArgument(n->describe() + ": produces " + std::to_string(types.size()) +
                             " outputs after specialization, " + std::to_string(names.size()) + " before");
    Node* m = out.addNode(n->op(), def, std::move(ins), std::move(attrs), types, names, n->loc());
    for (size_t i = 0; i < names.size(); ++i) map[n->outputs()[i]] = m->output(static_cast<int>(i));
  }
  std::vector<Value*> outs;
  for (const Value* v : graph.outputs()) outs.push_back(map.at(v));
  out.setOutputs(std::move(outs));
  RETURN_IF_ERROR(verifyGraph(ctx, out));
  return out;
}

}  // namespace plugsdk::ir
