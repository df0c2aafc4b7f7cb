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
};

}  // namespace plugsdk::lowering
