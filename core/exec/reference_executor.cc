// The reference executor's driver: symbol binding, node-by-node execution with liveness,
// and the one-op test helper.
#include "core/exec/reference_executor.h"

#include <chrono>
#include <unordered_map>

#include "core/exec/kernels.h"
#include "core/ir/verifier.h"

namespace plugsdk::exec {

using ir::Graph;
using ir::Node;
using ir::SymExpr;
using ir::Value;

StatusOr<std::vector<int64_t>> RefKernelContext::evalInts(const std::string& name) const {
  std::vector<int64_t> out;
  for (const SymExpr& e : getSyms(name)) {
    auto v = e.evaluate(symbols_);
    if (!v) return invalidArgument(schema().name + ": cannot evaluate '" + e.toString() + "' in attribute " + name);
    out.push_back(*v);
  }
  return out;
}

StatusOr<int64_t> RefKernelContext::evalInt(const std::string& name) const {
  SymExpr e = getSym(name);
  auto v = e.evaluate(symbols_);
  if (!v) return invalidArgument(schema().name + ": cannot evaluate '" + e.toString() + "' in attribute " + name);
  return *v;
}

std::vector<std::string> RefKernelTable::names() const {
  std::vector<std::string> out;
  for (const auto& [n, k] : kernels_) out.push_back(n);
  return out;
}

RefKernelTable makeReferenceKernels() {
  RefKernelTable t;
  registerPointwiseKernels(t);
  registerReductionKernels(t);
  registerShapeKernels(t);
  registerIndexingKernels(t);
  registerCreationKernels(t);
  registerNNKernels(t);
  registerBackwardKernels(t);
  registerPrimKernels(t);
  return t;
}

ReferenceExecutor::ReferenceExecutor(std::shared_ptr<const ir::Context> ctx)
    : ctx_(std::move(ctx)), kernels_(makeReferenceKernels()) {}

StatusOr<std::map<std::string, int64_t>> bindSymbols(const Graph& graph, const std::vector<HostTensor>& inputs) {
  if (inputs.size() != graph.inputs().size())
    return invalidArgument("graph @" + graph.name() + " takes " + std::to_string(graph.inputs().size()) +
                           " inputs, got " + std::to_string(inputs.size()));
  std::map<std::string, int64_t> syms;
  // First pass: dims that are a bare symbol bind it.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = graph.inputs()[i];
    const auto& shape = v->type().shape;
    if (static_cast<int>(shape.size()) != inputs[i].rank())
      return invalidArgument("input " + v->ref() + " expects rank " + std::to_string(shape.size()) + " (" +
                             v->type().toString() + "), got " + inputs[i].typeString());
    if (inputs[i].dtype() != v->type().dtype)
      return invalidArgument("input " + v->ref() + " expects dtype " + std::string(ir::dtypeName(v->type().dtype)) +
                             ", got " + inputs[i].typeString());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!shape[d].isSymbol()) continue;
      std::string s = shape[d].symbols()[0];
      int64_t actual = inputs[i].shape()[d];
      auto [it, fresh] = syms.emplace(s, actual);
      if (!fresh && it->second != actual)
        return invalidArgument("input " + v->ref() + " dim " + std::to_string(d) + ": size symbol " + s + " is " +
                               std::to_string(it->second) + " from an earlier input but " + std::to_string(actual) +
                               " here");
    }
  }
  // Second pass: every dim must evaluate to the actual size.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = graph.inputs()[i];
    for (size_t d = 0; d < v->type().shape.size(); ++d) {
      auto want = v->type().shape[d].evaluate(syms);
      int64_t actual = inputs[i].shape()[d];
      if (!want)
        return invalidArgument("input " + v->ref() + " dim " + std::to_string(d) + " (" +
                               v->type().shape[d].toString() +
                               ") cannot be evaluated: bind its symbols through a plain symbol dim of some input");
      if (*want != actual)
        return invalidArgument("input " + v->ref() + " dim " + std::to_string(d) + " must be " +
                               v->type().shape[d].toString() + " = " + std::to_string(*want) + ", got " +
                               std::to_string(actual));
    }
  }
  return syms;
}

