// The fused attention's operation graph and plan (sdpa_graph.h).
#include "backends/cuda/library/sdpa_graph.h"

#include <limits>

#include "backends/cuda/library/dnn_graph_builder.h"

namespace plugsdk::cuda::dnn {

namespace {

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidScale = 6, kUidBias = 7,
                  kUidMaskValue = 8, kUidVirtual = 100;

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::string SdpaSpec::describe() const {
  return std::string(dataType == kHalf ? "f16" : "bf16") + " b " + std::to_string(b) + " h " + std::to_string(h) +
         " sq " + std::to_string(sq) + " skv " + std::to_string(skv) + " d " + std::to_string(d) + " dv " +
         std::to_string(dv) + " q " + list(q) + " k " + list(k) + " v " + list(v) + " o " + list(o) +
         (causal ? " causal" : "") + (bias ? " bias " + list(biasDims) + " " + list(biasStrides) : "");
}

BackendDesc causalMask(GraphBuilder& b, BackendDesc scores, BackendDesc maskValue, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& strides, int64_t* nextUid) {
  auto virt = [&](int type) { return b.tensor({(*nextUid)++, type, dims, strides, true}); };
  BackendDesc row = virt(kInt32), col = virt(kInt32);
  b.pointwise(kPwGenIndex, kInt32, scores, nullptr, row, nullptr, 2);
  b.pointwise(kPwGenIndex, kInt32, scores, nullptr, col, nullptr, 3);
  BackendDesc keep = virt(kBoolean);
  b.pointwise(kPwCmpGe, kBoolean, row, col, keep);
  BackendDesc masked = virt(kFloat);
  b.pointwise(kPwBinarySelect, kFloat, scores, maskValue, masked, keep);
  return masked;
}

SdpaGraphPlan::~SdpaGraphPlan() {
  if (pack_) api_.backendDestroy(pack_);
  destroyAll(api_, owned_);
}

sdk::StatusOr<std::unique_ptr<SdpaGraphPlan>> SdpaGraphPlan::create(const Api& api, Handle handle, const SdpaSpec& s) {
  auto p = std::unique_ptr<SdpaGraphPlan>(new SdpaGraphPlan(api));
  p->bias_ = s.bias;
  p->causal_ = s.causal;
  p->scale_ = s.scale;
  // The causal mask's value: the lowest float rather than -inf, so exp(value - max) is 0
  // without an inf - inf (a query always sees key 0, so no row is fully masked).
  p->maskValue_ = std::numeric_limits<float>::lowest();
  GraphBuilder b(api);
  int64_t nextVirtual = kUidVirtual;
  const std::vector<int64_t> scoreDims{s.b, s.h, s.sq, s.skv}, scoreStrides{s.h * s.sq * s.skv, s.sq * s.skv, s.skv, 1};
  const std::vector<int64_t> rowDims{s.b, s.h, s.sq, 1}, rowStrides{s.h * s.sq, s.sq, 1, 1};
  auto io = [&](int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    return b.tensor({uid, s.dataType, std::move(dims), std::move(strides)});
  };
  auto virt = [&](int type, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    return b.tensor({nextVirtual++, type, dims, strides, true});
  };
  auto scalar = [&](int64_t uid) { return b.tensor({uid, kFloat, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true}); };
  BackendDesc q = io(kUidQ, {s.b, s.h, s.sq, s.d}, s.q);
  // K read as K^T: [b, h, d, skv], its last two strides exchanged.
  BackendDesc kt = io(kUidK, {s.b, s.h, s.d, s.skv}, {s.k[0], s.k[1], s.k[3], s.k[2]});
  BackendDesc v = io(kUidV, {s.b, s.h, s.skv, s.dv}, s.v);
  BackendDesc o = io(kUidO, {s.b, s.h, s.sq, s.dv}, s.o);
  BackendDesc stats = b.tensor({kUidStats, kFloat, rowDims, s.stats});
  BackendDesc scores = virt(kFloat, scoreDims, scoreStrides);
  b.matmul(q, kt, scores);
  BackendDesc scaled = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwMul, kFloat, scores, scalar(kUidScale), scaled);
  BackendDesc last = scaled;
  if (s.bias) {
    BackendDesc biased = virt(kFloat, scoreDims, scoreStrides);
    b.pointwise(kPwAdd, kFloat, last, io(kUidBias, s.biasDims, s.biasStrides), biased);
    last = biased;
  }
  if (s.causal) last = causalMask(b, last, scalar(kUidMaskValue), scoreDims, scoreStrides, &nextVirtual);
  // The softmax with its statistics, as cuDNN's attention engines expect it spelled.
  BackendDesc max = virt(kFloat, rowDims, rowStrides);
  b.reduce(kReduceMax, last, max);
  BackendDesc shifted = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwSub, kFloat, last, max, shifted);
  BackendDesc e = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwExp, kFloat, shifted, nullptr, e);
  BackendDesc sum = virt(kFloat, rowDims, rowStrides);
  b.reduce(kReduceAdd, e, sum);
  BackendDesc logSum = virt(kFloat, rowDims, rowStrides);
  b.pointwise(kPwLog, kFloat, sum, nullptr, logSum);
  b.pointwise(kPwAdd, kFloat, max, logSum, stats);
  // P in the operands' dtype: the engines multiply like dtypes (as flash attention rounds P).
  BackendDesc probs = virt(s.dataType, scoreDims, scoreStrides);
  b.pointwise(kPwDiv, kFloat, e, sum, probs);
  b.matmul(probs, v, o);
  BackendDesc graph = b.graph(handle, b.ops());
  if (!b.status().isOk()) return b.status().withContext("attention " + s.describe());
  sdk::StatusOr<GraphBuilder::Plan> plan = b.plan(handle, graph, nullptr, nullptr);
  if (!plan.isOk()) return plan.status().withContext("attention " + s.describe());
  p->plan_ = plan->plan;
  p->workspace_ = static_cast<size_t>(plan->workspace);
  p->engine_ = plan->engine;
  p->owned_ = b.release();
  return p;
}

sdk::Status SdpaGraphPlan::execute(Handle handle, const void* q, const void* k, const void* v, void* o, void* stats,
                                   const void* bias, void* workspace) {
  std::vector<int64_t> uids{kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale};
  std::vector<const void*> ptrs{q, k, v, o, stats, &scale_};
  if (causal_) {
    uids.push_back(kUidMaskValue);
    ptrs.push_back(&maskValue_);
  }
  if (bias_) {
    uids.push_back(kUidBias);
    ptrs.push_back(bias);
  }
  sdk::Status st = variantPack(api_, &pack_, &packed_, uids, ptrs, workspace);
  if (!st.isOk()) return st;
  const Status r = api_.backendExecute(handle, plan_, pack_);
  if (r == kSuccess) return sdk::Status::ok();
  return api_.check(r, "cuDNN attention: executing the plan (" + engine_ + ")");
}

}  // namespace plugsdk::cuda::dnn
