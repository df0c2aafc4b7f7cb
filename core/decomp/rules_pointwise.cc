// Decompositions of the ATen-level pointwise ops: operands are converted to the compute dtype
// the op's inference chose (PyTorch's type promotion), then one or a few elementwise prims
// apply. Formulas follow the reference kernels' evaluation order, so float64 results agree
// bit for bit where the reference uses the same operations.
#include <cmath>
#include <limits>
#include <numbers>

#include "core/decomp/rules_util.h"
#include "core/exec/host_tensor.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// op(x) for a unary math op: integer inputs convert to the (floating) output dtype first.
Rule unaryRule(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    return one(e, e.unary(prim, e.convert(c.input(0), c.outType().dtype)));
  };
}

/// A unary op given as a function of its converted input.
Rule unaryFn(std::function<V(Emitter&, V)> f) {
  return [f = std::move(f)](Emitter& e, const DecompCall& c) -> Result {
    return one(e, f(e, e.convert(c.input(0), c.outType().dtype)));
  };
}

/// The second operand: the tensor input, or the Scalar attribute `name` as a zero-dim constant.
V secondOperand(Emitter& e, const DecompCall& c, const std::string& name, DType dtype) {
  if (c.input(1)) return e.convert(c.input(1), dtype);
  return scalarAttr(e, c, name, dtype);
}

/// self + alpha * other (sign -1: self - alpha * other; reversed: other - alpha * self).
Rule addRule(int sign, bool reversed) {
  return [sign, reversed](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    V self = e.convert(c.input(0), dt);
    V other = secondOperand(e, c, "other", dt);
    if (reversed) std::swap(self, other);
    const Attribute& alpha = c.attr("alpha");
    if (dt == DType::kBool) {  // bool + bool is logical or (alpha false drops the other operand)
      const bool keep = alpha.asBool().value_or(alpha.asDouble().value_or(1.0) != 0.0);
      return one(e, keep ? e.binary("bitwise_or", self, other) : e.broadcastTo(self, c.outType().shape));
    }
    const bool unitAlpha = alpha.asDouble() == 1.0 || alpha.asBool() == true;
    if (!unitAlpha)
      other = e.mul(e.full({}, dt == DType::kBool ? Attribute::fromBool(alpha.asDouble() != 0.0) : alpha, dt), other);
    return one(e, e.binary(sign > 0 ? "add" : "sub", self, other));
  };
}

/// A binary op computed in the output dtype (arithmetic).
Rule arithmetic(const std::string& prim, const std::string& scalarName = "other") {
  return [prim, scalarName](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    return one(e, e.binary(prim, e.convert(c.input(0), dt), secondOperand(e, c, scalarName, dt)));
  };
}

/// mul and div: a zero-dim or Scalar second operand keeps f32 precision for f16/bf16 results
/// (PyTorch's CPU kernels), so those compute in f32 and round once at the end.
Rule mulDiv(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.outType().dtype;
    const bool scalarSecond = !c.input(1) || e.rank(c.input(1)) == 0;
    const DType compute = scalarSecond ? opmath(dt) : dt;
    const std::string p = dt == DType::kBool && prim == "mul" ? "bitwise_and" : prim;  // bool * bool is and
    V r = e.binary(p, e.convert(c.input(0), compute), secondOperand(e, c, "other", compute));
    return one(e, e.convert(r, dt));
  };
}

/// A comparison: operands convert to their promoted dtype (not the bool output).
Rule compare(const std::string& prim) {
  return [prim](Emitter& e, const DecompCall& c) -> Result {
    const DType dt = c.input(1) ? e.promote({c.input(0), c.input(1)}) : e.promote({c.input(0)}, {&c.attr("other")});
    return one(e, e.binary(prim, e.convert(c.input(0), dt), secondOperand(e, c, "other", dt)));
  };
}

/// logical_and / or / xor on truthiness.
Rule logical(const std::string& bitwisePrim) {
  return [bitwisePrim](Emitter& e, const DecompCall& c) -> Result {
    return one(e, e.binary(bitwisePrim, truthy(e, c.input(0)), truthy(e, c.input(1))));
  };
}

