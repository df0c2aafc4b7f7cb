// A forward convolution's execution plan through cuDNN's graph API (cudnn_graph.h).
#include "backends/cuda/library/cudnn_graph.h"

#include <algorithm>

#include "backends/cuda/library/dnn_graph_builder.h"

namespace plugsdk::cuda::dnn {

namespace {
constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3, kUidBias = 4, kUidResidual = 5, kUidVirtual = 100;

struct NoteFilter {
  bool f32 = false, tensorCoresForF32 = false;
};

/// Engines that reduce in reduced precision are never taken, and for f32 (unless asked)
/// neither are those that round the inputs (TF32 tensor cores).
bool skipEngine(const int* notes, int64_t count, void* ctx) {
  const NoteFilter& f = *static_cast<const NoteFilter*>(ctx);
  for (int64_t k = 0; k < count; ++k) {
    if (notes[k] == kNoteReducedPrecisionReduction) return true;
    if (f.f32 && !f.tensorCoresForF32 && (notes[k] == kNoteTensorCore || notes[k] == kNoteDownConvertInputs))
      return true;
  }
  return false;
}
}  // namespace

ConvGraphPlan::~ConvGraphPlan() {
  if (pack_) api_.backendDestroy(pack_);
  destroyAll(api_, owned_);
}

sdk::StatusOr<std::unique_ptr<ConvGraphPlan>> ConvGraphPlan::create(const Api& api, Handle handle,
                                                                    const ConvSpec& spec) {
  auto p = std::unique_ptr<ConvGraphPlan>(new ConvGraphPlan(api));
  GraphBuilder b(api);
  auto tensor = [&](int64_t uid, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    return b.tensor({uid, spec.dataType, dims, strides});
  };
  const ConvEpilogueSpec& ep = spec.epilogue;
  if (ep.on && spec.weightGradient) return sdk::invalidArgument("cuDNN graph: an epilogue on a weight gradient");
  BackendDesc x = tensor(kUidX, spec.x, spec.xStrides), w = tensor(kUidW, spec.w, spec.wStrides);
  // With an epilogue the convolution's result is a virtual f32 tensor the pointwise chain reads.
  int64_t nextVirtual = kUidVirtual;
  auto virt = [&] { return b.tensor({nextVirtual++, kFloat, spec.y, spec.yStrides, true}); };
  BackendDesc y = ep.on ? virt() : tensor(kUidY, spec.y, spec.yStrides);
  BackendDesc conv = b.make(kConvolutionDesc);
  const int64_t sd = static_cast<int64_t>(spec.pad.size());
  const int mode = kCrossCorrelation;
  b.set(conv, kConvCompType, kTypeDataType, 1, &spec.computeType, "the compute type");
  b.set(conv, kConvMode, kTypeConvolutionMode, 1, &mode, "the mode");
  b.set(conv, kConvSpatialDims, kTypeInt64, 1, &sd, "the spatial dims");
  b.set(conv, kConvDilations, kTypeInt64, sd, spec.dilation.data(), "the dilations");
  b.set(conv, kConvFilterStrides, kTypeInt64, sd, spec.stride.data(), "the strides");
  b.set(conv, kConvPrePaddings, kTypeInt64, sd, spec.pad.data(), "the paddings");
  b.set(conv, kConvPostPaddings, kTypeInt64, sd, spec.pad.data(), "the paddings");
  b.finalize(conv, "the convolution");
  const bool wg = spec.weightGradient;
  BackendDesc op = b.make(wg ? kConvBackwardFilterOpDesc : kConvForwardOpDesc);
  b.setDesc(op, wg ? kConvBwdFilterX : kConvFwdX, x, "x");
  b.setDesc(op, wg ? kConvBwdFilterDy : kConvFwdW, w, "w");
  b.setDesc(op, wg ? kConvBwdFilterDw : kConvFwdY, y, "y");
  b.setDesc(op, wg ? kConvBwdFilterConvDesc : kConvFwdConvDesc, conv, "the convolution");
  const float one = 1, zero = 0;
  const double oneD = 1, zeroD = 0;
  const bool f64 = spec.computeType == kDouble;
  b.set(op, wg ? kConvBwdFilterAlpha : kConvFwdAlpha, f64 ? kTypeDouble : kTypeFloat, 1,
        f64 ? static_cast<const void*>(&oneD) : &one, "alpha");
  b.set(op, wg ? kConvBwdFilterBeta : kConvFwdBeta, f64 ? kTypeDouble : kTypeFloat, 1,
        f64 ? static_cast<const void*>(&zeroD) : &zero, "beta");
  b.finalize(op, "the operation");
  std::vector<BackendDesc> ops{op};
  if (ep.on) {
    // conv -> + bias -> + residual -> act -> y, each step f32; the last writes y.
    std::vector<int64_t> biasDims(spec.y.size(), 1), biasStrides(spec.y.size(), 1);
    biasDims[1] = spec.y[1];
    struct Step {
      int mode;
      BackendDesc b;
    };
    std::vector<Step> steps;
    if (ep.bias) steps.push_back({kPwAdd, b.tensor({kUidBias, ep.biasType, biasDims, biasStrides})});
    if (ep.residual) steps.push_back({kPwAdd, b.tensor({kUidResidual, ep.residualType, spec.y, spec.yStrides})});
    if (ep.act == 1) steps.push_back({kPwReluFwd, nullptr});
    if (ep.act == 2) steps.push_back({kPwGeluTanhFwd, nullptr});
    if (steps.empty()) steps.push_back({kPwIdentity, nullptr});
    BackendDesc last = y;
    for (size_t i = 0; i < steps.size(); ++i) {
      BackendDesc out = i + 1 == steps.size() ? b.tensor({kUidY, ep.yType, spec.y, spec.yStrides}) : virt();
      b.pointwise(steps[i].mode, kFloat, last, steps[i].b, out);
      last = out;
    }
    ops = b.ops();
    ops.insert(ops.begin(), op);
  }
  BackendDesc graph = b.graph(handle, ops);
  if (!b.status().isOk()) return b.status();
  NoteFilter filter{spec.dataType == kFloat, spec.tensorCoresForF32};
  sdk::StatusOr<GraphBuilder::Plan> plan = b.plan(handle, graph, skipEngine, &filter);
  if (!plan.isOk()) return plan.status();
  p->plan_ = plan->plan;
  p->workspace_ = static_cast<size_t>(plan->workspace);
  p->engine_ = plan->engine;
  p->bias_ = ep.on && ep.bias;
  p->residual_ = ep.on && ep.residual;
  p->owned_ = b.release();
  return p;
}

sdk::Status ConvGraphPlan::execute(Handle handle, const void* x, const void* w, void* y, void* workspace) {
  return execute(handle, x, w, y, nullptr, nullptr, workspace);
}

sdk::Status ConvGraphPlan::execute(Handle handle, const void* x, const void* w, void* y, const void* bias,
                                   const void* residual, void* workspace) {
  std::vector<int64_t> uids{kUidX, kUidW, kUidY};
  std::vector<const void*> pointers{x, w, y};
  if (bias_) {
    uids.push_back(kUidBias);
    pointers.push_back(bias);
  }
  if (residual_) {
    uids.push_back(kUidResidual);
    pointers.push_back(residual);
  }
  sdk::Status st = variantPack(api_, &pack_, &packed_, uids, pointers, workspace);
  if (!st.isOk()) return st;
  const Status s = api_.backendExecute(handle, plan_, pack_);
  if (s == kSuccess) return sdk::Status::ok();
  return api_.check(s, "cuDNN graph: executing the plan (" + engine_ + ")");
}

}  // namespace plugsdk::cuda::dnn
