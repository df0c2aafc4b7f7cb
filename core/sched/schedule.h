// The scheduler: a prim graph becomes a Program of fused loop-level kernels and library
// calls over planned buffers. Which fusions are allowed is read from capabilities (data a
// backend reports), never from a backend's name.
#pragma once

#include <string>

#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/sched/program.h"
#include "core/support/status.h"

namespace plugsdk::sched {

/// What the target can take; each fusion rule checks its flag.
struct FusionCaps {
  bool fuse = true;                 ///< false: one kernel per prim (views stay index arithmetic)
  bool horizontal = true;           ///< siblings over the same domain share a kernel
  bool reductionEpilogue = true;    ///< pointwise consumers of a reduction join its kernel
  bool multiReduction = true;       ///< several reductions over one domain share a kernel
  bool matmulEpilogue = true;       ///< pointwise consumers of a matmul fuse as its epilogue
  bool convolutionEpilogue = true;  ///< ... and of a convolution
  int64_t maxKernelStmts = 512;     ///< a fused kernel stays below this many statements
  /// Elementwise values used more than once are recomputed by each consumer up to this many
  /// statements; bigger ones are materialized once.
  int64_t maxRecompute = 64;
  /// ...and up to this many distinct large tensors read (roots and inputs of at least 1/16 of
  /// the value's elements; broadcast parameters do not count): recomputing a residual sum
  /// re-reads every branch it adds, so chains of them are materialized along the way.
  int64_t maxRecomputeReads = 2;
  /// Split reductions (split_reductions.h): a reduction whose reduced dims include the
  /// innermost one and that keeps fewer rows than this is split in two stages -- partial
  /// reductions over slices of its outermost reduced dims, then a reduction of the partials
  /// -- so that rows x slices reaches it (a GPU wants a block per row, and a batch norm over
  /// 64 channels of 100k points each is 64 rows). 0: never.
  int64_t splitRowReductions = 0;
  /// The same for a reduction that keeps the innermost dim (a column sum: a bias gradient,
  /// a layer norm's weight gradient): columns x slices reaches it.
  int64_t splitColumnReductions = 0;
};

struct ScheduleOptions {
  FusionCaps caps;
  bool planMemory = true;  ///< false: every temporary gets its own memory
};

/// Counts reported for a schedule (see docs/scheduling.md).
struct ScheduleStats {
  int primNodes = 0;     ///< nodes of the prim graph
  int computeNodes = 0;  ///< prim nodes that are not pure views: the kernel count without fusion
  int kernels = 0;       ///< kernels launched
  int libraryCalls = 0;
  int tempBuffers = 0;
  SymExpr tempBytesUnplanned;  ///< every temporary in its own memory
  SymExpr tempBytesPlanned;    ///< the arena after reuse
};

/// Schedules a verified prim graph (every node a prim: run decompose() first).
StatusOr<Program> schedule(const ir::Context& ctx, const ir::Graph& prims, const ScheduleOptions& options = {},
                           ScheduleStats* stats = nullptr);

}  // namespace plugsdk::sched
