// Emits a prim value's computation at an index into a kernel: elementwise prims become
// scalar ops, views (broadcast, reshape, permute, slice, rev, as_strided) become index
// arithmetic on their input, pad and concat become masked loads and selects, gather an
// indirect index. Values the scheduler materializes (roots) are resolved by a callback:
// a load from their buffer, or the register of a fused member computed at the same point.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/ir/graph.h"
#include "core/sched/kernel_builder.h"
#include "core/support/status.h"

namespace plugsdk::sched {

/// Asked first for every value: a scalar id if the scheduler provides it (root or graph
/// input), nullopt to compute it inline, or an error when it cannot be read here (a
/// fusion conflict). `multi` is the multi-index when known, `linear` the row-major position.
using RootResolver = std::function<StatusOr<std::optional<int>>(const ir::Value* v, const std::vector<SymExpr>* multi,
                                                                const SymExpr& linear, int mask)>;

class InlineEmitter {
 public:
  InlineEmitter(KernelBuilder& kb, RootResolver resolve) : kb_(kb), resolve_(std::move(resolve)) {}

  /// v at multi-index `idx` (one entry per dim of v). Loads under `mask` (-1: none) are masked.
  StatusOr<int> at(const ir::Value* v, const std::vector<SymExpr>& idx, int mask = -1);
  /// v at row-major position `linear`.
  StatusOr<int> atLinear(const ir::Value* v, const SymExpr& linear, int mask = -1);
  /// The defining node of v computed at idx, without asking the resolver about v itself
  /// (how the scheduler computes the roots it owns).
  StatusOr<int> compute(const ir::Value* v, const std::vector<SymExpr>& idx, int mask = -1);
  /// Every value computed inline so far (what a fused kernel contains, for dumps).
  const std::vector<const ir::Value*>& computed() const { return computed_; }

 private:
  StatusOr<int> computeLinear(const ir::Value* v, const SymExpr& linear, int mask);
  StatusOr<int> constantOf(const ir::Node& n);
  StatusOr<int> pad(const ir::Node& n, const std::vector<SymExpr>& idx, int mask);
  StatusOr<int> concat(const ir::Node& n, const std::vector<SymExpr>& idx, int mask);
  int andMask(int a, int b);

  KernelBuilder& kb_;
  RootResolver resolve_;
  std::vector<const ir::Value*> computed_;
};

/// True for prims computed inline at an index (elementwise, generators and views);
/// reductions, library ops and scatter are always scheduled as roots.
bool isInlinable(const std::string& op);
/// True for the pure views (no arithmetic: broadcast_in_dim, reshape, permute, slice, rev, as_strided).
bool isView(const std::string& op);

}  // namespace plugsdk::sched
