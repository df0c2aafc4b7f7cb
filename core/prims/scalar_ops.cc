// The scalar op table and its reference evaluation (see scalar_ops.h).
#include "core/prims/scalar_ops.h"

#include <cmath>

#include "core/exec/host_tensor.h"

namespace plugsdk::prims {

namespace {

using O = Operands;
using S = ScalarOp;

const std::vector<ScalarOpInfo> kOps = {
    {S::kAbs, "abs", 1, O::kNumeric, false, "|a|; integers wrap (abs(INT_MIN) = INT_MIN); NaN stays NaN"},
    {S::kNeg, "neg", 1, O::kNumeric, false, "-a; integers wrap"},
    {S::kSign, "sign", 1, O::kNumeric, false, "-1, 0 or 1 (0 for -0.0 and for NaN, as PyTorch)"},
    {S::kFloor, "floor", 1, O::kNumeric, false, "round toward -inf; identity on integers"},
    {S::kCeil, "ceil", 1, O::kNumeric, false, "round toward +inf; identity on integers"},
    {S::kRound, "round", 1, O::kNumeric, false, "round half to even; identity on integers"},
    {S::kTrunc, "trunc", 1, O::kNumeric, false, "round toward zero; identity on integers"},
    {S::kBitwiseNot, "bitwise_not", 1, O::kIntegral, false, "~a; logical not on bool"},
    {S::kExp, "exp", 1, O::kFloating, false, "e^a"},
    {S::kExpm1, "expm1", 1, O::kFloating, false, "e^a - 1, accurate near 0"},
    {S::kLog, "log", 1, O::kFloating, false, "natural log; log(0) = -inf, log(a < 0) = NaN"},
    {S::kLog1p, "log1p", 1, O::kFloating, false, "log(1 + a), accurate near 0"},
    {S::kLog2, "log2", 1, O::kFloating, false, "base-2 log"},
    {S::kSqrt, "sqrt", 1, O::kFloating, false, "square root; sqrt(-0.0) = -0.0, sqrt(a < 0) = NaN"},
    {S::kRsqrt, "rsqrt", 1, O::kFloating, false, "1 / sqrt(a); rsqrt(0) = inf"},
    {S::kSin, "sin", 1, O::kFloating, false, "sine"},
    {S::kCos, "cos", 1, O::kFloating, false, "cosine"},
    {S::kTan, "tan", 1, O::kFloating, false, "tangent"},
    {S::kAsin, "asin", 1, O::kFloating, false, "arc sine; NaN outside [-1, 1]"},
    {S::kAcos, "acos", 1, O::kFloating, false, "arc cosine; NaN outside [-1, 1]"},
    {S::kAtan, "atan", 1, O::kFloating, false, "arc tangent"},
    {S::kSinh, "sinh", 1, O::kFloating, false, "hyperbolic sine"},
    {S::kCosh, "cosh", 1, O::kFloating, false, "hyperbolic cosine"},
    {S::kTanh, "tanh", 1, O::kFloating, false, "hyperbolic tangent"},
    {S::kAsinh, "asinh", 1, O::kFloating, false, "inverse hyperbolic sine"},
    {S::kAcosh, "acosh", 1, O::kFloating, false, "inverse hyperbolic cosine; NaN below 1"},
    {S::kAtanh, "atanh", 1, O::kFloating, false, "inverse hyperbolic tangent; +-inf at +-1"},
    {S::kErf, "erf", 1, O::kFloating, false, "error function"},
    {S::kAdd, "add", 2, O::kNumeric, false, "a + b; integers wrap"},
    {S::kSub, "sub", 2, O::kNumeric, false, "a - b; integers wrap"},
    {S::kMul, "mul", 2, O::kNumeric, false, "a * b; integers wrap"},
    {S::kDiv, "div", 2, O::kNumeric, false,
     "floats: IEEE a / b; integers: truncated toward zero (C), INT_MIN / -1 wraps, division by zero is an error"},
    {S::kRemainder, "remainder", 2, O::kNumeric, false,
     "fmod(a, b), plus b when nonzero and of the other sign: the result takes the divisor's sign (Python %, PyTorch; "
     "-1 % inf = inf); integer b = 0 is an error"},
    {S::kFmod, "fmod", 2, O::kNumeric, false,
     "C fmod: the result takes the dividend's sign; integer b = 0 is an error"},
    {S::kPow, "pow", 2, O::kNumeric, false,
     "a^b; integers by repeated squaring with wrapping, negative exponents give 0 unless |a| = 1"},
    {S::kAtan2, "atan2", 2, O::kFloating, false, "atan2(a, b), the angle of (b, a)"},
    {S::kMaximum, "maximum", 2, O::kAny, false, "larger of a and b; NaN if either is NaN"},
    {S::kMinimum, "minimum", 2, O::kAny, false, "smaller of a and b; NaN if either is NaN"},
    {S::kBitwiseAnd, "bitwise_and", 2, O::kIntegral, false, "a & b (logical and on bool)"},
    {S::kBitwiseOr, "bitwise_or", 2, O::kIntegral, false, "a | b (logical or on bool)"},
    {S::kBitwiseXor, "bitwise_xor", 2, O::kIntegral, false, "a ^ b (logical xor on bool)"},
    {S::kEq, "eq", 2, O::kAny, true, "a == b (false if either is NaN)"},
    {S::kNe, "ne", 2, O::kAny, true, "a != b (true if either is NaN)"},
    {S::kLt, "lt", 2, O::kAny, true, "a < b (false if either is NaN)"},
    {S::kLe, "le", 2, O::kAny, true, "a <= b (false if either is NaN)"},
    {S::kGt, "gt", 2, O::kAny, true, "a > b (false if either is NaN)"},
    {S::kGe, "ge", 2, O::kAny, true, "a >= b (false if either is NaN)"},
};

double signF(double x) { return static_cast<double>((0 < x) - (x < 0)); }  // NaN -> 0, as PyTorch

}  // namespace

const std::vector<ScalarOpInfo>& allScalarOps() { return kOps; }

const ScalarOpInfo& scalarOpInfo(ScalarOp op) { return kOps[static_cast<size_t>(op)]; }

std::optional<ScalarOp> scalarOpByName(std::string_view name) {
  for (const ScalarOpInfo& i : kOps)
    if (name == i.name) return i.op;
  return std::nullopt;
}

bool acceptsDType(const ScalarOpInfo& info, ir::DType dtype) {
  switch (info.operands) {
    case Operands::kNumeric: return dtype != ir::DType::kBool;
    case Operands::kAny: return true;
    case Operands::kIntegral: return ir::isIntegral(dtype, /*includeBool=*/true);
    case Operands::kFloating: return ir::isFloating(dtype);
  }
  return false;
}

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

double floorDivF(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1.0;
  return fl;
}

std::optional<int64_t> truncDivI(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return wrapNeg(a);  // INT64_MIN / -1 wraps
  return a / b;
}

std::optional<int64_t> floorDivI(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return wrapNeg(a);
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

double remainderF(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

std::optional<int64_t> remainderI(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::optional<int64_t> fmodI(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  return a % b;
}

int64_t powI(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  int64_t result = 1;
  while (exp) {
    if (exp & 1) result = wrapMul(result, base);
    exp >>= 1;
    base = wrapMul(base, base);
  }
  return result;
}

double maxF(double a, double b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? b : a); }
double minF(double a, double b) { return std::isnan(a) ? a : std::isnan(b) ? b : (b < a ? b : a); }

double evalFloat(ScalarOp op, double a, double b) {
  switch (op) {
    case S::kAbs: return std::fabs(a);
    case S::kNeg: return -a;
    case S::kSign: return signF(a);
    case S::kFloor: return std::floor(a);
    case S::kCeil: return std::ceil(a);
    case S::kRound: return std::nearbyint(a);  // half to even in the default rounding mode
    case S::kTrunc: return std::trunc(a);
    case S::kBitwiseNot: return a == 0 ? 1.0 : 0.0;
    case S::kExp: return std::exp(a);
    case S::kExpm1: return std::expm1(a);
    case S::kLog: return std::log(a);
    case S::kLog1p: return std::log1p(a);
    case S::kLog2: return std::log2(a);
    case S::kSqrt: return std::sqrt(a);
    case S::kRsqrt: return 1.0 / std::sqrt(a);
    case S::kSin: return std::sin(a);
    case S::kCos: return std::cos(a);
    case S::kTan: return std::tan(a);
    case S::kAsin: return std::asin(a);
    case S::kAcos: return std::acos(a);
    case S::kAtan: return std::atan(a);
    case S::kSinh: return std::sinh(a);
    case S::kCosh: return std::cosh(a);
    case S::kTanh: return std::tanh(a);
    case S::kAsinh: return std::asinh(a);
    case S::kAcosh: return std::acosh(a);
    case S::kAtanh: return std::atanh(a);
    case S::kErf: return std::erf(a);
    case S::kAdd: return a + b;
    case S::kSub: return a - b;
    case S::kMul: return a * b;
    case S::kDiv: return a / b;
    case S::kRemainder: return remainderF(a, b);
    case S::kFmod: return std::fmod(a, b);
    case S::kPow: return std::pow(a, b);
    case S::kAtan2: return std::atan2(a, b);
    case S::kMaximum: return maxF(a, b);
    case S::kMinimum: return minF(a, b);
    case S::kBitwiseAnd: return (a != 0 && b != 0) ? 1.0 : 0.0;
    case S::kBitwiseOr: return (a != 0 || b != 0) ? 1.0 : 0.0;
    case S::kBitwiseXor: return ((a != 0) != (b != 0)) ? 1.0 : 0.0;
    case S::kEq: return a == b ? 1.0 : 0.0;
    case S::kNe: return a != b ? 1.0 : 0.0;
    case S::kLt: return a < b ? 1.0 : 0.0;
    case S::kLe: return a <= b ? 1.0 : 0.0;
    case S::kGt: return a > b ? 1.0 : 0.0;
    case S::kGe: return a >= b ? 1.0 : 0.0;
  }
  return std::nan("");
}

std::optional<int64_t> evalInt(ScalarOp op, int64_t a, int64_t b, ir::DType dtype) {
  std::optional<int64_t> r;
  switch (op) {
    case S::kAbs: r = a < 0 ? wrapNeg(a) : a; break;
    case S::kNeg: r = wrapNeg(a); break;
    case S::kSign: r = (0 < a) - (a < 0); break;
    case S::kFloor:
    case S::kCeil:
    case S::kRound:
    case S::kTrunc: r = a; break;
    case S::kBitwiseNot: r = dtype == ir::DType::kBool ? (a == 0 ? 1 : 0) : ~a; break;
    case S::kAdd: r = wrapAdd(a, b); break;
    case S::kSub: r = wrapSub(a, b); break;
    case S::kMul: r = wrapMul(a, b); break;
    case S::kDiv: r = truncDivI(a, b); break;
    case S::kRemainder: r = remainderI(a, b); break;
    case S::kFmod: r = fmodI(a, b); break;
    case S::kPow: r = powI(a, b); break;
    case S::kMaximum: r = a < b ? b : a; break;
    case S::kMinimum: r = b < a ? b : a; break;
    case S::kBitwiseAnd: r = a & b; break;
    case S::kBitwiseOr: r = a | b; break;
    case S::kBitwiseXor: r = a ^ b; break;
    case S::kEq: return a == b ? 1 : 0;
    case S::kNe: return a != b ? 1 : 0;
    case S::kLt: return a < b ? 1 : 0;
    case S::kLe: return a <= b ? 1 : 0;
    case S::kGt: return a > b ? 1 : 0;
    case S::kGe: return a >= b ? 1 : 0;
    default: return static_cast<int64_t>(evalFloat(op, static_cast<double>(a), static_cast<double>(b)));
  }
  if (!r) return r;
  return exec::wrapToIntType(*r, dtype);
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double uniformAt(int64_t seed, int64_t counter, int bits) {
  const uint64_t key = splitmix64(static_cast<uint64_t>(seed));
  return std::ldexp(static_cast<double>(splitmix64(key + static_cast<uint64_t>(counter)) >> (64 - bits)), -bits);
}

int precisionBits(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF16: return 11;
    case ir::DType::kBF16: return 8;
    case ir::DType::kF32: return 24;
    default: return 53;
  }
}

}  // namespace plugsdk::prims