/// torch.div(rounding_mode='floor') for floats, as PyTorch computes it (exact: fmod-based,
/// so 1 // 0.1 is 9): div = (a - fmod(a, b)) / b, minus 1 when the remainder's sign differs
/// from b's, rounded to the nearest integer; a zero result keeps the sign of a / b; b == 0 gives a / b.
V floorDivFloat(Emitter& e, V a, V b) {
  const DType dt = e.dtype(a);
  V zero = e.scalar(0.0, dt), one = e.scalar(1.0, dt);
  V mod = e.binary("fmod", a, b);
  V div = e.div(e.sub(a, mod), b);
  V signsDiffer = e.binary("ne", e.binary("lt", b, zero), e.binary("lt", mod, zero));
  V adjust = e.binary("bitwise_and", e.binary("ne", mod, zero), signsDiffer);
  div = e.where(adjust, e.sub(div, one), div);
  V fl = e.unary("floor", div);
  fl = e.where(e.binary("gt", e.sub(div, fl), e.scalar(0.5, dt)), e.add(fl, one), fl);
  V quotient = e.div(a, b);
  // copysign(0, a / b) as 0 * (a / b): the quotient is finite whenever div is 0.
  V signedZero = e.mul(zero, quotient);
  fl = e.where(e.binary("eq", div, zero), signedZero, fl);
  return e.where(e.binary("eq", b, zero), quotient, fl);
}

/// Python floor division on integers: truncated quotient minus 1 when the remainder's sign
/// differs from the divisor's (prims.div errors on division by zero, as PyTorch does).
V floorDivInt(Emitter& e, V a, V b) {
  const DType dt = e.dtype(a);
  V zero = e.scalar(0.0, dt);
  V q = e.div(a, b);
  V r = e.binary("fmod", a, b);
  V adjust = e.binary("bitwise_and", e.binary("ne", r, zero),
                      e.binary("ne", e.binary("lt", r, zero), e.binary("lt", b, zero)));
  return e.where(adjust, e.sub(q, e.scalar(1.0, dt)), q);
}

Result divMode(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  if (c.isNone("rounding_mode")) return mulDiv("div")(e, c);
  const bool scalarSecond = e.rank(c.input(1)) == 0;
  const DType compute = scalarSecond ? opmath(dt) : dt;
  V a = e.convert(c.input(0), compute), b = e.convert(c.input(1), compute);
  V r;
  if (c.getString("rounding_mode") == "trunc")
    r = ir::isFloating(compute) ? e.unary("trunc", e.div(a, b)) : e.div(a, b);
  else
    r = ir::isFloating(compute) ? floorDivFloat(e, a, b) : floorDivInt(e, a, b);
  return one(e, e.convert(r, dt));
}

/// pow with a Scalar exponent, with PyTorch's special cases (x*x, sqrt, reciprocal, ...).
Result powScalar(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt);
  const Attribute& exponent = c.attr("exponent");
  if (!ir::isFloating(dt)) return one(e, e.binary("pow", x, e.scalar(exponent, dt)));
  double ex = exponent.asBool() ? (*exponent.asBool() ? 1.0 : 0.0) : exponent.asDouble().value_or(0.0);
  ex = exec::roundToFloatType(ex, dt);
  V onev = e.scalar(1.0, dt);
  if (ex == 2.0) return one(e, e.mul(x, x));
  if (ex == 3.0) return one(e, e.mul(e.mul(x, x), x));
  if (ex == 0.5) return one(e, e.unary("sqrt", x));
  if (ex == -0.5) return one(e, e.div(onev, e.unary("sqrt", x)));
  if (ex == -1.0) return one(e, e.div(onev, x));
  if (ex == -2.0) return one(e, e.div(onev, e.mul(x, x)));
  return one(e, e.binary("pow", x, e.scalar(ex, dt)));
}

/// clamp(x, min, max) with PyTorch's NaN rules: with both bounds a NaN bound (or x) gives NaN;
/// a single bound is a plain comparison, so a NaN bound leaves x unchanged.
V clampBounds(Emitter& e, V x, V lo, V hi) {
  if (lo && hi) return e.binary("minimum", e.binary("maximum", x, lo), hi);
  if (lo) return e.where(e.binary("lt", x, lo), lo, x);
  if (hi) return e.where(e.binary("lt", hi, x), hi, x);
  return x;
}

Result clampScalar(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt);
  V lo = c.isNone("min") ? nullptr : scalarAttr(e, c, "min", dt);
  V hi = c.isNone("max") ? nullptr : scalarAttr(e, c, "max", dt);
  return one(e, clampBounds(e, x, lo, hi));
}

