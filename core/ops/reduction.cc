// ATen-level reduction ops: sum, mean, prod, amax/amin, max/min.dim, argmax/argmin, var/std,
// any/all, cumsum and logsumexp (schemas and shape/dtype inference).
#include "core/ops/aten_ops.h"
#include "core/ops/pointwise_internal.h"
#include "core/ops/reduction_internal.h"

namespace plugsdk::ops {

namespace {

using ir::DType;
using ir::InferContext;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

enum class ReductionKind {
  kSum,         ///< integer and bool inputs accumulate in i64 unless dtype is given
  kMean,        ///< floating only (or a floating dtype)
  kExtreme,     ///< amax / amin / max / min: same dtype, empty reduced dims are an error
  kExtremeDim,  ///< max.dim / min.dim: (values, i64 indices)
  kArg,         ///< argmax / argmin: i64 indices, bool not supported
  kVar,         ///< var / std: floating only, same dtype
  kAnyAll,      ///< bool result (u8 for u8 input)
  kCumsum,      ///< same shape, dtype as kSum
  kLogsumexp,   ///< integer inputs promote to the default float
};

struct ReductionOp {
  const char* schema;
  ReductionKind kind;
  const char* doc;
};

const ReductionOp kReductionOps[] = {
    {"aten.sum.dim_IntList(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     ReductionKind::kSum, "sum over dims (none or [] = all); ints and bool sum in i64 unless dtype is given"},
    {"aten.sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", ReductionKind::kSum, "sum of all elements"},
    {"aten.mean.dim(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     ReductionKind::kMean, "mean over dims (none or [] = all); floating inputs or a floating dtype"},
    {"aten.mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", ReductionKind::kMean, "mean of all elements"},
    {"aten.prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     ReductionKind::kSum, "product over one dim; ints and bool multiply in i64 unless dtype is given"},
    {"aten.prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", ReductionKind::kSum, "product of all elements"},
    {"aten.amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", ReductionKind::kExtreme,
     "max over dims ([] = all), NaN propagates"},
    {"aten.amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", ReductionKind::kExtreme,
     "min over dims ([] = all), NaN propagates"},
    {"aten.max(Tensor self) -> Tensor", ReductionKind::kExtreme, "max of all elements, NaN propagates"},
    {"aten.min(Tensor self) -> Tensor", ReductionKind::kExtreme, "min of all elements, NaN propagates"},
    {"aten.max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     ReductionKind::kExtremeDim, "max over one dim and the index of its first occurrence (NaN counts as max)"},
    {"aten.min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     ReductionKind::kExtremeDim, "min over one dim and the index of its first occurrence (NaN counts as min)"},
    {"aten.argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", ReductionKind::kArg,
     "index of the first max (over the flattened tensor if dim is none)"},
    {"aten.argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", ReductionKind::kArg,
     "index of the first min (over the flattened tensor if dim is none)"},
    {"aten.var.correction(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
     ReductionKind::kVar, "variance, sum((x - mean)^2) / max(0, N - correction), correction none = 1"},
    {"aten.std.correction(Tensor self, int[]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
     ReductionKind::kVar, "standard deviation, sqrt of var.correction"},
    {"aten.any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", ReductionKind::kAnyAll,
     "any nonzero over one dim (bool result; u8 for u8 input)"},
    {"aten.all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", ReductionKind::kAnyAll,
     "all nonzero over one dim (bool result; u8 for u8 input)"},
    {"aten.any(Tensor self) -> Tensor", ReductionKind::kAnyAll, "any nonzero element"},
    {"aten.all(Tensor self) -> Tensor", ReductionKind::kAnyAll, "all elements nonzero"},
    {"aten.cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", ReductionKind::kCumsum,
     "inclusive prefix sum along dim; ints and bool in i64 unless dtype is given"},
    {"aten.logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor", ReductionKind::kLogsumexp,
     "log(sum(exp(x))) over dims, computed stably ([] = all dims)"},
};

/// The shape left after reducing the masked dims.
ir::Shape reducedShape(const ir::Shape& shape, const std::vector<bool>& mask, bool keepdim) {
  ir::Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d])
      out.push_back(shape[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

/// sum / prod / cumsum result dtype: dtype if given, else i64 for integers and bool.
DType accumulateDType(const InferContext& ctx, DType in) {
  if (!ctx.isNone("dtype")) return ctx.getDType("dtype");
  return ir::isIntegral(in, /*includeBool=*/true) ? DType::kI64 : in;
}

/// Empty reductions with no identity (max, argmax) are errors when a reduced dim is known to be 0.
Status checkNonEmpty(const InferContext& ctx, const TensorType& x, const std::vector<bool>& mask) {
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d] && x.shape[d].constant() == 0)
      return ctx.error("cannot reduce over dim " + std::to_string(d) + " of size 0 (self is " + x.toString() +
                       "): the reduction has no identity");
  return Status::ok();
}

ir::InferFn reductionInfer(ReductionKind kind) {
  return [kind](const InferContext& ctx) -> Types {
    const TensorType& x = *ctx.input(0);
    const std::string got = " (self is " + x.toString() + ")";
    ASSIGN_OR_RETURN(std::vector<bool> mask, red::reducedDims(ctx, x.rank()));
    const bool keepdim = ctx.schema().findArg("keepdim") ? ctx.getBool("keepdim") : false;
    ir::Shape shape = reducedShape(x.shape, mask, keepdim);
    switch (kind) {
      case ReductionKind::kSum: return pw::one(accumulateDType(ctx, x.dtype), shape);
      case ReductionKind::kMean: {
        if (!ctx.isNone("dtype")) {
          DType dt = ctx.getDType("dtype");
          if (!ir::isFloating(dt)) return ctx.error("dtype must be a floating-point type, got " + pw::dtypeStr(dt));
          return pw::one(dt, shape);
        }
        if (!ir::isFloating(x.dtype))
          return ctx.error("cannot infer the output dtype: input must be floating-point (or pass a floating dtype)" +
                           got);
        return pw::one(x.dtype, shape);
      }
      case ReductionKind::kExtreme: RETURN_IF_ERROR(checkNonEmpty(ctx, x, mask)); return pw::one(x.dtype, shape);
      case ReductionKind::kExtremeDim:
        RETURN_IF_ERROR(checkNonEmpty(ctx, x, mask));
        return std::vector<TensorType>{pw::tensorOf(x.dtype, shape), pw::tensorOf(DType::kI64, shape)};
      case ReductionKind::kArg:
        if (x.dtype == DType::kBool) return ctx.error("bool tensors are not supported" + got);
        RETURN_IF_ERROR(checkNonEmpty(ctx, x, mask));
        return pw::one(DType::kI64, shape);
      case ReductionKind::kVar:
        if (!ir::isFloating(x.dtype)) return ctx.error("expects a floating-point tensor" + got);
        return pw::one(x.dtype, shape);
      case ReductionKind::kAnyAll: return pw::one(x.dtype == DType::kU8 ? DType::kU8 : DType::kBool, shape);
      case ReductionKind::kCumsum: return pw::one(accumulateDType(ctx, x.dtype), x.shape);
      case ReductionKind::kLogsumexp: return pw::one(ir::isFloating(x.dtype) ? x.dtype : ir::kDefaultFloat, shape);
    }
    return ctx.error("unknown reduction kind");
  };
}

}  // namespace

Status registerReductionOps(ir::OpRegistry& reg) {
  for (const ReductionOp& op : kReductionOps)
    RETURN_IF_ERROR(reg.add(op.schema, reductionInfer(op.kind), "reduction", op.doc));
  return Status::ok();
}

}  // namespace plugsdk::ops
