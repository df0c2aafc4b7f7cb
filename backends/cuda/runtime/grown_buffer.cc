// The grown, shared device buffer (grown_buffer.h).
#include "backends/cuda/runtime/grown_buffer.h"

#include <algorithm>

#include "backends/cuda/runtime/device.h"

namespace plugsdk::cuda {

sdk::StatusOr<CUdeviceptr> GrownBuffer::atLeast(const DriverApi& api, CUcontext context, size_t want,
                                                const std::string& what) {
  if (want <= bytes) return ptr;
  ContextGuard g(api, context);
  const size_t size = std::max(want, bytes + bytes / 2);
  CUdeviceptr grown = 0;
  sdk::Status st = api.check(api.memAlloc(&grown, size), what + " (" + std::to_string(size) + " bytes)");
  if (!st.isOk()) return st;
  if (ptr) retired.push_back(ptr);
  ptr = grown;
  bytes = size;
  return ptr;
}

void GrownBuffer::release(const DriverApi& api) {
  if (ptr) api.memFree(ptr);
  for (CUdeviceptr p : retired) api.memFree(p);
  ptr = 0;
  bytes = 0;
  retired.clear();
}

}  // namespace plugsdk::cuda
