// Elementwise ops, casts and rand, on scalars or vectors alike. The semantics are the
// kernel IR's (docs/kernel-ir.md, core/prims/scalar_ops.h): IEEE floats with NaN-propagating
// maximum/minimum, wrapping integers, truncating integer division that reports a division
// by zero instead of trapping, PyTorch's float->int conversion rules. f16 and bf16 values
// live in f32 registers and are rounded to their dtype where a cast or a store asks for it
// (the reference rounds only at stores too).
#include <cmath>

#include "backends/llvm_lowering/dtypes.h"
#include "backends/llvm_lowering/frame.h"
#include "backends/llvm_lowering/lowering.h"
#include "backends/llvm_lowering/vector_math.h"

namespace plugsdk::lowering {

namespace {

/// libm's name for an op (the f32 variant appends 'f'), or nullptr.
const char* libmName(uint32_t op) {
  switch (op) {
    case PLUGSDK_OP_EXP: return "exp";
    case PLUGSDK_OP_EXPM1: return "expm1";
    case PLUGSDK_OP_LOG: return "log";
    case PLUGSDK_OP_LOG1P: return "log1p";
    case PLUGSDK_OP_LOG2: return "log2";
    case PLUGSDK_OP_SIN: return "sin";
    case PLUGSDK_OP_COS: return "cos";
    case PLUGSDK_OP_TAN: return "tan";
    case PLUGSDK_OP_ASIN: return "asin";
    case PLUGSDK_OP_ACOS: return "acos";
    case PLUGSDK_OP_ATAN: return "atan";
    case PLUGSDK_OP_SINH: return "sinh";
    case PLUGSDK_OP_COSH: return "cosh";
    case PLUGSDK_OP_TANH: return "tanh";
    case PLUGSDK_OP_ASINH: return "asinh";
    case PLUGSDK_OP_ACOSH: return "acosh";
    case PLUGSDK_OP_ATANH: return "atanh";
    case PLUGSDK_OP_ERF: return "erf";
    case PLUGSDK_OP_POW: return "pow";
    case PLUGSDK_OP_ATAN2: return "atan2";
    default: return nullptr;
  }
}

/// The vectorized math function of an op (vector_math.h), if it has one.
std::optional<MathFn> mathFn(uint32_t op) {
  switch (op) {
    case PLUGSDK_OP_EXP: return MathFn::kExp;
    case PLUGSDK_OP_EXPM1: return MathFn::kExpm1;
    case PLUGSDK_OP_LOG: return MathFn::kLog;
    case PLUGSDK_OP_LOG1P: return MathFn::kLog1p;
    case PLUGSDK_OP_LOG2: return MathFn::kLog2;
    case PLUGSDK_OP_SIN: return MathFn::kSin;
    case PLUGSDK_OP_COS: return MathFn::kCos;
    case PLUGSDK_OP_TAN: return MathFn::kTan;
    case PLUGSDK_OP_ASIN: return MathFn::kAsin;
    case PLUGSDK_OP_ACOS: return MathFn::kAcos;
    case PLUGSDK_OP_ATAN: return MathFn::kAtan;
    case PLUGSDK_OP_SINH: return MathFn::kSinh;
    case PLUGSDK_OP_COSH: return MathFn::kCosh;
    case PLUGSDK_OP_TANH: return MathFn::kTanh;
    case PLUGSDK_OP_ASINH: return MathFn::kAsinh;
    case PLUGSDK_OP_ACOSH: return MathFn::kAcosh;
    case PLUGSDK_OP_ATANH: return MathFn::kAtanh;
    case PLUGSDK_OP_ERF: return MathFn::kErf;
    case PLUGSDK_OP_POW: return MathFn::kPow;
    case PLUGSDK_OP_ATAN2: return MathFn::kAtan2;
    default: return std::nullopt;
  }
}

}  // namespace

llvm::Type* KernelLowering::computeType(uint32_t dtype) {
  switch (dtype) {
    case PLUGSDK_DTYPE_BOOL: return b_.getInt1Ty();
    case PLUGSDK_DTYPE_U8:
    case PLUGSDK_DTYPE_I8: return b_.getInt8Ty();
    case PLUGSDK_DTYPE_I16: return b_.getInt16Ty();
    case PLUGSDK_DTYPE_I32: return b_.getInt32Ty();
    case PLUGSDK_DTYPE_I64: return b_.getInt64Ty();
    case PLUGSDK_DTYPE_F16:
    case PLUGSDK_DTYPE_BF16:
    case PLUGSDK_DTYPE_F32: return b_.getFloatTy();
    case PLUGSDK_DTYPE_F64: return b_.getDoubleTy();
    default: return nullptr;
  }
}

llvm::Value* KernelLowering::roundTo(llvm::Value* v, uint32_t dtype) {
  if (dtype == PLUGSDK_DTYPE_F16) {
    llvm::Type* t = v->getType();
    llvm::Type* h = b_.getHalfTy();
    if (t->isVectorTy()) h = llvm::VectorType::get(h, llvm::cast<llvm::VectorType>(t));
    return b_.CreateFPExt(b_.CreateFPTrunc(v, h), t);
  }
  if (dtype == PLUGSDK_DTYPE_BF16 && target_.nativeBf16) {
    // Rounded by the conversion and back, without the 16-bit integer unpacking of the bits
    // (and without the canonical NaN of toStorage: a NaN stays a NaN, target.h).
    llvm::Type* t = v->getType();
    llvm::Type* h = b_.getBFloatTy();
    if (t->isVectorTy()) h = llvm::VectorType::get(h, llvm::cast<llvm::VectorType>(t));
    return b_.CreateFPExt(b_.CreateFPTrunc(v, h), t);
  }
  if (dtype == PLUGSDK_DTYPE_BF16) return fromStorage(toStorage(v, dtype), dtype);
  return v;
}

llvm::Value* KernelLowering::callLibm(const char* name, llvm::Type* t, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* e = t->getScalarType();
  const std::string fname = std::string(name) + (e->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> params(args.size(), e);
  llvm::FunctionCallee f = m_.getOrInsertFunction(fname, llvm::FunctionType::get(e, params, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
  if (!vt) return b_.CreateCall(f, args);
  llvm::Value* out = llvm::PoisonValue::get(t);
  for (unsigned lane = 0; lane < vt->getNumElements(); ++lane) {
    std::vector<llvm::Value*> la;
    for (llvm::Value* a : args) la.push_back(b_.CreateExtractElement(a, lane));
    out = b_.CreateInsertElement(out, b_.CreateCall(f, la), lane);
  }
  return out;
}

llvm::Value* KernelLowering::math(uint32_t op, llvm::Value* a, llvm::Value* b) {
  // Inline polynomials where vector_math has them (f32: all; f64: a subset), else libm per lane.
  const bool library = op < 64 && (target_.libraryMath >> op & 1) != 0;
  if (std::optional<MathFn> fn = library ? std::nullopt : mathFn(op)) {
    llvm::Value* v = nullptr;
    if (a->getType()->getScalarType()->isFloatTy())
      v = emitMathF32(b_, *fn, a, b, MathTarget{target_.exp2Intrinsic, target_.nanMinMax});
    else if (!b)
      v = emitMathF64(b_, *fn, a);
    if (v) return v;
  }
  return b ? callLibm(libmName(op), a->getType(), {a, b}) : callLibm(libmName(op), a->getType(), {a});
}

llvm::Value* KernelLowering::sinOrCos(uint32_t op, llvm::Value* a) {
  for (const SinCos& p : sinCos_)
    if (p.arg == a && p.block == b_.GetInsertBlock()) return op == PLUGSDK_OP_SIN ? p.sin : p.cos;
  auto [sin, cos] = emitSinCosF32(b_, a);
  sinCos_.push_back(SinCos{a, b_.GetInsertBlock(), sin, cos});
  return op == PLUGSDK_OP_SIN ? sin : cos;
}

llvm::Value* KernelLowering::maxMin(llvm::Value* a, llvm::Value* b, uint32_t dtype, bool isMax) {
  if (isFloatDtype(dtype) && target_.nanMinMax && a->getType()->getScalarType()->isFloatTy())
    return b_.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, a, b);
  if (isFloatDtype(dtype)) {
    // maximum(a, b) = NaN if either is; else (a < b ? b : a), which keeps a on ties (-0.0 vs 0.0).
    llvm::Value* pick = isMax ? b_.CreateFCmpOLT(a, b) : b_.CreateFCmpOLT(b, a);
    llvm::Value* r = b_.CreateSelect(pick, b, a);
    r = b_.CreateSelect(b_.CreateFCmpUNO(b, b), b, r);
    return b_.CreateSelect(b_.CreateFCmpUNO(a, a), a, r);
  }
  if (dtype == PLUGSDK_DTYPE_BOOL) return isMax ? b_.CreateOr(a, b) : b_.CreateAnd(a, b);
  llvm::Value* pick = isUnsignedDtype(dtype) ? (isMax ? b_.CreateICmpULT(a, b) : b_.CreateICmpULT(b, a))
                                             : (isMax ? b_.CreateICmpSLT(a, b) : b_.CreateICmpSLT(b, a));
  return b_.CreateSelect(pick, b, a);
}

llvm::Value* KernelLowering::intDivRem(uint32_t op, llvm::Value* a, llvm::Value* b, uint32_t dtype, Region& r) {
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(t);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* isZero = b_.CreateICmpEQ(b, zero);
  llvm::Value* active = isZero;
  if (t->isVectorTy() && r.mask) active = b_.CreateAnd(active, r.mask);
  failWith(anyTrue(active), kStatusDivisionByZero, "integer division by zero (ZeroDivisionError)");
  if (isUnsignedDtype(dtype)) {
    llvm::Value* d = b_.CreateSelect(isZero, one, b);
    return op == PLUGSDK_OP_DIV ? b_.CreateUDiv(a, d) : b_.CreateURem(a, d);
  }
  // x / -1 and x % -1 are done without dividing (INT_MIN / -1 traps in hardware).
  llvm::Value* isM1 = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(t));
  llvm::Value* d = b_.CreateSelect(b_.CreateOr(isZero, isM1), one, b);
  if (op == PLUGSDK_OP_DIV) return b_.CreateSelect(isM1, b_.CreateNeg(a), b_.CreateSDiv(a, d));
  llvm::Value* rem = b_.CreateSRem(a, d);
  if (op == PLUGSDK_OP_REMAINDER) {  // the divisor's sign
    llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(rem, zero), b_.CreateICmpSLT(b_.CreateXor(rem, d), zero));
    rem = b_.CreateSelect(adjust, b_.CreateAdd(rem, d), rem);
  }
  return b_.CreateSelect(isM1, zero, rem);
}

sdk::StatusOr<Val> KernelLowering::scalarOp(const plugsdk_stmt_t& s, size_t pos, Region& r) {
  const Val a0 = values_[static_cast<size_t>(s.operands[0])];
  const Val b0 = s.num_operands > 1 ? values_[static_cast<size_t>(s.operands[1])] : Val{};
  const bool varying = a0.varying || b0.varying;
  const uint32_t n = varying ? r.lanes : 1;
  llvm::Value* a = widen(a0, n);
  llvm::Value* b = b0.v ? widen(b0, n) : nullptr;
  const uint32_t dt = dtypeOf(s.operands[0]);  // operand dtype (comparisons return bool)
  const bool fp = isFloatDtype(dt);
  llvm::Type* t = a->getType();
  auto fconst = [&](double c) { return llvm::ConstantFP::get(t, c); };
  auto iconst = [&](int64_t c) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(c), true); };
  llvm::Value* v = nullptr;
  switch (s.op) {
    case PLUGSDK_OP_ABS:
      v = fp ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a)
             : (isUnsignedDtype(dt) ? a : b_.CreateSelect(b_.CreateICmpSLT(a, iconst(0)), b_.CreateNeg(a), a));
      break;
    case PLUGSDK_OP_NEG: v = fp ? b_.CreateFNeg(a) : b_.CreateNeg(a); break;
    case PLUGSDK_OP_SIGN:
      if (fp)
        v = b_.CreateSelect(b_.CreateFCmpOGT(a, fconst(0)), fconst(1),
                            b_.CreateSelect(b_.CreateFCmpOLT(a, fconst(0)), fconst(-1), fconst(0)));
      else if (isUnsignedDtype(dt))
        v = b_.CreateZExt(b_.CreateICmpNE(a, iconst(0)), t);
      else
        v = b_.CreateSelect(b_.CreateICmpSGT(a, iconst(0)), iconst(1),
                            b_.CreateSelect(b_.CreateICmpSLT(a, iconst(0)), iconst(-1), iconst(0)));
      break;
    case PLUGSDK_OP_FLOOR: v = fp ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a) : a; break;
    case PLUGSDK_OP_CEIL: v = fp ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a) : a; break;
    case PLUGSDK_OP_ROUND: v = fp ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a) : a; break;
    case PLUGSDK_OP_TRUNC: v = fp ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, a) : a; break;
    case PLUGSDK_OP_BITWISE_NOT: v = b_.CreateNot(a); break;
    case PLUGSDK_OP_SQRT: v = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a); break;
    case PLUGSDK_OP_RSQRT: v = b_.CreateFDiv(fconst(1), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a)); break;
    case PLUGSDK_OP_ADD:
      v = fp ? b_.CreateFAdd(a, b) : (dt == PLUGSDK_DTYPE_BOOL ? b_.CreateOr(a, b) : b_.CreateAdd(a, b));
      break;
    case PLUGSDK_OP_SUB: v = fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b); break;
    case PLUGSDK_OP_MUL:
      v = fp ? b_.CreateFMul(a, b) : (dt == PLUGSDK_DTYPE_BOOL ? b_.CreateAnd(a, b) : b_.CreateMul(a, b));
      break;
    case PLUGSDK_OP_DIV: v = fp ? b_.CreateFDiv(a, b) : intDivRem(s.op, a, b, dt, r); break;
    // fmod through libm by name, not LLVM's frem: NVPTX expands frem as a - b * trunc(a / b),
    // which is inexact (and overflows for a large quotient); x86 calls fmodf either way.
    case PLUGSDK_OP_FMOD: v = fp ? callLibm("fmod", a->getType(), {a, b}) : intDivRem(s.op, a, b, dt, r); break;
    case PLUGSDK_OP_REMAINDER:
      if (fp) {
        llvm::Value* m = callLibm("fmod", a->getType(), {a, b});
        llvm::Value* adjust =
            b_.CreateAnd(b_.CreateFCmpUNE(m, fconst(0)),
                         b_.CreateXor(b_.CreateFCmpOLT(b, fconst(0)), b_.CreateFCmpOLT(m, fconst(0))));
        v = b_.CreateSelect(adjust, b_.CreateFAdd(m, b), m);
      } else {
        v = intDivRem(s.op, a, b, dt, r);
      }
      break;
    case PLUGSDK_OP_POW:
      if (fp) {
        v = math(s.op, a, b);
      } else {
        // Square and multiply over the exponent's bits; a negative exponent gives 0 unless |a| = 1.
        const unsigned bits = t->getScalarSizeInBits();
        llvm::Value* result = iconst(1);
        llvm::Value* base = a;
        for (unsigned i = 0; i < bits; ++i) {
          llvm::Value* bit = b_.CreateTrunc(b_.CreateLShr(b, iconst(i)),
                                            t->isVectorTy() ? static_cast<llvm::Type*>(llvm::VectorType::get(
                                                                  b_.getInt1Ty(), llvm::cast<llvm::VectorType>(t)))
                                                            : b_.getInt1Ty());
          result = b_.CreateSelect(bit, b_.CreateMul(result, base), result);
          base = b_.CreateMul(base, base);
        }
        if (!isUnsignedDtype(dt)) {
          llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(b, iconst(1)), iconst(0));
          llvm::Value* negResult = b_.CreateSelect(
              b_.CreateICmpEQ(a, iconst(1)), iconst(1),
              b_.CreateSelect(b_.CreateICmpEQ(a, iconst(-1)), b_.CreateSelect(odd, iconst(-1), iconst(1)), iconst(0)));
          result = b_.CreateSelect(b_.CreateICmpSLT(b, iconst(0)), negResult, result);
        }
        v = result;
      }
      break;
    case PLUGSDK_OP_MAXIMUM: v = maxMin(a, b, dt, true); break;
    case PLUGSDK_OP_MINIMUM: v = maxMin(a, b, dt, false); break;
    case PLUGSDK_OP_BITWISE_AND: v = b_.CreateAnd(a, b); break;
    case PLUGSDK_OP_BITWISE_OR: v = b_.CreateOr(a, b); break;
    case PLUGSDK_OP_BITWISE_XOR: v = b_.CreateXor(a, b); break;
    case PLUGSDK_OP_EQ: v = fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b); break;
    case PLUGSDK_OP_NE: v = fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b); break;
    case PLUGSDK_OP_LT:
      v = fp ? b_.CreateFCmpOLT(a, b) : isUnsignedDtype(dt) ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
      break;
    case PLUGSDK_OP_LE:
      v = fp ? b_.CreateFCmpOLE(a, b) : isUnsignedDtype(dt) ? b_.CreateICmpULE(a, b) : b_.CreateICmpSLE(a, b);
      break;
    case PLUGSDK_OP_GT:
      v = fp ? b_.CreateFCmpOGT(a, b) : isUnsignedDtype(dt) ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b);
      break;
    case PLUGSDK_OP_GE:
      v = fp ? b_.CreateFCmpOGE(a, b) : isUnsignedDtype(dt) ? b_.CreateICmpUGE(a, b) : b_.CreateICmpSGE(a, b);
      break;
    default: {
      const char* name = libmName(s.op);
      if (!name) return fail(pos, "elementwise op " + std::to_string(s.op) + " is unknown to this backend");
      if (!fp) return fail(pos, std::string(name) + " of a non-floating dtype");
      const bool pair = (s.op == PLUGSDK_OP_SIN || s.op == PLUGSDK_OP_COS) && sinAndCos_[s.operands[0]] &&
                        t->getScalarType()->isFloatTy();
      v = pair ? sinOrCos(s.op, a) : math(s.op, a, b);
    }
  }
  if (fp && v->getType()->getScalarType()->isFloatingPointTy()) v = roundTo(v, s.dtype);
  return Val{v, varying};
}

