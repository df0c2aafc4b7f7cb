// buildJoint: copy the forward, seed the tangents, run the VJP rules in reverse and sum the
// cotangents each value receives.
#include "core/autograd/joint.h"

#include <unordered_map>
#include <unordered_set>

#include "core/decomp/decompose.h"
#include "core/ir/cleanup.h"
#include "core/ir/verifier.h"

namespace plugsdk::autograd {
namespace {

/// A name not in `used` ("tangent_y", "tangent_y_1", ...), which it then takes.
std::string uniqueName(std::unordered_set<std::string>& used, const std::string& base) {
  std::string name = base;
  for (int i = 1; used.count(name); ++i) name = base + "_" + std::to_string(i);
  used.insert(name);
  return name;
}

bool sameType(const ir::Context& ctx, const ir::TensorType& a, const ir::TensorType& b) {
  if (a.dtype != b.dtype || a.rank() != b.rank()) return false;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    auto eq = ir::proveEQ(a.shape[d], b.shape[d], ctx.assumptions);
    if (!eq || !*eq) return false;
  }
  return true;
}

}  // namespace

StatusOr<JointGraph> buildJoint(const ir::Context& ctx, const ir::Graph& prims, const JointSpec& spec,
                                const VjpTable& table) {
  const auto& fin = prims.inputs();
  if (spec.requiresGrad.size() != fin.size())
    return invalidArgument("joint graph of @" + prims.name() + ": requiresGrad has " +
                           std::to_string(spec.requiresGrad.size()) + " entries for " + std::to_string(fin.size()) +
                           " inputs");
  if (!spec.differentiableOutputs.empty() && spec.differentiableOutputs.size() != prims.outputs().size())
    return invalidArgument("joint graph of @" + prims.name() + ": differentiableOutputs has " +
                           std::to_string(spec.differentiableOutputs.size()) + " entries for " +
                           std::to_string(prims.outputs().size()) + " outputs");

  JointGraph j{ir::Graph(prims.name() + "_joint"), fin.size(), prims.outputs().size(), {}, {}};
  ir::Graph& g = j.graph;
  std::unordered_map<const ir::Value*, V> map;
  std::unordered_set<const ir::Value*> needsGrad;  // forward values (of `prims`) that carry a gradient
  for (size_t i = 0; i < fin.size(); ++i) {
    map[fin[i]] = g.addInput(fin[i]->name(), fin[i]->type());
    if (spec.requiresGrad[i] && ir::isFloating(fin[i]->type().dtype)) needsGrad.insert(fin[i]);
  }
  for (const auto& n : prims.nodes()) {
    const VjpEntry* entry = table.find(n->op());
    if (!entry) return unimplemented(n->describe() + ": " + n->op() + " has no VJP rule (core/autograd/vjp_*.cc)");
    std::vector<V> ins;
    bool anyGrad = false;
    for (const ir::Value* in : n->inputs()) {
      ins.push_back(in ? map.at(in) : nullptr);
      anyGrad = anyGrad || (in && needsGrad.count(in));
    }
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (const ir::Value* o : n->outputs()) {
      types.push_back(o->type());
      names.push_back(o->name());
    }
    ir::Node* copy = g.addNode(n->op(), n->def(), ins, n->attrs(), types, names, n->loc());
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const ir::Value* o = n->outputs()[i];
      map[o] = copy->outputs()[i];
      if (anyGrad && entry->rule && ir::isFloating(o->type().dtype)) needsGrad.insert(o);
    }
  }

  // Seed: one tangent per differentiable output (an output listed twice gets two, summed).
  std::unordered_map<const ir::Value*, V> cot;
  decomp::DecompTable rules = decomp::makeDefaultDecompositions();
  decomp::DecompOptions decompOptions;
  decomp::Decomposer decomposer(ctx, rules, decompOptions);
  decomp::Emitter sum(ctx, g, decomposer);
  auto accumulate = [&](const ir::Value* v, V c) { cot[v] = cot.count(v) ? sum.add(cot[v], c) : c; };
  std::unordered_set<std::string> taken;  // every value name of the forward
  for (const ir::Value* v : g.inputs()) taken.insert(v->name());
  for (const auto& n : g.nodes())
    for (const ir::Value* o : n->outputs()) taken.insert(o->name());
  for (size_t i = 0; i < prims.outputs().size(); ++i) {
    const ir::Value* o = prims.outputs()[i];
    const bool wanted = spec.differentiableOutputs.empty() || spec.differentiableOutputs[i];
    if (!wanted || !needsGrad.count(o)) continue;
    accumulate(o, g.addInput(uniqueName(taken, "tangent_" + o->name()), o->type()));
    j.tangentOf.push_back(static_cast<int>(i));
  }

  // Reverse accumulation.
  for (auto it = prims.nodes().rbegin(); it != prims.nodes().rend(); ++it) {
    const ir::Node& n = **it;
    std::vector<V> outs, cots;
    bool any = false;
    for (const ir::Value* o : n.outputs()) {
      outs.push_back(map.at(o));
      auto c = cot.find(o);
      cots.push_back(c == cot.end() ? nullptr : c->second);
      any = any || c != cot.end();
    }
    if (!any) continue;
    const VjpEntry* entry = table.find(n.op());
    if (!entry->rule) continue;  // unreachable: a non-differentiable prim's outputs carry no gradient
    std::vector<V> ins;
    std::vector<bool> needs;
    for (const ir::Value* in : n.inputs()) {
      ins.push_back(in ? map.at(in) : nullptr);
      needs.push_back(in && needsGrad.count(in));
    }
    const ir::OpDef* def = n.def() ? n.def() : ctx.ops.find(n.op());
    VjpCall call(*def, n.attrs(), ins, outs, cots, needs);
    decomp::Emitter e(ctx, g, decomposer);
    auto grads = entry->rule(e, call);
    if (!grads.isOk()) return grads.status().withContext("the VJP of " + n.describe());
    if (!e.ok()) return e.status().withContext("the VJP of " + n.describe());
    if (grads->size() != n.inputs().size())
      return internalError("the VJP rule of " + n.op() + " returned " + std::to_string(grads->size()) +
                           " cotangents for " + std::to_string(n.inputs().size()) + " inputs");
    for (size_t i = 0; i < grads->size(); ++i) {
      V gi = (*grads)[i];
      if (!gi || !needs[i]) continue;
      const ir::Value* in = n.inputs()[i];
      if (!sameType(ctx, gi->type(), in->type()))
        return internalError("the VJP rule of " + n.op() + " gave input " + std::to_string(i) + " a cotangent of " +
                             gi->type().toString() + "; the input is " + in->type().toString());
      accumulate(in, gi);
    }
  }
  if (!sum.ok()) return sum.status().withContext("summing cotangents");

  std::vector<V> outputs;
  std::vector<std::string> names;
  for (const ir::Value* o : prims.outputs()) {
    outputs.push_back(map.at(o));
    names.push_back(o->name());
  }
  for (size_t i = 0; i < fin.size(); ++i) {
    auto c = cot.find(fin[i]);
    if (c == cot.end()) continue;
    outputs.push_back(c->second);
    names.push_back(uniqueName(taken, "grad_" + fin[i]->name()));
    j.gradOf.push_back(static_cast<int>(i));
  }
  g.setOutputs(std::move(outputs));
  ir::Graph cleaned = ir::cleanupGraph(g, names);
  // cleanupGraph keeps every input: a tangent nothing reads stays an input.
  Status s = ir::verifyGraph(ctx, cleaned);
  if (!s.isOk()) return internalError("the joint graph does not verify: " + s.message());
  j.graph = std::move(cleaned);
  return j;
}

}  // namespace plugsdk::autograd
