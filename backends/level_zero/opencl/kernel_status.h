// Run-time errors of the SPIR-V kernels (an integer division by zero, a failed CHECK:
// llvm_lowering/frame.h's status codes, written by the kernel into its status word, the
// first failure winning). As in backends/cuda/runtime/kernel_status.h: one SVM array of
// words per client, a slot per executable; a launch passes its slot's address; when the
// host synchronizes, the used slots are read back and the first nonzero one becomes the
// error, naming its kernel, and is cleared.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/level_zero/opencl/device.h"

namespace plugsdk::level_zero::opencl {

class KernelStatus {
 public:
  static constexpr uint32_t kSlots = 4096;
  /// Allocates and zeroes the words (with a queue of its own for reading and clearing).
  static sdk::StatusOr<std::unique_ptr<KernelStatus>> create(const Device& device);
  ~KernelStatus();

  /// A slot for a kernel named `name` with these CHECK messages (past kSlots live
  /// executables, slots are shared: an error may then name another kernel of the slot).
  uint32_t assign(const std::string& name, std::vector<std::string> checkMessages);
  /// The slot's executable is gone: clears the word for reuse.
  void release(uint32_t slot);
  void* address(uint32_t slot) const { return words_ + slot; }
  /// Reads the slots (the work that wrote them has finished), clears the ones set, and
  /// returns the first error.
  sdk::Status collect();

 private:
  explicit KernelStatus(const Device& device) : device_(device) {}
  struct Owner {
    std::string name;
    std::vector<std::string> checkMessages;
  };
  const Device& device_;
  uint32_t* words_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::mutex mu_;
  uint32_t next_ = 0;  ///< slots ever handed out (the used prefix is min(next_, kSlots))
  std::vector<uint32_t> free_;
  std::vector<Owner> owners_ = std::vector<Owner>(kSlots);
};

}  // namespace plugsdk::level_zero::opencl
