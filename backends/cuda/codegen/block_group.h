// The CUDA block as the lowering's thread group (backends/llvm_lowering/thread_group.h):
// thread indices from %tid.x (or its lane, for a warp-sized group), combines by butterfly shuffles within each warp
// (shfl.sync.bfly over the warp's active lanes) and then across warps through shared memory
// (one slot per warp per field, read back in warp order by every thread, so every thread
// holds the same bits); split reductions across the blocks of one grid point through global
// memory, the last block to arrive combining (the "threadfence reduction").
#pragma once

#include "backends/llvm_lowering/thread_group.h"

namespace plugsdk::cuda {

constexpr uint32_t kWarpSize = 32;

/// Split reductions: the grid's y dim numbers a grid point's splits (the x dim its points);
/// with more than one, partials go to module globals of kSplitSlots slots per field (points x
/// splits <= this; a launch without splits never touches them, whatever its points),
/// with an arrival counter per point (kSplitCountersSymbol). The
/// last split reads up to kSplitsPerThread partials per thread, then combines over the block,
/// so at most kSplitsPerThread x threads splits per point.
constexpr uint32_t kSplitSlots = 8192;
/// The arrival counters' symbol: one array per module (both copies of the entry use it), set
/// to zero by the launch before each split launch, so a launch that failed midway (a block
/// that left early never counts itself in) leaves nothing behind for the next.
constexpr const char* kSplitCountersSymbol = "plugsdk_split_arrived";
constexpr uint32_t kSplitsPerThread = 4;

class BlockGroup final : public lowering::ThreadGroup {
 public:
  /// `threads`: a power of two in [32, 1024]. `perWarp`: the group is one warp of a block
  /// that runs several programs, one per warp (threads must be 32; no split reductions).
  explicit BlockGroup(uint32_t threads, bool perWarp = false) : threads_(threads), perWarp_(perWarp) {}
  uint32_t size() const override { return threads_; }
  llvm::Value* threadIndex(llvm::IRBuilder<>& b) const override;
  std::vector<llvm::Value*> allReduce(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                      const Combine& combine) const override;
  bool canSplit() const override { return !perWarp_; }
  llvm::Value* splitIndex(llvm::IRBuilder<>& b) const override;
  llvm::Value* splitCount(llvm::IRBuilder<>& b) const override;
  std::vector<llvm::Value*> combineSplits(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                          const std::vector<llvm::Value*>& identity, const Combine& combine,
                                          llvm::BasicBlock* leave) const override;

 private:
  uint32_t threads_;
  bool perWarp_;
};

}  // namespace plugsdk::cuda
