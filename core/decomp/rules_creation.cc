// Decompositions of the ATen-level creation ops into prims: the constant fills are one
// prims.full of the inferred type (empty* gives zeros, as the reference); arange is an iota,
// converted and scaled for floating outputs; linspace follows the reference kernel's
// two-sided formula (from start below the halfway point, from end above it).
#include <cmath>
#include <functional>
#include <optional>

#include "core/decomp/rules_util.h"
#include "core/exec/host_tensor.h"

namespace plugsdk::decomp {

using namespace rules;

namespace {

/// A Scalar attribute as a double (bool as 0 / 1).
double scalarDouble(const Attribute& a) {
  if (auto b = a.asBool()) return *b ? 1.0 : 0.0;
  return a.asDouble().value_or(0.0);
}

/// A fill of the inferred type with `value`.
Rule fill(std::function<Attribute(const DecompCall&)> value) {
  return [value = std::move(value)](Emitter& e, const DecompCall& c) -> Result {
    Attribute v = value(c);
    if (v.kind() == Attribute::Kind::kSym && !v.asInt())
      return e.decline("a symbolic fill value (prims.full takes constants)");
    return one(e, e.full(c.outType().shape, v, c.outType().dtype));
  };
}

Rule fillConst(int64_t value) {
  return fill([value](const DecompCall&) { return Attribute::fromInt(value); });
}

Rule fillAttr(const std::string& name) {
  return fill([name](const DecompCall& c) { return c.attr(name); });
}

const Attribute& argOr(const DecompCall& c, const char* name, const Attribute& dflt) {
  return c.def().schema.findArg(name) ? c.attr(name) : dflt;
}

/// arange: integer outputs are iota(start, step) in the output dtype (bounds truncated to
/// int64 first, values wrapping); integer bounds give the same exact iota converted to a
/// floating dtype; floating bounds compute start + step * i in the accumulate type (f64, or
/// f32 for f16 / bf16) as the reference kernel, then round to the output dtype.
Result arange(Emitter& e, const DecompCall& c) {
  static const Attribute kZero = Attribute::fromInt(0), kOne = Attribute::fromInt(1);
  const Attribute& start = argOr(c, "start", kZero);
  const Attribute& step = argOr(c, "step", kOne);
  const DType dt = c.outType().dtype;
  const SymExpr n = c.outType().shape[0];
  auto asInt = [](const Attribute& a) -> std::optional<int64_t> {
    if (auto b = a.asBool()) return *b ? 1 : 0;
    return a.asInt();
  };
  auto truncated = [&](const Attribute& a) -> std::optional<int64_t> {
    if (auto i = asInt(a)) return i;
    double v = a.asDouble().value_or(0.0);
    if (!(std::fabs(v) < 9.2e18)) return std::nullopt;
    return static_cast<int64_t>(v);
  };
  auto iota = [&](int64_t s, int64_t st, DType t) {
    return e.op("prims.iota", {},
                {{"length", Attribute::fromSym(n)},
                 {"start", Attribute::fromInt(s)},
                 {"step", Attribute::fromInt(st)},
                 {"dtype", Attribute::fromDType(t)}});
  };
  if (!ir::isFloating(dt)) {
    auto s = truncated(start), st = truncated(step);
    if (!s || !st) return e.decline("arange bounds out of the int64 range");
    return one(e, iota(*s, *st, dt));
  }
  auto s = asInt(start), st = asInt(step);
  // Integer bounds: exact integers, rounded once (below 2^53 the reference's float
  // arithmetic is exact too).
  if (s && st && std::fabs(static_cast<double>(*s)) < 0x1p52 && std::fabs(static_cast<double>(*st)) < 0x1p20)
    return one(e, e.convert(iota(*s, *st, DType::kI64), dt));
  const DType acc = opmath(dt) == DType::kF32 && dt != DType::kF32 ? DType::kF32 : DType::kF64;
  const double sd = scalarDouble(start), std_ = scalarDouble(step);
  V v = e.convert(e.iota(n), acc);
  if (std_ != 1.0) v = e.mul(e.scalar(std_, acc), v);
  if (sd != 0.0) v = e.add(e.scalar(sd, acc), v);
  return one(e, e.convert(v, dt));
}

/// linspace as the reference kernel: step = (end - start) / (steps - 1); element i is
/// start + step * i below steps / 2 and end - step * (steps - 1 - i) from there. Floating
/// outputs compute in their opmath dtype; integral ones take start and end converted to the
/// dtype and compute in f64, truncating at the end.
Result linspace(Emitter& e, const DecompCall& c) {
  const DType dt = c.outType().dtype;
  const int64_t steps = c.getInt("steps");
  if (steps <= 1) return one(e, e.full(c.outType().shape, steps == 0 ? Attribute::fromInt(0) : c.attr("start"), dt));
  const bool fp = ir::isFloating(dt);
  const DType ct = fp ? opmath(dt) : DType::kF64;
  // start and end as the reference reads them: floats as given, integers wrapped to dt.
  auto bound = [&](const Attribute& a) {
    if (fp) return scalarDouble(a);
    const int64_t i = a.asInt() ? *a.asInt() : exec::doubleToIntType(scalarDouble(a), DType::kI64);
    return static_cast<double>(exec::wrapToIntType(i, dt));
  };
  const double s = bound(c.attr("start")), en = bound(c.attr("end"));
  V step = e.scalar((en - s) / static_cast<double>(steps - 1), ct);
  V i = e.iota(SymExpr(steps));
  V rev = e.op("prims.iota", {},
               {{"length", Attribute::fromInt(steps)},
                {"start", Attribute::fromInt(steps - 1)},
                {"step", Attribute::fromInt(-1)},
                {"dtype", Attribute::fromDType(DType::kI64)}});
  V lo = e.add(e.scalar(s, ct), e.mul(step, e.convert(i, ct)));
  V hi = e.sub(e.scalar(en, ct), e.mul(step, e.convert(rev, ct)));
  const int64_t mid = steps / 2;  // the midpoint index where the reference switches formulas
  V v = e.where(e.binary("lt", i, e.scalar(static_cast<double>(mid), DType::kI64)), lo, hi);
  return one(e, e.convert(v, dt));
}

}  // namespace

void addCreationRules(DecompTable& t) {
  for (const char* op : {"aten.zeros", "aten.empty.memory_format", "aten.zeros_like", "aten.empty_like",
                         "aten.new_zeros", "aten.new_empty"})
    t.add(op, fillConst(0));
  for (const char* op : {"aten.ones", "aten.ones_like", "aten.new_ones"}) t.add(op, fillConst(1));
  for (const char* op : {"aten.full", "aten.full_like", "aten.new_full"}) t.add(op, fillAttr("fill_value"));
  t.add("aten.scalar_tensor", fillAttr("s"));
  for (const char* op : {"aten.arange", "aten.arange.start", "aten.arange.start_step"}) t.add(op, arange);
  t.add("aten.linspace", linspace);
}

}  // namespace plugsdk::decomp
