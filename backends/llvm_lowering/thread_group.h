// The threads that run one program together: a GPU block (CUDA) or work-group (SPIR-V).
// A kernel lowered in kLoop mode for a target with a thread group spreads each reduction
// loop's lanes over the group's threads (thread t takes chunks t, t + size, ...), combines
// its accumulators across the group after the loop, and lets one thread do the stores that
// every thread would otherwise repeat. The CPU has none (one thread per program).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <llvm/IR/IRBuilder.h>

namespace plugsdk::lowering {

class ThreadGroup {
 public:
  virtual ~ThreadGroup() = default;
  /// Threads per program (a power of two, at least the device's SIMD width).
  virtual uint32_t size() const = 0;
  /// This thread's index in [0, size()), as i64.
  virtual llvm::Value* threadIndex(llvm::IRBuilder<>& b) const = 0;

  /// combine(x, y) -> the fields of x combined with y (one scalar per field), emitted at the
  /// insertion point of the builder given to allReduce.
  using Combine =
      std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>&, const std::vector<llvm::Value*>&)>;
  /// `fields` (scalars: i1 ... i64, float, double) combined over every thread of the group,
  /// the same bits returned to each. `combine` must be associative and commutative bit for
  /// bit (fadd is; an argmax breaks ties by position). Every thread of the group must reach
  /// the call (threads that have exited count as absent; their part is lost, which only
  /// happens after a failure is already recorded).
  virtual std::vector<llvm::Value*> allReduce(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                              const Combine& combine) const = 0;

  // Split reductions (optional). The launch may run several programs ("splits") for one grid
  // point; each reduces a contiguous range of the loop's chunks, and the last to finish
  // combines every split's result and runs the rest of the kernel. Only for kernels with one
  // loop and no store before its end (the lowering checks).
  virtual bool canSplit() const { return false; }
  /// This program's split and the number of splits of its grid point, as i64.
  virtual llvm::Value* splitIndex(llvm::IRBuilder<>& b) const { return b.getInt64(0); }
  virtual llvm::Value* splitCount(llvm::IRBuilder<>& b) const { return b.getInt64(1); }
  /// Publishes this program's `fields` (already combined over its threads). Programs that
  /// are not the last of their grid point to arrive branch to `leave`; in the last, returns
  /// the fields of every split combined in split order (`identity`: the fields of an empty
  /// split), the same bits in every thread.
  virtual std::vector<llvm::Value*> combineSplits(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& fields,
                                                  const std::vector<llvm::Value*>& identity, const Combine& combine,
                                                  llvm::BasicBlock* leave) const {
    (void)b, (void)identity, (void)combine, (void)leave;
    return fields;
  }
};

}  // namespace plugsdk::lowering
