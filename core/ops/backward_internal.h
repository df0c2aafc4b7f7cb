// Internal to the backward op family (core/ops/backward*.cc): the per-file registration
// functions and backward-specific checks (common ones: infer_checks.h). Not public op API.
#pragma once

#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"
#include "core/ops/infer_checks.h"

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

/// Prefixes a shape_rules error with the op name.
inline Status opError(const InferContext& ctx, const Status& s) { return ctx.error(s.message()); }

}  // namespace plugsdk::ops::bwd
