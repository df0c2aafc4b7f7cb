// The op tier's shared machinery (see op_common.h): data fills with special values, the
// tolerance rules, running one case, and addOpCases, which registers every family.
#include "conformance/runner/op_common.h"

#include <cmath>
#include <limits>

#include "core/exec/reference_executor.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace op {
namespace {

struct Format {
  int mantissa, minExp, maxExp;
};

Format formatOf(DType t) {
  switch (t) {
    case DType::kF16: return {10, -14, 15};
    case DType::kBF16: return {7, -126, 127};
    case DType::kF32: return {23, -126, 127};
    default: return {52, -1022, 1023};
  }
}

std::vector<int64_t> intSpecials(DType t) {
  if (t == DType::kBool) return {0, 1};
  if (t == DType::kU8) return {0, 1, 2, 127, 128, 254, 255};
  if (t == DType::kI64)
    return {std::numeric_limits<int64_t>::min(),     std::numeric_limits<int64_t>::min() + 1, -2, -1, 0, 1, 2,
            std::numeric_limits<int64_t>::max() - 1, std::numeric_limits<int64_t>::max()};
  const int bits = ir::dtypeSize(t) * 8;
  const int64_t mx = (int64_t{1} << (bits - 1)) - 1, mn = -mx - 1;
  return {mn, mn + 1, -2, -1, 0, 1, 2, mx - 1, mx};
}

/// The integer range of a dtype, for full-range draws.
std::pair<int64_t, int64_t> intRange(DType t) {
  if (t == DType::kBool) return {0, 1};
  if (t == DType::kU8) return {0, 255};
  if (t == DType::kI64) return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  const int bits = ir::dtypeSize(t) * 8;
  const int64_t mx = (int64_t{1} << (bits - 1)) - 1;
  return {-mx - 1, mx};
}

int64_t drawInt(DType t, const Fill& f, std::mt19937_64& rng) {
  if (f.lo > f.hi) {  // the dtype's whole range
    if (t == DType::kI64) return static_cast<int64_t>(rng());
    const auto [lo, hi] = intRange(t);
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  }
  const auto lo = static_cast<int64_t>(f.lo), hi = static_cast<int64_t>(f.hi);
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

double drawFloat(const Fill& f, std::mt19937_64& rng) {
  switch (f.random) {
    case Fill::Random::kNormal: return std::normal_distribution<double>(0, f.hi)(rng);
    case Fill::Random::kUniform: return std::uniform_real_distribution<double>(f.lo, f.hi)(rng);
    case Fill::Random::kLogUniform:
      return std::exp(std::uniform_real_distribution<double>(std::log(f.lo), std::log(f.hi))(rng));
    case Fill::Random::kInt: return static_cast<double>(drawInt(DType::kI64, f, rng));
    case Fill::Random::kBool: return static_cast<double>(rng() & 1);
  }
  return 0;
}

/// Index of the special value element i takes, or -1 for a random one.
int64_t specialIndex(const Fill& f, int64_t i, int64_t count, std::mt19937_64& rng) {
  switch (f.specials) {
    case Fill::Specials::kNone: return -1;
    case Fill::Specials::kRow:
      if (i < count * count) return i / count;
      break;
    case Fill::Specials::kCol:
      if (i < count * count) return i % count;
      break;
    case Fill::Specials::kMixed:
      if (i < count) return i;
      break;
    case Fill::Specials::kSprinkled: break;
  }
  // beyond the laid-out block, one element in f.sprinkle is a special value at random
  if (f.sprinkle <= 0) return -1;
  return rng() % static_cast<uint64_t>(f.sprinkle) == 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(count))
                                                        : -1;
}

}  // namespace

std::vector<double> specialValues(DType t, const Fill& f) {
  const Format fm = formatOf(t);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double minNormal = std::ldexp(1.0, fm.minExp), minDenormal = std::ldexp(1.0, fm.minExp - fm.mantissa);
  const double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -fm.mantissa), fm.maxExp);
  const double half = std::ldexp(1.0, fm.mantissa - 1);  // from here on the spacing is 1: x.5 are ties
  const std::vector<double> all = {
      nan,
      inf,
      -inf,
      0.0,
      -0.0,
      1.0,
      -1.0,
      0.5,
      -0.5,
      1.5,
      2.5,
      -2.5,
      -7.25,
      1.0 + std::ldexp(1.0, -fm.mantissa),      // the successor of 1
      0.5 - std::ldexp(1.0, -fm.mantissa - 2),  // the largest value below 0.5 (round must not give 1)
      half + 0.5,
      -(half + 1.5),  // the largest non-integers: ties for round
      minDenormal,
      -minDenormal,
      3 * minDenormal,
      minNormal - minDenormal,  // denormals
      minNormal,
      -minNormal,
      maxFinite,
      -maxFinite,
      std::ldexp(1.0, fm.maxExp - 1) * 1.5};
  std::vector<double> out;
  for (double v : all) {
    if (f.noHuge && std::isfinite(v) && std::fabs(v) > 1e4) continue;
    if (f.noNegZero && v == 0 && std::signbit(v)) continue;
    out.push_back(v);
  }
  return out;
}

