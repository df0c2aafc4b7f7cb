// ATen-level binary pointwise ops: arithmetic, division modes, pow, min/max, remainders, bitwise,
// logical and comparison ops, in .Tensor and .Scalar overloads (schemas and inference).
#include "core/ops/aten_ops.h"
#include "core/ops/pointwise_internal.h"

namespace plugsdk::ops::pw {

namespace {

using ir::Attribute;
using ir::DType;
using ir::InferContext;
using ir::PromotionOperand;
using ir::TensorType;
using Types = StatusOr<std::vector<TensorType>>;

enum class BinaryKind {
  kAdd,      ///< a + alpha * b
  kSub,      ///< a - alpha * b (no bool operands)
  kMul,      ///< a * b
  kTrueDiv,  ///< integer results promote to the default float (div, atan2)
  kDivMode,  ///< div with rounding_mode none / "trunc" / "floor"
  kPow,      ///< a ** b
  kMinMax,   ///< maximum, minimum
  kMod,      ///< fmod, remainder (no bool)
  kBitwise,  ///< integer or bool only
  kLogical,  ///< bool result from truthiness
  kCompare,  ///< bool result, compared in the promoted dtype
};

struct BinaryOp {
  const char* schema;
  BinaryKind kind;
  const char* doc;
};

const BinaryOp kBinaryOps[] = {
    {"aten.add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", BinaryKind::kAdd,
     "self + alpha * other"},
    {"aten.add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", BinaryKind::kAdd, "self + alpha * other"},
    {"aten.sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", BinaryKind::kSub,
     "self - alpha * other"},
    {"aten.sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", BinaryKind::kSub, "self - alpha * other"},
    {"aten.rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", BinaryKind::kSub, "other - alpha * self"},
    {"aten.mul.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kMul, "self * other"},
    {"aten.mul.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kMul, "self * other"},
    {"aten.div.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kTrueDiv, "true division (ints give floats)"},
    {"aten.div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", BinaryKind::kDivMode,
     "division with rounding_mode none (true), \"trunc\" or \"floor\""},
    {"aten.div.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kTrueDiv, "true division by a scalar"},
    {"aten.pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", BinaryKind::kPow, "self ** exponent"},
    {"aten.pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", BinaryKind::kPow, "self ** exponent"},
    {"aten.maximum(Tensor self, Tensor other) -> Tensor", BinaryKind::kMinMax, "elementwise max, NaN propagates"},
    {"aten.minimum(Tensor self, Tensor other) -> Tensor", BinaryKind::kMinMax, "elementwise min, NaN propagates"},
    {"aten.fmod.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kMod, "C remainder (sign of self)"},
    {"aten.remainder.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kMod,
     "Python remainder (sign of other)"},
    {"aten.remainder.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kMod,
     "Python remainder (sign of other)"},
    {"aten.atan2(Tensor self, Tensor other) -> Tensor", BinaryKind::kTrueDiv,
     "atan(self / other) in the right quadrant"},
    {"aten.bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kBitwise, "self & other"},
    {"aten.bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kBitwise, "self | other"},
    {"aten.bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kBitwise, "self ^ other"},
    {"aten.logical_and(Tensor self, Tensor other) -> Tensor", BinaryKind::kLogical, "self != 0 and other != 0"},
    {"aten.logical_or(Tensor self, Tensor other) -> Tensor", BinaryKind::kLogical, "self != 0 or other != 0"},
    {"aten.logical_xor(Tensor self, Tensor other) -> Tensor", BinaryKind::kLogical, "(self != 0) != (other != 0)"},
    {"aten.eq.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self == other"},
    {"aten.eq.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self == other"},
    {"aten.ne.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self != other"},
    {"aten.ne.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self != other"},
    {"aten.lt.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self < other"},
    {"aten.lt.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self < other"},
    {"aten.le.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self <= other"},
    {"aten.le.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self <= other"},
    {"aten.gt.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self > other"},
    {"aten.gt.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self > other"},
    {"aten.ge.Tensor(Tensor self, Tensor other) -> Tensor", BinaryKind::kCompare, "self >= other"},
    {"aten.ge.Scalar(Tensor self, Scalar other) -> Tensor", BinaryKind::kCompare, "self >= other"},
};

/// The Scalar operand of a .Scalar overload ("other" or "exponent"), or nullptr.
const Attribute* scalarOperand(const InferContext& ctx) {
  for (const char* n : {"other", "exponent"}) {
    const ir::ArgSpec* a = ctx.schema().findArg(n);
    if (a && a->type == ir::ArgType::kScalar) return &ctx.attr(n);
  }
  return nullptr;
}

/// PyTorch's alpha_check: bool alpha only for bool results, float alpha only for float results.
Status checkAlpha(const InferContext& ctx, DType result) {
  if (!ctx.schema().findArg("alpha")) return Status::ok();
  const Attribute& alpha = ctx.attr("alpha");
  if (alpha.kind() == Attribute::Kind::kBool && result != DType::kBool)
    return ctx.error("a bool alpha is only supported for bool results (result is " + dtypeStr(result) + ")");
  if (alpha.kind() == Attribute::Kind::kFloat && !ir::isFloating(result))
    return ctx.error("alpha must not be a floating-point number for integer results (result is " + dtypeStr(result) +
                     ", alpha " + alpha.toString() + ")");
  return checkScalarFits(ctx, "alpha", result);
}

std::string describeOperands(const TensorType& a, const TensorType* b, const Attribute* s) {
  return "self " + a.toString() + (b ? ", other " + b->toString() : s ? ", scalar " + s->toString() : std::string());
}

ir::InferFn binaryInfer(BinaryKind kind) {
  return [kind](const InferContext& ctx) -> Types {
    const TensorType& a = *ctx.input(0);
    const TensorType* b = ctx.input(1);
    const Attribute* s = b ? nullptr : scalarOperand(ctx);
    ir::Shape shape = a.shape;
    if (b) {
      ASSIGN_OR_RETURN(shape, ir::broadcastShapes(a.shape, b->shape, ctx.assumptions()));
    }
    DType common = ir::resultType(
        {PromotionOperand{&a, nullptr}, b ? PromotionOperand{b, nullptr} : PromotionOperand{nullptr, s}});
    const std::string operands = " (" + describeOperands(a, b, s) + ")";
    DType out = common;
    switch (kind) {
      case BinaryKind::kAdd: RETURN_IF_ERROR(checkAlpha(ctx, common)); break;
      case BinaryKind::kSub: {
        bool anyBool =
            a.dtype == DType::kBool || (b && b->dtype == DType::kBool) || (s && s->kind() == Attribute::Kind::kBool);
        if (anyBool)
          return ctx.error("subtraction with a bool operand is not supported (use logical_not / logical_xor)" +
                           operands);
        RETURN_IF_ERROR(checkAlpha(ctx, common));
        break;
      }
      case BinaryKind::kMul: break;
      case BinaryKind::kTrueDiv:
        if (!ir::isFloating(out)) out = ir::kDefaultFloat;
        break;
      case BinaryKind::kDivMode: {
        const Attribute& mode = ctx.attr("rounding_mode");
        if (mode.isNone()) {
          if (!ir::isFloating(out)) out = ir::kDefaultFloat;
          break;
        }
        std::string m = ctx.getString("rounding_mode");
        if (m != "trunc" && m != "floor")
          return ctx.error("rounding_mode must be none, \"trunc\" or \"floor\", got \"" + m + "\"");
        if (common == DType::kBool)
          return ctx.error("division with rounding_mode \"" + m + "\" does not support bool" + operands);
        break;
      }
      case BinaryKind::kPow:
        if (b && common == DType::kBool) return ctx.error("pow of two bool tensors is not supported" + operands);
        if (s && !ir::isFloating(common) && s->kind() == Attribute::Kind::kInt && *s->asInt() < 0)
          return ctx.error("integers to negative integer powers are not allowed" + operands);
        // PyTorch converts the exponent to the integer or 16-bit float dtype it computes in.
        if (s && common != DType::kF32 && common != DType::kF64)
          RETURN_IF_ERROR(checkScalarFits(ctx, "exponent", common));
        break;
      case BinaryKind::kMinMax: break;
      case BinaryKind::kMod:
        if (common == DType::kBool) return ctx.error("bool operands are not supported" + operands);
        break;
      case BinaryKind::kBitwise:
        if (ir::isFloating(common)) return ctx.error("expects integer or bool operands" + operands);
        break;
      case BinaryKind::kLogical:
      case BinaryKind::kCompare: out = DType::kBool; break;
    }
    return one(out, shape);
  };
}

}  // namespace

Status registerPointwiseBinaryOps(ir::OpRegistry& reg) {
  for (const BinaryOp& op : kBinaryOps) RETURN_IF_ERROR(reg.add(op.schema, binaryInfer(op.kind), "pointwise", op.doc));
  return Status::ok();
}

}  // namespace plugsdk::ops::pw
