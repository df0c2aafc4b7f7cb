// Run-time errors of the SPIR-V kernels (an integer division by zero, a failed CHECK:
// llvm_lowering/frame.h's status codes, written by the kernel into its status word, the
// first failure winning), whichever runtime runs them. As in
// backends/cuda/runtime/kernel_status.h: one array of words per client, a slot per
// executable; a launch passes its slot's address; when the host synchronizes, the used slots
// are read back and the first nonzero one becomes the error, naming its kernel, and is
// cleared. The runtime owns the words' memory (OpenCL: SVM and a queue; Level Zero: USM host
// memory the host reads directly) and says how to read and clear them (Words).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero {

class KernelStatus {
 public:
  static constexpr uint32_t kSlots = 4096;

  /// The words' memory, kSlots words of it (zeroed when handed over).
  class Words {
   public:
    virtual ~Words() = default;
    /// The first word, as kernels address it.
    virtual uint32_t* base() const = 0;
    /// Copies words [0, count) to `out` (the work that wrote them has finished).
    virtual sdk::Status read(int32_t* out, uint32_t count) = 0;
    /// Zeroes word `slot` before returning.
    virtual void clear(uint32_t slot) = 0;
  };

  explicit KernelStatus(std::unique_ptr<Words> words) : words_(std::move(words)) {}

  /// A slot for a kernel named `name` with these CHECK messages (past kSlots live
  /// executables, slots are shared: an error may then name another kernel of the slot).
  uint32_t assign(const std::string& name, std::vector<std::string> checkMessages);
  /// The slot's executable is gone: clears the word for reuse.
  void release(uint32_t slot);
  void* address(uint32_t slot) const { return words_->base() + slot; }
  /// Reads the slots (the work that wrote them has finished), clears the ones set, and
  /// returns the first error.
  sdk::Status collect();

 private:
  struct Owner {
    std::string name;
    std::vector<std::string> checkMessages;
  };
  std::unique_ptr<Words> words_;
  std::mutex mu_;
  uint32_t next_ = 0;  ///< slots ever handed out (the used prefix is min(next_, kSlots))
  std::vector<uint32_t> free_;
  std::vector<Owner> owners_ = std::vector<Owner>(kSlots);
};

}  // namespace plugsdk::level_zero
