// The choice of mapping (mapping.h).
#include "backends/level_zero/spirv/mapping.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace plugsdk::level_zero::spirv {

namespace {

/// The change of index `e` when variable `var` of `kind` goes from 0 to 1, every other
/// variable 0, every symbol 4096 (a size) and every indirect value 0; none for an error.
std::optional<int64_t> stride(const sdk::KernelView& k, plugsdk_index_expr_t e, uint32_t kind, size_t var,
                              size_t loopRank) {
  std::vector<int64_t> grid(k.numGrid(), 0), loop(loopRank, 0), symbols(k.numSymbols(), 4096);
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    (kind == PLUGSDK_INDEX_GRID_VAR ? grid : loop)[var] = v;
    // An indirect index's value as 0: a gather's row `768 * %id + r0` still moves by 1 along r0.
    sdk::StatusOr<int64_t> r =
        sdk::evalIndex(k.indexPool(), e, sdk::IndexEnv{grid, loop, symbols}, [](int32_t) { return int64_t{0}; });
    if (!r.isOk()) return std::nullopt;
    return *r;
  };
  const std::optional<int64_t> a = at(0), b = at(1);
  if (!a || !b) return std::nullopt;
  return *b - *a;
}

}  // namespace

Mapping chooseMapping(const sdk::KernelView& k, uint32_t maxGroupSize) {
  Mapping m;
  if (maxGroupSize < 2) return m;
  int gridVotes = 0, loopVotes = 0;
  bool hasLoop = false, allKnown = true;
  int64_t longest = 0;
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& s = k.stmt(i);
    if (s.kind != PLUGSDK_STMT_LOOP) continue;
    hasLoop = true;
    int64_t extent = 1;
    for (size_t d = 0; d < s.num_loop_sizes; ++d) {
      sdk::StatusOr<int64_t> c = sdk::evalIndex(k.indexPool(), s.loop_sizes[d], sdk::IndexEnv{});
      if (!c.isOk()) {
        allKnown = false;
        break;
      }
      extent *= *c;
    }
    if (allKnown) longest = std::max(longest, extent);
    for (size_t j = i + 1; j <= i + s.body_count; ++j) {
      const plugsdk_stmt_t& t = k.stmt(j);
      if (t.kind != PLUGSDK_STMT_LOAD && t.kind != PLUGSDK_STMT_STORE) continue;
      // An access that does not move along the loop (read once per point) does not vote.
      if (s.num_loop_sizes > 0) {
        const std::optional<int64_t> alongLoop =
            stride(k, t.index, PLUGSDK_INDEX_LOOP_VAR, s.num_loop_sizes - 1, s.num_loop_sizes);
        if (alongLoop == std::optional<int64_t>(1)) ++loopVotes;
        if (alongLoop == std::optional<int64_t>(0)) continue;
      }
      if (k.numGrid() > 0 &&
          stride(k, t.index, PLUGSDK_INDEX_GRID_VAR, k.numGrid() - 1, s.num_loop_sizes) == std::optional<int64_t>(1))
        ++gridVotes;
    }
  }
  if (!hasLoop || (loopVotes <= gridVotes && k.numGrid() > 0)) return m;
  uint32_t g = maxGroupSize;
  if (allKnown) {
    if (longest < kMinSpreadExtent) return m;
    while (g > 1 && static_cast<int64_t>(g) > longest) g /= 2;
  }
  m.groupSize = g;
  return m;
}

}  // namespace plugsdk::level_zero::spirv
