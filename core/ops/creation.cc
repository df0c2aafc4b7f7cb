// ATen-level creation ops (full, zeros, ones, empty, *_like, new_*, arange, linspace,
// scalar_tensor): schemas and shape/dtype inference. Most have no tensor inputs.
#include <cmath>

#include "core/ops/aten_ops.h"
#include "core/ops/shape_internal.h"

namespace plugsdk::ops {

using namespace shape_detail;

namespace {

/// The size list of a factory op: every entry >= 0.
StatusOr<Shape> sizeList(const InferContext& ctx, const char* name) {
  auto sizes = ctx.getSyms(name);
  for (const SymExpr& s : sizes) {
    if (auto c = s.constant(); c && *c < 0)
      return ctx.error("trying to create a tensor with negative dimension " + std::to_string(*c) + ": " +
                       symsToString(sizes));
    RETURN_IF_ERROR(checkSize(ctx, s, "size"));
  }
  return Shape(sizes.begin(), sizes.end());
}

/// The dtype attribute if given, else `dflt`.
DType dtypeOr(const InferContext& ctx, DType dflt) { return ctx.isNone("dtype") ? dflt : ctx.getDType("dtype"); }

/// full's dtype when none is given: from the fill value's kind (float -> default float,
/// int -> i64, bool -> bool), as torch.full does.
DType scalarDType(const ir::Attribute& a) {
  switch (a.kind()) {
    case ir::Attribute::Kind::kBool: return DType::kBool;
    case ir::Attribute::Kind::kInt:
    case ir::Attribute::Kind::kSym: return DType::kI64;
    default: return ir::kDefaultFloat;
  }
}

/// The fill value (if the op has one) must convert to the output dtype without overflow.
TypesOr withCheckedFill(const InferContext& ctx, TensorType t) {
  for (const char* name : {"fill_value", "s"})
    if (ctx.schema().findArg(name)) RETURN_IF_ERROR(checkScalarFits(ctx, ctx.attr(name), t.dtype, name));
  return one(std::move(t));
}

TypesOr inferFull(const InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape shape, sizeList(ctx, "size"));
  return withCheckedFill(ctx, makeType(dtypeOr(ctx, scalarDType(ctx.attr("fill_value"))), std::move(shape)));
}

TypesOr inferFactory(const InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape shape, sizeList(ctx, "size"));
  return one(makeType(dtypeOr(ctx, ir::kDefaultFloat), std::move(shape)));
}

TypesOr inferLike(const InferContext& ctx) {
  const TensorType& t = *ctx.input(0);
  return withCheckedFill(ctx, makeType(dtypeOr(ctx, t.dtype), t.shape));
}

TypesOr inferNew(const InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape shape, sizeList(ctx, "size"));
  return withCheckedFill(ctx, makeType(dtypeOr(ctx, ctx.input(0)->dtype), std::move(shape)));
}

TypesOr inferScalarTensor(const InferContext& ctx) {
  return withCheckedFill(ctx, makeType(dtypeOr(ctx, ir::kDefaultFloat), {}));
}

const ir::Attribute& argOr(const InferContext& ctx, const char* name, const ir::Attribute& dflt) {
  return ctx.schema().findArg(name) ? ctx.attr(name) : dflt;
}

