// VJPs of the elementwise prims. Each formula is PyTorch's derivative (tools/autograd/
// derivatives.yaml) written in prims: the kinks take PyTorch's choice (abs'(0) = 0, maximum
// and minimum split a tie evenly, pow's exponent gradient is 0 where the base is 0 and the
// exponent is not negative), rounding ops have zero gradient, and comparisons and bitwise
// ops have none.
#include <cmath>

#include "core/autograd/vjp_util.h"

namespace plugsdk::autograd {
namespace {

using namespace vjp;  // NOLINT(google-build-using-namespace): the rule files' vocabulary

/// d(op(x)) = g * f(x, y): `f` gets the input, the output and the cotangent.
using UnaryFormula = V (*)(Emitter&, V x, V y, V g);

VjpRule unaryRule(UnaryFormula f) {
  return [f](Emitter& e, const VjpCall& c) -> Result {
    V g = c.cotangent();
    return grads(e, c, {g ? f(e, c.input(0), c.output(), g) : nullptr});
  };
}

V one(Emitter& e, V like) { return constant(e, 1.0, like); }
V square(Emitter& e, V x) { return e.mul(x, x); }

V absVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("sign", x)); }
V acosVjp(Emitter& e, V x, V, V g) {
  return e.unary("neg", e.mul(g, e.unary("rsqrt", e.sub(one(e, x), square(e, x)))));
}
V acoshVjp(Emitter& e, V x, V, V g) {
  return e.mul(g, e.unary("rsqrt", e.mul(e.sub(x, one(e, x)), e.add(x, one(e, x)))));
}
V asinVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("rsqrt", e.sub(one(e, x), square(e, x)))); }
V asinhVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("rsqrt", e.add(square(e, x), one(e, x)))); }
V atanVjp(Emitter& e, V x, V, V g) { return e.div(g, e.add(square(e, x), one(e, x))); }
V atanhVjp(Emitter& e, V x, V, V g) { return e.div(g, e.sub(one(e, x), square(e, x))); }
V cosVjp(Emitter& e, V x, V, V g) { return e.unary("neg", e.mul(g, e.unary("sin", x))); }
V coshVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("sinh", x)); }
V erfVjp(Emitter& e, V x, V, V g) {
  V d = e.mul(constant(e, 2.0 / std::sqrt(M_PI), x), e.unary("exp", e.unary("neg", square(e, x))));
  return e.mul(g, d);
}
V expVjp(Emitter& e, V, V y, V g) { return e.mul(g, y); }
V expm1Vjp(Emitter& e, V, V y, V g) { return e.mul(g, e.add(y, one(e, y))); }
V logVjp(Emitter& e, V x, V, V g) { return e.div(g, x); }
V log1pVjp(Emitter& e, V x, V, V g) { return e.div(g, e.add(x, one(e, x))); }
V log2Vjp(Emitter& e, V x, V, V g) { return e.div(g, e.mul(x, constant(e, M_LN2, x))); }
V negVjp(Emitter& e, V, V, V g) { return e.unary("neg", g); }
V rsqrtVjp(Emitter& e, V, V y, V g) { return e.mul(e.mul(g, constant(e, -0.5, y)), e.mul(y, square(e, y))); }
V sinVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("cos", x)); }
V sinhVjp(Emitter& e, V x, V, V g) { return e.mul(g, e.unary("cosh", x)); }
V sqrtVjp(Emitter& e, V, V y, V g) { return e.div(g, e.mul(y, constant(e, 2.0, y))); }
V tanVjp(Emitter& e, V, V y, V g) { return e.mul(g, e.add(square(e, y), one(e, y))); }
V tanhVjp(Emitter& e, V, V y, V g) { return e.mul(g, e.sub(one(e, y), square(e, y))); }

Result addVjp(Emitter& e, const VjpCall& c) { return grads(e, c, {c.cotangent(), c.cotangent()}); }

Result subVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent();
  return grads(e, c, {g, c.needs(1) && g ? e.unary("neg", g) : nullptr});
}

Result mulVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0), b = c.input(1);
  return grads(e, c, {c.needs(0) ? e.mul(g, b) : nullptr, c.needs(1) ? e.mul(g, a) : nullptr});
}

Result divVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0), b = c.input(1);
  return grads(
      e, c,
      {c.needs(0) ? e.div(g, b) : nullptr, c.needs(1) ? e.unary("neg", e.mul(g, e.div(e.div(a, b), b))) : nullptr});
}

Result atan2Vjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0), b = c.input(1);
  V scaled = e.div(g, e.add(square(e, a), square(e, b)));
  return grads(e, c,
               {c.needs(0) ? e.mul(scaled, b) : nullptr, c.needs(1) ? e.mul(scaled, e.unary("neg", a)) : nullptr});
}