StatusOr<std::vector<HostTensor>> ReferenceExecutor::run(const Graph& graph, const std::vector<HostTensor>& inputs,
                                                         RunStats* stats) const {
  auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(auto syms, bindSymbols(graph, inputs));

  // Last use of each value (node index; graph outputs live to the end).
  std::unordered_map<const Value*, size_t> lastUse;
  const size_t end = graph.nodes().size();
  for (size_t n = 0; n < graph.nodes().size(); ++n)
    for (const Value* in : graph.nodes()[n]->inputs())
      if (in) lastUse[in] = n;
  for (const Value* out : graph.outputs()) lastUse[out] = end;

  std::unordered_map<const Value*, HostTensor> live;
  int64_t liveBytes = 0, peak = 0;
  auto bytesOf = [](const HostTensor& t) { return t.numel() * 8; };
  for (size_t i = 0; i < inputs.size(); ++i) {
    live[graph.inputs()[i]] = inputs[i];
    liveBytes += bytesOf(inputs[i]);
  }
  peak = liveBytes;

  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = *graph.nodes()[n];
    const ir::OpDef* def = node.def() ? node.def() : ctx_->ops.find(node.op());
    if (!def) return notFound(node.describe() + ": unknown op '" + node.op() + "'");
    const RefKernel* kernel = kernels_.find(node.op());
    if (!kernel)
      return unimplemented(node.describe() + ": the reference executor has no kernel for '" + node.op() + "'");
    std::vector<const HostTensor*> ins;
    for (const Value* in : node.inputs()) {
      if (!in) {
        ins.push_back(nullptr);
        continue;
      }
      auto it = live.find(in);
      if (it == live.end()) return internalError(node.describe() + ": input " + in->ref() + " is not live");
      ins.push_back(&it->second);
    }
    std::vector<DType> outDTypes;
    std::vector<std::vector<int64_t>> outShapes;
    for (const Value* out : node.outputs()) {
      outDTypes.push_back(out->type().dtype);
      std::vector<int64_t> shape;
      for (const SymExpr& d : out->type().shape) {
        auto v = d.evaluate(syms);
        if (!v) return invalidArgument(node.describe() + ": cannot evaluate output size " + d.toString());
        if (*v < 0)
          return invalidArgument(node.describe() + ": output size " + d.toString() + " evaluates to " +
                                 std::to_string(*v));
        shape.push_back(*v);
      }
      outShapes.push_back(std::move(shape));
    }
    RefKernelContext kctx(def->schema, node.attrs(), ins, outDTypes, outShapes, syms);
    auto result = (*kernel)(kctx);
    if (!result.isOk()) return result.status().withContext(node.describe());
    if (result->size() != node.outputs().size())
      return internalError(node.describe() + ": kernel returned " + std::to_string(result->size()) +
                           " outputs, expected " + std::to_string(node.outputs().size()));
    for (size_t i = 0; i < result->size(); ++i) {
      HostTensor& t = (*result)[i];
      if (t.dtype() != outDTypes[i] || t.shape() != outShapes[i])
        return internalError(node.describe() + ": kernel produced " + t.typeString() + " for output " +
                             node.outputs()[i]->ref() + ", inference promised " +
                             std::string(ir::dtypeName(outDTypes[i])) + shapeString(outShapes[i]));
      liveBytes += bytesOf(t);
      live[node.outputs()[i]] = std::move(t);
    }
    peak = std::max(peak, liveBytes);
    // Free values whose last use was this node (and outputs nobody uses).
    auto release = [&](const Value* v) {
      auto lu = lastUse.find(v);
      if (lu != lastUse.end() && lu->second > n) return;
      auto it = live.find(v);
      if (it == live.end()) return;
      liveBytes -= bytesOf(it->second);
      live.erase(it);
    };
    for (const Value* in : node.inputs())
      if (in) release(in);
    for (const Value* out : node.outputs()) release(out);
  }

  std::vector<HostTensor> outs;
  for (const Value* v : graph.outputs()) {
    auto it = live.find(v);
    if (it == live.end()) return internalError("graph output " + v->ref() + " was not computed");
    outs.push_back(it->second);
  }
  if (stats) {
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stats->nodesRun = static_cast<int64_t>(graph.nodes().size());
    stats->peakLiveBytes = peak;
  }
  return outs;
}

StatusOr<std::vector<HostTensor>> runOp(const std::shared_ptr<const ir::Context>& ctx, const std::string& op,
                                        const std::vector<const HostTensor*>& inputs, const ir::AttrMap& attrs) {
  const ir::OpDef* def = ctx->ops.find(op);
  if (!def) return notFound("unknown op '" + op + "'");
  Graph g("op");
  std::vector<Value*> ins;
  std::vector<HostTensor> concrete;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      ins.push_back(nullptr);
      continue;
    }
    ir::TensorType t;
    t.dtype = inputs[i]->dtype();
    for (int64_t d : inputs[i]->shape()) t.shape.push_back(SymExpr(d));
    ins.push_back(g.addInput("in" + std::to_string(i), t));
    concrete.push_back(*inputs[i]);
  }
  ir::AttrMap a = attrs;
  ASSIGN_OR_RETURN(auto types, ir::checkAndInfer(*ctx, *def, ins, a, op));
  Node* node = g.addNode(op, def, ins, a, types);
  g.setOutputs(node->outputs());
  RETURN_IF_ERROR(ir::verifyGraph(*ctx, g));
  ReferenceExecutor ex(ctx);
  return ex.run(g, concrete);
}

}  // namespace plugsdk::exec
