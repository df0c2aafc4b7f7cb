// Elementwise ops, casts and rand with the kernel IR's semantics (docs/kernel-ir.md,
// core/prims/scalar_ops.h), mirroring backends/llvm_lowering/lower_ops.cc: IEEE floats with
// NaN-propagating maximum/minimum, wrapping integers, truncating integer division that
// reports a division by zero, PyTorch's float->int rules. Transcendentals are OpenCL.std
// extended instructions (the consumer's libm). f16 and bf16 live in f32 and are rounded to
// their dtype after each op, as the reference rounds at stores.
#include <cmath>

#include "backends/level_zero/spirv/lowering.h"
#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/frame.h"

namespace plugsdk::level_zero::spirv {

using lowering::isFloatDtype;
using lowering::isUnsignedDtype;

namespace {

std::optional<spv::OpenCLStd> mathFn(uint32_t op) {
  using F = spv::OpenCLStd;
  switch (op) {
    case PLUGSDK_OP_EXP: return F::exp;
    case PLUGSDK_OP_EXPM1: return F::expm1;
    case PLUGSDK_OP_LOG: return F::log;
    case PLUGSDK_OP_LOG1P: return F::log1p;
    case PLUGSDK_OP_LOG2: return F::log2;
    case PLUGSDK_OP_SIN: return F::sin;
    case PLUGSDK_OP_COS: return F::cos;
    case PLUGSDK_OP_TAN: return F::tan;
    case PLUGSDK_OP_ASIN: return F::asin;
    case PLUGSDK_OP_ACOS: return F::acos;
    case PLUGSDK_OP_ATAN: return F::atan;
    case PLUGSDK_OP_SINH: return F::sinh;
    case PLUGSDK_OP_COSH: return F::cosh;
    case PLUGSDK_OP_TANH: return F::tanh;
    case PLUGSDK_OP_ASINH: return F::asinh;
    case PLUGSDK_OP_ACOSH: return F::acosh;
    case PLUGSDK_OP_ATANH: return F::atanh;
    case PLUGSDK_OP_ERF: return F::erf;
    case PLUGSDK_OP_POW: return F::pow;
    case PLUGSDK_OP_ATAN2: return F::atan2;
    default: return std::nullopt;
  }
}

}  // namespace

uint32_t KernelLowering::roundTo(uint32_t v, uint32_t dtype) {
  if (dtype == PLUGSDK_DTYPE_F16 || dtype == PLUGSDK_DTYPE_BF16) return fromStorage(toStorage(v, dtype), dtype);
  return v;
}

uint32_t KernelLowering::maxMin(uint32_t a, uint32_t b, uint32_t dtype, bool isMax) {
  const uint32_t t = m_.typeOf(a), bt = boolT();
  if (isFloatDtype(dtype)) {
    // maximum(a, b) = NaN if either is; else (a < b ? b : a), which keeps a on ties (-0.0 vs 0.0).
    const uint32_t pick = isMax ? m_.op(spv::Op::FOrdLessThan, bt, {a, b}) : m_.op(spv::Op::FOrdLessThan, bt, {b, a});
    uint32_t r = m_.op(spv::Op::Select, t, {pick, b, a});
    r = m_.op(spv::Op::Select, t, {m_.op(spv::Op::IsNan, bt, {b}), b, r});
    return m_.op(spv::Op::Select, t, {m_.op(spv::Op::IsNan, bt, {a}), a, r});
  }
  if (dtype == PLUGSDK_DTYPE_BOOL) return m_.op(isMax ? spv::Op::LogicalOr : spv::Op::LogicalAnd, bt, {a, b});
  const spv::Op lt = isUnsignedDtype(dtype) ? spv::Op::ULessThan : spv::Op::SLessThan;
  const uint32_t pick = isMax ? m_.op(lt, bt, {a, b}) : m_.op(lt, bt, {b, a});
  return m_.op(spv::Op::Select, t, {pick, b, a});
}

uint32_t KernelLowering::compare(uint32_t op, uint32_t a, uint32_t b, uint32_t dtype) {
  const uint32_t bt = boolT();
  if (dtype == PLUGSDK_DTYPE_BOOL) {
    if (op == PLUGSDK_OP_EQ) return m_.op(spv::Op::LogicalEqual, bt, {a, b});
    if (op == PLUGSDK_OP_NE) return m_.op(spv::Op::LogicalNotEqual, bt, {a, b});
    a = boolToInt(a, intT(8));
    b = boolToInt(b, intT(8));
    dtype = PLUGSDK_DTYPE_U8;
  }
  const bool fp = isFloatDtype(dtype), u = isUnsignedDtype(dtype);
  spv::Op code = spv::Op::IEqual;
  switch (op) {
    case PLUGSDK_OP_EQ: code = fp ? spv::Op::FOrdEqual : spv::Op::IEqual; break;
    case PLUGSDK_OP_NE: code = fp ? spv::Op::FUnordNotEqual : spv::Op::INotEqual; break;
    case PLUGSDK_OP_LT: code = fp ? spv::Op::FOrdLessThan : u ? spv::Op::ULessThan : spv::Op::SLessThan; break;
    case PLUGSDK_OP_LE:
      code = fp ? spv::Op::FOrdLessThanEqual : u ? spv::Op::ULessThanEqual : spv::Op::SLessThanEqual;
      break;
    case PLUGSDK_OP_GT: code = fp ? spv::Op::FOrdGreaterThan : u ? spv::Op::UGreaterThan : spv::Op::SGreaterThan; break;
    default:  // GE
      code = fp ? spv::Op::FOrdGreaterThanEqual : u ? spv::Op::UGreaterThanEqual : spv::Op::SGreaterThanEqual;
  }
  return m_.op(code, bt, {a, b});
}

uint32_t KernelLowering::intDivRem(uint32_t op, uint32_t a, uint32_t b, uint32_t dtype) {
  const uint32_t t = m_.typeOf(a), bt = boolT();
  const uint32_t zero = m_.constInt(t, 0), one = m_.constInt(t, 1);
  failWith(m_.op(spv::Op::IEqual, bt, {b, zero}), lowering::kStatusDivisionByZero);
  if (isUnsignedDtype(dtype)) return m_.op(op == PLUGSDK_OP_DIV ? spv::Op::UDiv : spv::Op::UMod, t, {a, b});
  // x / -1 and x % -1 are done without dividing (INT_MIN / -1 overflows).
  const uint32_t isM1 = m_.op(spv::Op::IEqual, bt, {b, m_.constInt(t, ~uint64_t{0})});
  const uint32_t d = m_.op(spv::Op::Select, t, {isM1, one, b});
  if (op == PLUGSDK_OP_DIV)
    return m_.op(spv::Op::Select, t, {isM1, m_.op(spv::Op::SNegate, t, {a}), m_.op(spv::Op::SDiv, t, {a, d})});
  uint32_t rem = m_.op(spv::Op::SRem, t, {a, d});
  if (op == PLUGSDK_OP_REMAINDER) {  // the divisor's sign
    const uint32_t adjust = m_.op(spv::Op::LogicalAnd, bt,
                                  {m_.op(spv::Op::INotEqual, bt, {rem, zero}),
                                   m_.op(spv::Op::SLessThan, bt, {m_.op(spv::Op::BitwiseXor, t, {rem, d}), zero})});
    rem = m_.op(spv::Op::Select, t, {adjust, m_.op(spv::Op::IAdd, t, {rem, d}), rem});
  }
  return m_.op(spv::Op::Select, t, {isM1, zero, rem});
}

uint32_t KernelLowering::combine(bool sum, bool prod, bool isMax, uint32_t a, uint32_t b, uint32_t dtype) {
  const uint32_t t = m_.typeOf(a);
  const bool fp = isFloatDtype(dtype);
  if (sum)
    return dtype == PLUGSDK_DTYPE_BOOL ? m_.op(spv::Op::LogicalOr, t, {a, b})
                                       : m_.op(fp ? spv::Op::FAdd : spv::Op::IAdd, t, {a, b});
  if (prod)
    return dtype == PLUGSDK_DTYPE_BOOL ? m_.op(spv::Op::LogicalAnd, t, {a, b})
                                       : m_.op(fp ? spv::Op::FMul : spv::Op::IMul, t, {a, b});
  return maxMin(a, b, dtype, isMax);
}

sdk::StatusOr<uint32_t> KernelLowering::scalarOp(const plugsdk_stmt_t& s, size_t pos) {
  uint32_t a = value(s.operands[0]);
  uint32_t b = s.num_operands > 1 ? value(s.operands[1]) : 0;
  uint32_t dt = dtypeOf(s.operands[0]);  // the operands' dtype (comparisons return bool)
  const uint32_t bt = boolT();
  if (s.op >= PLUGSDK_OP_EQ && s.op <= PLUGSDK_OP_GE) return compare(s.op, a, b, dt);
  // bool arithmetic that has no logical form runs on 0 / 1 in 8 bits.
  const bool viaInt = dt == PLUGSDK_DTYPE_BOOL && (s.op == PLUGSDK_OP_DIV || s.op == PLUGSDK_OP_REMAINDER ||
                                                   s.op == PLUGSDK_OP_FMOD || s.op == PLUGSDK_OP_POW);
  if (viaInt) {
    a = boolToInt(a, intT(8));
    b = boolToInt(b, intT(8));
    dt = PLUGSDK_DTYPE_U8;
  }
  const bool fp = isFloatDtype(dt);
  const bool isBool = dt == PLUGSDK_DTYPE_BOOL;
  const uint32_t t = m_.typeOf(a);
  auto fconst = [&](double c) { return m_.constFloat(t, c); };
  auto iconst = [&](int64_t c) { return m_.constInt(t, static_cast<uint64_t>(c)); };
  auto op = [&](spv::Op code, std::initializer_list<uint32_t> xs) { return m_.op(code, t, xs); };
  auto cmp = [&](spv::Op code, uint32_t x, uint32_t y) { return m_.op(code, bt, {x, y}); };
  uint32_t v = 0;
  switch (s.op) {
    case PLUGSDK_OP_ABS:
      v = fp ? ext(spv::OpenCLStd::fabs, t, {a})
          : (isUnsignedDtype(dt) || isBool)
              ? a
              : op(spv::Op::Select, {cmp(spv::Op::SLessThan, a, iconst(0)), op(spv::Op::SNegate, {a}), a});
      break;
    case PLUGSDK_OP_NEG: v = fp ? op(spv::Op::FNegate, {a}) : isBool ? a : op(spv::Op::SNegate, {a}); break;
    case PLUGSDK_OP_SIGN:
      if (fp)
        v = op(spv::Op::Select,
               {cmp(spv::Op::FOrdGreaterThan, a, fconst(0)), fconst(1),
                op(spv::Op::Select, {cmp(spv::Op::FOrdLessThan, a, fconst(0)), fconst(-1), fconst(0)})});
      else if (isBool)
        v = a;
      else if (isUnsignedDtype(dt))
        v = boolToInt(cmp(spv::Op::INotEqual, a, iconst(0)), t);
      else
        v = op(spv::Op::Select, {cmp(spv::Op::SGreaterThan, a, iconst(0)), iconst(1),
                                 op(spv::Op::Select, {cmp(spv::Op::SLessThan, a, iconst(0)), iconst(-1), iconst(0)})});
      break;
    case PLUGSDK_OP_FLOOR: v = fp ? ext(spv::OpenCLStd::floor, t, {a}) : a; break;
    case PLUGSDK_OP_CEIL: v = fp ? ext(spv::OpenCLStd::ceil, t, {a}) : a; break;
    case PLUGSDK_OP_ROUND: v = fp ? ext(spv::OpenCLStd::rint, t, {a}) : a; break;  // half to even
    case PLUGSDK_OP_TRUNC: v = fp ? ext(spv::OpenCLStd::trunc, t, {a}) : a; break;
    case PLUGSDK_OP_BITWISE_NOT: v = isBool ? m_.op(spv::Op::LogicalNot, bt, {a}) : op(spv::Op::Not, {a}); break;
    case PLUGSDK_OP_SQRT:
      if (!fp) return fail(pos, "sqrt of a non-floating dtype");
      v = ext(spv::OpenCLStd::sqrt, t, {a});
      break;
    case PLUGSDK_OP_RSQRT:  // 1 / sqrt (OpenCL's rsqrt is allowed 2 ulp more)
      if (!fp) return fail(pos, "rsqrt of a non-floating dtype");
      v = op(spv::Op::FDiv, {fconst(1), ext(spv::OpenCLStd::sqrt, t, {a})});
      break;
    case PLUGSDK_OP_ADD:
      v = fp ? op(spv::Op::FAdd, {a, b}) : isBool ? m_.op(spv::Op::LogicalOr, bt, {a, b}) : op(spv::Op::IAdd, {a, b});
      break;
    case PLUGSDK_OP_SUB:
      v = fp       ? op(spv::Op::FSub, {a, b})
          : isBool ? m_.op(spv::Op::LogicalNotEqual, bt, {a, b})
                   : op(spv::Op::ISub, {a, b});
      break;
    case PLUGSDK_OP_MUL:
      v = fp ? op(spv::Op::FMul, {a, b}) : isBool ? m_.op(spv::Op::LogicalAnd, bt, {a, b}) : op(spv::Op::IMul, {a, b});
      break;
    case PLUGSDK_OP_DIV: v = fp ? op(spv::Op::FDiv, {a, b}) : intDivRem(s.op, a, b, dt); break;
    case PLUGSDK_OP_FMOD: v = fp ? ext(spv::OpenCLStd::fmod, t, {a, b}) : intDivRem(s.op, a, b, dt); break;
    case PLUGSDK_OP_REMAINDER:
      if (fp) {
        const uint32_t m = ext(spv::OpenCLStd::fmod, t, {a, b});
        const uint32_t adjust =
            m_.op(spv::Op::LogicalAnd, bt,
                  {cmp(spv::Op::FUnordNotEqual, m, fconst(0)),
                   m_.op(spv::Op::LogicalNotEqual, bt,
                         {cmp(spv::Op::FOrdLessThan, b, fconst(0)), cmp(spv::Op::FOrdLessThan, m, fconst(0))})});
        v = op(spv::Op::Select, {adjust, op(spv::Op::FAdd, {m, b}), m});
      } else {
        v = intDivRem(s.op, a, b, dt);
      }
      break;
    case PLUGSDK_OP_POW:
      if (fp) {
        v = ext(spv::OpenCLStd::pow, t, {a, b});
      } else {
        // Square and multiply over the exponent's bits; a negative exponent gives 0 unless |a| = 1.
        const uint32_t bits = m_.typeInfo(t).width;
        uint32_t result = iconst(1), base = a;
        for (uint32_t i = 0; i < bits; ++i) {
          const uint32_t bit =
              cmp(spv::Op::INotEqual, op(spv::Op::BitwiseAnd, {b, iconst(int64_t{1} << i)}), iconst(0));
          result = op(spv::Op::Select, {bit, op(spv::Op::IMul, {result, base}), result});
          if (i + 1 < bits) base = op(spv::Op::IMul, {base, base});
        }
        if (!isUnsignedDtype(dt)) {
          const uint32_t odd = cmp(spv::Op::INotEqual, op(spv::Op::BitwiseAnd, {b, iconst(1)}), iconst(0));
          const uint32_t negResult = op(
              spv::Op::Select, {cmp(spv::Op::IEqual, a, iconst(1)), iconst(1),
                                op(spv::Op::Select, {cmp(spv::Op::IEqual, a, iconst(-1)),
                                                     op(spv::Op::Select, {odd, iconst(-1), iconst(1)}), iconst(0)})});
          result = op(spv::Op::Select, {cmp(spv::Op::SLessThan, b, iconst(0)), negResult, result});
        }
        v = result;
      }
      break;
    case PLUGSDK_OP_MAXIMUM: v = maxMin(a, b, dt, true); break;
    case PLUGSDK_OP_MINIMUM: v = maxMin(a, b, dt, false); break;
    case PLUGSDK_OP_BITWISE_AND:
      v = isBool ? m_.op(spv::Op::LogicalAnd, bt, {a, b}) : op(spv::Op::BitwiseAnd, {a, b});
      break;
    case PLUGSDK_OP_BITWISE_OR:
      v = isBool ? m_.op(spv::Op::LogicalOr, bt, {a, b}) : op(spv::Op::BitwiseOr, {a, b});
      break;
    case PLUGSDK_OP_BITWISE_XOR:
      v = isBool ? m_.op(spv::Op::LogicalNotEqual, bt, {a, b}) : op(spv::Op::BitwiseXor, {a, b});
      break;
    default: {
      const std::optional<spv::OpenCLStd> f = mathFn(s.op);
      if (!f) return fail(pos, "elementwise op " + std::to_string(s.op) + " is unknown to this backend");
      if (!fp) return fail(pos, "elementwise op " + std::to_string(s.op) + " of a non-floating dtype");
      v = b ? ext(*f, t, {a, b}) : ext(*f, t, {a});
    }
  }
  if (viaInt) return s.dtype == PLUGSDK_DTYPE_BOOL ? m_.op(spv::Op::INotEqual, bt, {v, iconst(0)}) : v;
  if (fp) v = roundTo(v, s.dtype);
  return v;
}

sdk::StatusOr<uint32_t> KernelLowering::cast(const plugsdk_stmt_t& s, size_t pos) {
  uint32_t x = value(s.operands[0]);
  uint32_t from = dtypeOf(s.operands[0]);
  const uint32_t to = s.dtype;
  const uint32_t bt = boolT();
  const uint32_t tt = computeType(to);
  if (!tt) return fail(pos, "a cast to dtype " + std::to_string(to));
  if (from == to) return x;
  const uint32_t st = m_.typeOf(x);
  if (to == PLUGSDK_DTYPE_BOOL) {
    if (isFloatDtype(from)) return m_.op(spv::Op::FUnordNotEqual, bt, {x, m_.constFloat(st, 0.0)});  // NaN -> true
    return m_.op(spv::Op::INotEqual, bt, {x, m_.constInt(st, 0)});
  }
  if (from == PLUGSDK_DTYPE_BOOL) {  // 0 / 1, as an unsigned byte
    x = boolToInt(x, intT(8));
    from = PLUGSDK_DTYPE_U8;
  }
  const uint32_t f64 = floatT(64);
  if (isFloatDtype(from) && isFloatDtype(to)) {
    const uint32_t v = m_.typeOf(x) == tt ? x : m_.op(spv::Op::FConvert, tt, {x});
    return roundTo(v, to);
  }
  if (!isFloatDtype(from) && isFloatDtype(to)) {
    // Through f64 first, as the reference: an i64 rounds once to f64, then to the dtype.
    const uint32_t d = m_.op(isUnsignedDtype(from) ? spv::Op::ConvertUToF : spv::Op::ConvertSToF, f64, {x});
    return roundTo(tt == f64 ? d : m_.op(spv::Op::FConvert, tt, {d}), to);
  }
  if (isFloatDtype(from)) {
    // float -> integer: truncate; NaN and out-of-range values become INT32_MIN for i8/i16/i32
    // (PyTorch converts through a 32-bit integer) and INT64_MIN for i64 and u8, then the
    // low bits are kept.
    const bool via32 = to == PLUGSDK_DTYPE_I8 || to == PLUGSDK_DTYPE_I16 || to == PLUGSDK_DTYPE_I32;
    const uint32_t d = m_.typeOf(x) == f64 ? x : m_.op(spv::Op::FConvert, f64, {x});
    const uint32_t t = ext(spv::OpenCLStd::trunc, f64, {d});
    const double lim = via32 ? 2147483648.0 : 9223372036854775808.0;
    const uint32_t inRange = m_.op(spv::Op::LogicalAnd, bt,
                                   {m_.op(spv::Op::FOrdGreaterThanEqual, bt, {t, m_.constFloat(f64, -lim)}),
                                    m_.op(spv::Op::FOrdLessThan, bt, {t, m_.constFloat(f64, lim)})});
    const uint32_t wide = intT(via32 ? 32 : 64);
    const uint32_t safe = m_.op(spv::Op::Select, f64, {inRange, t, m_.constFloat(f64, 0.0)});
    uint32_t iv = m_.op(spv::Op::ConvertFToS, wide, {safe});
    iv = m_.op(spv::Op::Select, wide, {inRange, iv, m_.constInt(wide, via32 ? 0x80000000ULL : 0x8000000000000000ULL)});
    return wide == tt ? iv : m_.op(spv::Op::UConvert, tt, {iv});
  }
  // integer -> integer: extend by the source's signedness, or keep the low bits.
  const uint32_t fromBits = m_.typeInfo(m_.typeOf(x)).width, toBits = m_.typeInfo(tt).width;
  if (fromBits == toBits) return x;
  if (fromBits > toBits) return m_.op(spv::Op::UConvert, tt, {x});
  return m_.op(isUnsignedDtype(from) ? spv::Op::UConvert : spv::Op::SConvert, tt, {x});
}

uint32_t KernelLowering::rand(const plugsdk_stmt_t& s, uint32_t c) {
  const uint32_t t = i64();
  auto k = [&](uint64_t x) { return m_.constInt(t, x); };
  auto op = [&](spv::Op code, uint32_t a, uint32_t b) { return m_.op(code, t, {a, b}); };
  const uint64_t key = lowering::splitmix64(static_cast<uint64_t>(s.ivalue));
  uint32_t x = op(spv::Op::IAdd, c, k(key + 0x9e3779b97f4a7c15ULL));
  x = op(spv::Op::IMul, op(spv::Op::BitwiseXor, x, op(spv::Op::ShiftRightLogical, x, k(30))), k(0xbf58476d1ce4e5b9ULL));
  x = op(spv::Op::IMul, op(spv::Op::BitwiseXor, x, op(spv::Op::ShiftRightLogical, x, k(27))), k(0x94d049bb133111ebULL));
  x = op(spv::Op::BitwiseXor, x, op(spv::Op::ShiftRightLogical, x, k(31)));
  const int bits = s.dtype == PLUGSDK_DTYPE_F16    ? 11
                   : s.dtype == PLUGSDK_DTYPE_BF16 ? 8
                   : s.dtype == PLUGSDK_DTYPE_F32  ? 24
                                                   : 53;
  const uint32_t ft = computeType(s.dtype);
  const uint32_t f =
      m_.op(spv::Op::ConvertUToF, ft, {op(spv::Op::ShiftRightLogical, x, k(static_cast<uint64_t>(64 - bits)))});
  return m_.op(spv::Op::FMul, ft, {f, m_.constFloat(ft, std::ldexp(1.0, -bits))});
}

}  // namespace plugsdk::level_zero::spirv