exec::HostTensor makeTensor(DType dtype, const std::vector<int64_t>& shape, const Fill& fill, std::mt19937_64& rng) {
  exec::HostTensor t(dtype, shape);
  if (ir::isFloating(dtype)) {
    const std::vector<double> s = specialValues(dtype, fill);
    const auto n = static_cast<int64_t>(s.size());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t k = specialIndex(fill, i, n, rng);
      t.setDouble(i, exec::roundToFloatType(k >= 0 ? s[static_cast<size_t>(k)] : drawFloat(fill, rng), dtype));
    }
    return t;
  }
  const std::vector<int64_t> s = intSpecials(dtype);
  const auto n = static_cast<int64_t>(s.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t k = specialIndex(fill, i, n, rng);
    int64_t v = 0;
    if (k >= 0)
      v = s[static_cast<size_t>(k)];
    else if (fill.random == Fill::Random::kInt)
      v = drawInt(dtype, fill, rng);
    else if (dtype == DType::kBool || fill.random == Fill::Random::kBool)
      v = static_cast<int64_t>(rng() & 1);
    else
      v = static_cast<int64_t>(std::llround(drawFloat(fill, rng)));
    v = exec::wrapToIntType(v, dtype);
    if (fill.nonZero && v == 0) v = 1;
    t.setInt(i, v);
  }
  return t;
}

double unitRoundoff(DType t) { return std::ldexp(1.0, -formatOf(t).mantissa - 1); }

double ulpBudget(DType t) { return t == DType::kF16 || t == DType::kBF16 ? 1 : 4; }

ToleranceRule exact() {
  return [](const CaseData&) -> StatusOr<std::vector<Tolerance>> { return std::vector<Tolerance>{Tolerance::exact()}; };
}

ToleranceRule ulps() {
  return [](const CaseData& d) -> StatusOr<std::vector<Tolerance>> {
    std::vector<Tolerance> out;
    for (const ir::Value* v : d.graph.outputs()) {
      const DType t = v->type().dtype;
      out.push_back(ir::isFloating(t) ? Tolerance::inUlps(ulpBudget(t)) : Tolerance::exact());
    }
    return out;
  };
}

ToleranceRule absBound(double k, const std::vector<bool>& absInputs) {
  return [k, absInputs](const CaseData& d) -> StatusOr<std::vector<Tolerance>> {
    std::vector<exec::HostTensor> in = d.inputs;
    for (size_t i = 0; i < in.size(); ++i)
      if ((absInputs.empty() || absInputs.at(i)) && in[i].isFloating())
        for (double& v : in[i].doubles()) v = std::fabs(v);
    ASSIGN_OR_RETURN(std::vector<exec::HostTensor> ref, exec::ReferenceExecutor(d.ctx).run(d.graph, in));
    std::vector<Tolerance> out;
    for (const exec::HostTensor& r : ref) {
      Tolerance tol;
      if (r.isFloating()) {
        const double u = unitRoundoff(r.dtype());
        for (int64_t i = 0; i < r.numel(); ++i) tol.bound.push_back(k * u * std::fabs(r.getDouble(i)));
      }
      out.push_back(std::move(tol));
    }
    return out;
  };
}

ToleranceRule relative(double s) {
  return [s](const CaseData&) -> StatusOr<std::vector<Tolerance>> {
    return std::vector<Tolerance>{Tolerance::relativeToMax(s)};
  };
}

Outcome runOpCase(const CaseContext& c, const OpSpec& spec) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, spec.text);
  if (!g.isOk())
    return Outcome::fail("the case's graph does not parse (a defect of the case): " + g.status().toString());
  if (auto t = unclaimedDtype(c.device.caps(), *g))
    return Outcome::skip("the device does not claim " + std::string(ir::dtypeName(*t)));
  if (spec.fills.size() != g->inputs().size()) return Outcome::fail("the case has a fill per input missing (a defect)");
  std::mt19937_64 rng(c.seed);
  const auto shapes = concreteShapes(*g, {});
  std::vector<exec::HostTensor> inputs;
  for (size_t i = 0; i < shapes.size(); ++i)
    inputs.push_back(makeTensor(g->inputs()[i]->type().dtype, shapes[i], spec.fills[i], rng));
  if (spec.adjust) spec.adjust(inputs, rng);
  auto tol = spec.tolerance(CaseData{ctx, *g, inputs});
  if (!tol.isOk()) return Outcome::fail("the tolerance rule failed: " + tol.status().toString());
  return checkGraph(c, ctx, *g, inputs, *tol);
}

void addCase(Suite& s, const std::string& name, OpSpec spec) {
  s.add("op", "op." + name, [spec = std::move(spec)](const CaseContext& c) { return runOpCase(c, spec); });
}

std::string dt(DType t) { return std::string(ir::dtypeName(t)); }

std::string listText(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string typeText(DType t, const std::vector<int64_t>& shape) { return dt(t) + listText(shape); }

std::string graphText(const std::vector<std::pair<std::string, std::string>>& inputs,
                      const std::vector<std::string>& body, const std::string& results) {
  std::string out = "graph @op(";
  for (size_t i = 0; i < inputs.size(); ++i) out += (i ? ", %" : "%") + inputs[i].first + ": " + inputs[i].second;
  out += ") {\n";
  for (const std::string& line : body) out += "  " + line + "\n";
  return out + "  return " + results + "\n}\n";
}

}  // namespace op

void addOpCases(Suite& s) {
  op::addElementwiseCases(s);
  op::addConvertCases(s);
  op::addStructureCases(s);
  op::addReductionCases(s);
  op::addLibraryCases(s);
}

}  // namespace plugsdk::conformance
