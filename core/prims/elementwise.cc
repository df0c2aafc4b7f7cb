// Elementwise prims: one per scalar op of scalar_ops.h (operands of one dtype and one shape),
// where (select) and convert_element_type (the only cast).
#include <string>

#include "core/ir/shape_rules.h"
#include "core/prims/prims.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::prims {

namespace {

using ir::InferContext;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

/// Operands must agree in shape exactly (dims provably equal): prims never broadcast.
Status requireSameShapes(const InferContext& ctx, const std::vector<const TensorType*>& ts) {
  const TensorType& a = *ts[0];
  for (size_t i = 1; i < ts.size(); ++i) {
    const TensorType& b = *ts[i];
    bool same = a.rank() == b.rank();
    for (size_t d = 0; same && d < a.shape.size(); ++d) {
      auto eq = ir::proveEQ(a.shape[d], b.shape[d], ctx.assumptions());
      same = eq && *eq;
    }
    if (!same)
      return ctx.error("operands must have the same shape (prims do not broadcast; use prims.broadcast_in_dim), got " +
                       a.toString() + " and " + b.toString());
  }
  return Status::ok();
}

TensorType like(const TensorType& t, ir::DType dtype) {
  TensorType out;
  out.dtype = dtype;
  out.shape = t.shape;
  return out;
}

ir::InferFn scalarInfer(const ScalarOpInfo& info) {
  return [&info](const InferContext& ctx) -> Types {
    const TensorType& a = *ctx.input(0);
    for (const TensorType* t : ctx.inputs()) {
      if (t->dtype != a.dtype)
        return ctx.error(
            "operands must have the same dtype (prims do not promote; use prims.convert_element_type), got " +
            a.toString() + " and " + t->toString());
    }
    if (!acceptsDType(info, a.dtype))
      return ctx.error("does not accept dtype " + std::string(ir::dtypeName(a.dtype)) + " (" + info.doc + ")");
    RETURN_IF_ERROR(requireSameShapes(ctx, ctx.inputs()));
    return std::vector<TensorType>{like(a, info.predicate ? ir::DType::kBool : a.dtype)};
  };
}

Types inferWhere(const InferContext& ctx) {
  const TensorType &c = *ctx.input(0), &a = *ctx.input(1), &b = *ctx.input(2);
  if (c.dtype != ir::DType::kBool) return ctx.error("pred must be bool, got " + c.toString());
  if (a.dtype != b.dtype)
    return ctx.error("a and b must have the same dtype (use prims.convert_element_type), got " + a.toString() +
                     " and " + b.toString());
  RETURN_IF_ERROR(requireSameShapes(ctx, ctx.inputs()));
  return std::vector<TensorType>{like(a, a.dtype)};
}

Types inferConvert(const InferContext& ctx) {
  return std::vector<TensorType>{like(*ctx.input(0), ctx.getDType("dtype"))};
}

}  // namespace

Status registerElementwisePrims(ir::OpRegistry& reg) {
  for (const ScalarOpInfo& info : allScalarOps()) {
    std::string schema =
        std::string("prims.") + info.name + (info.arity == 1 ? "(Tensor a)" : "(Tensor a, Tensor b)") + " -> Tensor";
    RETURN_IF_ERROR(reg.add(schema, scalarInfer(info), "prim.elementwise", info.doc));
  }
  RETURN_IF_ERROR(reg.add("prims.where(Tensor pred, Tensor a, Tensor b) -> Tensor", inferWhere, "prim.elementwise",
                          "pred ? a : b elementwise; pred is bool, a and b share a dtype; NaN in the unselected "
                          "operand does not propagate"));
  RETURN_IF_ERROR(reg.add("prims.convert_element_type(Tensor a, ScalarType dtype) -> Tensor", inferConvert,
                          "prim.elementwise",
                          "cast: floats round to nearest even (f64 -> f16/bf16 through f32, as PyTorch); float -> int "
                          "truncates toward zero (NaN and out of "
                          "range as PyTorch's CPU cast); int -> int wraps; -> bool is a != 0"));
  return Status::ok();
}

Status registerPrims(ir::OpRegistry& reg) {
  RETURN_IF_ERROR(registerElementwisePrims(reg));
  RETURN_IF_ERROR(registerStructurePrims(reg));
  RETURN_IF_ERROR(registerDataPrims(reg));
  RETURN_IF_ERROR(registerLibraryPrims(reg));
  return Status::ok();
}

}  // namespace plugsdk::prims
