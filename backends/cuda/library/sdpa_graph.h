// Attention (prims.sdpa without dropout) as one fused cuDNN kernel: the operation graph of
// a flash-attention forward -- S = Q K^T, times the scale, plus an additive bias or a causal
// mask, softmax with its row statistics (max + log of the sum: the logsumexp), O = P V --
// which cuDNN's heuristics give to its fused attention engine (the kernel torch's inductor
// runs for f16 / bf16 attention on Hopper). The scores never reach memory. Built once per
// geometry; a launch sets the variant pack's pointers and executes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/library/cudnn_api.h"
#include "backends/cuda/library/dnn_graph_builder.h"

namespace plugsdk::cuda::dnn {

/// Tensors as cuDNN's attention takes them: [b, h, s, d] with a unit last stride (element
/// strides given for the first three dims and 1 for the last).
struct SdpaSpec {
  int dataType = kBfloat16;  ///< q, k, v, o (kHalf or kBfloat16); the statistics are f32
  int64_t b = 1, h = 1, sq = 1, skv = 1, d = 1, dv = 1;
  std::vector<int64_t> q, k, v, o;  ///< strides of [b, h, s, d] (4 each, the last 1)
  std::vector<int64_t> stats;       ///< strides of the f32 logsumexp [b, h, sq, 1]
  float scale = 1;
  bool causal = false;  ///< keys past the query's position masked (top-left aligned)
  bool bias = false;    ///< an additive bias of dataType, [b|1, h|1, sq, skv] with biasStrides
  std::vector<int64_t> biasDims, biasStrides;
  std::string describe() const;
};

/// The causal mask as cuDNN's attention engines expect it spelled, on f32 `scores` of `dims`
/// and `strides`: the row and column indices (GEN_INDEX), row >= column, and a binary select of
/// `maskValue` (a by-value scalar) elsewhere. Virtual tensors take uids from `*nextUid` on.
BackendDesc causalMask(GraphBuilder& b, BackendDesc scores, BackendDesc maskValue, const std::vector<int64_t>& dims,
                       const std::vector<int64_t>& strides, int64_t* nextUid);

class SdpaGraphPlan {
 public:
  static sdk::StatusOr<std::unique_ptr<SdpaGraphPlan>> create(const Api& api, Handle handle, const SdpaSpec& spec);
  ~SdpaGraphPlan();
  size_t workspaceBytes() const { return workspace_; }
  /// Runs on the handle's stream; `bias` only with spec.bias.
  sdk::Status execute(Handle handle, const void* q, const void* k, const void* v, void* o, void* stats,
                      const void* bias, void* workspace);
  std::string engine() const { return engine_; }

 private:
  explicit SdpaGraphPlan(const Api& api) : api_(api) {}
  const Api& api_;
  std::vector<BackendDesc> owned_;
  BackendDesc plan_ = nullptr;
  BackendDesc pack_ = nullptr;
  std::vector<const void*> packed_;
  size_t workspace_ = 0;
  std::string engine_;
  bool bias_ = false, causal_ = false;
  float scale_ = 1, maskValue_ = 0;  ///< the by-value scalars, read at each execute
};

}  // namespace plugsdk::cuda::dnn