/// The length of arange(start, end, step) with output dtype `dtype`, as PyTorch computes it.
StatusOr<int64_t> arangeLength(const ir::Attribute& start, const ir::Attribute& end, const ir::Attribute& step,
                               DType dtype) {
  auto toD = [](const ir::Attribute& a) { return a.asBool() ? (*a.asBool() ? 1.0 : 0.0) : a.asDouble().value_or(0.0); };
  auto toI = [&](const ir::Attribute& a) -> int64_t {
    if (auto i = a.asInt()) return *i;
    if (auto b = a.asBool()) return *b ? 1 : 0;
    double v = a.asDouble().value_or(0.0);
    return std::isfinite(v) && std::fabs(v) < 9.2e18 ? static_cast<int64_t>(v) : 0;
  };
  auto err = [](const std::string& m) { return invalidArgument("arange: " + m); };
  double ds = toD(start), de = toD(end), dst = toD(step);
  if (!std::isfinite(ds) || !std::isfinite(de))
    return err("unsupported range: " + start.toString() + " -> " + end.toString());
  if (ir::isFloating(dtype)) {
    if (dst == 0 || std::isnan(dst)) return err("step must be nonzero");
    if (!((dst > 0 && de >= ds) || (dst < 0 && de <= ds)))
      return err("upper bound and lower bound inconsistent with step sign");
    double n = std::ceil((de - ds) / dst);
    if (!(n >= 0 && n < 9.0e15)) return err("the number of elements (" + std::to_string(n) + ") is out of range");
    return static_cast<int64_t>(n);
  }
  // Integer outputs: the bounds are converted to int64 first (PyTorch's accumulate type).
  int64_t is = toI(start), ie = toI(end), ist = toI(step);
  if (ist == 0) return err("step must be nonzero");
  if (!((ist > 0 && ie >= is) || (ist < 0 && ie <= is)))
    return err("upper bound and lower bound inconsistent with step sign");
  if (dtype == DType::kI64) {
    // ceil((end - start) / step) in exact integer arithmetic (__int128 avoids overflow).
    __int128 diff = static_cast<__int128>(ie) - is, s = ist;
    __int128 q = diff / s, r = diff % s;
    if (r != 0) ++q;  // diff and step have the same sign here, so the quotient is >= 0
    return static_cast<int64_t>(q);
  }
  // Narrower integer types: PyTorch sizes them from the original scalars in double.
  double n = std::ceil((de - ds) / dst);
  if (!(n >= 0 && n < 9.0e15)) return err("the number of elements is out of range");
  return static_cast<int64_t>(n);
}

TypesOr inferArange(const InferContext& ctx) {
  static const ir::Attribute kZero = ir::Attribute::fromInt(0), kOne = ir::Attribute::fromInt(1);
  const ir::Attribute& start = argOr(ctx, "start", kZero);
  const ir::Attribute& end = ctx.attr("end");
  const ir::Attribute& step = argOr(ctx, "step", kOne);
  auto isFloat = [](const ir::Attribute& a) { return a.kind() == ir::Attribute::Kind::kFloat; };
  DType dflt = isFloat(start) || isFloat(end) || isFloat(step) ? ir::kDefaultFloat : DType::kI64;
  DType dtype = dtypeOr(ctx, dflt);
  if (dtype == DType::kBool) return ctx.error("arange is not implemented for bool");
  // The bounds are converted to the accumulate type first: int64 for integers, float for
  // float16/bfloat16, double otherwise.
  DType acc =
      ir::isFloating(dtype) ? (dtype == DType::kF16 || dtype == DType::kBF16 ? DType::kF32 : DType::kF64) : DType::kI64;
  for (const ir::Attribute* a : {&start, &end, &step})
    if (a->kind() != ir::Attribute::Kind::kSym) RETURN_IF_ERROR(checkScalarFits(ctx, *a, acc, "bound"));
  // A symbolic end (an integer size expression) with integer start and step.
  if (end.kind() == ir::Attribute::Kind::kSym) {
    auto s = start.asInt(), st = step.asInt();
    if (!s || !st) return ctx.error("a symbolic end needs integer start and step");
    if (*st == 0) return ctx.error("step must be nonzero");
    SymExpr e = *end.asSym(), len = *st > 0 ? SymExpr::floorDiv(e - SymExpr(*s) + SymExpr(*st - 1), SymExpr(*st))
                                            : SymExpr::floorDiv(SymExpr(*s) - e + SymExpr(-*st - 1), SymExpr(-*st));
    if (provedLT(len, SymExpr(0), ctx.assumptions()))
      return ctx.error("upper bound and lower bound inconsistent with step sign");
    return one(makeType(dtype, {len}));
  }
  ASSIGN_OR_RETURN(int64_t n, arangeLength(start, end, step, dtype));
  return one(makeType(dtype, {SymExpr(n)}));
}

