// Graph construction and structural equality.
#include "core/ir/graph.h"

#include <unordered_map>

namespace plugsdk::ir {

std::string Node::describe() const {
  std::string s = op_;
  if (!outputs_.empty()) s += " defining " + outputs_[0]->ref();
  if (loc_.known()) s += " at line " + loc_.toString();
  return s;
}

Value* Graph::newValue(const std::string& name, TensorType type) {
  auto v = std::make_unique<Value>();
  v->name_ = name;
  v->type_ = std::move(type);
  usedNames_.insert(name);
  values_.push_back(std::move(v));
  return values_.back().get();
}

std::string Graph::freshName() {
  for (;;) {
    std::string n = std::to_string(nextName_++);
    if (!usedNames_.count(n)) return n;
  }
}

Value* Graph::addInput(const std::string& name, TensorType type) {
  Value* v = newValue(name, std::move(type));
  inputs_.push_back(v);
  return v;
}

Node* Graph::addNode(const std::string& op, const OpDef* def, std::vector<Value*> inputs, AttrMap attrs,
                     const std::vector<TensorType>& outputTypes, const std::vector<std::string>& outputNames,
                     SourceLoc loc) {
  auto n = std::make_unique<Node>();
  n->op_ = op;
  n->def_ = def;
  n->inputs_ = std::move(inputs);
  n->attrs_ = std::move(attrs);
  n->loc_ = loc;
  for (size_t i = 0; i < outputTypes.size(); ++i) {
    std::string name = i < outputNames.size() ? outputNames[i] : freshName();
    Value* v = newValue(name, outputTypes[i]);
    v->producer_ = n.get();
    v->outputIndex_ = static_cast<int>(i);
    n->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

bool Graph::equals(const Graph& other, std::string* whyNot) const {
  auto fail = [&](std::string why) {
    if (whyNot) *whyNot = std::move(why);
    return false;
  };
  if (name_ != other.name_) return fail("graph names differ: " + name_ + " vs " + other.name_);
  if (inputs_.size() != other.inputs_.size()) return fail("input counts differ");
  std::unordered_map<const Value*, const Value*> map;
  auto sameValue = [&](const Value* a, const Value* b) {
    if (!a || !b) return a == b;
    auto it = map.find(a);
    return it != map.end() && it->second == b;
  };
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Value *a = inputs_[i], *b = other.inputs_[i];
    if (a->name() != b->name() || a->type() != b->type() ||
        a->type().strides.has_value() != b->type().strides.has_value())
      return fail("input " + std::to_string(i) + " differs: " + a->ref() + ": " + a->type().toString() + " vs " +
                  b->ref() + ": " + b->type().toString());
    map[a] = b;
  }
  if (nodes_.size() != other.nodes_.size()) return fail("node counts differ");
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &a = *nodes_[i], &b = *other.nodes_[i];
    std::string where = "node " + std::to_string(i) + " (" + a.op() + ")";
    if (a.op() != b.op()) return fail(where + ": op differs from " + b.op());
    if (a.inputs().size() != b.inputs().size()) return fail(where + ": input counts differ");
    for (size_t j = 0; j < a.inputs().size(); ++j)
      if (!sameValue(a.inputs()[j], b.inputs()[j])) return fail(where + ": input " + std::to_string(j) + " differs");
    if (a.attrs() != b.attrs()) return fail(where + ": attributes differ");
    if (a.outputs().size() != b.outputs().size()) return fail(where + ": output counts differ");
    for (size_t j = 0; j < a.outputs().size(); ++j) {
      const Value *x = a.outputs()[j], *y = b.outputs()[j];
      if (x->name() != y->name() || x->type() != y->type())
        return fail(where + ": output " + x->ref() + ": " + x->type().toString() + " vs " + y->ref() + ": " +
                    y->type().toString());
      map[x] = y;
    }
  }
  if (outputs_.size() != other.outputs_.size()) return fail("output counts differ");
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (!sameValue(outputs_[i], other.outputs_[i])) return fail("graph output " + std::to_string(i) + " differs");
  return true;
}

}  // namespace plugsdk::ir
