// Memory planning for a Program's temporaries: liveness per buffer over the steps, reuse of
// freed arena slots (symbolic sizes compared by proof), and in-place updates where an
// elementwise kernel overwrites an input that dies with it.
#pragma once

#include "core/ir/symbolic.h"
#include "core/sched/program.h"
#include "core/support/status.h"

namespace plugsdk::sched {

struct MemoryPlanStats {
  int tempBuffers = 0;
  int slots = 0;
  int inPlace = 0;
  SymExpr unplannedBytes;  ///< every temporary in its own memory (64-byte aligned)
  SymExpr plannedBytes;    ///< the arena
};

/// True if a loop-free kernel reads argument `in` only at the index where it writes `out`
/// (no mask, no combining store), so `out` may live in `in`'s memory.
bool inPlaceLegal(const kernel::Kernel& k, int in, int out);

/// Assigns every temporary a slot and a byte offset, and sets p.arenaBytes. With `reuse`
/// false each temporary gets a slot of its own (the baseline the report compares with).
Status planMemory(Program& p, bool reuse, const ir::SymAssumptions& as, MemoryPlanStats* stats = nullptr);

}  // namespace plugsdk::sched
