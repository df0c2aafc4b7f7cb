// The GPUs the driver reports, each with its primary context (shared with torch and every
// other user of the runtime API in this process), and a guard that makes one current.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/codegen/nvptx.h"
#include "backends/cuda/driver/cuda_api.h"

namespace plugsdk::cuda {

struct Device {
  CUdevice handle = 0;
  CUcontext context = nullptr;  ///< the primary context, retained until the client goes
  GpuArch arch;
  std::string name;  ///< "NVIDIA H100 80GB HBM3"
  int multiprocessors = 0;
  int l2Bytes = 0;
  int maxGridX = 0;
  uint64_t memoryBytes = 0;
  double dramGBs = 0;  ///< peak DRAM bandwidth from the memory clock and bus width
};

/// Every device, primary contexts retained. An error when the driver works but a device
/// cannot be opened.
sdk::StatusOr<std::vector<Device>> openDevices(const DriverApi& api);
/// Releases the primary contexts openDevices retained.
void closeDevices(const DriverApi& api, std::vector<Device>& devices);

/// Makes `context` current on this thread for the guard's life (the caller's own current
/// context is restored: torch may have one).
class ContextGuard {
 public:
  /// Nothing to push when `context` is current already (torch's thread, every launch).
  ContextGuard(const DriverApi& api, CUcontext context) : api_(api) {
    CUcontext current = nullptr;
    pushed_ = api_.ctxGetCurrent(&current) != CUDA_SUCCESS || current != context;
    if (pushed_) api_.ctxPushCurrent(context);
  }
  ~ContextGuard() {
    CUcontext popped = nullptr;
    if (pushed_) api_.ctxPopCurrent(&popped);
  }
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

 private:
  const DriverApi& api_;
  bool pushed_ = false;
};

}  // namespace plugsdk::cuda
