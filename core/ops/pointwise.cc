// ATen-level pointwise ops: unary math and activations, where, clamp, masked_fill, _to_copy, lerp
// and addcmul (schemas and shape/dtype inference). Binary ops are in pointwise_binary.cc.
#include <cmath>
#include <limits>

#include "core/ops/aten_ops.h"
#include "core/ops/pointwise_internal.h"

namespace plugsdk::ops {

namespace pw {

std::optional<std::string> scalarOverflow(const ir::Attribute& value, ir::DType dtype) {
  using ir::DType;
  if (value.kind() == ir::Attribute::Kind::kBool || dtype == DType::kBool) return std::nullopt;
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::kU8:
      lo = 0;
      hi = 255;
      break;
    case DType::kI8:
      lo = -128;
      hi = 127;
      break;
    case DType::kI16:
      lo = -32768;
      hi = 32767;
      break;
    case DType::kI32:
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    case DType::kI64:
      lo = -9223372036854775808.0;
      hi = 9223372036854775807.0;
      break;
    case DType::kF16:
      lo = -65504.0;
      hi = 65504.0;
      break;
    case DType::kBF16:
      lo = -3.38953139e38;
      hi = 3.38953139e38;
      break;
    case DType::kF32:
      lo = -static_cast<double>(std::numeric_limits<float>::max());
      hi = -lo;
      break;
    default: return std::nullopt;  // f64 holds every scalar
  }
  bool overflow = false;
  if (auto i = value.asInt(); i && value.kind() == ir::Attribute::Kind::kInt) {
    int64_t v = *i;
    if (dtype == DType::kI64)
      overflow = false;
    else if (dtype == DType::kU8)
      overflow = v > 255 || (v < 0 && -static_cast<uint64_t>(v) > 255u);  // wraps allowed
    else
      overflow = static_cast<double>(v) < lo || static_cast<double>(v) > hi;
  } else if (auto d = value.asDouble()) {
    double v = *d;
    if (ir::isFloating(dtype))
      overflow = !std::isinf(v) && !std::isnan(v) && (v < lo || v > hi);
    else
      overflow = std::isnan(v) || v < lo || v > hi;
  }
  if (!overflow) return std::nullopt;
  return "value " + value.toString() + " cannot be converted to " + dtypeStr(dtype) + " without overflow";
}

Status checkScalarFits(const ir::InferContext& ctx, const std::string& attrName, ir::DType dtype) {
  const ir::Attribute& a = ctx.attr(attrName);
  if (a.isNone()) return Status::ok();
  if (auto why = scalarOverflow(a, dtype)) return ctx.error(attrName + ": " + *why);
  return Status::ok();
}

}  // namespace pw

