// Index expressions simplified with the ranges of a kernel's index variables: grid variable
// i_d lies in [0, grid[d]) and loop variable r_d in [0, loopSizes[d]) where those extents
// are constants, so floordiv(x, c) is 0 and mod(x, c) is x when x provably lies in [0, c).
// An im2col gather's windows leave divisions of a flattened index by a row of rows, and
// delinearizations read back in order (c * (x // c) + x % c): those are folded too.
// A reshape's delinearization leaves such terms behind (r0 // 768 and r0 % 768 for a loop of
// 768): they cost integer divisions per element and hide a unit stride from backends that
// read it off the expression.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/ir/symbolic.h"
#include "core/kernel/kernel_ir.h"

namespace plugsdk::sched {

/// `e` with every floordiv / mod by a positive constant whose dividend provably lies in
/// [0, divisor) replaced (0, the dividend); a dividend g * x + y with g dividing the divisor
/// c and y provably in [0, g) divided as x by c / g ((144 * i2 + i3) // 2016 is i2 // 14 for
/// i3 < 144); and c * (x // c) + x % c folded into x. `extents`: variable -> its (constant)
/// extent; other symbols are unbounded.
ir::SymExpr simplifyInRanges(const ir::SymExpr& e, const std::map<std::string, int64_t>& extents);

/// Applies simplifyInRanges to every index expression of `k` (loads, stores, index values,
/// rand counters) with the ranges of its grid and loop variables.
void simplifyKernelIndices(kernel::Kernel& k);

}  // namespace plugsdk::sched
