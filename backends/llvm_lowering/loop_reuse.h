// Values a later reduction loop can take from an earlier one instead of computing them again
// (a "persistent" row: softmax reads its row for the max, again for the sum of exponentials
// and again for the result, and takes each exp twice). Two loops over the same constant
// extents run their iterations in the same order in each thread; a statement of the later
// loop that computes what a statement of the earlier one computed at the same iteration --
// the same load of an argument the kernel never writes, the same op of equal operands --
// is marked with that statement. The lowering keeps the earlier value of each iteration it
// unrolls (a register per chunk) and reads it back in the later loop.
#pragma once

#include <cstdint>
#include <vector>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::lowering {

struct LoopReuse {
  /// Per statement: the statement of an earlier loop whose value it repeats, or -1.
  std::vector<int64_t> from;
  /// Per statement: whether a later loop repeats it (its values are worth keeping).
  std::vector<bool> kept;
};

/// The reuse in `k` (validated): statements of LOAD (of arguments no statement stores to),
/// SCALAR, WHERE, CAST, INDEX and CONST kinds in loops whose extents are all constants. An argument the
/// kernel may write (its access, or a store) is read again in every loop.
LoopReuse findLoopReuse(const sdk::KernelView& k);

}  // namespace plugsdk::lowering
