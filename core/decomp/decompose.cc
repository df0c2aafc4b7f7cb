// The prim-reduction pass: rule lookup and application, output-type checks, dead-node removal.
#include "core/decomp/decompose.h"

#include <algorithm>
#include <unordered_map>

#include "core/ir/cleanup.h"
#include "core/ir/verifier.h"
#include "core/prims/prims.h"

namespace plugsdk::decomp {

std::vector<std::string> DecompTable::ops() const {
  std::vector<std::string> out;
  for (const auto& [op, rules] : rules_) out.push_back(op);
  return out;
}

DecompTable makeDefaultDecompositions() {
  DecompTable t;
  addPointwiseRules(t);
  addReductionRules(t);
  addShapeRules(t);
  addIndexingRules(t);
  addCreationRules(t);
  addNNRules(t);
  addBackwardRules(t);
  addLibraryExpansionRules(t);
  addSdpaBackwardRule(t);
  return t;
}

namespace {

/// The rule kept the promise of the op's inference: same dtypes, provably equal shapes.
Status checkOutputs(const ir::Context& ctx, const std::string& op, const std::vector<V>& outs,
                    const std::vector<ir::TensorType>& expected) {
  if (outs.size() != expected.size())
    return internalError("the decomposition of " + op + " produced " + std::to_string(outs.size()) + " outputs, " +
                         std::to_string(expected.size()) + " expected");
  for (size_t i = 0; i < outs.size(); ++i) {
    const ir::TensorType& got = outs[i]->type();
    bool same = got.dtype == expected[i].dtype && got.rank() == expected[i].rank();
    for (size_t d = 0; same && d < got.shape.size(); ++d) {
      auto eq = ir::proveEQ(got.shape[d], expected[i].shape[d], ctx.assumptions);
      same = eq && *eq;
    }
    if (!same)
      return internalError("the decomposition of " + op + " produced " + got.toString() + " for output " +
                           std::to_string(i) + ", its inference says " + expected[i].toString());
  }
  return Status::ok();
}

std::vector<V> keepWhole(ir::Graph& graph, const ir::OpDef& def, const ir::AttrMap& attrs, const std::vector<V>& inputs,
                         const std::vector<ir::TensorType>& outTypes) {
  return graph.addNode(def.schema.name, &def, inputs, attrs, outTypes)->outputs();
}

}  // namespace

bool Decomposer::keepsPrim(const std::string& op) const { return prims::isPrim(op) && !options_.expand.count(op); }

bool Decomposer::keeps(const ir::OpDef& def, const ir::AttrMap& attrs, const std::vector<V>& inputs) const {
  const std::string& name = def.schema.name;
  if (!keepsPrim(name)) return false;
  if (name == "prims.matmul") {
    const std::vector<ir::DType>& taken = options_.matmulDtypes;
    if (!taken.empty() &&
        (inputs.empty() || !inputs[0] || std::find(taken.begin(), taken.end(), inputs[0]->type().dtype) == taken.end()))
      return false;
    if (options_.mixedMatmul) return true;
    auto dtype = attrs.find("dtype");
    return dtype == attrs.end() || dtype->second.isNone();
  }
  if (name == "prims.convolution") {
    if (!options_.convolutionTransposed && ir::AttrReader(def.schema, attrs).getBool("transposed")) return false;
    const std::vector<ir::DType>& taken = options_.convolutionDtypes;
    if (taken.empty()) return true;
    return !inputs.empty() && inputs[0] &&
           std::find(taken.begin(), taken.end(), inputs[0]->type().dtype) != taken.end();
  }
  // prims.sdpa's forms, read for its backward as well (grad_out before query, key, value;
  // the mask after out and logsumexp).
  auto at = [&](size_t i) { return i < inputs.size() ? inputs[i] : nullptr; };
  if (name == "prims.sdpa") return keepsSdpa(def, attrs, at(0), at(2), at(3));
  if (name == "prims.sdpa_backward") return keepsSdpa(def, attrs, at(1), at(3), at(6));
  return true;
}

bool Decomposer::keepsSdpa(const ir::OpDef& def, const ir::AttrMap& attrs, V query, V value, V mask) const {
  const DecompOptions::SdpaForms& f = options_.sdpa;
  if (f == DecompOptions::SdpaForms{}) return true;
  if (!query || !value) return false;
  const ir::TensorType& q = query->type();
  const ir::TensorType& v = value->type();
  if (!f.dtypes.empty() && std::find(f.dtypes.begin(), f.dtypes.end(), q.dtype) == f.dtypes.end()) return false;
  const ir::AttrReader r(def.schema, attrs);
  if (!f.dropout && r.getFloat("dropout_p") > 0) return false;
  if (!f.causal && r.getBool("is_causal")) return false;
  if (mask && !(mask->type().dtype == ir::DType::kBool ? f.boolMask : f.floatMask)) return false;
  if (q.shape.empty() || v.shape.empty()) return false;
  const ir::SymExpr &e = q.shape.back(), &ev = v.shape.back();
  if (!f.unequalHeadDims && !(e == ev)) return false;
  if (f.headDimMax > 0 || f.headDimMultiple > 1) {
    for (const ir::SymExpr& d : {e, ev}) {
      const std::optional<int64_t> n = d.constant();
      if (!n) return false;
      if (f.headDimMax > 0 && *n > f.headDimMax) return false;
      if (f.headDimMultiple > 1 && *n % f.headDimMultiple != 0) return false;
    }
  }
  return true;
}

StatusOr<std::vector<V>> Decomposer::expand(ir::Graph& graph, const ir::OpDef& def, const ir::AttrMap& attrs,
                                            const std::vector<V>& inputs, const std::vector<ir::TensorType>& outTypes) {
  const std::string& name = def.schema.name;
  if (options_.keep.count(name) || keeps(def, attrs, inputs)) return keepWhole(graph, def, attrs, inputs, outTypes);
  const std::vector<Rule>* rules = table_.find(name);
  const std::string fix = ". To make it work: add a decomposition rule for " + name +
                          " to core/decomp (docs/prims.md lists the prims it may use), or compile for a backend "
                          "that implements " +
                          name + " whole (DecompOptions::keep)";
  if (!rules) return unimplemented(name + " has no decomposition into prims and is not a prim" + fix);
  if (depth_ >= options_.maxDepth)
    return internalError(name + ": decompositions nest deeper than " + std::to_string(options_.maxDepth) +
                         " (a rule that expands into itself?)");
  ++depth_;
  std::string declines;
  for (const Rule& rule : *rules) {
    DecompCall call(def, attrs, inputs, outTypes);
    Emitter e(ctx_, graph, *this);
    auto outs = rule(e, call);
    if (!outs.isOk()) {
      if (e.declined() && outs.status().code() == StatusCode::kUnimplemented) {
        declines += (declines.empty() ? "" : "; ") + outs.status().message();
        continue;
      }
      --depth_;
      return outs.status().withContext("decomposing " + name);
    }
    Status s = checkOutputs(ctx_, name, *outs, outTypes);
    --depth_;
    if (!s.isOk()) return s;
    return outs;
  }
  --depth_;
  return unimplemented("no decomposition rule for " + name + " handles this call (" + declines + ")" + fix);
}

StatusOr<ir::Graph> decompose(const ir::Context& ctx, const DecompTable& table, const ir::Graph& graph,
                              const DecompOptions& options) {
  ir::Graph g(graph.name());
  std::unordered_map<const ir::Value*, V> map;
  for (const ir::Value* in : graph.inputs()) map[in] = g.addInput(in->name(), in->type());
  Decomposer decomposer(ctx, table, options);
  for (const auto& node : graph.nodes()) {
    std::vector<V> ins;
    for (const ir::Value* in : node->inputs()) ins.push_back(in ? map.at(in) : nullptr);
    const ir::OpDef* def = node->def() ? node->def() : ctx.ops.find(node->op());
    if (!def) return notFound(node->describe() + ": unknown op");
    std::vector<ir::TensorType> types;
    for (const ir::Value* o : node->outputs()) types.push_back(o->type());
    std::vector<V> outs;
    if (decomposer.keeps(*def, node->attrs(), ins)) {
      outs = keepWhole(g, *def, node->attrs(), ins, types);
    } else {
      auto r = decomposer.expand(g, *def, node->attrs(), ins, types);
      if (!r.isOk()) return r.status().withContext(node->describe());
      outs = *r;
    }
    for (size_t i = 0; i < outs.size(); ++i) map[node->outputs()[i]] = outs[i];
  }
  std::vector<V> outs;
  std::vector<std::string> names;
  for (const ir::Value* v : graph.outputs()) {
    outs.push_back(map.at(v));
    names.push_back(v->name());
  }
  g.setOutputs(std::move(outs));
  ir::Graph result = ir::cleanupGraph(g, names);
  Status s = ir::verifyGraph(ctx, result);
  if (!s.isOk()) return internalError("the prim graph does not verify: " + s.message());
  return result;
}

}  // namespace plugsdk::decomp
