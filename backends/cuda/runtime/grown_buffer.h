// A device buffer grown on demand and shared, stream-ordered, by one device's library calls
// (cuBLASLt's padded results, cuDNN's workspaces and packed temporaries). A grown buffer's
// predecessors stay allocated until release(): launches queued or recorded into a CUDA graph
// may still use them, so growing never waits and never frees under a recording. Growth by at
// least half keeps the kept ones under twice the largest.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cuda {

struct GrownBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  std::vector<CUdeviceptr> retired;
  /// The buffer, grown first when smaller than `want` (in `context`; `what` names it in errors).
  sdk::StatusOr<CUdeviceptr> atLeast(const DriverApi& api, CUcontext context, size_t want, const std::string& what);
  /// Frees it and its predecessors (the context current).
  void release(const DriverApi& api);
};

}  // namespace plugsdk::cuda
