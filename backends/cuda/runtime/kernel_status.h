// Run-time errors of generated kernels on the GPU (an integer division by zero, a failed
// CHECK: frame.h's status codes). Each executable gets a slot in one device array of status
// words per client; a launch passes its slot's address. Launches do not wait: the slots in
// use are read back (one small copy: freed slots are reused first, so they stay packed at
// the front) when the host synchronizes, and the first nonzero one becomes the error, naming
// its kernel; the slots are then cleared.
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

  /// A slot for a kernel named `name` with these CHECK messages (past kSlots live
  /// executables, slots are shared: an error may then name another kernel of the slot).
  uint32_t assign(const std::string& name, std::vector<std::string> checkMessages);
  /// The slot's executable is gone: clears the word (in the current context) for reuse.
  void release(uint32_t slot);
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
  uint32_t next_ = 0;  ///< slots ever handed out (the used prefix is min(next_, kSlots))
  std::vector<uint32_t> free_;
  std::vector<Owner> owners_ = std::vector<Owner>(kSlots);
};

}  // namespace plugsdk::cuda
