// cuDNN graph-API descriptors and plans (dnn_graph_builder.h).
#include "backends/cuda/library/dnn_graph_builder.h"

#include <algorithm>

namespace plugsdk::cuda::dnn {

namespace {
constexpr int kMaxConfigs = 32;
}

GraphBuilder::~GraphBuilder() { destroyAll(api_, owned_); }

std::vector<BackendDesc> GraphBuilder::release() { return std::move(owned_); }

void destroyAll(const Api& api, std::vector<BackendDesc>& owned) {
  for (auto it = owned.rbegin(); it != owned.rend(); ++it) api.backendDestroy(*it);
  owned.clear();
}

BackendDesc GraphBuilder::make(int type) {
  if (!status_.isOk()) return nullptr;
  BackendDesc d = nullptr;
  const Status s = api_.backendCreate(type, &d);
  if (s != kSuccess) {
    status_ = api_.check(s, "cuDNN graph: creating a descriptor of type " + std::to_string(type));
    return nullptr;
  }
  owned_.push_back(d);
  return d;
}

void GraphBuilder::set(BackendDesc d, int attr, int type, int64_t n, const void* v, const char* what) {
  if (status_.isOk())
    status_ = api_.check(api_.backendSet(d, attr, type, n, v), std::string("cuDNN graph: setting ") + what);
}

void GraphBuilder::finalize(BackendDesc d, const char* what) {
  if (status_.isOk()) status_ = api_.check(api_.backendFinalize(d), std::string("cuDNN graph: finalizing ") + what);
}

BackendDesc GraphBuilder::tensor(const TensorSpec& t) {
  BackendDesc d = make(kTensorDesc);
  const int64_t align = 16;
  const int64_t n = static_cast<int64_t>(t.dims.size());
  set(d, kTensorDataType, kTypeDataType, 1, &t.dataType, "a tensor's dtype");
  set(d, kTensorDimensions, kTypeInt64, n, t.dims.data(), "a tensor's dims");
  set(d, kTensorStrides, kTypeInt64, n, t.strides.data(), "a tensor's strides");
  set(d, kTensorUniqueId, kTypeInt64, 1, &t.uid, "a tensor's id");
  set(d, kTensorByteAlignment, kTypeInt64, 1, &align, "a tensor's alignment");
  if (t.isVirtual) {
    const bool yes = true;
    set(d, kTensorIsVirtual, kTypeBoolean, 1, &yes, "a tensor's virtual flag");
  }
  if (t.byValue) {
    const bool yes = true;
    set(d, kTensorIsByValue, kTypeBoolean, 1, &yes, "a tensor's by-value flag");
  }
  if (t.reordering) set(d, kTensorReorderingMode, kTypeTensorReorderingMode, 1, &t.reordering, "a tensor's reordering");
  finalize(d, "a tensor");
  return d;
}

void GraphBuilder::pointwise(int mode, int prec, BackendDesc x, BackendDesc b, BackendDesc y, BackendDesc t,
                             int64_t axis) {
  BackendDesc pw = make(kPointwiseDesc);
  set(pw, kPointwiseMode, kTypePointwiseMode, 1, &mode, "a pointwise mode");
  set(pw, kPointwiseMathPrec, kTypeDataType, 1, &prec, "a pointwise precision");
  if (axis >= 0) set(pw, kPointwiseAxis, kTypeInt64, 1, &axis, "an index axis");
  finalize(pw, "a pointwise operator");
  BackendDesc op = make(kPointwiseOpDesc);
  setDesc(op, kPointwiseOpPwDesc, pw, "a pointwise operator");
  setDesc(op, kPointwiseOpX, x, "a pointwise input");
  if (b) setDesc(op, kPointwiseOpB, b, "a pointwise second input");
  if (t) setDesc(op, kPointwiseOpT, t, "a pointwise mask");
  setDesc(op, kPointwiseOpY, y, "a pointwise output");
  finalize(op, "a pointwise operation");
  ops_.push_back(op);
}

void GraphBuilder::reduce(int what, BackendDesc x, BackendDesc y) {
  BackendDesc r = make(kReductionDesc);
  const int comp = kFloat;
  set(r, kReductionOperator, kTypeReductionOperator, 1, &what, "a reduction operator");
  set(r, kReductionCompType, kTypeDataType, 1, &comp, "a reduction's precision");
  finalize(r, "a reduction operator");
  BackendDesc op = make(kReductionOpDesc);
  setDesc(op, kReductionOpX, x, "a reduction input");
  setDesc(op, kReductionOpY, y, "a reduction output");
  setDesc(op, kReductionOpOperator, r, "a reduction operator");
  finalize(op, "a reduction operation");
  ops_.push_back(op);
}

void GraphBuilder::matmul(BackendDesc a, BackendDesc b, BackendDesc c) {
  BackendDesc m = make(kMatmulDesc);
  const int comp = kFloat;
  set(m, kMatmulCompType, kTypeDataType, 1, &comp, "a matmul's precision");
  finalize(m, "a matmul operator");
  BackendDesc op = make(kMatmulOpDesc);
  setDesc(op, kMatmulOpA, a, "a matmul's a");
  setDesc(op, kMatmulOpB, b, "a matmul's b");
  setDesc(op, kMatmulOpC, c, "a matmul's c");
  setDesc(op, kMatmulOpOperator, m, "a matmul operator");
  finalize(op, "a matmul operation");
  ops_.push_back(op);
}

void GraphBuilder::reshape(BackendDesc x, BackendDesc y) {
  BackendDesc op = make(kReshapeOpDesc);
  setDesc(op, kReshapeOpX, x, "a reshape's input");
  setDesc(op, kReshapeOpY, y, "a reshape's output");
  finalize(op, "a reshape operation");
  ops_.push_back(op);
}

BackendDesc GraphBuilder::graph(Handle handle, const std::vector<BackendDesc>& ops) {
  BackendDesc g = make(kOperationGraphDesc);
  set(g, kGraphOps, kTypeBackendDescriptor, static_cast<int64_t>(ops.size()), ops.data(), "the operations");
  set(g, kGraphHandle, kTypeHandle, 1, &handle, "the handle");
  finalize(g, "the operation graph");
  return g;
}

sdk::StatusOr<GraphBuilder::Plan> GraphBuilder::plan(Handle handle, BackendDesc graph,
                                                     bool (*skip)(const int*, int64_t, void*), void* ctx) {
  std::string tried;
  // An engine configuration made into a plan: false (and noted in `tried`) when it does
  // not finalize or its numerics are refused.
  auto attempt = [&](BackendDesc cfg, BackendDesc engine, const std::string& label, Plan* out) {
    int notes[16] = {};
    int64_t numNotes = 0, n = 0;
    api_.backendGet(engine, kEngineNumericalNote, kTypeNumericalNote, 16, &numNotes, notes);
    if (skip && skip(notes, numNotes, ctx)) {
      tried += " " + label + ":numerics";
      return false;
    }
    BackendDesc plan = nullptr;
    if (api_.backendCreate(kExecutionPlanDesc, &plan) != kSuccess) return false;
    Status s = api_.backendSet(plan, kPlanHandle, kTypeHandle, 1, &handle);
    if (s == kSuccess) s = api_.backendSet(plan, kPlanEngineConfig, kTypeBackendDescriptor, 1, &cfg);
    if (s == kSuccess) s = api_.backendFinalize(plan);
    int64_t ws = 0;
    if (s == kSuccess) s = api_.backendGet(plan, kPlanWorkspaceSize, kTypeInt64, 1, &n, &ws);
    if (s != kSuccess) {
      api_.backendDestroy(plan);
      tried += " " + label + ":" + std::to_string(s);
      return false;
    }
    owned_.push_back(plan);
    *out = Plan{plan, ws, label};
    return true;
  };
  // The heuristics' configurations, mode A then the fallback list.
  for (int mode : {kHeurModeA, kHeurModeFallback}) {
    BackendDesc heur = make(kEngineHeurDesc);
    setDesc(heur, kHeurOperationGraph, graph, "the heuristics' graph");
    set(heur, kHeurMode, kTypeHeurMode, 1, &mode, "the heuristics' mode");
    finalize(heur, "the heuristics");
    std::vector<BackendDesc> cfgs;
    for (int i = 0; i < kMaxConfigs; ++i) cfgs.push_back(make(kEngineCfgDesc));
    if (!status_.isOk()) return status_;
    int64_t found = 0;
    if (api_.backendGet(heur, kHeurResults, kTypeBackendDescriptor, kMaxConfigs, &found, cfgs.data()) != kSuccess)
      found = 0;
    const std::string name = mode == kHeurModeA ? "heuristics A" : "fallback";
    tried += " " + name + " " + std::to_string(found) + ":";
    for (int64_t i = 0; i < found; ++i) {
      BackendDesc engine = make(kEngineDesc);
      if (!engine) return status_;
      int64_t n = 0;
      if (api_.backendGet(cfgs[static_cast<size_t>(i)], kCfgEngine, kTypeBackendDescriptor, 1, &n, &engine) != kSuccess)
        continue;
      Plan p;
      if (attempt(cfgs[static_cast<size_t>(i)], engine,
                  name + " configuration " + std::to_string(i) + " of " + std::to_string(found), &p))
        return p;
    }
  }
  // Every engine of the graph by its global index (what the heuristics did not list).
  int64_t count = 0, n = 0;
  api_.backendGet(graph, kGraphEngineGlobalCount, kTypeInt64, 1, &n, &count);
  tried += " engines " + std::to_string(count) + ":";
  for (int64_t i = 0; i < count; ++i) {
    BackendDesc engine = nullptr, cfg = nullptr;
    Status s = api_.backendCreate(kEngineDesc, &engine);
    if (s == kSuccess) owned_.push_back(engine);
    if (s == kSuccess) s = api_.backendSet(engine, kEngineOperationGraph, kTypeBackendDescriptor, 1, &graph);
    if (s == kSuccess) s = api_.backendSet(engine, kEngineGlobalIndex, kTypeInt64, 1, &i);
    if (s == kSuccess) s = api_.backendFinalize(engine);
    if (s == kSuccess) s = api_.backendCreate(kEngineCfgDesc, &cfg);
    if (s == kSuccess) owned_.push_back(cfg);
    if (s == kSuccess) s = api_.backendSet(cfg, kCfgEngine, kTypeBackendDescriptor, 1, &engine);
    if (s == kSuccess) s = api_.backendFinalize(cfg);
    if (s != kSuccess) {
      tried += " " + std::to_string(i) + ":" + std::to_string(s);
      continue;
    }
    Plan p;
    if (attempt(cfg, engine, "engine " + std::to_string(i) + " of " + std::to_string(count), &p)) return p;
  }
  return sdk::unimplemented("cuDNN graph: no engine configuration finalized (" + tried + " )");
}

sdk::Status variantPack(const Api& api, BackendDesc* pack, std::vector<const void*>* packed,
                        const std::vector<int64_t>& uids, const std::vector<const void*>& pointers, void* workspace) {
  std::vector<const void*> key = pointers;
  key.push_back(workspace);
  if (*pack && *packed == key) return sdk::Status::ok();
  if (*pack) api.backendDestroy(*pack);
  *pack = nullptr;
  packed->clear();
  BackendDesc p = nullptr;
  Status s = api.backendCreate(kVariantPackDesc, &p);
  if (s == kSuccess)
    s = api.backendSet(p, kVariantUniqueIds, kTypeInt64, static_cast<int64_t>(uids.size()), uids.data());
  if (s == kSuccess)
    s = api.backendSet(p, kVariantDataPointers, kTypeVoidPtr, static_cast<int64_t>(pointers.size()), pointers.data());
  if (s == kSuccess) s = api.backendSet(p, kVariantWorkspace, kTypeVoidPtr, 1, &workspace);
  if (s == kSuccess) s = api.backendFinalize(p);
  if (s != kSuccess) {
    if (p) api.backendDestroy(p);
    return api.check(s, "cuDNN graph: the variant pack");
  }
  *pack = p;
  *packed = std::move(key);
  return sdk::Status::ok();
}

}  // namespace plugsdk::cuda::dnn
