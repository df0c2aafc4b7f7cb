// Reference kernels for the binary pointwise ops: operands are cast to the promoted dtype as
// PyTorch's TensorIterator casts them, floats computed in float64, integers exactly with wrapping.
#include <cmath>
#include <functional>
#include <optional>

#include "core/exec/kernels.h"
#include "core/exec/kernels_pointwise_util.h"
#include "core/prims/scalar_ops.h"

namespace plugsdk::exec::pw {

namespace {

using prims::floorDivF;
using prims::floorDivI;
using prims::fmodI;
using prims::maxF;
using prims::minF;
using prims::powI;
using prims::remainderF;
using prims::remainderI;
using prims::truncDivI;

using FloatFn = std::function<double(double, double)>;
/// nullopt reports an integer division by zero.
using IntFn = std::function<std::optional<int64_t>(int64_t, int64_t)>;

struct Fns {
  FloatFn f;
  IntFn i;
};

/// Which dtype the operands are cast to before the function sees them.
enum class Compute {
  kResult,              ///< the output dtype (arithmetic); a Scalar operand is cast to it too
  kResultOpmathScalar,  ///< as kResult, but a zero-dim second operand keeps float32 precision
                        ///< for 16-bit float results (PyTorch's mul and div CPU kernels)
  kCommon,              ///< the promoted dtype of the operands (comparisons, whose output is bool)
  kTruth,               ///< no cast: truthiness of each operand (logical ops)
};

StatusOr<std::vector<HostTensor>> runBinary(const RefKernelContext& c, Compute mode, const Fns& fns) {
  const HostTensor& a = *c.input(0);
  const HostTensor* b = c.input(1);
  const ir::Attribute* scalar = nullptr;
  HostTensor scalarHolder;
  if (!b) {
    for (const char* n : {"other", "exponent"}) {
      const ir::ArgSpec* spec = c.schema().findArg(n);
      if (spec && spec->type == ir::ArgType::kScalar) scalar = &c.attr(n);
    }
    if (!scalar) return internalError(c.schema().name + ": no second operand");
    scalarHolder = scalarTensor(*scalar);
    b = &scalarHolder;
  }
  HostTensor out = c.makeOutput();
  DType compute = out.dtype();
  if (mode == Compute::kCommon)
    compute = scalar ? resultTypeOf({&a}, {scalar}) : resultTypeOf({&a, b}, {});
  else if (mode == Compute::kTruth)
    compute = DType::kF64;
  DType loadB = mode == Compute::kResultOpmathScalar && b->rank() == 0 ? opmathType(compute) : compute;
  const std::array<std::vector<int64_t>, 2> strides{stridesFor(a, out.shape()), stridesFor(*b, out.shape())};
  bool divByZero = false;
  if (ir::isFloating(compute)) {
    if (!fns.f) return internalError(c.schema().name + ": no floating-point kernel");
    forEachStrided<2>(out.shape(), strides, [&](int64_t o, const std::array<int64_t, 2>& off) {
      out.setDouble(o, fns.f(loadFloat(a, off[0], compute), loadFloat(*b, off[1], loadB)));
    });
  } else {
    if (!fns.i) return internalError(c.schema().name + ": no integer kernel");
    forEachStrided<2>(out.shape(), strides, [&](int64_t o, const std::array<int64_t, 2>& off) {
      auto r = fns.i(loadInt(a, off[0], compute), loadInt(*b, off[1], compute));
      if (r)
        out.setInt(o, *r);
      else
        divByZero = true;
    });
  }
  if (divByZero) return c.error("integer division by zero (ZeroDivisionError)");
  std::vector<HostTensor> result;
  result.push_back(std::move(out));
  return result;
}

// --- scalar functions --------------------------------------------------------------------

/// pow with a scalar exponent, with PyTorch's special cases (x*x, sqrt, reciprocal, ...).
double powScalarF(double x, double e) {
  if (e == 2.0) return x * x;
  if (e == 3.0) return x * x * x;
  if (e == 0.5) return std::sqrt(x);
  if (e == -0.5) return 1.0 / std::sqrt(x);
  if (e == -1.0) return 1.0 / x;
  if (e == -2.0) return 1.0 / (x * x);
  return std::pow(x, e);
}

IntFn total(std::function<int64_t(int64_t, int64_t)> f) {
  return [f = std::move(f)](int64_t a, int64_t b) -> std::optional<int64_t> { return f(a, b); };
}

/// a + alpha * b (or its sub / rsub variants), alpha read from the node.
Fns addFns(const RefKernelContext& c, int sign, bool reversed) {
  const ir::Attribute& alphaAttr = c.attr("alpha");
  double af = scalarDouble(alphaAttr);
  if (ir::isFloating(c.outDType())) af = roundToFloatType(af, c.outDType());  // alpha is cast to the result dtype
  int64_t ai = scalarInt(alphaAttr);
  if (c.outDType() == DType::kBool) ai = ai != 0;  // alpha is converted to the result dtype
  if (sign < 0) {
    af = -af;
    ai = wrapNeg(ai);
  }
  if (reversed)  // rsub: other - alpha * self
    return {[af](double x, double y) { return y + af * x; },
            total([ai](int64_t x, int64_t y) { return wrapAdd(y, wrapMul(ai, x)); })};
  return {[af](double x, double y) { return x + af * y; },
          total([ai](int64_t x, int64_t y) { return wrapAdd(x, wrapMul(ai, y)); })};
}

using MakeFns = std::function<Fns(const RefKernelContext&)>;

void addBinary(RefKernelTable& t, const char* name, Compute mode, MakeFns make) {
  t.add(name, [mode, make = std::move(make)](const RefKernelContext& c) { return runBinary(c, mode, make(c)); });
}

void addFixed(RefKernelTable& t, const char* name, Compute mode, FloatFn f, IntFn i) {
  Fns fns{std::move(f), std::move(i)};
  t.add(name, [mode, fns](const RefKernelContext& c) { return runBinary(c, mode, fns); });
}

Fns compareFns(const std::function<bool(double, double)>& f, const std::function<bool(int64_t, int64_t)>& i) {
  return {[f](double x, double y) { return f(x, y) ? 1.0 : 0.0; },
          total([i](int64_t x, int64_t y) -> int64_t { return i(x, y) ? 1 : 0; })};
}

}  // namespace

void registerPointwiseBinaryKernels(RefKernelTable& t) {
  const Compute R = Compute::kResult;
  for (const char* n : {"aten.add.Tensor", "aten.add.Scalar"})
    addBinary(t, n, R, [](const RefKernelContext& c) { return addFns(c, +1, false); });
  for (const char* n : {"aten.sub.Tensor", "aten.sub.Scalar"})
    addBinary(t, n, R, [](const RefKernelContext& c) { return addFns(c, -1, false); });
  addBinary(t, "aten.rsub.Scalar", R, [](const RefKernelContext& c) { return addFns(c, -1, true); });
  const Compute RO = Compute::kResultOpmathScalar;
  for (const char* n : {"aten.mul.Tensor", "aten.mul.Scalar"})
    addFixed(t, n, RO, [](double x, double y) { return x * y; }, total(wrapMul));
  for (const char* n : {"aten.div.Tensor", "aten.div.Scalar"})
    addFixed(t, n, RO, [](double x, double y) { return x / y; }, nullptr);
  addBinary(t, "aten.div.Tensor_mode", RO, [](const RefKernelContext& c) -> Fns {
    if (c.isNone("rounding_mode")) return {[](double x, double y) { return x / y; }, nullptr};
    if (c.getString("rounding_mode") == "trunc")
      return {[](double x, double y) { return std::trunc(x / y); }, truncDivI};
    return {floorDivF, floorDivI};
  });
  addFixed(t, "aten.pow.Tensor_Tensor", R, [](double x, double y) { return std::pow(x, y); }, total(powI));
  addBinary(t, "aten.pow.Tensor_Scalar", R, [](const RefKernelContext& c) -> Fns {
    double e = scalarDouble(c.attr("exponent"));
    if (ir::isFloating(c.outDType())) e = roundToFloatType(e, c.outDType());
    int64_t ei = scalarInt(c.attr("exponent"));
    return {[e](double x, double) { return powScalarF(x, e); },
            total([ei](int64_t x, int64_t) { return powI(x, ei); })};
  });
  addFixed(t, "aten.maximum", R, maxF, total([](int64_t x, int64_t y) { return x < y ? y : x; }));
  addFixed(t, "aten.minimum", R, minF, total([](int64_t x, int64_t y) { return y < x ? y : x; }));
  addFixed(t, "aten.fmod.Tensor", R, [](double x, double y) { return std::fmod(x, y); }, fmodI);
  for (const char* n : {"aten.remainder.Tensor", "aten.remainder.Scalar"}) addFixed(t, n, R, remainderF, remainderI);
  addFixed(t, "aten.atan2", R, [](double x, double y) { return std::atan2(x, y); }, nullptr);
  addFixed(t, "aten.bitwise_and.Tensor", R, nullptr, total([](int64_t x, int64_t y) { return x & y; }));
  addFixed(t, "aten.bitwise_or.Tensor", R, nullptr, total([](int64_t x, int64_t y) { return x | y; }));
  addFixed(t, "aten.bitwise_xor.Tensor", R, nullptr, total([](int64_t x, int64_t y) { return x ^ y; }));
  const Compute T = Compute::kTruth;
  addFixed(t, "aten.logical_and", T, [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; }, nullptr);
  addFixed(t, "aten.logical_or", T, [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; }, nullptr);
  addFixed(t, "aten.logical_xor", T, [](double x, double y) { return ((x != 0) != (y != 0)) ? 1.0 : 0.0; }, nullptr);
  struct Cmp {
    const char* name;
    std::function<bool(double, double)> f;
    std::function<bool(int64_t, int64_t)> i;
  };
  const Cmp cmps[] = {
      {"eq", [](double x, double y) { return x == y; }, [](int64_t x, int64_t y) { return x == y; }},
      {"ne", [](double x, double y) { return x != y; }, [](int64_t x, int64_t y) { return x != y; }},
      {"lt", [](double x, double y) { return x < y; }, [](int64_t x, int64_t y) { return x < y; }},
      {"le", [](double x, double y) { return x <= y; }, [](int64_t x, int64_t y) { return x <= y; }},
      {"gt", [](double x, double y) { return x > y; }, [](int64_t x, int64_t y) { return x > y; }},
      {"ge", [](double x, double y) { return x >= y; }, [](int64_t x, int64_t y) { return x >= y; }},
  };
  for (const Cmp& cmp : cmps) {
    Fns fns = compareFns(cmp.f, cmp.i);
    for (const char* overload : {".Tensor", ".Scalar"})
      addFixed(t, (std::string("aten.") + cmp.name + overload).c_str(), Compute::kCommon, fns.f, fns.i);
  }
}

}  // namespace plugsdk::exec::pw