namespace {

using ir::DType;
using ir::InferContext;
using ir::PromotionOperand;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

enum class UnaryKind {
  kFloatMath,   ///< integer and bool inputs promote to the default float dtype
  kSameNoBool,  ///< result has the input dtype; bool inputs are rejected
  kSameAny,     ///< result has the input dtype
  kIntegral,    ///< integer or bool inputs only, result has the input dtype
  kFloatOnly,   ///< floating inputs only, result has the input dtype
  kPredicate,   ///< any input, bool result
};

struct UnaryOp {
  const char* schema;
  UnaryKind kind;
  const char* doc;
};

const UnaryOp kUnaryOps[] = {
    {"aten.abs(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "|x| (integers wrap: abs(INT_MIN) = INT_MIN)"},
    {"aten.neg(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "-x"},
    {"aten.exp(Tensor self) -> Tensor", UnaryKind::kFloatMath, "e^x"},
    {"aten.expm1(Tensor self) -> Tensor", UnaryKind::kFloatMath, "e^x - 1"},
    {"aten.log(Tensor self) -> Tensor", UnaryKind::kFloatMath, "natural logarithm"},
    {"aten.log2(Tensor self) -> Tensor", UnaryKind::kFloatMath, "base-2 logarithm"},
    {"aten.log10(Tensor self) -> Tensor", UnaryKind::kFloatMath, "base-10 logarithm"},
    {"aten.log1p(Tensor self) -> Tensor", UnaryKind::kFloatMath, "log(1 + x)"},
    {"aten.sqrt(Tensor self) -> Tensor", UnaryKind::kFloatMath, "square root"},
    {"aten.rsqrt(Tensor self) -> Tensor", UnaryKind::kFloatMath, "1 / sqrt(x)"},
    {"aten.sin(Tensor self) -> Tensor", UnaryKind::kFloatMath, "sine"},
    {"aten.cos(Tensor self) -> Tensor", UnaryKind::kFloatMath, "cosine"},
    {"aten.tan(Tensor self) -> Tensor", UnaryKind::kFloatMath, "tangent"},
    {"aten.asin(Tensor self) -> Tensor", UnaryKind::kFloatMath, "arcsine"},
    {"aten.acos(Tensor self) -> Tensor", UnaryKind::kFloatMath, "arccosine"},
    {"aten.atan(Tensor self) -> Tensor", UnaryKind::kFloatMath, "arctangent"},
    {"aten.sinh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "hyperbolic sine"},
    {"aten.cosh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "hyperbolic cosine"},
    {"aten.tanh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "hyperbolic tangent"},
    {"aten.asinh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "inverse hyperbolic sine"},
    {"aten.acosh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "inverse hyperbolic cosine"},
    {"aten.atanh(Tensor self) -> Tensor", UnaryKind::kFloatMath, "inverse hyperbolic tangent"},
    {"aten.sigmoid(Tensor self) -> Tensor", UnaryKind::kFloatMath, "1 / (1 + e^-x)"},
    {"aten.erf(Tensor self) -> Tensor", UnaryKind::kFloatMath, "error function"},
    {"aten.reciprocal(Tensor self) -> Tensor", UnaryKind::kFloatMath, "1 / x"},
    {"aten.floor(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "round toward -inf (integers unchanged)"},
    {"aten.ceil(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "round toward +inf (integers unchanged)"},
    {"aten.round(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "round half to even (integers unchanged)"},
    {"aten.trunc(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "round toward zero (integers unchanged)"},
    {"aten.sign(Tensor self) -> Tensor", UnaryKind::kSameAny, "-1, 0 or 1 (sign(nan) = 0)"},
    {"aten.relu(Tensor self) -> Tensor", UnaryKind::kSameNoBool, "max(x, 0), NaN propagates"},
    {"aten.gelu(Tensor self, *, str approximate=\"none\") -> Tensor", UnaryKind::kFloatOnly,
     "Gaussian error linear unit, exact (\"none\") or \"tanh\" approximation"},
    {"aten.silu(Tensor self) -> Tensor", UnaryKind::kFloatOnly, "x * sigmoid(x)"},
    {"aten.hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", UnaryKind::kSameNoBool,
     "clamp(x, min_val, max_val)"},
    {"aten.leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", UnaryKind::kFloatOnly,
     "x > 0 ? x : negative_slope * x"},
    {"aten.logical_not(Tensor self) -> Tensor", UnaryKind::kPredicate, "x == 0 (bool result)"},
    {"aten.bitwise_not(Tensor self) -> Tensor", UnaryKind::kIntegral, "~x (logical not for bool)"},
    {"aten.isnan(Tensor self) -> Tensor", UnaryKind::kPredicate, "x != x (bool result)"},
    {"aten.isinf(Tensor self) -> Tensor", UnaryKind::kPredicate, "|x| == inf (bool result)"},
};

ir::InferFn unaryInfer(UnaryKind kind) {
  return [kind](const InferContext& ctx) -> Types {
    const TensorType& x = *ctx.input(0);
    const std::string got = " (self is " + x.toString() + ")";
    DType out = x.dtype;
    switch (kind) {
      case UnaryKind::kFloatMath:
        if (!ir::isFloating(out)) out = ir::kDefaultFloat;
        break;
      case UnaryKind::kSameNoBool:
        if (out == DType::kBool) return ctx.error("bool tensors are not supported" + got);
        break;
      case UnaryKind::kSameAny: break;
      case UnaryKind::kIntegral:
        if (ir::isFloating(out)) return ctx.error("expects an integer or bool tensor" + got);
        break;
      case UnaryKind::kFloatOnly:
        if (!ir::isFloating(out)) return ctx.error("expects a floating-point tensor" + got);
        break;
      case UnaryKind::kPredicate: out = DType::kBool; break;
    }
    const std::string& name = ctx.schema().name;
    if (name == "aten.gelu") {
      std::string a = ctx.getString("approximate");
      if (a != "none" && a != "tanh") return ctx.error("approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
    } else if (name == "aten.hardtanh") {
      if (x.dtype == DType::kU8 && (ctx.getFloat("min_val") < 0 || ctx.getFloat("max_val") < 0))
        return ctx.error("cannot apply hardtanh to an unsigned tensor with negative limits" + got);
      RETURN_IF_ERROR(pw::checkScalarFits(ctx, "min_val", x.dtype));
      RETURN_IF_ERROR(pw::checkScalarFits(ctx, "max_val", x.dtype));
    } else if (name == "aten.leaky_relu") {
      RETURN_IF_ERROR(pw::checkScalarFits(ctx, "negative_slope", pw::opmathType(x.dtype)));
    }
    return pw::one(out, x.shape);
  };
}

Types inferWhere(const InferContext& ctx) {
  const TensorType& cond = *ctx.input(0);
  if (cond.dtype != DType::kBool && cond.dtype != DType::kU8)
    return ctx.error("condition must be a bool tensor, got " + cond.toString());
  ASSIGN_OR_RETURN(ir::Shape shape, ir::broadcastAll(ctx.inputs(), ctx.assumptions()));
  DType out = ir::resultType({PromotionOperand{ctx.input(1), nullptr}, PromotionOperand{ctx.input(2), nullptr}});
  return pw::one(out, shape);
}

Types inferClamp(const InferContext& ctx) {
  const TensorType& x = *ctx.input(0);
  if (ctx.isNone("min") && ctx.isNone("max")) return ctx.error("at least one of 'min' or 'max' must not be none");
  std::vector<PromotionOperand> ops{{&x, nullptr}};
  for (const char* n : {"min", "max"})
    if (!ctx.isNone(n)) ops.push_back({nullptr, &ctx.attr(n)});
  DType out = ir::resultType(ops);
  if (out == DType::kBool) return ctx.error("bool tensors are not supported (self is " + x.toString() + ")");
  RETURN_IF_ERROR(pw::checkScalarFits(ctx, "min", out));
  RETURN_IF_ERROR(pw::checkScalarFits(ctx, "max", out));
  return pw::one(out, x.shape);
}

Types inferClampTensor(const InferContext& ctx) {
  if (!ctx.input(1) && !ctx.input(2)) return ctx.error("at least one of 'min' or 'max' must not be none");
  std::vector<PromotionOperand> ops;
  for (const TensorType* t : ctx.inputs())
    if (t) ops.push_back({t, nullptr});
  ASSIGN_OR_RETURN(ir::Shape shape, ir::broadcastAll(ctx.inputs(), ctx.assumptions()));
  DType out = ir::resultType(ops);
  if (out == DType::kBool) return ctx.error("bool tensors are not supported (all inputs are bool)");
  return pw::one(out, shape);
}

Types inferMaskedFill(const InferContext& ctx) {
  const TensorType& x = *ctx.input(0);
  const TensorType& mask = *ctx.input(1);
  if (mask.dtype != DType::kBool) return ctx.error("mask must be a bool tensor, got " + mask.toString());
  ASSIGN_OR_RETURN(ir::Shape shape, ir::broadcastShapes(x.shape, mask.shape, ctx.assumptions()));
  RETURN_IF_ERROR(pw::checkScalarFits(ctx, "value", x.dtype));
  return pw::one(x.dtype, shape);
}

Types inferToCopy(const InferContext& ctx) {
  const TensorType& x = *ctx.input(0);
  return pw::one(ctx.isNone("dtype") ? x.dtype : ctx.getDType("dtype"), x.shape);
}

Types inferLerp(const InferContext& ctx) {
  const TensorType& x = *ctx.input(0);
  const TensorType& end = *ctx.input(1);
  if (!ir::isFloating(x.dtype)) return ctx.error("expects floating-point tensors, got self " + x.toString());
  if (end.dtype != x.dtype)
    return ctx.error("end must have the dtype of self (" + pw::dtypeStr(x.dtype) + "), got " + end.toString());
  ASSIGN_OR_RETURN(ir::Shape shape, ir::broadcastShapes(x.shape, end.shape, ctx.assumptions()));
  RETURN_IF_ERROR(pw::checkScalarFits(ctx, "weight", pw::opmathType(x.dtype)));
  return pw::one(x.dtype, shape);
}

Types inferAddcmul(const InferContext& ctx) {
  std::vector<PromotionOperand> ops;
  for (const TensorType* t : ctx.inputs()) ops.push_back({t, nullptr});
  DType out = ir::resultType(ops);
  if (out == DType::kBool) return ctx.error("bool tensors are not supported (all inputs are bool)");
  ASSIGN_OR_RETURN(ir::Shape shape, ir::broadcastAll(ctx.inputs(), ctx.assumptions()));
  RETURN_IF_ERROR(pw::checkScalarFits(ctx, "value", pw::opmathType(out)));
  return pw::one(out, shape);
}

}  // namespace

Status registerPointwiseOps(ir::OpRegistry& reg) {
  for (const UnaryOp& op : kUnaryOps) RETURN_IF_ERROR(reg.add(op.schema, unaryInfer(op.kind), "pointwise", op.doc));
  RETURN_IF_ERROR(reg.add("aten.where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", inferWhere,
                          "pointwise", "condition ? self : other, broadcast, promoted"));
  RETURN_IF_ERROR(reg.add("aten.clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", inferClamp,
                          "pointwise", "min(max(x, min), max); NaN propagates"));
  RETURN_IF_ERROR(reg.add("aten.clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                          inferClampTensor, "pointwise", "clamp with tensor bounds, broadcast, promoted"));
  RETURN_IF_ERROR(reg.add("aten.masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", inferMaskedFill,
                          "pointwise", "mask ? value : self (mask is bool)"));
  RETURN_IF_ERROR(reg.add("aten._to_copy(Tensor self, *, ScalarType? dtype=None) -> Tensor", inferToCopy, "pointwise",
                          "cast to dtype (floats round to nearest even, float->int truncates, ints wrap)"));
  RETURN_IF_ERROR(reg.add("aten.lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", inferLerp, "pointwise",
                          "self + weight * (end - self)"));
  RETURN_IF_ERROR(reg.add("aten.addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
                          inferAddcmul, "pointwise", "self + value * tensor1 * tensor2"));
  return pw::registerPointwiseBinaryOps(reg);
}

}  // namespace plugsdk::ops
