// The CUDA block as the lowering's thread group (backends/llvm_lowering/thread_group.h):
// thread indices from %tid.x, combines by butterfly shuffles within each warp
// (shfl.sync.bfly over the warp's active lanes) and then across warps through shared memory
// (one slot per warp per field, read back in warp order by every thread, so every thread
// holds the same bits).
#pragma once

#include "backends/llvm_lowering/thread_group.h"

namespace plugsdk::cuda {

constexpr uint32_t kWarpSize = 32;

class BlockGroup final : public lowering::ThreadGroup {
 public:
  /// `threads`: a power of two in [32, 1024].
  explicit BlockGroup(uint32_t threads) : threads_(threads) {}
  uint32_t size() const override { return threads_; }
  llvm::Value* threadIndex(llvm::IRBuilder<>& b) const override;
  std::vector<llvm::Value*> allReduce(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                      const Combine& combine) const override;

 private:
  uint32_t threads_;
};

}  // namespace plugsdk::cuda