TypesOr inferLinspace(const InferContext& ctx) {
  int64_t steps = ctx.getInt("steps");
  if (steps < 0) return ctx.error("number of steps must be non-negative, got " + std::to_string(steps));
  DType dtype = dtypeOr(ctx, ir::kDefaultFloat);
  if (dtype == DType::kBool) return ctx.error("linspace is not implemented for bool");
  RETURN_IF_ERROR(checkScalarFits(ctx, ctx.attr("start"), dtype, "start"));
  RETURN_IF_ERROR(checkScalarFits(ctx, ctx.attr("end"), dtype, "end"));
  return one(makeType(dtype, {SymExpr(steps)}));
}

}  // namespace

Status registerCreationOps(ir::OpRegistry& reg) {
  const std::string c = "creation";
  RETURN_IF_ERROR(reg.add("aten.full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor", inferFull,
                          c,
                          "A tensor of size filled with fill_value (dtype from the value: float -> f32, int -> i64)."));
  RETURN_IF_ERROR(reg.add("aten.full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor",
                          inferLike, c, "full with self's shape (and dtype unless given)."));
  RETURN_IF_ERROR(reg.add("aten.zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferFactory, c, "Zeros."));
  RETURN_IF_ERROR(reg.add("aten.ones(SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferFactory, c, "Ones."));
  RETURN_IF_ERROR(reg.add("aten.empty.memory_format(SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferFactory,
                          c, "Uninitialized memory (zeros in the reference)."));
  RETURN_IF_ERROR(reg.add("aten.zeros_like(Tensor self, *, ScalarType? dtype=None) -> Tensor", inferLike, c,
                          "Zeros of self's shape."));
  RETURN_IF_ERROR(reg.add("aten.ones_like(Tensor self, *, ScalarType? dtype=None) -> Tensor", inferLike, c,
                          "Ones of self's shape."));
  RETURN_IF_ERROR(reg.add("aten.empty_like(Tensor self, *, ScalarType? dtype=None) -> Tensor", inferLike, c,
                          "Uninitialized, self's shape (zeros in the reference)."));
  RETURN_IF_ERROR(reg.add("aten.new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferNew,
                          c, "Zeros of size with self's dtype unless given."));
  RETURN_IF_ERROR(reg.add("aten.new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferNew, c,
                          "Ones of size with self's dtype unless given."));
  RETURN_IF_ERROR(reg.add("aten.new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None) -> Tensor", inferNew,
                          c, "Uninitialized (zeros in the reference), self's dtype unless given."));
  RETURN_IF_ERROR(
      reg.add("aten.new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor",
              inferNew, c, "full with self's dtype unless given."));
  RETURN_IF_ERROR(reg.add("aten.scalar_tensor(Scalar s, *, ScalarType? dtype=None) -> Tensor", inferScalarTensor, c,
                          "A 0-dim tensor holding s (default dtype f32 whatever the scalar's kind)."));
  RETURN_IF_ERROR(reg.add("aten.arange(Scalar end, *, ScalarType? dtype=None) -> Tensor", inferArange, c,
                          "0, 1, ... below end (i64 for integer arguments, else f32)."));
  RETURN_IF_ERROR(reg.add("aten.arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None) -> Tensor",
                          inferArange, c, "start, start+1, ... below end."));
  RETURN_IF_ERROR(
      reg.add("aten.arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None) -> Tensor",
              inferArange, c, "ceil((end-start)/step) values start + i*step."));
  RETURN_IF_ERROR(reg.add("aten.linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None) -> Tensor",
                          inferLinspace, c, "steps evenly spaced values from start to end."));
  return Status::ok();
}

}  // namespace plugsdk::ops