sdk::StatusOr<Val> KernelLowering::cast(const plugsdk_stmt_t& s, Region&) {
  const Val a = values_[static_cast<size_t>(s.operands[0])];
  const uint32_t from = dtypeOf(s.operands[0]), to = s.dtype;
  llvm::Value* x = a.v;
  llvm::Type* st = x->getType();
  auto like = [&](llvm::Type* e) -> llvm::Type* {
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(st)) return llvm::VectorType::get(e, vt->getElementCount());
    return e;
  };
  llvm::Type* tt = like(computeType(to));
  llvm::Value* v = nullptr;
  if (to == PLUGSDK_DTYPE_BOOL) {
    v = isFloatDtype(from) ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(st, 0.0))  // NaN -> true
                           : b_.CreateICmpNE(x, llvm::Constant::getNullValue(st));
  } else if (isFloatDtype(from) && isFloatDtype(to)) {
    v = roundTo(b_.CreateFPCast(x, tt), to);
  } else if (!isFloatDtype(from) && isFloatDtype(to)) {
    // Through f64 first, as the reference: an i64 rounds once to f64, then to the dtype.
    llvm::Type* f64 = like(b_.getDoubleTy());
    llvm::Value* d = isUnsignedDtype(from) ? b_.CreateUIToFP(x, f64) : b_.CreateSIToFP(x, f64);
    v = roundTo(b_.CreateFPCast(d, tt), to);
  } else if (isFloatDtype(from)) {
    // float -> integer: truncate; NaN and out-of-range values become INT32_MIN for i8/i16/i32
    // (PyTorch converts through a 32-bit integer) and INT64_MIN for i64 and u8, then the
    // low bits are kept.
    const bool via32 = to == PLUGSDK_DTYPE_I8 || to == PLUGSDK_DTYPE_I16 || to == PLUGSDK_DTYPE_I32;
    llvm::Type* d = like(b_.getDoubleTy());
    llvm::Value* t = b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, b_.CreateFPExt(x, d));  // f32 -> f64 is exact
    const double lim = via32 ? 2147483648.0 : 9223372036854775808.0;
    llvm::Value* inRange = b_.CreateAnd(b_.CreateFCmpOGE(t, llvm::ConstantFP::get(d, -lim)),
                                        b_.CreateFCmpOLT(t, llvm::ConstantFP::get(d, lim)));
    llvm::Type* wide = like(via32 ? b_.getInt32Ty() : b_.getInt64Ty());
    llvm::Value* safe = b_.CreateSelect(inRange, t, llvm::ConstantFP::get(d, 0.0));
    llvm::Value* iv = b_.CreateFPToSI(safe, wide);
    llvm::Value* minV = llvm::ConstantInt::get(wide, via32 ? 0x80000000ULL : 0x8000000000000000ULL);
    iv = b_.CreateSelect(inRange, iv, minV);
    v = b_.CreateTrunc(iv, tt);
  } else {
    v = isUnsignedDtype(from) ? b_.CreateZExtOrTrunc(x, tt) : b_.CreateSExtOrTrunc(x, tt);
  }
  return Val{v, a.varying};
}

