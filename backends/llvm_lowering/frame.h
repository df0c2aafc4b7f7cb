// The calling convention between generated kernels and the runtimes that launch them: one
// CallFrame per launch, shared read-only by every thread, and the signature of a kernel's
// entry point. The grid's last dim is the "inner" dim (the one vectorized when the kernel
// is vectorized across grid points); all others are flattened into "outer" points. The cpu
// backend calls the entry from its threads; the cuda backend from a kernel wrapper per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/kernel_view.hpp"
#include "plugsdk/status.hpp"

namespace plugsdk::lowering {

/// What every launch passes to a generated kernel (its layout is read by the generated code:
/// fields are only appended).
struct CallFrame {
  void* const* args;       ///< one base pointer per kernel argument (launch offsets applied)
  const int64_t* symbols;  ///< the launch values, in the kernel's symbols order
  const int64_t* grid;     ///< the grid's extents (evaluated at launch)
  int32_t* status;         ///< 0; set once (first error wins) by a failing kernel, see below
};

/// Status codes a kernel writes to *status (atomically, the first one wins): a failed CHECK
/// writes kStatusCheckBase + its ordinal among the kernel's CHECKs.
constexpr int32_t kStatusOk = 0;
constexpr int32_t kStatusDivisionByZero = 1;  ///< an integer division or remainder by zero
constexpr int32_t kStatusEmptyReduce = 2;     ///< max/min/argmax/argmin over an empty loop
constexpr int32_t kStatusCheckBase = 16;

/// A kernel's entry: runs outer points [outerBegin, outerEnd) x inner points [innerBegin,
/// innerEnd). A grid of rank 0 has one outer and one inner point.
using KernelEntry = void (*)(const CallFrame* frame, int64_t outerBegin, int64_t outerEnd, int64_t innerBegin,
                             int64_t innerEnd);

/// The error a kernel's status code stands for, naming the kernel (OK for kStatusOk).
inline sdk::Status statusError(int32_t code, const std::string& kernel, const std::vector<std::string>& checkMessages) {
  if (code == kStatusOk) return sdk::Status::ok();
  const std::string who = "kernel @" + kernel + ": ";
  if (code == kStatusDivisionByZero) return sdk::invalidArgument(who + "integer division by zero (ZeroDivisionError)");
  if (code == kStatusEmptyReduce) return sdk::invalidArgument(who + "a max/min/argmax/argmin over an empty loop");
  const size_t check = static_cast<size_t>(code - kStatusCheckBase);
  if (code >= kStatusCheckBase && check < checkMessages.size()) return sdk::outOfRange(who + checkMessages[check]);
  return sdk::internalError(who + "unknown status " + std::to_string(code));
}

/// The grid's extents for a launch (CallFrame::grid): each dim's index program evaluated
/// over the launch's symbol values; an error naming the kernel and dim for one that cannot be
/// evaluated or is negative.
inline sdk::StatusOr<std::vector<int64_t>> evalGrid(sdk::Span<const plugsdk_index_insn_t> pool,
                                                    const std::vector<plugsdk_index_expr_t>& grid,
                                                    const std::vector<int64_t>& symbols, const std::string& kernel) {
  const sdk::IndexEnv env{{}, {}, {symbols.data(), symbols.size()}};
  std::vector<int64_t> out;
  for (size_t d = 0; d < grid.size(); ++d) {
    sdk::StatusOr<int64_t> v = sdk::evalIndex(pool, grid[d], env);
    if (!v.isOk()) return v.status().withContext("kernel @" + kernel + ": grid dim " + std::to_string(d));
    if (*v < 0)
      return sdk::invalidArgument("kernel @" + kernel + ": grid dim " + std::to_string(d) + " has negative size " +
                                  std::to_string(*v));
    out.push_back(*v);
  }
  return out;
}

}  // namespace plugsdk::lowering
