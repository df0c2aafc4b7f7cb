// Internal to the backward op family (core/ops/backward*.cc): the per-file registration
// functions and the checks their inference rules share. Not part of the public op API.
#pragma once

#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"

namespace plugsdk::ops::bwd {

using ir::DType;
using ir::InferContext;
using ir::Shape;
using ir::SymExpr;
using ir::TensorType;
using Types = std::vector<TensorType>;

Status registerPointwiseLossBackwardOps(ir::OpRegistry& reg);  // backward.cc: activations, softmax, losses, embedding
Status registerNNBackwardOps(ir::OpRegistry& reg);             // backward_nn.cc: norms, convolution, pooling

/// A contiguous result type (never copies an input's explicit strides).
inline TensorType makeType(DType dtype, Shape shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

inline Status requireFloating(const InferContext& ctx, const TensorType* t, const std::string& what) {
  if (!ir::isFloating(t->dtype)) return ctx.error(what + " must have a floating dtype, got " + t->toString());
  return Status::ok();
}

inline Status requireSameDType(const InferContext& ctx, const TensorType* a, const std::string& aName,
                               const TensorType* b, const std::string& bName) {
  if (a->dtype != b->dtype)
    return ctx.error(aName + " and " + bName + " must have the same dtype, got " + a->toString() + " and " +
                     b->toString());
  return Status::ok();
}

/// Sizes `a` and `b` must be provably equal; `what` names them.
inline Status requireSameSize(const InferContext& ctx, const SymExpr& a, const SymExpr& b, const std::string& what) {
  auto eq = ir::proveEQ(a, b, ctx.assumptions());
  if (eq && *eq) return Status::ok();
  return ctx.error(what + " must be equal, got " + a.toString() + " and " + b.toString() +
                   (eq ? "" : " (not provably equal)"));
}

/// Same rank and provably equal dims (no broadcasting).
inline Status requireSameShape(const InferContext& ctx, const TensorType* a, const std::string& aName,
                               const TensorType* b, const std::string& bName) {
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

/// A 1-D tensor of `size` elements (weights, running statistics, ...).
inline Status requireVector(const InferContext& ctx, const TensorType* t, const std::string& what, const SymExpr& size,
                            const std::string& sizeWhat) {
  if (t->rank() != 1)
    return ctx.error(what + " must be 1-D with " + sizeWhat + " = " + size.toString() + " elements, got " +
                     t->toString());
  return requireSameSize(ctx, t->shape[0], size, what + " size and " + sizeWhat);
}

/// Exactly one element (a scalar given as a tensor of any rank).
inline Status requireOneElement(const InferContext& ctx, const TensorType* t, const std::string& what) {
  return requireSameSize(ctx, t->numel(), SymExpr(1), what + " element count and 1");
}

/// `output_mask`: ATen's bool[3], written here as an int list of three 0/1 values. All three
/// outputs are always computed (the mask only says which ones the graph will use).
inline Status checkOutputMask(const InferContext& ctx) {
  const ir::Attribute& a = ctx.attr("output_mask");
  auto v = a.asIntList();
  bool ok = v && v->size() == 3;
  for (size_t i = 0; ok && i < v->size(); ++i) ok = (*v)[i] == 0 || (*v)[i] == 1;
  if (!ok) return ctx.error("output_mask must be a list of three 0/1 values, got " + a.toString());
  return Status::ok();
}

/// Loss reduction attribute: 0 none, 1 mean, 2 sum.
inline Status checkReduction(const InferContext& ctx) {
  int64_t r = ctx.getInt("reduction");
  if (r < 0 || r > 2) return ctx.error("reduction must be 0 (none), 1 (mean) or 2 (sum), got " + std::to_string(r));
  return Status::ok();
}

/// Prefixes a shape_rules error with the op name.
inline Status opError(const InferContext& ctx, const Status& s) { return ctx.error(s.message()); }

}  // namespace plugsdk::ops::bwd