/// fmod and remainder: d/da = 1, d/db = -round(a / b) with the op's rounding (trunc, floor).
VjpRule moduloRule(const char* rounding) {
  return [rounding](Emitter& e, const VjpCall& c) -> Result {
    V g = c.cotangent(), a = c.input(0), b = c.input(1);
    return grads(e, c, {g, c.needs(1) ? e.unary("neg", e.mul(g, e.unary(rounding, e.div(a, b)))) : nullptr});
  };
}

/// maximum (cmp "gt") and minimum ("lt"): the winner gets g, a tie splits it evenly.
VjpRule extremumRule(const char* cmp) {
  return [cmp](Emitter& e, const VjpCall& c) -> Result {
    V g = c.cotangent(), a = c.input(0), b = c.input(1);
    V half = e.mul(g, constant(e, 0.5, g)), zero = constant(e, 0.0, g);
    V tie = e.binary("eq", a, b);
    auto side = [&](V x, V y) { return e.where(e.binary(cmp, x, y), g, e.where(tie, half, zero)); };
    return grads(e, c, {c.needs(0) ? side(a, b) : nullptr, c.needs(1) ? side(b, a) : nullptr});
  };
}

Result powVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent(), a = c.input(0), b = c.input(1), y = c.output();
  V zero = constant(e, 0.0, g);
  V ga = nullptr, gb = nullptr;
  if (c.needs(0)) {
    V d = e.mul(b, e.binary("pow", a, e.sub(b, one(e, b))));
    ga = e.where(e.binary("eq", b, zero), zero, e.mul(g, d));
  }
  if (c.needs(1)) {
    V safe = e.where(e.binary("bitwise_and", e.binary("eq", a, zero), e.binary("ge", b, zero)), zero,
                     e.mul(y, e.unary("log", a)));
    gb = e.mul(g, safe);
  }
  return grads(e, c, {ga, gb});
}

Result whereVjp(Emitter& e, const VjpCall& c) {
  V p = c.input(0), g = c.cotangent(), zero = constant(e, 0.0, g);
  return grads(e, c, {nullptr, c.needs(1) ? e.where(p, g, zero) : nullptr, c.needs(2) ? e.where(p, zero, g) : nullptr});
}

/// Casts: the cotangent is cast back (a float input of an integer output gets none: the
/// joint builder never passes a cotangent for an integer or bool value).
Result convertVjp(Emitter& e, const VjpCall& c) {
  V g = c.cotangent();
  return grads(e, c, {g ? e.convert(g, e.dtype(c.input(0))) : nullptr});
}

/// Piecewise-constant ops: zero gradient almost everywhere (PyTorch returns zeros too).
Result zeroVjp(Emitter& e, const VjpCall& c) { return grads(e, c, {nullptr}); }

}  // namespace

void addElementwiseVjps(VjpTable& t) {
  const std::pair<const char*, UnaryFormula> unary[] = {
      {"abs", absVjp},   {"acos", acosVjp},   {"acosh", acoshVjp}, {"asin", asinVjp},   {"asinh", asinhVjp},
      {"atan", atanVjp}, {"atanh", atanhVjp}, {"cos", cosVjp},     {"cosh", coshVjp},   {"erf", erfVjp},
      {"exp", expVjp},   {"expm1", expm1Vjp}, {"log", logVjp},     {"log1p", log1pVjp}, {"log2", log2Vjp},
      {"neg", negVjp},   {"rsqrt", rsqrtVjp}, {"sin", sinVjp},     {"sinh", sinhVjp},   {"sqrt", sqrtVjp},
      {"tan", tanVjp},   {"tanh", tanhVjp},
  };
  for (const auto& [name, f] : unary) t.add(std::string("prims.") + name, unaryRule(f));
  t.add("prims.add", addVjp);
  t.add("prims.sub", subVjp);
  t.add("prims.mul", mulVjp);
  t.add("prims.div", divVjp);
  t.add("prims.atan2", atan2Vjp);
  t.add("prims.fmod", moduloRule("trunc"));
  t.add("prims.remainder", moduloRule("floor"));
  t.add("prims.maximum", extremumRule("gt"));
  t.add("prims.minimum", extremumRule("lt"));
  t.add("prims.pow", powVjp);
  t.add("prims.where", whereVjp);
  t.add("prims.convert_element_type", convertVjp);
  for (const char* op : {"ceil", "floor", "round", "trunc", "sign"}) t.add(std::string("prims.") + op, zeroVjp);
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"})
    t.addNonDifferentiable(std::string("prims.") + op, "a comparison: its output is bool");
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"})
    t.addNonDifferentiable(std::string("prims.") + op, "a bitwise op: its operands are integers or bool");
}

}  // namespace plugsdk::autograd
