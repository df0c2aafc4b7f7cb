// The fused attention backward's operation graph and plan (sdpa_backward_graph.h). The
// graph is spelled the way cuDNN's attention-backward engines recognize it: every step of
// the flash-attention backward as a graph node, including the multiplications by one that
// stand where dropout's mask and scale would be.
#include "backends/cuda/library/sdpa_backward_graph.h"

#include <limits>

#include "backends/cuda/library/dnn_graph_builder.h"

namespace plugsdk::cuda::dnn {

namespace {

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidDo = 6, kUidDq = 7, kUidDk = 8,
                  kUidDv = 9, kUidScale = 10, kUidOne = 11, kUidMaskValue = 12, kUidDqAccumulator = 13,
                  kUidVirtual = 100;

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// [.., a, b] as [.., b, a]: a transposed view of the same memory.
std::vector<int64_t> swapLast(std::vector<int64_t> v) {
  std::swap(v[2], v[3]);
  return v;
}

}  // namespace

std::string SdpaBackwardSpec::describe() const {
  return "backward of " + forward.describe() + " dO " + list(dO) + " dQ " + list(dQ) + " dK " + list(dK) + " dV " +
         list(dV);
}

SdpaBackwardGraphPlan::~SdpaBackwardGraphPlan() {
  if (pack_) api_.backendDestroy(pack_);
  destroyAll(api_, owned_);
}

sdk::StatusOr<std::unique_ptr<SdpaBackwardGraphPlan>> SdpaBackwardGraphPlan::create(const Api& api, Handle handle,
                                                                                    const SdpaBackwardSpec& spec) {
  const SdpaSpec& s = spec.forward;
  if (s.bias) return sdk::unimplemented("cuDNN attention backward: a bias is not taken (" + spec.describe() + ")");
  auto p = std::unique_ptr<SdpaBackwardGraphPlan>(new SdpaBackwardGraphPlan(api));
  p->causal_ = s.causal;
  p->scale_ = s.scale;
  p->maskValue_ = std::numeric_limits<float>::lowest();  // as the forward's (sdpa_graph.cc)
  GraphBuilder b(api);
  int64_t nextVirtual = kUidVirtual;
  const std::vector<int64_t> scoreDims{s.b, s.h, s.sq, s.skv}, scoreStrides{s.h * s.sq * s.skv, s.sq * s.skv, s.skv, 1};
  // The scores transposed, [b, h, skv, sq], as a view of their row-major memory.
  const std::vector<int64_t> transposedDims{s.b, s.h, s.skv, s.sq},
      transposedStrides{s.h * s.sq * s.skv, s.sq * s.skv, 1, s.skv};
  const std::vector<int64_t> rowDims{s.b, s.h, s.sq, 1}, rowStrides{s.h * s.sq, s.sq, 1, 1};
  auto io = [&](int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    return b.tensor({uid, s.dataType, std::move(dims), std::move(strides)});
  };
  auto virt = [&](int type, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    return b.tensor({nextVirtual++, type, dims, strides, true});
  };
  auto scalar = [&](int64_t uid) { return b.tensor({uid, kFloat, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true}); };
  auto packed = [](const std::vector<int64_t>& d) {
    return std::vector<int64_t>{d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  };

  BackendDesc q = io(kUidQ, {s.b, s.h, s.sq, s.d}, s.q);
  BackendDesc kt = io(kUidK, {s.b, s.h, s.d, s.skv}, swapLast(s.k));   // K read as K^T
  BackendDesc vt = io(kUidV, {s.b, s.h, s.dv, s.skv}, swapLast(s.v));  // V read as V^T
  BackendDesc o = io(kUidO, {s.b, s.h, s.sq, s.dv}, s.o);
  BackendDesc dO = io(kUidDo, {s.b, s.h, s.sq, s.dv}, spec.dO);
  BackendDesc stats = b.tensor({kUidStats, kFloat, rowDims, s.stats});
  BackendDesc one = scalar(kUidOne), scale = scalar(kUidScale);

  // D = rowsum(dO * O), times one (dropout's 1 - p).
  const std::vector<int64_t> oDims{s.b, s.h, s.sq, s.dv};
  BackendDesc dOxO = virt(kFloat, oDims, packed(oDims));
  b.pointwise(kPwMul, kFloat, dO, o, dOxO);
  BackendDesc rowSum = virt(kFloat, rowDims, rowStrides);
  b.reduce(kReduceAdd, dOxO, rowSum);
  BackendDesc dRow = virt(kFloat, rowDims, rowStrides);
  b.pointwise(kPwMul, kFloat, rowSum, one, dRow);

  // P = exp(scale * Q K^T (masked) - lse).
  BackendDesc scores = virt(kFloat, scoreDims, scoreStrides);
  b.matmul(q, kt, scores);
  BackendDesc last = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwMul, kFloat, scores, scale, last);
  if (s.causal) last = causalMask(b, last, scalar(kUidMaskValue), scoreDims, scoreStrides, &nextVirtual);
  BackendDesc shifted = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwSub, kFloat, last, stats, shifted);
  BackendDesc probs = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwExp, kFloat, shifted, nullptr, probs);

  // dV = P^T dO, P^T in the operands' dtype.
  BackendDesc probsT = virt(s.dataType, transposedDims, transposedStrides);
  b.reshape(probs, probsT);
  b.matmul(probsT, dO, io(kUidDv, {s.b, s.h, s.skv, s.dv}, spec.dV));

  // dS = P * (dO V^T * one - D) * scale.
  BackendDesc dP = virt(kFloat, scoreDims, scoreStrides);
  b.matmul(dO, vt, dP);
  BackendDesc dPKept = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwMul, kFloat, dP, one, dPKept);
  BackendDesc dPMinusD = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwSub, kFloat, dPKept, dRow, dPMinusD);
  BackendDesc dSUnscaled = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwMul, kFloat, dPMinusD, probs, dSUnscaled);
  BackendDesc dS = virt(kFloat, scoreDims, scoreStrides);
  b.pointwise(kPwMul, kFloat, dSUnscaled, scale, dS);

  // dK = dS^T Q.
  BackendDesc dST = virt(s.dataType, transposedDims, transposedStrides);
  b.reshape(dS, dST);
  b.matmul(dST, q, io(kUidDk, {s.b, s.h, s.skv, s.d}, spec.dK));

  // dQ = dS K, accumulated in f32 (the accumulator's F16x16 reordering is how the graph asks
  // for the engine's atomic dQ), then copied into dQ's dtype.
  BackendDesc k = virt(kFloat, {s.b, s.h, s.skv, s.d}, s.k);
  b.reshape(kt, k);
  const std::vector<int64_t> qDims{s.b, s.h, s.sq, s.d};
  BackendDesc accumulator = b.tensor({kUidDqAccumulator, kFloat, qDims, packed(qDims), false, false, kReorderF16x16});
  b.matmul(dS, k, accumulator);
  b.pointwise(kPwIdentity, kFloat, accumulator, nullptr, io(kUidDq, qDims, spec.dQ));

  BackendDesc graph = b.graph(handle, b.ops());
  if (!b.status().isOk()) return b.status().withContext("attention backward " + spec.describe());
  sdk::StatusOr<GraphBuilder::Plan> plan = b.plan(handle, graph, nullptr, nullptr);
  if (!plan.isOk()) return plan.status().withContext("attention backward " + spec.describe());
  p->plan_ = plan->plan;
  p->accumulatorOffset_ = (static_cast<size_t>(plan->workspace) + 255) / 256 * 256;
  p->accumulatorBytes_ = static_cast<size_t>(s.b * s.h * s.sq * s.d) * sizeof(float);
  p->engine_ = plan->engine;
  p->owned_ = b.release();
  return p;
}

sdk::Status SdpaBackwardGraphPlan::execute(Handle handle, const void* q, const void* k, const void* v, const void* o,
                                           const void* stats, const void* dO, void* dQ, void* dK, void* dV,
                                           void* workspace) {
  void* accumulator = static_cast<char*>(workspace) + accumulatorOffset_;
  std::vector<int64_t> uids{kUidQ,  kUidK,  kUidV,  kUidO,   kUidStats, kUidDo,
                            kUidDq, kUidDk, kUidDv, kUidOne, kUidScale, kUidDqAccumulator};
  std::vector<const void*> ptrs{q, k, v, o, stats, dO, dQ, dK, dV, &one_, &scale_, accumulator};
  if (causal_) {
    uids.push_back(kUidMaskValue);
    ptrs.push_back(&maskValue_);
  }
  sdk::Status st = variantPack(api_, &pack_, &packed_, uids, ptrs, workspace);
  if (!st.isOk()) return st;
  const Status r = api_.backendExecute(handle, plan_, pack_);
  if (r == kSuccess) return sdk::Status::ok();
  return api_.check(r, "cuDNN attention backward: executing the plan (" + engine_ + ")");
}

}  // namespace plugsdk::cuda::dnn
