// How a target raises a kernel's run-time failure (a failed CHECK, an integer division by
// zero) through its native runtime, besides the status word every target writes (frame.h):
// on a GPU, the device-side assert its runtime reports on every later call (what torch's own
// kernels do), for launches whose caller does not wait to read the status word (ABI 1.3
// async_stream_failures). A launch asks for it with bit 0 of the status pointer (status
// words are 4-byte aligned); kernels mask the bit off before using the pointer.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string>

namespace plugsdk::lowering {

class FailureRaiser {
 public:
  virtual ~FailureRaiser() = default;
  /// Emits, at b's insertion point (the failing thread, its status already written), the
  /// native runtime's failure with `message`; `kernel` names the kernel in it.
  virtual void raise(llvm::IRBuilder<>& b, const std::string& kernel, const std::string& message) const = 0;
};

}  // namespace plugsdk::lowering
