// Prim reduction: a table of decomposition rules from ATen-level ops to prims, and the pass
// that rewrites a graph until only prims (and ops a backend asked to keep whole) remain.
// Rules are small functions that may decline; an op with no applicable rule is an error
// that names the op and says what would make it work.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/decomp/emitter.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace plugsdk::decomp {

/// One application of an ATen-level op: its attributes (read with the AttrReader getters,
/// defaults filled in), inputs in the graph being built (nullptr = absent optional tensor)
/// and the output types its inference promised (the driver checks the rule kept them).
class DecompCall : public ir::AttrReader {
 public:
  DecompCall(const ir::OpDef& def, const ir::AttrMap& attrs, std::vector<V> inputs,
             std::vector<ir::TensorType> outTypes)
      : AttrReader(def.schema, attrs), def_(def), inputs_(std::move(inputs)), outTypes_(std::move(outTypes)) {}
  const ir::OpDef& def() const { return def_; }
  const std::string& op() const { return def_.schema.name; }
  V input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  const std::vector<V>& inputs() const { return inputs_; }
  const ir::TensorType& outType(size_t i = 0) const { return outTypes_.at(i); }
  const std::vector<ir::TensorType>& outTypes() const { return outTypes_; }

 private:
  const ir::OpDef& def_;
  std::vector<V> inputs_;
  std::vector<ir::TensorType> outTypes_;
};

using Rule = std::function<StatusOr<std::vector<V>>(Emitter&, const DecompCall&)>;

class DecompTable {
 public:
  /// Adds a rule for `op` (canonical name, e.g. "aten.add.Tensor"); rules for one op are
  /// tried in the order added.
  void add(const std::string& op, Rule rule) { rules_[op].push_back(std::move(rule)); }
  const std::vector<Rule>* find(const std::string& op) const {
    auto it = rules_.find(op);
    return it == rules_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> ops() const;

 private:
  std::map<std::string, std::vector<Rule>> rules_;
};

/// Every rule of core/decomp (one registration function per family, rules_*.cc).
DecompTable makeDefaultDecompositions();
void addPointwiseRules(DecompTable& t);  // rules_pointwise.cc
void addReductionRules(DecompTable& t);  // rules_reduction.cc
void addShapeRules(DecompTable& t);      // rules_shape.cc
void addIndexingRules(DecompTable& t);   // rules_indexing.cc
void addCreationRules(DecompTable& t);   // rules_creation.cc
void addNNRules(DecompTable& t);         // rules_nn*.cc
void addBackwardRules(DecompTable& t);   // rules_backward*.cc
/// prims.matmul / convolution / sdpa as loops, used only for prims in DecompOptions::expand.
void addLibraryExpansionRules(DecompTable& t);  // rules_library.cc
/// prims.sdpa_backward as matmuls and elementwise prims, likewise only when expanded.
void addSdpaBackwardRule(DecompTable& t);  // sdpa_backward.cc

struct DecompOptions {
  /// Ops left whole instead of decomposed (a backend that implements them natively).
  std::set<std::string> keep;
  /// Prims rewritten into other prims by their rules (library ops for a device that does
  /// not implement them: addLibraryExpansionRules).
  std::set<std::string> expand;
  /// prims.matmul may write f32 from f16/bf16 operands (its `dtype` attribute): the device
  /// takes it (ABI 1.2). When false, such a matmul is expanded into loops and attention
  /// multiplies in f32.
  bool mixedMatmul = true;
  /// The forms of prims.convolution kept whole when it is not in `expand` (a device whose
  /// library takes only some): the input dtypes taken (empty: every dtype), and whether
  /// transposed convolutions are. Other calls are expanded, as on a device without the op.
  std::vector<ir::DType> convolutionDtypes;
  bool convolutionTransposed = true;
  /// The operand dtypes of prims.matmul kept whole when it is not in `expand` (empty: every
  /// dtype); other calls are expanded, as on a device without the op (ABI 1.6 matmul_dtypes).
  std::vector<ir::DType> matmulDtypes;
  /// The forms of prims.sdpa kept whole when it is not in `expand` (ABI 1.7's sdpa_*); other
  /// calls are expanded into matmuls and a softmax, as on a device without the op.
  struct SdpaForms {
    std::vector<ir::DType> dtypes;  ///< the query dtypes taken (empty: every dtype)
    bool boolMask = true, floatMask = true, dropout = true, causal = true, unequalHeadDims = true;
    int64_t headDimMax = 0;       ///< E and Ev at most this (0: any)
    int64_t headDimMultiple = 0;  ///< E and Ev multiples of this (0, 1: any); symbolic dims fail both
    bool operator==(const SdpaForms&) const = default;
  } sdpa;
  /// Recursion limit for rules that emit ATen-level ops.
  int maxDepth = 32;
};

/// Runs rules while building one graph (used by decompose() and by the Emitter).
class Decomposer {
 public:
  Decomposer(const ir::Context& ctx, const DecompTable& table, const DecompOptions& options)
      : ctx_(ctx), table_(table), options_(options) {}
  /// True when `op` is appended as it is: a prim not listed in DecompOptions::expand.
  bool keepsPrim(const std::string& op) const;
  /// True when this application of `def` to `inputs` is appended as it is: keepsPrim, and a
  /// form of the prim the device takes (a prims.matmul needs its operand dtype in
  /// matmulDtypes, and with a result dtype mixedMatmul;
  /// a prims.convolution needs its input dtype in convolutionDtypes, and
  /// convolutionTransposed when transposed; a prims.sdpa or sdpa_backward, a form in `sdpa`).
  bool keeps(const ir::OpDef& def, const ir::AttrMap& attrs, const std::vector<V>& inputs) const;
  /// keeps() for prims.sdpa and prims.sdpa_backward: a form in DecompOptions::sdpa (the
  /// query's dtype, the value's head dim, the mask's kind; nullptr: none).
  bool keepsSdpa(const ir::OpDef& def, const ir::AttrMap& attrs, V query, V value, V mask) const;
  bool mixedMatmul() const { return options_.mixedMatmul; }
  /// Decomposes one application of a non-prim op into `graph` (or keeps it whole).
  StatusOr<std::vector<V>> expand(ir::Graph& graph, const ir::OpDef& def, const ir::AttrMap& attrs,
                                  const std::vector<V>& inputs, const std::vector<ir::TensorType>& outTypes);

 private:
  const ir::Context& ctx_;
  const DecompTable& table_;
  const DecompOptions& options_;
  int depth_ = 0;
};

/// Returns an equivalent graph made of prims (and `options.keep` ops), common subexpressions
/// merged and dead nodes removed. Inputs keep their names, outputs their order and types.
StatusOr<ir::Graph> decompose(const ir::Context& ctx, const DecompTable& table, const ir::Graph& graph,
                              const DecompOptions& options = {});

}  // namespace plugsdk::decomp
