// Inference helpers shared by the prim files: provable size facts and type construction.
#pragma once

#include <string>
#include <vector>

#include "core/ir/op_registry.h"

namespace plugsdk::prims::detail {

inline bool provedEQ(const ir::SymExpr& a, const ir::SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveEQ(a, b, as);
  return r && *r;
}
inline bool provedGE(const ir::SymExpr& a, const ir::SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveGE(a, b, as);
  return r && *r;
}
/// True only when a < b is proven.
inline bool provedLT(const ir::SymExpr& a, const ir::SymExpr& b, const ir::SymAssumptions& as) {
  auto r = ir::proveGE(a, b, as);
  return r && !*r;
}

inline ir::TensorType tensorOf(ir::DType dtype, ir::Shape shape) {
  ir::TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}
inline std::vector<ir::TensorType> one(ir::DType dtype, ir::Shape shape) { return {tensorOf(dtype, std::move(shape))}; }

/// A size attribute entry must not be provably negative.
inline Status checkNonNegative(const ir::InferContext& ctx, const ir::SymExpr& s, const std::string& what) {
  if (provedLT(s, 0, ctx.assumptions())) return ctx.error(what + " " + s.toString() + " is negative");
  return Status::ok();
}

/// Dims must be in [0, rank), no duplicates (prims take no negative dims).
inline Status checkDims(const ir::InferContext& ctx, const std::vector<int64_t>& dims, int64_t rank,
                        const std::string& what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return ctx.error(what + " entry " + std::to_string(d) + " is out of range for rank " + std::to_string(rank) +
                       " (prims take dims in [0, rank))");
    if (seen[static_cast<size_t>(d)]) return ctx.error(what + " repeats dim " + std::to_string(d));
    seen[static_cast<size_t>(d)] = true;
  }
  return Status::ok();
}

}  // namespace plugsdk::prims::detail
