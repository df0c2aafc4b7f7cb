// prims.sdpa and prims.sdpa_backward as library executables: cuDNN's fused flash attention
// (sdpa_graph.h) and its fused backward (sdpa_backward_graph.h) for the forms the plugin
// claims through ABI 1.7 / 1.8 (f16 / bf16, no mask, no dropout, causal or not, head dims
// <= 128 in multiples of 8; the core expands the others). The prim's batch dims map onto
// cuDNN's [b, h]: the last two batch dims, any before them looped over. An operand cuDNN
// cannot read as it lies (a unit last stride, 16-byte aligned rows and base) is copied into a
// packed temporary first, and a result likewise written through one. Each distinct setup
// (sizes, strides, alignment) is planned once.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/library/conv.h"
#include "backends/cuda/library/sdpa_backward_graph.h"
#include "backends/cuda/library/sdpa_graph.h"

namespace plugsdk::cuda {

/// A copy of what compile_library borrowed, one operand per slot in the order of
/// SdpaCall::slots(): the forward's q [..., L, E], k [..., S, E], v [..., S, Ev], result
/// [..., L, Ev] and f32 logsumexp [..., L]; the backward's grad_out, q, k, v, out, logsumexp
/// (its inputs) and dq, dk, dv (its outputs). Then the attributes.
struct SdpaCall {
  bool backward = false;
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<std::string> symbols;
  std::vector<OperandDesc> operands;
  bool causal = false;
  std::optional<double> scale;  ///< none: 1 / sqrt(E)
  /// Checks the operands and attributes (a mask, dropout, another dtype: UNIMPLEMENTED).
  static sdk::StatusOr<SdpaCall> from(const sdk::LibraryCall& c);

  /// What an operand is to cuDNN: its launch buffer, whether the call reads or writes it, and
  /// its last two dims as letters of L, S, E (head dim), V (value head dim), 1 (lse's).
  struct Slot {
    const char* name;
    size_t buffer;
    bool input;
    char rows, cols;
  };
  const std::vector<Slot>& slots() const;
};

class SdpaExecutable {
 public:
  static sdk::StatusOr<std::unique_ptr<SdpaExecutable>> create(const sdk::LibraryCall& c, DnnDevice* dnn);
  ~SdpaExecutable();
  /// One address per launch buffer (the absent mask's 0); the call's symbol values.
  sdk::Status launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols, CUstream stream);
  std::string log() const { return log_; }
  const char* name() const { return call_.backward ? "prims.sdpa_backward" : "prims.sdpa"; }

 private:
  struct Staged;  ///< one operand as cuDNN reads it: in place, or through a packed temporary
  struct Setup;
  sdk::StatusOr<const Setup*> setupFor(const CUdeviceptr* args, const std::vector<int64_t>& symbols);

  SdpaCall call_;
  DnnDevice* dnn_ = nullptr;
  std::map<std::string, std::unique_ptr<Setup>> setups_;
  std::string log_;
};

}  // namespace plugsdk::cuda