Result clampTensor(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt);
  V lo = c.input(1) ? e.convert(c.input(1), dt) : nullptr;
  V hi = c.input(2) ? e.convert(c.input(2), dt) : nullptr;
  // clamp.Tensor propagates a NaN bound even with one bound present (clampF with one side).
  if (lo && !hi) return one(e, e.binary("maximum", x, lo));
  if (hi && !lo) return one(e, e.binary("minimum", x, hi));
  return one(e, e.broadcastTo(clampBounds(e, x, lo, hi), c.outType().shape));
}

/// In f32 for f16/bf16 and rounded once, as torch's kernels compute it (every op rounded to
/// bf16 was both less exact and slower: bf16 arithmetic is emulated through f32).
Result gelu(Emitter& e, const DecompCall& c) {
  const DType out = c.outType().dtype, dt = opmath(out);
  V x = e.convert(c.input(0), dt);
  V half = e.scalar(0.5, dt), onev = e.scalar(1.0, dt);
  if (c.getString("approximate") == "tanh") {
    const double kBeta = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, kKappa = 0.044715;
    V kx3 = e.mul(e.mul(e.mul(e.scalar(kKappa, dt), x), x), x);  // kappa * x * x * x, left to right
    V inner = e.mul(e.scalar(kBeta, dt), e.add(x, kx3));
    return one(e, e.convert(e.mul(e.mul(half, x), e.add(onev, e.unary("tanh", inner))), out));
  }
  V erf = e.unary("erf", e.mul(x, e.scalar(std::numbers::sqrt2 / 2.0, dt)));
  return one(e, e.convert(e.mul(e.mul(x, half), e.add(onev, erf)), out));
}

Result hardtanh(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  return one(
      e, clampBounds(e, e.convert(c.input(0), dt), scalarAttr(e, c, "min_val", dt), scalarAttr(e, c, "max_val", dt)));
}

Result leakyRelu(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt);
  V zero = e.scalar(0.0, dt);
  return one(e, e.where(e.binary("gt", x, zero), x, e.mul(x, scalarAttr(e, c, "negative_slope", dt))));
}

Result whereSelf(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  return one(e, e.where(truthy(e, c.input(0)), e.convert(c.input(1), dt), e.convert(c.input(2), dt)));
}

Result maskedFill(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt);
  V out = e.where(c.input(1), scalarAttr(e, c, "value", dt), x);
  return one(e, e.broadcastTo(out, c.outType().shape));
}

Result lerp(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V a = e.convert(c.input(0), dt), b = e.convert(c.input(1), dt);
  const Attribute& wa = c.attr("weight");
  double w = wa.asBool() ? (*wa.asBool() ? 1.0 : 0.0) : wa.asDouble().value_or(0.0);
  w = exec::roundToFloatType(w, opmath(dt));
  V diff = e.sub(b, a);
  if (std::fabs(w) < 0.5) return one(e, e.add(a, e.mul(e.scalar(w, dt), diff)));
  return one(e, e.sub(b, e.mul(diff, e.scalar(1.0 - w, dt))));
}

Result addcmul(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  V x = e.convert(c.input(0), dt), t1 = e.convert(c.input(1), dt), t2 = e.convert(c.input(2), dt);
  V v = scalarAttr(e, c, "value", ir::isFloating(dt) ? opmath(dt) : dt);
  v = e.convert(v, dt);
  return one(e, e.broadcastTo(e.add(x, e.mul(e.mul(v, t1), t2)), c.outType().shape));
}

Result isnan(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  if (!ir::isFloating(e.dtype(x))) return one(e, e.full(e.shape(x), 0.0, DType::kBool));
  return one(e, e.binary("ne", x, x));
}

Result isinf(Emitter& e, const DecompCall& c) {
  V x = c.input(0);
  if (!ir::isFloating(e.dtype(x))) return one(e, e.full(e.shape(x), 0.0, DType::kBool));
  return one(e, e.binary("eq", e.unary("abs", x), e.scalar(std::numeric_limits<double>::infinity(), e.dtype(x))));
}

Result identity(Emitter& e, const DecompCall& c) { return one(e, e.convert(c.input(0), c.outType().dtype)); }

}  // namespace

