// Internal to the nn op family (core/ops/nn*.cc): the per-file registration functions and the
// nn-specific checks of their inference rules (common ones: infer_checks.h). Not public op API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/op_registry.h"
#include "core/ir/shape_rules.h"
#include "core/ops/infer_checks.h"

namespace plugsdk::ops::nn {

using ir::DType;
using ir::InferContext;
using ir::Shape;
using ir::SymExpr;
using ir::TensorType;

Status registerMatmulOps(ir::OpRegistry& reg);         // nn.cc: mm, bmm, addmm, baddbmm, dot, mv
Status registerConvPoolOps(ir::OpRegistry& reg);       // nn_conv.cc: convolution, max/avg/adaptive pooling
Status registerNormOps(ir::OpRegistry& reg);           // nn_norm.cc: batch/layer/group norm, softmax
Status registerAttentionLossOps(ir::OpRegistry& reg);  // nn_attention.cc: sdpa, dropout, losses

/// "f32[2, 3]" for an input, "none" for an absent one.
inline std::string typeText(const TensorType* t) { return t ? t->toString() : std::string("none"); }

/// The input `t` (named `what`) must have exactly `rank` dims.
inline Status requireRank(const InferContext& ctx, const TensorType* t, const std::string& what, int rank) {
  if (t->rank() != rank)
    return ctx.error(what + " must be a " + std::to_string(rank) + "-D tensor, got " + t->toString());
  return Status::ok();
}

/// A static, non-empty list attribute of length 1 (repeated) or `n`; `allowEmpty` returns an
/// empty list for [] (e.g. pooling stride defaulting to the kernel size).
inline StatusOr<std::vector<SymExpr>> expandList(const InferContext& ctx, const std::string& name, size_t n,
                                                 bool allowEmpty = false) {
  std::vector<SymExpr> v = ctx.getSyms(name);
  if (v.empty() && allowEmpty) return v;
  if (v.size() == 1) return std::vector<SymExpr>(n, v[0]);
  if (v.size() != n)
    return ctx.error("expected " + name + " to be a single value or a list of " + std::to_string(n) + " values, got " +
                     ctx.attr(name).toString());
  return v;
}

/// `v` >= `lo` provably; otherwise an error naming `what` (also when unknown).
inline Status requireAtLeast(const InferContext& ctx, const SymExpr& v, int64_t lo, const std::string& what) {
  auto ge = ir::proveGE(v, SymExpr(lo), ctx.assumptions());
  if (ge && *ge) return Status::ok();
  return ctx.error(what + " must be >= " + std::to_string(lo) + ", got " + v.toString() +
                   (ge ? "" : " (not provably)"));
}

/// The dtype the statistics outputs (mean, invstd) of a norm op have: float32 when a
/// reduced-precision input comes with float32 parameters (PyTorch's mixed-type CPU path),
/// else the input dtype. Checks each present parameter's dtype against that rule.
inline StatusOr<DType> normParamDType(const InferContext& ctx, const TensorType* input,
                                      const std::vector<std::pair<const TensorType*, std::string>>& params) {
  bool reduced = input->dtype == DType::kF16 || input->dtype == DType::kBF16;
  std::optional<DType> paramType;
  for (const auto& [p, name] : params) {
    if (!p) continue;
    bool ok = p->dtype == input->dtype || (reduced && p->dtype == DType::kF32);
    if (!ok || (paramType && *paramType != p->dtype))
      return ctx.error(name + " has dtype " + std::string(ir::dtypeName(p->dtype)) + " but input is " +
                       input->toString() + " (parameters must match the input dtype, or be f32 for an f16/bf16 input)");
    paramType = p->dtype;
  }
  return paramType.value_or(input->dtype);
}

}  // namespace plugsdk::ops::nn