sdk::StatusOr<Val> KernelLowering::rand(const plugsdk_stmt_t& s, Region& r) {
  sdk::StatusOr<IndexVal> ix = index(s.index, r);
  if (!ix.isOk()) return ix.status();
  const bool varying = ix->kind != IndexVal::Kind::kUniform;
  llvm::Value* c = varying ? indexLanes(*ix, r) : ix->base;
  llvm::Type* t = c->getType();
  auto k = [&](uint64_t x) { return llvm::ConstantInt::get(t, x); };
  const uint64_t key = splitmix64(static_cast<uint64_t>(s.ivalue));
  llvm::Value* x = b_.CreateAdd(c, k(key + 0x9e3779b97f4a7c15ULL));
  x = b_.CreateMul(b_.CreateXor(x, b_.CreateLShr(x, k(30))), k(0xbf58476d1ce4e5b9ULL));
  x = b_.CreateMul(b_.CreateXor(x, b_.CreateLShr(x, k(27))), k(0x94d049bb133111ebULL));
  x = b_.CreateXor(x, b_.CreateLShr(x, k(31)));
  const int bits = s.dtype == PLUGSDK_DTYPE_F16    ? 11
                   : s.dtype == PLUGSDK_DTYPE_BF16 ? 8
                   : s.dtype == PLUGSDK_DTYPE_F32  ? 24
                                                   : 53;
  llvm::Type* ft = computeType(s.dtype);
  if (varying) ft = llvm::VectorType::get(ft, r.lanes, false);
  llvm::Value* f = b_.CreateUIToFP(b_.CreateLShr(x, k(static_cast<uint64_t>(64 - bits))), ft);
  return Val{b_.CreateFMul(f, llvm::ConstantFP::get(ft, std::ldexp(1.0, -bits))), varying};
}

}  // namespace plugsdk::lowering
