// cleanupGraph: CSE by structural keys, then a liveness walk, then one ordered copy.
#include "core/ir/cleanup.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace plugsdk::ir {

namespace {

/// op, input identities and canonical attribute text: equal keys compute equal values.
std::string nodeKey(const Node& n, const std::unordered_map<const Value*, const Value*>& repl) {
  std::string key = n.op() + "(";
  for (const Value* in : n.inputs()) {
    const Value* r = in ? repl.at(in) : nullptr;
    key += std::to_string(reinterpret_cast<uintptr_t>(r)) + ",";
  }
  key += "){";
  for (const auto& [name, attr] : n.attrs()) key += name + "=" + attr.toString() + ";";
  return key + "}";
}

}  // namespace

Graph cleanupGraph(const Graph& g, const std::vector<std::string>& outputNames) {
  // 1. CSE: each value maps to the first value computed the same way.
  std::unordered_map<const Value*, const Value*> repl;
  for (const Value* in : g.inputs()) repl[in] = in;
  std::unordered_map<std::string, const Node*> seen;
  std::vector<const Node*> kept;
  for (const auto& node : g.nodes()) {
    auto [it, fresh] = seen.emplace(nodeKey(*node, repl), node.get());
    for (size_t i = 0; i < node->outputs().size(); ++i) repl[node->outputs()[i]] = it->second->outputs()[i];
    if (fresh) kept.push_back(node.get());
  }
  // 2. Liveness from the outputs.
  std::unordered_set<const Value*> needed;
  for (const Value* v : g.outputs()) needed.insert(repl.at(v));
  std::unordered_set<const Node*> live;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    bool used = false;
    for (const Value* o : (*it)->outputs()) used = used || needed.count(o);
    if (!used) continue;
    live.insert(*it);
    for (const Value* in : (*it)->inputs())
      if (in) needed.insert(repl.at(in));
  }
  // 3. Names: outputs keep theirs where possible.
  Graph out(g.name());
  std::unordered_map<const Value*, Value*> map;
  std::unordered_set<std::string> taken;
  for (const Value* in : g.inputs()) {
    map[in] = out.addInput(in->name(), in->type());
    taken.insert(in->name());
  }
  std::unordered_map<const Value*, std::string> rename;
  for (size_t i = 0; i < g.outputs().size() && i < outputNames.size(); ++i) {
    const Value* v = repl.at(g.outputs()[i]);
    if (!v->producer() || rename.count(v) || taken.count(outputNames[i])) continue;
    rename[v] = outputNames[i];
    taken.insert(outputNames[i]);
    out.reserveName(outputNames[i]);
  }
  // 4. Copy.
  for (const Node* node : kept) {
    if (!live.count(node)) continue;
    std::vector<Value*> ins;
    for (const Value* in : node->inputs()) ins.push_back(in ? map.at(repl.at(in)) : nullptr);
    std::vector<TensorType> types;
    std::vector<std::string> names;
    for (const Value* o : node->outputs()) {
      types.push_back(o->type());
      auto r = rename.find(o);
      names.push_back(r != rename.end() ? r->second : out.freshName());
      out.reserveName(names.back());
    }
    Node* copy = out.addNode(node->op(), node->def(), ins, node->attrs(), types, names, node->loc());
    for (size_t i = 0; i < node->outputs().size(); ++i) map[node->outputs()[i]] = copy->outputs()[i];
  }
  std::vector<Value*> outs;
  for (const Value* v : g.outputs()) outs.push_back(map.at(repl.at(v)));
  out.setOutputs(std::move(outs));
  return out;
}

}  // namespace plugsdk::ir
