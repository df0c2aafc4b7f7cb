// Vector-Jacobian products: one rule per prim, in one table. A rule receives a forward node
// (its inputs and outputs as values of the graph being built) and the cotangent of each of
// its outputs, and emits the cotangent of each input that needs one, in prims (or in
// ATen-level ops, which the Emitter decomposes into prims). The joint-graph builder
// (core/autograd/joint.h) runs the rules in reverse over a prim graph.
//
// Every prim has an entry: a rule, or the reason it has no gradient (comparisons, bitwise
// ops, argmax/argmin and the generators: their outputs are integers, booleans or constants).
// Rounding ops (floor, ceil, round, trunc, sign) have a rule whose gradient is zero, as in
// PyTorch. Each rule is checked against central finite differences in float64 on the
// reference executor (vjp_test.cc).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/decomp/emitter.h"
#include "core/ir/graph.h"
#include "core/ir/op_registry.h"

namespace plugsdk::autograd {

using decomp::Emitter;
using decomp::V;

/// One application of a rule: the forward node's attributes (AttrReader getters), its inputs
/// and outputs in the graph being built, the cotangent of each output (nullptr: zero) and
/// which inputs need a cotangent.
class VjpCall : public ir::AttrReader {
 public:
  VjpCall(const ir::OpDef& def, const ir::AttrMap& attrs, std::vector<V> inputs, std::vector<V> outputs,
          std::vector<V> cotangents, std::vector<bool> needs)
      : AttrReader(def.schema, attrs),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        cotangents_(std::move(cotangents)),
        needs_(std::move(needs)) {}
  const std::string& op() const { return schema().name; }
  V input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<V>& inputs() const { return inputs_; }
  V output(size_t i = 0) const { return outputs_.at(i); }
  /// The cotangent of output i, or nullptr when it is zero.
  V cotangent(size_t i = 0) const { return i < cotangents_.size() ? cotangents_[i] : nullptr; }
  /// Whether input i needs a cotangent (a rule may skip the others, returning nullptr).
  bool needs(size_t i) const { return i < needs_.size() && needs_[i]; }

 private:
  std::vector<V> inputs_, outputs_, cotangents_;
  std::vector<bool> needs_;
};

/// Returns one cotangent per input (nullptr: zero, or not needed), each of its input's type.
using VjpRule = std::function<StatusOr<std::vector<V>>(Emitter&, const VjpCall&)>;

struct VjpEntry {
  VjpRule rule;                   ///< empty for a prim without gradient
  std::string nonDifferentiable;  ///< why there is no rule (its outputs carry no gradient)
};

class VjpTable {
 public:
  void add(const std::string& prim, VjpRule rule) { entries_[prim] = VjpEntry{std::move(rule), ""}; }
  void addNonDifferentiable(const std::string& prim, const std::string& why) { entries_[prim] = VjpEntry{{}, why}; }
  const VjpEntry* find(const std::string& prim) const {
    auto it = entries_.find(prim);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> prims() const;

 private:
  std::map<std::string, VjpEntry> entries_;
};

/// The table with every rule of core/autograd (one registration function per family).
VjpTable makeVjpTable();
void addElementwiseVjps(VjpTable& t);  // vjp_elementwise.cc
void addStructureVjps(VjpTable& t);    // vjp_structure.cc
void addReductionVjps(VjpTable& t);    // vjp_reduction.cc: reductions, gather/scatter, generators
void addLibraryVjps(VjpTable& t);      // vjp_library.cc: matmul, convolution, sdpa
void addSdpaBackwardVjp(VjpTable& t);  // vjp_sdpa_backward.cc: through its expansion

}  // namespace plugsdk::autograd