void addPointwiseRules(DecompTable& t) {
  for (const char* op : {"exp",  "expm1", "log",  "log1p", "log2", "sqrt",  "rsqrt", "sin",        "cos",   "tan",
                         "asin", "acos",  "atan", "sinh",  "cosh", "tanh",  "asinh", "acosh",      "atanh", "erf",
                         "abs",  "neg",   "sign", "floor", "ceil", "round", "trunc", "bitwise_not"}) {
    const std::string name = op;
    Rule rule = unaryRule(op);
    // On bool, abs / sign / floor / ... are the identity (PyTorch allows them; the prims do not).
    t.add("aten." + name, [rule](Emitter& e, const DecompCall& c) -> Result {
      if (e.dtype(c.input(0)) == DType::kBool && c.outType().dtype == DType::kBool && c.op() != "aten.bitwise_not")
        return one(e, c.input(0));
      return rule(e, c);
    });
  }
  t.add("aten.log10",
        unaryFn([](Emitter& e, V x) { return e.div(e.unary("log", x), e.scalar(std::numbers::ln10, e.dtype(x))); }));
  t.add("aten.reciprocal", unaryFn([](Emitter& e, V x) { return e.div(e.scalar(1.0, e.dtype(x)), x); }));
  t.add("aten.sigmoid", unaryFn([](Emitter& e, V x) {
          V onev = e.scalar(1.0, e.dtype(x));
          return e.div(onev, e.add(onev, e.unary("exp", e.unary("neg", x))));
        }));
  t.add("aten.silu", unaryFn([](Emitter& e, V x) {
          return e.div(x, e.add(e.scalar(1.0, e.dtype(x)), e.unary("exp", e.unary("neg", x))));
        }));
  t.add("aten.relu", unaryFn([](Emitter& e, V x) { return e.binary("maximum", x, e.scalar(0.0, e.dtype(x))); }));
  t.add("aten.logical_not", [](Emitter& e, const DecompCall& c) -> Result {
    return one(e, e.binary("eq", truthy(e, c.input(0)), e.scalar(0.0, DType::kBool)));
  });
  t.add("aten.isnan", isnan);
  t.add("aten.isinf", isinf);
  t.add("aten.gelu", gelu);
  t.add("aten.hardtanh", hardtanh);
  t.add("aten.leaky_relu", leakyRelu);
  t.add("aten.where.self", whereSelf);
  t.add("aten.clamp", clampScalar);
  t.add("aten.clamp.Tensor", clampTensor);
  t.add("aten.masked_fill.Scalar", maskedFill);
  t.add("aten._to_copy", identity);
  t.add("aten.lerp.Scalar", lerp);
  t.add("aten.addcmul", addcmul);

  t.add("aten.add.Tensor", addRule(+1, false));
  t.add("aten.add.Scalar", addRule(+1, false));
  t.add("aten.sub.Tensor", addRule(-1, false));
  t.add("aten.sub.Scalar", addRule(-1, false));
  t.add("aten.rsub.Scalar", addRule(-1, true));
  t.add("aten.mul.Tensor", mulDiv("mul"));
  t.add("aten.mul.Scalar", mulDiv("mul"));
  t.add("aten.div.Tensor", mulDiv("div"));
  t.add("aten.div.Scalar", mulDiv("div"));
  t.add("aten.div.Tensor_mode", divMode);
  t.add("aten.pow.Tensor_Tensor", arithmetic("pow"));
  t.add("aten.pow.Tensor_Scalar", powScalar);
  t.add("aten.maximum", arithmetic("maximum"));
  t.add("aten.minimum", arithmetic("minimum"));
  t.add("aten.fmod.Tensor", arithmetic("fmod"));
  t.add("aten.remainder.Tensor", arithmetic("remainder"));
  t.add("aten.remainder.Scalar", arithmetic("remainder"));
  t.add("aten.atan2", arithmetic("atan2"));
  t.add("aten.bitwise_and.Tensor", arithmetic("bitwise_and"));
  t.add("aten.bitwise_or.Tensor", arithmetic("bitwise_or"));
  t.add("aten.bitwise_xor.Tensor", arithmetic("bitwise_xor"));
  t.add("aten.logical_and", logical("bitwise_and"));
  t.add("aten.logical_or", logical("bitwise_or"));
  t.add("aten.logical_xor", logical("bitwise_xor"));
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    t.add(std::string("aten.") + cmp + ".Tensor", compare(cmp));
    t.add(std::string("aten.") + cmp + ".Scalar", compare(cmp));
  }
}

}  // namespace plugsdk::decomp
