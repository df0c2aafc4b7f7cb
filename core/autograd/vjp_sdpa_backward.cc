// The VJP of prims.sdpa_backward (attention's double backward): the rules of the prims it
// expands into (decomp/sdpa_backward.h), applied to that expansion. The node is expanded into a
// small graph of its own, that graph's joint is built with the table, and the joint's nodes
// are emitted in place with the node's inputs and cotangents bound to the joint's inputs and
// tangents. Correct by construction and rarely run (double backward of attention), so written
// for clarity rather than speed: the expansion is recomputed.
#include <unordered_map>

#include "core/autograd/joint.h"
#include "core/autograd/vjp_util.h"
#include "core/decomp/decompose.h"

namespace plugsdk::autograd {
namespace {

using namespace vjp;  // NOLINT(google-build-using-namespace): the rule files' vocabulary

Result sdpaBackwardVjp(Emitter& e, const VjpCall& c) {
  const ir::Context& ctx = e.context();
  const ir::OpDef* def = ctx.ops.find("prims.sdpa_backward");
  // The node alone, expanded into prims.
  ir::Graph node("sdpa_backward_node");
  {
    std::vector<V> nodeIns;
    for (size_t i = 0; i < c.inputs().size(); ++i)
      nodeIns.push_back(c.input(i) ? node.addInput("in" + std::to_string(i), e.type(c.input(i))) : nullptr);
    std::vector<ir::TensorType> types;
    for (size_t i = 0; i < 3; ++i) types.push_back(e.type(c.output(i)));
    ir::Node* n = node.addNode(def->schema.name, def, nodeIns, c.attrs(), types, {"dq", "dk", "dv"}, {});
    node.setOutputs(n->outputs());
  }
  decomp::DecompOptions expandIt;
  expandIt.expand.insert("prims.sdpa_backward");
  ASSIGN_OR_RETURN(ir::Graph prims, decomp::decompose(ctx, decomp::makeDefaultDecompositions(), node, expandIt));
  JointSpec spec;
  // The graph's inputs are the node's present inputs, in order (the optional mask is last).
  for (size_t i = 0; i < prims.inputs().size(); ++i) spec.requiresGrad.push_back(c.needs(i));
  for (size_t i = 0; i < 3; ++i) spec.differentiableOutputs.push_back(c.cotangent(i) != nullptr);
  ASSIGN_OR_RETURN(JointGraph j, buildJoint(ctx, prims, spec, makeVjpTable()));
  // The joint's nodes, emitted here: its forward inputs are the node's inputs, its tangents
  // the node's cotangents.
  std::unordered_map<const ir::Value*, V> bound;
  for (size_t i = 0; i < j.numForwardInputs; ++i) bound[j.graph.inputs()[i]] = c.input(i);
  for (size_t t = 0; t < j.tangentOf.size(); ++t)
    bound[j.graph.inputs()[j.numForwardInputs + t]] = c.cotangent(static_cast<size_t>(j.tangentOf[t]));
  for (const auto& n : j.graph.nodes()) {
    std::vector<V> ins;
    for (const ir::Value* in : n->inputs()) ins.push_back(in ? bound.at(in) : nullptr);
    std::vector<V> outs = e.apply(n->op(), ins, n->attrs());
    if (!e.ok()) return e.status();
    for (size_t i = 0; i < outs.size(); ++i) bound[n->outputs()[i]] = outs[i];
  }
  std::vector<V> gs(c.inputs().size(), nullptr);
  for (size_t g = 0; g < j.gradOf.size(); ++g)
    gs[static_cast<size_t>(j.gradOf[g])] = bound.at(j.graph.outputs()[j.numForwardOutputs + g]);
  return grads(e, c, gs);
}

}  // namespace

void addSdpaBackwardVjp(VjpTable& t) { t.add("prims.sdpa_backward", sdpaBackwardVjp); }

}  // namespace plugsdk::autograd
