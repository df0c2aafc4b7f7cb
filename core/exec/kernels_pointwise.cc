// Reference kernels for the unary pointwise ops, where, clamp, masked_fill, _to_copy, lerp and
// addcmul (float64 / exact integers). Binary ops are in kernels_pointwise_binary.cc.
#include <cmath>
#include <functional>
#include <numbers>

#include "core/exec/kernels.h"
#include "core/exec/kernels_pointwise_util.h"

namespace plugsdk::exec {

namespace {

using pw::loadFloat;
using pw::loadInt;
using Outputs = StatusOr<std::vector<HostTensor>>;
using UnaryF = std::function<double(double)>;
using UnaryI = std::function<int64_t(int64_t)>;

Outputs single(HostTensor t) {
  std::vector<HostTensor> v;
  v.push_back(std::move(t));
  return v;
}

/// Applies f (floating compute) or i (integer compute). The compute dtype is the output dtype
/// when that is floating (integer inputs are cast to it), else the input dtype (predicates).
Outputs runUnary(const RefKernelContext& c, const UnaryF& f, const UnaryI& i) {
  const HostTensor& x = *c.input(0);
  HostTensor out = c.makeOutput();
  DType compute = ir::isFloating(out.dtype()) ? out.dtype() : x.dtype();
  if (ir::isFloating(compute)) {
    if (!f) return internalError(c.schema().name + ": no floating-point kernel");
    for (int64_t k = 0; k < x.numel(); ++k) out.setDouble(k, f(loadFloat(x, k, compute)));
  } else {
    if (!i) return internalError(c.schema().name + ": no integer kernel");
    for (int64_t k = 0; k < x.numel(); ++k) out.setInt(k, i(loadInt(x, k, compute)));
  }
  return single(std::move(out));
}

struct UnaryDef {
  const char* name;
  UnaryF f;
  UnaryI i;
};

double sigmoidF(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double reluF(double x) { return std::isnan(x) ? x : (x < 0 ? 0.0 : x); }
double signF(double x) { return static_cast<double>((0 < x) - (x < 0)); }
int64_t identityI(int64_t x) { return x; }

/// clamp with PyTorch's NaN rules: a NaN input or bound gives NaN; ties keep x.
double clampF(double x, const double* lo, const double* hi) {
  if (std::isnan(x)) return x;
  if (lo) x = std::isnan(*lo) ? *lo : (x < *lo ? *lo : x);
  if (hi) x = std::isnan(*hi) ? *hi : (*hi < x ? *hi : x);
  return x;
}
int64_t clampI(int64_t x, const int64_t* lo, const int64_t* hi) {
  if (lo && x < *lo) x = *lo;
  if (hi && *hi < x) x = *hi;
  return x;
}

const UnaryDef kUnary[] = {
    {"aten.abs", [](double x) { return std::fabs(x); }, [](int64_t x) { return x < 0 ? pw::wrapNeg(x) : x; }},
    {"aten.neg", [](double x) { return -x; }, pw::wrapNeg},
    {"aten.exp", [](double x) { return std::exp(x); }, nullptr},
    {"aten.expm1", [](double x) { return std::expm1(x); }, nullptr},
    {"aten.log", [](double x) { return std::log(x); }, nullptr},
    {"aten.log2", [](double x) { return std::log2(x); }, nullptr},
    {"aten.log10", [](double x) { return std::log10(x); }, nullptr},
    {"aten.log1p", [](double x) { return std::log1p(x); }, nullptr},
    {"aten.sqrt", [](double x) { return std::sqrt(x); }, nullptr},
    {"aten.rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, nullptr},
    {"aten.sin", [](double x) { return std::sin(x); }, nullptr},
    {"aten.cos", [](double x) { return std::cos(x); }, nullptr},
    {"aten.tan", [](double x) { return std::tan(x); }, nullptr},
    {"aten.asin", [](double x) { return std::asin(x); }, nullptr},
    {"aten.acos", [](double x) { return std::acos(x); }, nullptr},
    {"aten.atan", [](double x) { return std::atan(x); }, nullptr},
    {"aten.sinh", [](double x) { return std::sinh(x); }, nullptr},
    {"aten.cosh", [](double x) { return std::cosh(x); }, nullptr},
    {"aten.tanh", [](double x) { return std::tanh(x); }, nullptr},
    {"aten.asinh", [](double x) { return std::asinh(x); }, nullptr},
    {"aten.acosh", [](double x) { return std::acosh(x); }, nullptr},
    {"aten.atanh", [](double x) { return std::atanh(x); }, nullptr},
    {"aten.sigmoid", sigmoidF, nullptr},
    {"aten.erf", [](double x) { return std::erf(x); }, nullptr},
    {"aten.reciprocal", [](double x) { return 1.0 / x; }, nullptr},
    {"aten.floor", [](double x) { return std::floor(x); }, identityI},
    {"aten.ceil", [](double x) { return std::ceil(x); }, identityI},
    {"aten.round", [](double x) { return std::nearbyint(x); }, identityI},  // half to even
    {"aten.trunc", [](double x) { return std::trunc(x); }, identityI},
    {"aten.sign", signF, [](int64_t x) -> int64_t { return (0 < x) - (x < 0); }},
    {"aten.relu", reluF, [](int64_t x) -> int64_t { return x < 0 ? 0 : x; }},
    {"aten.silu", [](double x) { return x / (1.0 + std::exp(-x)); }, nullptr},
    {"aten.logical_not", [](double x) { return x == 0 ? 1.0 : 0.0; }, [](int64_t x) -> int64_t { return x == 0; }},
    {"aten.isnan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }, [](int64_t) -> int64_t { return 0; }},
    {"aten.isinf", [](double x) { return std::isinf(x) ? 1.0 : 0.0; }, [](int64_t) -> int64_t { return 0; }},
};

Outputs geluKernel(const RefKernelContext& c) {
  if (c.getString("approximate") == "tanh") {
    const double kBeta = std::numbers::sqrt2 * (2.0 * std::numbers::inv_sqrtpi) * 0.5, kKappa = 0.044715;
    return runUnary(
        c, [=](double x) { return 0.5 * x * (1.0 + std::tanh(kBeta * (x + kKappa * x * x * x))); }, nullptr);
  }
  return runUnary(c, [](double x) { return x * 0.5 * (1.0 + std::erf(x * (std::numbers::sqrt2 / 2.0))); }, nullptr);
}

Outputs hardtanhKernel(const RefKernelContext& c) {
  DType dt = c.input(0)->dtype();
  double lo = roundToFloatType(pw::scalarDouble(c.attr("min_val")), dt);
  double hi = roundToFloatType(pw::scalarDouble(c.attr("max_val")), dt);
  int64_t loI = wrapToIntType(pw::scalarInt(c.attr("min_val")), dt);
  int64_t hiI = wrapToIntType(pw::scalarInt(c.attr("max_val")), dt);
  return runUnary(c, [=](double x) { return clampF(x, &lo, &hi); }, [=](int64_t x) { return clampI(x, &loI, &hiI); });
}

Outputs leakyReluKernel(const RefKernelContext& c) {
  double slope = pw::scalarDouble(c.attr("negative_slope"));
  return runUnary(c, [slope](double x) { return x > 0 ? x : x * slope; }, nullptr);
}

Outputs bitwiseNotKernel(const RefKernelContext& c) {
  bool isBool = c.input(0)->dtype() == DType::kBool;
  return runUnary(c, nullptr, [isBool](int64_t x) { return isBool ? (x ^ 1) : ~x; });
}

/// Strides of each present input broadcast to the output (absent inputs get zeros).
std::vector<int64_t> stridesOrZero(const HostTensor* t, const std::vector<int64_t>& outShape) {
  return t ? pw::stridesFor(*t, outShape) : std::vector<int64_t>(outShape.size(), 0);
}

Outputs whereKernel(const RefKernelContext& c) {
  const HostTensor &cond = *c.input(0), &a = *c.input(1), &b = *c.input(2);
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  const auto& shape = out.shape();
  std::array<std::vector<int64_t>, 3> strides{pw::stridesFor(cond, shape), pw::stridesFor(a, shape),
                                              pw::stridesFor(b, shape)};
  pw::forEachStrided<3>(shape, strides, [&](int64_t o, const std::array<int64_t, 3>& off) {
    const HostTensor& src = cond.ints()[static_cast<size_t>(off[0])] != 0 ? a : b;
    int64_t at = &src == &a ? off[1] : off[2];
    if (ir::isFloating(dt))
      out.setDouble(o, loadFloat(src, at, dt));
    else
      out.setInt(o, loadInt(src, at, dt));
  });
  return single(std::move(out));
}

Outputs clampKernel(const RefKernelContext& c) {
  DType dt = c.outDType();
  bool hasLo = !c.isNone("min"), hasHi = !c.isNone("max");
  double lo = 0, hi = 0;
  int64_t loI = 0, hiI = 0;
  if (hasLo) {
    lo = roundToFloatType(pw::scalarDouble(c.attr("min")), dt);
    loI = wrapToIntType(pw::scalarInt(c.attr("min")), dt);
  }
  if (hasHi) {
    hi = roundToFloatType(pw::scalarDouble(c.attr("max")), dt);
    hiI = wrapToIntType(pw::scalarInt(c.attr("max")), dt);
  }
  // As in PyTorch: with both bounds a NaN bound gives NaN; a single bound (clamp_min /
  // clamp_max) is a plain comparison, so a NaN bound leaves x unchanged.
  UnaryF f = [&](double x) { return clampF(x, &lo, &hi); };
  if (!hasHi) f = [&](double x) { return x < lo ? lo : x; };
  if (!hasLo) f = [&](double x) { return hi < x ? hi : x; };
  return runUnary(c, f, [&](int64_t x) { return clampI(x, hasLo ? &loI : nullptr, hasHi ? &hiI : nullptr); });
}

Outputs clampTensorKernel(const RefKernelContext& c) {
  const HostTensor* x = c.input(0);
  const HostTensor* lo = c.input(1);
  const HostTensor* hi = c.input(2);
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  const auto& shape = out.shape();
  std::array<std::vector<int64_t>, 3> strides{stridesOrZero(x, shape), stridesOrZero(lo, shape),
                                              stridesOrZero(hi, shape)};
  pw::forEachStrided<3>(shape, strides, [&](int64_t o, const std::array<int64_t, 3>& off) {
    if (ir::isFloating(dt)) {
      double l = lo ? loadFloat(*lo, off[1], dt) : 0, h = hi ? loadFloat(*hi, off[2], dt) : 0;
      out.setDouble(o, clampF(loadFloat(*x, off[0], dt), lo ? &l : nullptr, hi ? &h : nullptr));
    } else {
      int64_t l = lo ? loadInt(*lo, off[1], dt) : 0, h = hi ? loadInt(*hi, off[2], dt) : 0;
      out.setInt(o, clampI(loadInt(*x, off[0], dt), lo ? &l : nullptr, hi ? &h : nullptr));
    }
  });
  return single(std::move(out));
}

Outputs maskedFillKernel(const RefKernelContext& c) {
  const HostTensor &x = *c.input(0), &mask = *c.input(1);
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  const ir::Attribute& value = c.attr("value");
  HostTensor fill(dt, {});  // the value cast to self's dtype
  if (ir::isFloating(dt))
    fill.setDouble(0, roundToFloatType(pw::scalarDouble(value), dt));
  else if (value.kind() == ir::Attribute::Kind::kFloat)
    fill.setInt(0, pw::floatToInt(pw::scalarDouble(value), dt));
  else
    fill.setInt(0, pw::scalarInt(value));
  const auto& shape = out.shape();
  std::array<std::vector<int64_t>, 2> strides{pw::stridesFor(x, shape), pw::stridesFor(mask, shape)};
  pw::forEachStrided<2>(shape, strides, [&](int64_t o, const std::array<int64_t, 2>& off) {
    bool m = mask.ints()[static_cast<size_t>(off[1])] != 0;
    if (ir::isFloating(dt))
      out.setDouble(o, m ? fill.doubles()[0] : x.doubles()[static_cast<size_t>(off[0])]);
    else
      out.setInt(o, m ? fill.ints()[0] : x.ints()[static_cast<size_t>(off[0])]);
  });
  return single(std::move(out));
}

Outputs toCopyKernel(const RefKernelContext& c) {
  const HostTensor& x = *c.input(0);
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (ir::isFloating(dt))
      out.setDouble(k, loadFloat(x, k, dt));
    else
      out.setInt(k, loadInt(x, k, dt));
  }
  return single(std::move(out));
}

Outputs lerpKernel(const RefKernelContext& c) {
  const HostTensor &a = *c.input(0), &b = *c.input(1);
  HostTensor out = c.makeOutput();
  double w = roundToFloatType(pw::scalarDouble(c.attr("weight")), pw::opmathType(out.dtype()));
  const auto& shape = out.shape();
  std::array<std::vector<int64_t>, 2> strides{pw::stridesFor(a, shape), pw::stridesFor(b, shape)};
  pw::forEachStrided<2>(shape, strides, [&](int64_t o, const std::array<int64_t, 2>& off) {
    double x = a.doubles()[static_cast<size_t>(off[0])], y = b.doubles()[static_cast<size_t>(off[1])];
    double diff = y - x;
    out.setDouble(o, std::fabs(w) < 0.5 ? x + w * diff : y - diff * (1.0 - w));
  });
  return single(std::move(out));
}

Outputs addcmulKernel(const RefKernelContext& c) {
  const HostTensor &x = *c.input(0), &t1 = *c.input(1), &t2 = *c.input(2);
  HostTensor out = c.makeOutput();
  DType dt = out.dtype();
  double v = roundToFloatType(pw::scalarDouble(c.attr("value")), pw::opmathType(dt));
  int64_t vi = pw::scalarInt(c.attr("value"));
  const auto& shape = out.shape();
  std::array<std::vector<int64_t>, 3> strides{pw::stridesFor(x, shape), pw::stridesFor(t1, shape),
                                              pw::stridesFor(t2, shape)};
  pw::forEachStrided<3>(shape, strides, [&](int64_t o, const std::array<int64_t, 3>& off) {
    if (ir::isFloating(dt)) {
      out.setDouble(o, loadFloat(x, off[0], dt) + v * loadFloat(t1, off[1], dt) * loadFloat(t2, off[2], dt));
    } else {
      int64_t prod = pw::wrapMul(pw::wrapMul(vi, loadInt(t1, off[1], dt)), loadInt(t2, off[2], dt));
      out.setInt(o, pw::wrapAdd(loadInt(x, off[0], dt), prod));
    }
  });
  return single(std::move(out));
}

}  // namespace

void registerPointwiseKernels(RefKernelTable& t) {
  for (const UnaryDef& u : kUnary) {
    UnaryF f = u.f;
    UnaryI i = u.i;
    t.add(u.name, [f, i](const RefKernelContext& c) { return runUnary(c, f, i); });
  }
  t.add("aten.gelu", geluKernel);
  t.add("aten.hardtanh", hardtanhKernel);
  t.add("aten.leaky_relu", leakyReluKernel);
  t.add("aten.bitwise_not", bitwiseNotKernel);
  t.add("aten.where.self", whereKernel);
  t.add("aten.clamp", clampKernel);
  t.add("aten.clamp.Tensor", clampTensorKernel);
  t.add("aten.masked_fill.Scalar", maskedFillKernel);
  t.add("aten._to_copy", toCopyKernel);
  t.add("aten.lerp.Scalar", lerpKernel);
  t.add("aten.addcmul", addcmulKernel);
  pw::registerPointwiseBinaryKernels(t);
}

}  // namespace plugsdk::exec
