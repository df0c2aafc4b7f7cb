// The attention backward (prims.sdpa_backward without dropout or a mask, causal or not) as
// one fused cuDNN kernel: the operation graph of a flash-attention backward -- the softmax
// weights recomputed from Q K^T and the forward's logsumexp, D = rowsum(dO * O), dV = P^T dO,
// dS = P (dO V^T - D) times the scale, dK = dS^T Q, dQ = dS K -- which cuDNN's heuristics give
// to its fused attention-backward engine (what torch runs for f16 / bf16 attention backward
// on Hopper). Neither P nor dS reaches memory. dQ is accumulated in f32 in a buffer placed
// after the plan's own workspace, which must be zero when the plan runs (the caller clears
// it on the stream: accumulatorOffset / accumulatorBytes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/library/cudnn_api.h"
#include "backends/cuda/library/sdpa_graph.h"

namespace plugsdk::cuda::dnn {

struct SdpaBackwardSpec {
  SdpaSpec forward;                     ///< q, k, v, o and the stats as the forward took them (no bias)
  std::vector<int64_t> dO, dQ, dK, dV;  ///< strides of [b, h, s, d] (the last 1), like q, k, v, o
  std::string describe() const;
};

class SdpaBackwardGraphPlan {
 public:
  static sdk::StatusOr<std::unique_ptr<SdpaBackwardGraphPlan>> create(const Api& api, Handle handle,
                                                                      const SdpaBackwardSpec& spec);
  ~SdpaBackwardGraphPlan();
  /// The workspace execute needs: the plan's, then dQ's f32 accumulator (16-byte aligned).
  size_t workspaceBytes() const { return accumulatorOffset_ + accumulatorBytes_; }
  size_t accumulatorOffset() const { return accumulatorOffset_; }
  size_t accumulatorBytes() const { return accumulatorBytes_; }
  /// Runs on the handle's stream; the accumulator's bytes of `workspace` must be zero.
  sdk::Status execute(Handle handle, const void* q, const void* k, const void* v, const void* o, const void* stats,
                      const void* dO, void* dQ, void* dK, void* dV, void* workspace);
  std::string engine() const { return engine_; }

 private:
  explicit SdpaBackwardGraphPlan(const Api& api) : api_(api) {}
  const Api& api_;
  std::vector<BackendDesc> owned_;
  BackendDesc plan_ = nullptr;
  BackendDesc pack_ = nullptr;
  std::vector<const void*> packed_;
  size_t accumulatorOffset_ = 0, accumulatorBytes_ = 0;
  std::string engine_;
  bool causal_ = false;
  float scale_ = 1, one_ = 1, maskValue_ = 0;  ///< the by-value scalars, read at each execute
};

}  // namespace plugsdk::cuda::dnn
