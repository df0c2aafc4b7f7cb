// Input checks shared by the inference rules of several op families (nn, backward): dtype,
// size and shape requirements that report through the InferContext. Not part of the public op API.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::ops {

/// The input `t` (named `what`) must be floating point (the op has no integer kernel in PyTorch).
inline Status requireFloating(const ir::InferContext& ctx, const ir::TensorType* t, const std::string& what) {
  if (!ir::isFloating(t->dtype)) return ctx.error(what + " must have a floating dtype, got " + t->toString());
  return Status::ok();
}

/// Two inputs must share a dtype (PyTorch refuses to mix them for this op).
inline Status requireSameDType(const ir::InferContext& ctx, const ir::TensorType* a, const std::string& aName,
                               const ir::TensorType* b, const std::string& bName) {
  if (a->dtype != b->dtype)
    return ctx.error(aName + " and " + bName + " must have the same dtype, got " + a->toString() + " and " +
                     b->toString());
  return Status::ok();
}

/// Sizes `a` and `b` must be provably equal; `what` names them ("mat1 dim 1 and mat2 dim 0").
inline Status requireSameSize(const ir::InferContext& ctx, const ir::SymExpr& a, const ir::SymExpr& b,
                              const std::string& what) {
  auto eq = ir::proveEQ(a, b, ctx.assumptions());
  if (eq && *eq) return Status::ok();
  return ctx.error(what + " must be equal, got " + a.toString() + " and " + b.toString() +
                   (eq ? "" : " (not provably equal)"));
}

/// Same rank and provably equal dims (no broadcasting).
inline Status requireSameShape(const ir::InferContext& ctx, const ir::TensorType* a, const std::string& aName,
                               const ir::TensorType* b, const std::string& bName) {
  bool same = a->rank() == b->rank();
  for (size_t i = 0; same && i < a->shape.size(); ++i) {
    auto eq = ir::proveEQ(a->shape[i], b->shape[i], ctx.assumptions());
    same = eq && *eq;
  }
  if (!same)
    return ctx.error(aName + " and " + bName + " must have the same shape, got " + a->toString() + " and " +
                     b->toString());
  return Status::ok();
}

/// A 1-D tensor of `size` elements (weight, bias, running statistics, ...).
inline Status requireVector(const ir::InferContext& ctx, const ir::TensorType* t, const std::string& what,
                            const ir::SymExpr& size, const std::string& sizeWhat) {
  if (t->rank() != 1)
    return ctx.error(what + " must be 1-D with " + sizeWhat + " = " + size.toString() + " elements, got " +
                     t->toString());
  return requireSameSize(ctx, t->shape[0], size, what + " size and " + sizeWhat);
}

/// Loss reduction attribute: 0 none, 1 mean, 2 sum.
inline Status checkReduction(const ir::InferContext& ctx) {
  int64_t r = ctx.getInt("reduction");
  if (r < 0 || r > 2) return ctx.error("reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(r));
  return Status::ok();
}

}  // namespace plugsdk::ops
