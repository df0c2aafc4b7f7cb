// One forward convolution as a finalized execution plan of cuDNN's graph API (the backend
// descriptors torch's cuDNN path also uses). cuDNN 9 implements its legacy
// cudnnConvolutionForward on top of this API and pays for it on every call: measured on
// the H100, resnet50's 53 convolutions cost ~150 us of host time each that way (12.3 ms a
// call against 3.9 ms replayed from a CUDA graph). A plan is built once per geometry (the
// heuristics' engine configurations, tried in order until one finalizes); a launch only
// sets the variant pack's pointers and executes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/library/cudnn_api.h"

namespace plugsdk::cuda::dnn {

/// A pointwise tail computed inside the convolution's kernel: y = act(conv + bias + residual),
/// in f32 until y is stored in `yType`; bias [1, K, 1, 1(, 1)] (by channel), residual at y's
/// element, each optional.
struct ConvEpilogueSpec {
  bool on = false;
  int act = 0;  ///< 0 none, 1 relu, 2 the tanh GELU
  bool bias = false, residual = false;
  int yType = kFloat, biasType = kFloat, residualType = kFloat;
};

/// What the plan computes: y = conv(x, w) on tensors as cuDNN sees them (rank 4 or 5, the
/// weight [K, C / groups, R, S(, T)]: groups follow from the channel counts); with
/// `weightGradient`, y is the weight gradient [K, C, R, S] of the convolution of x
/// [N, C, H, W] whose output gradient is w [N, K, H', W'].
struct ConvSpec {
  int dataType = kFloat, computeType = kFloat;
  std::vector<int64_t> x, xStrides, w, wStrides, y, yStrides;
  std::vector<int64_t> pad, stride, dilation;
  /// Engines that round f32 inputs (TF32 tensor cores) are skipped unless this is set;
  /// engines that reduce in reduced precision always are.
  bool tensorCoresForF32 = false;
  bool weightGradient = false;
  ConvEpilogueSpec epilogue;  ///< forward only
};

class ConvGraphPlan {
 public:
  /// The plan, or an error naming the step that failed (no engine finalizing included).
  static sdk::StatusOr<std::unique_ptr<ConvGraphPlan>> create(const Api& api, Handle handle, const ConvSpec& spec);
  ~ConvGraphPlan();
  size_t workspaceBytes() const { return workspace_; }
  /// Runs on the handle's stream (cudnnSetStream first).
  sdk::Status execute(Handle handle, const void* x, const void* w, void* y, void* workspace);
  /// ... with the epilogue's bias and residual (null where the spec has none).
  sdk::Status execute(Handle handle, const void* x, const void* w, void* y, const void* bias, const void* residual,
                      void* workspace);
  std::string engine() const { return engine_; }

 private:
  explicit ConvGraphPlan(const Api& api) : api_(api) {}
  const Api& api_;
  std::vector<BackendDesc> owned_;  ///< every descriptor of the plan (dnn_graph_builder.h)
  BackendDesc plan_ = nullptr;
  BackendDesc pack_ = nullptr;  ///< the last launch's variant pack, reused for the same pointers
  std::vector<const void*> packed_;
  size_t workspace_ = 0;
  std::string engine_;
  bool bias_ = false, residual_ = false;
};

}  // namespace plugsdk::cuda::dnn
