// Run-time errors of generated kernels on the GPU (an integer division by zero, a failed
// CHECK: frame.h's status codes). Each executable gets a slot in one device array of status
// words per client; a launch passes its slot's address. Launches do not wait: the array is
// read back (one small copy) when the host synchronizes, and the first nonzero slot becomes
// the error, naming its kernel; the slots are then cleared.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"

namespace plugsdk::cuda {

class KernelStatus {
 public:
  static constexpr uint32_t kSlots = 4096;
  /// Allocates and zeroes the array in the current context.
  static sdk::StatusOr<std::unique_ptr<KernelStatus>> create(const DriverApi& api);
  ~KernelStatus();

  /// A slot for a kernel named `name` with these CHECK messages.
  uint32_t assign(const std::string& name, std::vector<std::string> checkMessages);
  CUdeviceptr address(uint32_t slot) const { return base_ + 4ull * slot; }
  /// Reads the slots (after `stream` is synchronized; nullptr: the context's work is done),
  /// clears the ones set, and returns the first error.
  sdk::Status collect(CUstream stream);

 private:
  explicit KernelStatus(const DriverApi& api) : api_(api) {}
  struct Owner {
    std::string name;
    std::vector<std::string> checkMessages;
  };
  const DriverApi& api_;
  CUdeviceptr base_ = 0;
  std::mutex mu_;
  uint32_t next_ = 0;
  std::vector<Owner> owners_ = std::vector<Owner>(kSlots);
};

}  // namespace plugsdk::cuda
