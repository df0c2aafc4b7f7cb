// prims.sdpa as a library executable: cuDNN's fused flash attention (sdpa_graph.h) for the
// forms the plugin claims through ABI 1.7 (f16 / bf16, no mask, no dropout, causal or not,
// head dims <= 128 in multiples of 8; the core expands the others). The prim's batch dims
// map onto cuDNN's [b, h]: the last two batch dims, any before them looped over. An operand
// cuDNN cannot read as it lies (a unit last stride, 16-byte aligned rows and base) is copied
// into a packed temporary first, and a result likewise written through one. Each distinct
// setup (sizes, strides, alignment) is planned once.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/library/conv.h"
#include "backends/cuda/library/sdpa_graph.h"

namespace plugsdk::cuda {

/// A copy of what compile_library borrowed: q [..., L, E], k [..., S, E], v [..., S, Ev], the
/// result [..., L, Ev] and the f32 logsumexp [..., L]; the attributes.
struct SdpaCall {
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<std::string> symbols;
  OperandDesc q, k, v, out, lse;
  bool causal = false;
  std::optional<double> scale;  ///< none: 1 / sqrt(E)
  /// Checks the operands and attributes (a mask, dropout, another dtype: UNIMPLEMENTED).
  static sdk::StatusOr<SdpaCall> from(const sdk::LibraryCall& c);
};

class SdpaExecutable {
 public:
  static sdk::StatusOr<std::unique_ptr<SdpaExecutable>> create(const sdk::LibraryCall& c, DnnDevice* dnn);
  ~SdpaExecutable();
  /// q, k, v, (the absent mask), result, logsumexp addresses; the call's symbol values.
  sdk::Status launch(const CUdeviceptr args[6], const std::vector<int64_t>& symbols, CUstream stream);
  std::string log() const { return log_; }

 private:
  struct Staged;  ///< one operand as cuDNN reads it: in place, or through a packed temporary
  struct Setup;
  sdk::StatusOr<const Setup*> setupFor(const CUdeviceptr args[6], const std::vector<int64_t>& symbols);

  SdpaCall call_;
  DnnDevice* dnn_ = nullptr;
  std::map<std::string, std::unique_ptr<Setup>> setups_;
  std::string log_;
};

}  // namespace plugsdk::cuda
