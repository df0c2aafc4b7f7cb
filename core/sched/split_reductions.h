// Split reductions: a reduction that keeps few rows (or columns) but reduces many elements
// each is rewritten, before scheduling, as two reductions -- partial reductions over S
// slices of its outermost reduced dims, then a reduction of the S partials -- so that a
// device that runs a row per thread block (or a few columns per thread) has rows x S units of
// work instead of rows. A batch norm over 64 channels of 32x56x56 points was one kernel of 64
// blocks that each walked 100k points (1.5 ms on an H100); split 16 ways it is 1024 rows.
//
// The rewrite, for prims.sum / amax / amin of x over dims D (sorted):
//   x' = reshape(x)            the outermost reduced dims taken whole, the next one split as
//                              [f, extent / f], so the slices number S
//   p  = reduce(x', D minus the slice dims)   the partials, slice dims kept
//   y  = reduce(p, the slice dims)            the original result, under its name
// A sum of f16 / bf16 is taken in f32 through both stages and rounded once at the end (as
// the single reduction does in registers). The numbers change only by reassociation.
//
// Which reductions: static shapes only; "row" when the innermost dim is reduced (its rows
// are the kept elements), "column" otherwise; split when rows (columns) are fewer than the
// capability, with S about capability / rows, each partial reducing at least
// kMinSplitPartial elements, and S built from the outermost reduced extents and a divisor of
// the next; when no divisor comes within half of the wanted factor, that dim is padded (by at
// most an eighth, with the reduction's identity: 0, or -inf / +inf for a float amax / amin;
// the pad is inlined as a masked load) to a multiple of the wanted factor.
#pragma once

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/sched/schedule.h"
#include "core/support/status.h"

namespace plugsdk::sched {

/// Each partial reduces at least this many elements (fewer and the second stage does the work).
constexpr int64_t kMinSplitPartial = 32;

/// How one reduction is split: the first `wholeDims` of its reduced dims (in order) are
/// slices whole; the next is split into `factor` slices (1: none), after padding it to
/// `paddedExtent` with the reduction's identity when that is set (no divisor of its extent
/// came near the target: vit's 197 tokens). slices() = S.
struct ReductionSplit {
  size_t wholeDims = 0;
  int64_t factor = 1;
  int64_t slices = 1;
  int64_t paddedExtent = 0;  ///< 0: the split dim divides as it is
};

/// A split dim is padded by at most 1 / kMostSplitPadding of its extent.
constexpr int64_t kMostSplitPadding = 8;

/// The split chosen for reducing `shape` (constant extents) over `dims` (sorted, distinct)
/// under `caps`; slices == 1 when it stays whole. `canPad`: the reduction has an identity to pad
/// with (sums, float amax / amin).
ReductionSplit chooseReductionSplit(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims,
                                    const FusionCaps& caps, bool canPad = true);

/// `prims` with every reduction chooseReductionSplit splits rewritten as above (a copy;
/// `*split` counts them). Values keep their names; the new ones get fresh names.
StatusOr<ir::Graph> splitReductions(const ir::Context& ctx, const ir::Graph& prims, const FusionCaps& caps,
                                    int* split = nullptr);

}  // namespace plugsdk::sched
