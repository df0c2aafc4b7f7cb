// The CUDA runtime's device-side assert as the lowering's FailureRaiser: a failing kernel
// launched with bit 0 of its status pointer set (runs on an imported stream: torch's, which
// does not wait for them) calls __assertfail, the call CUDA's assert() compiles to. The driver
// prints "plugsdk:<line>: kernel @NAME: block [..], thread [..] Assertion `MESSAGE` failed."
// and the context then reports CUDA_ERROR_ASSERT (torch: "device-side assert triggered") on
// every later call, as it does for torch's own kernels (an embedding's index out of range).
#pragma once

#include "backends/llvm_lowering/failure_raiser.h"

namespace plugsdk::cuda {

class DeviceAssert final : public lowering::FailureRaiser {
 public:
  void raise(llvm::IRBuilder<>& b, const std::string& kernel, const std::string& message) const override;
};

}  // namespace plugsdk::cuda
