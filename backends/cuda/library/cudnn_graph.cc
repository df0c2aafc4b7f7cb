// A forward convolution's execution plan through cuDNN's graph API (cudnn_graph.h).
#include "backends/cuda/library/cudnn_graph.h"

#include <algorithm>

namespace plugsdk::cuda::dnn {

namespace {
constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;
constexpr int kMaxConfigs = 32;
}  // namespace

BackendDesc ConvGraphPlan::make(int type) {
  BackendDesc d = nullptr;
  if (api_.backendCreate(type, &d) != kSuccess) return nullptr;
  owned_.push_back(d);
  return d;
}

ConvGraphPlan::~ConvGraphPlan() {
  if (pack_) api_.backendDestroy(pack_);
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) api_.backendDestroy(*it);
}

sdk::StatusOr<std::unique_ptr<ConvGraphPlan>> ConvGraphPlan::create(const Api& api, Handle handle,
                                                                    const ConvSpec& spec) {
  auto p = std::unique_ptr<ConvGraphPlan>(new ConvGraphPlan(api));
  sdk::Status st;
  auto set = [&](BackendDesc d, int attr, int type, int64_t n, const void* v, const char* what) {
    if (st.isOk()) st = api.check(api.backendSet(d, attr, type, n, v), std::string("cuDNN graph: setting ") + what);
  };
  auto finalize = [&](BackendDesc d, const char* what) {
    if (st.isOk()) st = api.check(api.backendFinalize(d), std::string("cuDNN graph: finalizing ") + what);
  };
  auto tensor = [&](int64_t uid, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    BackendDesc t = p->make(kTensorDesc);
    const int64_t align = 16;
    set(t, kTensorDataType, kTypeDataType, 1, &spec.dataType, "a tensor's dtype");
    set(t, kTensorDimensions, kTypeInt64, static_cast<int64_t>(dims.size()), dims.data(), "a tensor's dims");
    set(t, kTensorStrides, kTypeInt64, static_cast<int64_t>(strides.size()), strides.data(), "a tensor's strides");
    set(t, kTensorUniqueId, kTypeInt64, 1, &uid, "a tensor's id");
    set(t, kTensorByteAlignment, kTypeInt64, 1, &align, "a tensor's alignment");
    finalize(t, "a tensor");
    return t;
  };
  BackendDesc x = tensor(kUidX, spec.x, spec.xStrides), w = tensor(kUidW, spec.w, spec.wStrides),
              y = tensor(kUidY, spec.y, spec.yStrides);
  BackendDesc conv = p->make(kConvolutionDesc);
  const int64_t sd = static_cast<int64_t>(spec.pad.size());
  const int mode = kCrossCorrelation;
  set(conv, kConvCompType, kTypeDataType, 1, &spec.computeType, "the compute type");
  set(conv, kConvMode, kTypeConvolutionMode, 1, &mode, "the mode");
  set(conv, kConvSpatialDims, kTypeInt64, 1, &sd, "the spatial dims");
  set(conv, kConvDilations, kTypeInt64, sd, spec.dilation.data(), "the dilations");
  set(conv, kConvFilterStrides, kTypeInt64, sd, spec.stride.data(), "the strides");
  set(conv, kConvPrePaddings, kTypeInt64, sd, spec.pad.data(), "the paddings");
  set(conv, kConvPostPaddings, kTypeInt64, sd, spec.pad.data(), "the paddings");
  finalize(conv, "the convolution");
  const bool wg = spec.weightGradient;
  BackendDesc op = p->make(wg ? kConvBackwardFilterOpDesc : kConvForwardOpDesc);
  set(op, wg ? kConvBwdFilterX : kConvFwdX, kTypeBackendDescriptor, 1, &x, "x");
  set(op, wg ? kConvBwdFilterDy : kConvFwdW, kTypeBackendDescriptor, 1, &w, "w");
  set(op, wg ? kConvBwdFilterDw : kConvFwdY, kTypeBackendDescriptor, 1, &y, "y");
  set(op, wg ? kConvBwdFilterConvDesc : kConvFwdConvDesc, kTypeBackendDescriptor, 1, &conv, "the convolution");
  const float one = 1, zero = 0;
  const double oneD = 1, zeroD = 0;
  const bool f64 = spec.computeType == kDouble;
  set(op, wg ? kConvBwdFilterAlpha : kConvFwdAlpha, f64 ? kTypeDouble : kTypeFloat, 1,
      f64 ? static_cast<const void*>(&oneD) : &one, "alpha");
  set(op, wg ? kConvBwdFilterBeta : kConvFwdBeta, f64 ? kTypeDouble : kTypeFloat, 1,
      f64 ? static_cast<const void*>(&zeroD) : &zero, "beta");
  finalize(op, "the operation");
  BackendDesc graph = p->make(kOperationGraphDesc);
  set(graph, kGraphOps, kTypeBackendDescriptor, 1, &op, "the operations");
  set(graph, kGraphHandle, kTypeHandle, 1, &handle, "the handle");
  finalize(graph, "the operation graph");
  BackendDesc heur = p->make(kEngineHeurDesc);
  const int heurMode = kHeurModeA;
  set(heur, kHeurOperationGraph, kTypeBackendDescriptor, 1, &graph, "the heuristics' graph");
  set(heur, kHeurMode, kTypeHeurMode, 1, &heurMode, "the heuristics' mode");
  finalize(heur, "the heuristics");
  if (!st.isOk()) return st;
  std::vector<BackendDesc> cfgs;
  for (int i = 0; i < kMaxConfigs; ++i) cfgs.push_back(p->make(kEngineCfgDesc));
  if (std::count(cfgs.begin(), cfgs.end(), nullptr)) return sdk::internalError("cuDNN graph: creating configurations");
  int64_t found = 0;
  st = api.check(api.backendGet(heur, kHeurResults, kTypeBackendDescriptor, kMaxConfigs, &found, cfgs.data()),
                 "cuDNN graph: the heuristics' results");
  if (!st.isOk()) return st;
  std::string tried;
  const bool f32 = spec.dataType == kFloat;
  for (int64_t i = 0; i < found; ++i) {
    BackendDesc engine = p->make(kEngineDesc);
    int64_t n = 0;
    if (api.backendGet(cfgs[static_cast<size_t>(i)], kCfgEngine, kTypeBackendDescriptor, 1, &n, &engine) != kSuccess)
      continue;
    int notes[16] = {};
    int64_t numNotes = 0;
    api.backendGet(engine, kEngineNumericalNote, kTypeNumericalNote, 16, &numNotes, notes);
    bool skip = false;
    for (int64_t k = 0; k < numNotes; ++k) {
      skip = skip || notes[k] == kNoteReducedPrecisionReduction;
      if (f32 && !spec.tensorCoresForF32)
        skip = skip || notes[k] == kNoteTensorCore || notes[k] == kNoteDownConvertInputs;
    }
    if (skip) {
      tried += " " + std::to_string(i) + ":numerics";
      continue;
    }
    BackendDesc plan = nullptr;
    if (api.backendCreate(kExecutionPlanDesc, &plan) != kSuccess) continue;
    Status s = api.backendSet(plan, kPlanHandle, kTypeHandle, 1, &handle);
    if (s == kSuccess)
      s = api.backendSet(plan, kPlanEngineConfig, kTypeBackendDescriptor, 1, &cfgs[static_cast<size_t>(i)]);
    if (s == kSuccess) s = api.backendFinalize(plan);
    int64_t ws = 0;
    if (s == kSuccess) s = api.backendGet(plan, kPlanWorkspaceSize, kTypeInt64, 1, &n, &ws);
    if (s != kSuccess) {
      api.backendDestroy(plan);
      tried += " " + std::to_string(i) + ":" + std::to_string(s);
      continue;
    }
    p->owned_.push_back(plan);
    p->plan_ = plan;
    p->workspace_ = static_cast<size_t>(ws);
    p->engine_ = "engine configuration " + std::to_string(i) + " of " + std::to_string(found);
    return p;
  }
  return sdk::unimplemented("cuDNN graph: none of the heuristics' " + std::to_string(found) +
                            " engine configurations finalized (" + tried + " )");
}

