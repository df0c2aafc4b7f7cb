// The graph IR: a Graph owns Values and Nodes in SSA form. Each Node applies one op from
// the registry to tensor inputs and attributes and defines one or more output Values.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/tensor_type.h"

namespace plugsdk::ir {

class Node;
struct OpDef;

/// Where a node or value came from in a text file (0 when built in memory).
struct SourceLoc {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  std::string toString() const { return std::to_string(line) + ":" + std::to_string(column); }
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  void setType(TensorType t) { type_ = std::move(t); }
  /// The defining node, or nullptr for a graph input.
  Node* producer() const { return producer_; }
  int outputIndex() const { return outputIndex_; }
  /// "%name"
  std::string ref() const { return "%" + name_; }

 private:
  friend class Graph;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int outputIndex_ = 0;
};

class Node {
 public:
  const std::string& op() const { return op_; }
  /// The registry entry; set when the node was created through a registry.
  const OpDef* def() const { return def_; }
  /// Tensor inputs in schema order; nullptr for an absent optional tensor.
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(int i = 0) const { return outputs_.at(static_cast<size_t>(i)); }
  const AttrMap& attrs() const { return attrs_; }
  /// The attribute, or nullptr when absent.
  const Attribute* attr(const std::string& name) const {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : &it->second;
  }
  const SourceLoc& loc() const { return loc_; }
  /// "aten.add.Tensor (defining %3, line 4:3)": how errors name a node.
  std::string describe() const;

 private:
  friend class Graph;
  std::string op_;
  const OpDef* def_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  AttrMap attrs_;
  SourceLoc loc_;
};

class Graph {
 public:
  explicit Graph(std::string name = "main") : name_(std::move(name)) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  /// Adds a graph input. Names must be unique within the graph (the verifier checks).
  Value* addInput(const std::string& name, TensorType type);
  /// Appends a node. Outputs get `outputNames` or fresh numeric names.
  Node* addNode(const std::string& op, const OpDef* def, std::vector<Value*> inputs, AttrMap attrs,
                const std::vector<TensorType>& outputTypes, const std::vector<std::string>& outputNames = {},
                SourceLoc loc = {});
  void setOutputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  /// A name not used by any value yet ("0", "1", ...).
  std::string freshName();
  /// Keeps freshName() from handing out `name` (for a value to be named later).
  void reserveName(const std::string& name) { usedNames_.insert(name); }

  /// Structural equality: same names, types, ops, attributes, wiring and outputs.
  bool equals(const Graph& other, std::string* whyNot = nullptr) const;

 private:
  Value* newValue(const std::string& name, TensorType type);

  std::string name_;
  std::deque<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> outputs_;
  int nextName_ = 0;
  std::unordered_set<std::string> usedNames_;
};

}  // namespace plugsdk::ir