sdk::Status ConvGraphPlan::execute(Handle handle, const void* x, const void* w, void* y, void* workspace) {
  const void* ptrs[4] = {x, w, y, workspace};
  if (!pack_ || !std::equal(ptrs, ptrs + 4, packPtrs_)) {
    if (pack_) api_.backendDestroy(pack_);
    pack_ = nullptr;
    BackendDesc pack = nullptr;
    Status s = api_.backendCreate(kVariantPackDesc, &pack);
    const int64_t uids[3] = {kUidX, kUidW, kUidY};
    const void* data[3] = {x, w, y};
    if (s == kSuccess) s = api_.backendSet(pack, kVariantUniqueIds, kTypeInt64, 3, uids);
    if (s == kSuccess) s = api_.backendSet(pack, kVariantDataPointers, kTypeVoidPtr, 3, data);
    if (s == kSuccess) s = api_.backendSet(pack, kVariantWorkspace, kTypeVoidPtr, 1, &workspace);
    if (s == kSuccess) s = api_.backendFinalize(pack);
    if (s != kSuccess) {
      if (pack) api_.backendDestroy(pack);
      return api_.check(s, "cuDNN graph: the variant pack");
    }
    pack_ = pack;
    std::copy(ptrs, ptrs + 4, packPtrs_);
  }
  const Status s = api_.backendExecute(handle, plan_, pack_);
  if (s == kSuccess) return sdk::Status::ok();
  return api_.check(s, "cuDNN graph: executing the plan (" + engine_ + ")");
}

}  // namespace plugsdk::cuda::dnn
