// The math functions of vector_math.h as LLVM IR (f32, and the f64 subset). Each function is
// range reduction to a small interval, a polynomial there (Horner with FMA; f32 coefficients
// are Cephes' published single-precision ones or our own minimax fits, f64 ones the Taylor
// series, see docs/cpu-math.md), and reconstruction;
// the special values are selected at the end, so the common path has no branches. Scaling by
// 2^n is done in two multiplications so results in the denormal range are rounded once.
#include "backends/llvm_lowering/vector_math.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

namespace plugsdk::lowering {
namespace {

using llvm::Value;

// Constants split into a float head and tail (head + tail carries ~48 bits).
constexpr float kPio2Hi = 1.570796371e+00f, kPio2Lo = -4.371138829e-08f;
constexpr float kPio2Lo2 = -1.715124510e-15f;  // third part for the sin/cos reduction
constexpr float kPiHi = 3.141592741e+00f, kPiLo = -8.742277657e-08f;
constexpr float kPio4Hi = 7.853981853e-01f, kPio4Lo = -2.185569414e-08f;
constexpr float kLn2Hi = 6.931471825e-01f, kLn2Lo = -1.904654212e-09f;
constexpr float kLog2eHi = 1.442695022e+00f, kLog2eLo = 1.925963034e-08f;
constexpr float kTwoOverPi = 6.366197467e-01f;
constexpr float kInf = __builtin_inff();
// sin, cos and tan reduce |x| <= this with the three-part pi/2 (j < 2^17, every product
// j * part exact in an FMA); larger arguments go to libm.
constexpr float kTrigFastLimit = 1.0e5f;

/// Builds the IR of one function on one value type (float or <N x float>).
class Emitter {
 public:
  Emitter(llvm::IRBuilderBase& b, llvm::Type* fty, const MathTarget& target = {}) : b_(b), fty_(fty), target_(target) {
    // Integers as wide as the elements (bit manipulation), i64 for double.
    llvm::Type* it = fty->getScalarType()->isDoubleTy() ? b.getInt64Ty() : b.getInt32Ty();
    ity_ = fty->isVectorTy() ? llvm::VectorType::get(it, llvm::cast<llvm::VectorType>(fty)->getElementCount()) : it;
  }

  llvm::Type* fty() const { return fty_; }

  Value* c(double v) { return llvm::ConstantFP::get(fty_, v); }  // rounded to the type
  Value* ci(int32_t v) { return llvm::ConstantInt::get(ity_, static_cast<uint64_t>(static_cast<int64_t>(v)), true); }
  Value* add(Value* a, Value* x) { return b_.CreateFAdd(a, x); }
  Value* sub(Value* a, Value* x) { return b_.CreateFSub(a, x); }
  Value* mul(Value* a, Value* x) { return b_.CreateFMul(a, x); }
  Value* div(Value* a, Value* x) { return b_.CreateFDiv(a, x); }
  Value* neg(Value* a) { return b_.CreateFNeg(a); }
  Value* fma(Value* a, Value* x, Value* y) { return b_.CreateIntrinsic(llvm::Intrinsic::fma, {fty_}, {a, x, y}); }
  Value* abs(Value* a) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a); }
  Value* sqrt(Value* a) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a); }
  Value* roundEven(Value* a) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a); }
  Value* copySign(Value* mag, Value* sign) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign); }
  // min/max that never see a NaN here (callers clamp NaN-free values or fix NaN lanes later).
  Value* min(Value* a, Value* x) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, a, x); }
  Value* max(Value* a, Value* x) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, a, x); }
  // NaN-propagating (MathTarget::nanMinMax).
  Value* minimum(Value* a, Value* x) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, x); }
  Value* maximum(Value* a, Value* x) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, x); }
  Value* sel(Value* cond, Value* a, Value* x) { return b_.CreateSelect(cond, a, x); }
  Value* lt(Value* a, Value* x) { return b_.CreateFCmpOLT(a, x); }
  Value* le(Value* a, Value* x) { return b_.CreateFCmpOLE(a, x); }
  Value* gt(Value* a, Value* x) { return b_.CreateFCmpOGT(a, x); }
  Value* eq(Value* a, Value* x) { return b_.CreateFCmpOEQ(a, x); }
  Value* isNan(Value* a) { return b_.CreateFCmpUNO(a, a); }
  Value* bits(Value* a) { return b_.CreateBitCast(a, ity_); }
  Value* fromBits(Value* i) { return b_.CreateBitCast(i, fty_); }
  Value* toInt(Value* a) { return b_.CreateFPToSI(a, ity_); }
  Value* toFloat(Value* i) { return b_.CreateSIToFP(i, fty_); }
  Value* signBit(Value* a) { return b_.CreateICmpSLT(bits(a), ci(0)); }

  /// c[0] * x^(n-1) + ... + c[n-1] (Horner with FMA: coefficients from the highest degree).
  Value* poly(Value* x, std::initializer_list<double> coeffs) {
    auto it = coeffs.begin();
    Value* acc = c(*it++);
    for (; it != coeffs.end(); ++it) acc = fma(acc, x, c(*it));
    return acc;
  }

  /// 2^n for integer n in [-126, 127] ([-1022, 1023] for double), from its exponent bits.
  Value* pow2i(Value* n) {
    if (isDouble()) return fromBits(b_.CreateShl(b_.CreateAdd(n, ci(1023)), ci(52)));
    return fromBits(b_.CreateShl(b_.CreateAdd(n, ci(127)), ci(23)));
  }
  bool isDouble() const { return fty_->getScalarType()->isDoubleTy(); }

  /// p * 2^n for n in [-252, 254]: two multiplications by normal powers of two, so a
  /// denormal result is rounded once (a single 2^n would not exist below 2^-126).
  Value* scale(Value* p, Value* n) {
    Value* n1 = b_.CreateAShr(n, ci(1));
    Value* n2 = b_.CreateSub(n, n1);
    return mul(mul(p, pow2i(n1)), pow2i(n2));
  }

  /// e^x = 2^n (1 + q) for x clamped to [-104, 90] (NaN-free): n = round(x / ln2), q =
  /// e^r - 1 on |r| <= ln2/2 by Cephes' expf polynomial (r + r^2 P(r)).
  void expParts(Value* x, Value** q, Value** n) {
    x = max(min(x, c(90.0f)), c(-104.0f));
    Value* nf = roundEven(mul(x, c(kLog2eHi)));
    Value* r = fma(nf, c(-kLn2Hi), x);  // exact: |x - n ln2_hi| < 1 on the grid of x
    r = fma(nf, c(-kLn2Lo), r);
    Value* p = poly(r, {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f, 4.1665795894E-2f, 1.6666665459E-1f,
                        5.0000001201E-1f});
    *q = fma(mul(r, r), p, r);
    *n = toInt(nf);
  }

  Value* exp(Value* x) {
    if (target_.exp2Intrinsic != 0 && !isDouble()) return expByExp2(x);
    Value *q, *n;
    expParts(x, &q, &n);
    Value* r = scale(add(c(1.0f), q), n);
    return sel(isNan(x), x, r);
  }

  /// e^x = 2^n 2^t with x log2(e) = n + t, |t| <= 1/2, 2^t from the target's approximate
  /// exp2 (MathTarget::exp2Intrinsic). The reduction is in base 2 with log2(e) in two parts
  /// (hi + lo carry ~48 bits: x log2(e)'s truncation is below 2^-40): -n = round(-x
  /// log2e_hi) by adding 1.5 2^23 to the exact product in an FMA (the sum's low bits are -n
  /// as an integer), then t = (x log2e_hi - n) + x log2e_lo, each FMA rounding once, so t
  /// is within 2^-25 of x log2(e) - n (half an ulp of |t| < 1/2 is at most 2^-26). That
  /// moves 2^t by at most ln2 2^-25 relative: 0.35 ulp. With the approximation's 2 ulp (PTX
  /// ISA, ex2.approx) and an exact scaling by 2^n, the result is within 2.35 ulp of e^x and
  /// 2.85 ulp of its correct rounding, the conformance suite's reference: under its 4 ulp
  /// (docs/conformance.md).
  /// The common lanes, |n| <= 124 (e^x normal, |x| below ~86), add n to 2^t's exponent
  /// field (the sum's bits shifted up by 23 are -n's: 1.5 2^23's low 9 bits are 0); x below
  /// -104 gives 0 (e^x rounds to 0: -inf, the masked scores of attention). The rest (NaN,
  /// overflow, denormal results, huge |x|) take a rarely run block, expByExp2Rare: about 11
  /// instructions a lane on the common path on NVPTX, against the polynomial's 30.
  Value* expByExp2(Value* x) {
    const float magic = 0x1.8p23f;  // |v| < 2^22 plus this rounds v to an integer in the low bits
    Value* s = fma(x, c(-kLog2eHi), c(magic));
    Value* t = fma(x, c(kLog2eLo), fma(x, c(kLog2eHi), sub(s, c(magic))));
    Value* sb = bits(s);
    Value* r = fromBits(b_.CreateSub(bits(exp2Approx(t)), b_.CreateShl(sb, ci(23))));
    // u = -n + 124 (unsigned) is at most 248 on the common lanes; huge for NaN and |x| >= 2^22.
    const int32_t magicBits = 0x4b400000;
    Value* zero = lt(x, c(-104.0f));
    r = sel(zero, c(0.0f), r);
    Value* u = sel(zero, ci(0), b_.CreateSub(sb, ci(magicBits - 124)));
    // Whether any lane is rare, as the lanes' unsigned maximum (NVPTX: max.u32; a reduction
    // of the lanes' i1 became 16-bit selects and shifts, 17 instructions for 4 lanes).
    Value* worst = fty_->isVectorTy() ? b_.CreateIntMaxReduce(u, /*IsSigned=*/false) : u;
    Value* any = b_.CreateICmpUGT(worst, b_.getInt32(248));
    return rareLanes(r, b_.CreateICmpUGT(u, ci(248)), any, [&] { return expByExp2Rare(x); });
  }
  /// The same for every x: clamped to [-104, 90] (inf -> inf, -inf -> 0), 2^n as two
  /// multiplications by normal powers of two (a denormal result is rounded once, in the
  /// second, within half its spacing). NaN passes through NaN-propagating clamps (then t, 2^t
  /// and the product are NaN whatever the scale factors are), else it is selected at the end.
  Value* expByExp2Rare(Value* x) {
    const float magic = 0x1.8p23f;
    Value* xc = target_.nanMinMax ? maximum(minimum(x, c(90.0f)), c(-104.0f)) : max(min(x, c(90.0f)), c(-104.0f));
    Value* s = fma(xc, c(-kLog2eHi), c(magic));
    Value* t = fma(xc, c(kLog2eLo), fma(xc, c(kLog2eHi), sub(s, c(magic))));
    // 2^n = 2^-a 2^-b with a = floor(-n / 2), b = -n - a: both normal for n in [-150, 130].
    Value* m = b_.CreateSub(bits(s), bits(c(magic)));
    Value* a = b_.CreateAShr(m, ci(1));
    auto pow2Neg = [&](Value* k) { return fromBits(b_.CreateShl(b_.CreateSub(ci(127), k), ci(23))); };
    Value* r = mul(mul(exp2Approx(t), pow2Neg(a)), pow2Neg(b_.CreateSub(m, a)));
    return target_.nanMinMax ? r : sel(isNan(x), x, r);
  }
  /// v, with the lanes where `need` holds replaced by compute()'s, computed in a block that
  /// runs only when `any` (some lane needs it; i1); the builder is left in the join block.
  Value* rareLanes(Value* v, Value* need, Value* any, const std::function<Value*()>& compute) {
    llvm::LLVMContext& ctx = b_.getContext();
    llvm::BasicBlock* cur = b_.GetInsertBlock();
    llvm::Function* fn = cur->getParent();
    llvm::BasicBlock* join;
    if (cur->getTerminator() != nullptr) {
      join = cur->splitBasicBlock(b_.GetInsertPoint(), "math.join");
      cur->getTerminator()->eraseFromParent();
    } else {
      join = llvm::BasicBlock::Create(ctx, "math.join", fn);
    }
    auto* rare = llvm::BasicBlock::Create(ctx, "math.rare", fn, join);
    b_.SetInsertPoint(cur);
    b_.CreateCondBr(any, rare, join, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 10));
    b_.SetInsertPoint(rare);
    Value* pick = sel(need, compute(), v);
    llvm::BasicBlock* rareEnd = b_.GetInsertBlock();
    b_.CreateBr(join);
    if (join->empty())
      b_.SetInsertPoint(join);
    else
      b_.SetInsertPoint(join, join->begin());
    llvm::PHINode* phi = b_.CreatePHI(fty_, 2, "math.result");
    phi->addIncoming(v, cur);
    phi->addIncoming(pick, rareEnd);
    return phi;
  }
  /// The target's 2^t per lane (the intrinsic takes scalars).
  Value* exp2Approx(Value* t) {
    const auto id = static_cast<llvm::Intrinsic::ID>(target_.exp2Intrinsic);
    std::vector<llvm::Type*> overload;  // llvm.exp2.f32 (the host's stand-in in tests) is overloaded
    if (llvm::Intrinsic::isOverloaded(id)) overload.push_back(fty_->getScalarType());
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(fty_);
    if (!vt) return b_.CreateIntrinsic(id, overload, {t});
    Value* out = llvm::PoisonValue::get(fty_);
    for (unsigned i = 0; i < vt->getNumElements(); ++i)
      out = b_.CreateInsertElement(out, b_.CreateIntrinsic(id, overload, {b_.CreateExtractElement(t, i)}), i);
    return out;
  }

  /// e^x - 1 = 2 (2^(n-1) q + (2^(n-1) - 1/2)): one rounding after the FMA, exact for n = 0.
  Value* expm1(Value* x) {
    Value *q, *n;
    expParts(max(min(x, c(88.8f)), c(-30.0f)), &q, &n);
    Value* h = pow2i(b_.CreateSub(n, ci(1)));
    Value* r = mul(c(2.0f), fma(h, q, sub(h, c(0.5f))));
    return sel(b_.CreateOr(isNan(x), eq(x, c(0.0f))), x, r);  // NaN, and -0 stays -0
  }

  /// Splits positive finite x (denormals included) into 2^e (1 + f), 1 + f in
  /// [sqrt(1/2), sqrt(2)), and returns log1p(f) - f (Cephes' logf polynomial): f, e (float).
  /// x = 2^k m, m in [sqrt(1/2), sqrt(2)), for positive finite x (denormals too); m exact.
  void split(Value* x, Value** m, Value** k) {
    Value* tiny = lt(x, c(0x1p-126f));
    x = sel(tiny, mul(x, c(0x1p23f)), x);
    Value* i = b_.CreateSub(bits(x), ci(0x3f3504f3));  // bits of sqrt(1/2)
    *k = sel(tiny, b_.CreateSub(b_.CreateAShr(i, ci(23)), ci(23)), b_.CreateAShr(i, ci(23)));
    *m = fromBits(b_.CreateAdd(b_.CreateAnd(i, ci(0x7fffff)), ci(0x3f3504f3)));
  }

  Value* logParts(Value* x, Value** f, Value** e) {
    Value *m, *k;
    split(x, &m, &k);
    *f = sub(m, c(1.0f));  // exact (Sterbenz)
    *e = toFloat(k);
    Value* z = mul(*f, *f);
    Value* p = poly(*f, {7.0376836292E-2f, -1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f, 1.4249322787E-1f,
                         -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f});
    return fma(z, c(-0.5f), mul(mul(*f, z), p));
  }

  /// log's special values: x < 0 or NaN -> NaN, 0 -> -inf, inf -> inf.
  Value* logSpecial(Value* x, Value* finite, Value* zeroAt) {
    Value* special = sel(eq(x, zeroAt), c(-kInf), sel(eq(x, c(kInf)), x, c(__builtin_nanf(""))));
    return sel(b_.CreateAnd(gt(x, zeroAt), lt(x, c(kInf))), finite, special);
  }

  Value* log(Value* x) {
    Value *f, *e;
    Value* y = logParts(sel(gt(x, c(0.0f)), x, c(1.0f)), &f, &e);
    Value* r = fma(e, c(kLn2Hi), add(f, fma(e, c(kLn2Lo), y)));
    return logSpecial(x, r, c(0.0f));
  }

  Value* log2(Value* x) {
    Value *f, *e;
    Value* y = logParts(sel(gt(x, c(0.0f)), x, c(1.0f)), &f, &e);
    // (f + y) log2(e) with log2(e) in two parts, then + e (exact when e = 0).
    Value* t = fma(f, c(kLog2eHi), fma(f, c(kLog2eLo), mul(y, c(kLog2eHi))));
    return logSpecial(x, add(e, t), c(0.0f));
  }

  /// log1p(x) = log(u) + c/u with u = 1 + x rounded and c = x - (u - 1) its rounding error.
  Value* log1p(Value* x) {
    Value* ok = gt(x, c(-1.0f));
    Value* xs = sel(ok, x, c(0.0f));
    Value* u = add(c(1.0f), xs);
    Value* corr = div(sub(xs, sub(u, c(1.0f))), u);
    Value *f, *e;
    Value* y = logParts(u, &f, &e);
    Value* r = fma(e, c(kLn2Hi), add(f, fma(e, c(kLn2Lo), add(y, corr))));
    r = sel(eq(x, c(0.0f)), x, r);  // -0 stays -0
    return logSpecial(x, r, c(-1.0f));
  }

  /// Quadrant j (int) and r = x - j pi/2 for |x| <= kTrigFastLimit (three-part pi/2, FMA).
  void trigReduce(Value* x, Value** r, Value** j) {
    Value* jf = roundEven(mul(x, c(kTwoOverPi)));
    Value* t = fma(jf, c(-kPio2Hi), x);  // exact: on the 2^-23 grid and below 1 in magnitude
    t = fma(jf, c(-kPio2Lo), t);
    *r = fma(jf, c(-kPio2Lo2), t);
    *j = toInt(jf);
  }
  /// The same in double (tan, whose -1/tan(r) leaves no slack for the two roundings of r
  /// above): r correctly rounded to float up to a 2^-50 relative error.
  void trigReducePrecise(Value* x, Value** r, Value** j) {
    Emitter d(b_, doubleType());
    Value* xd = b_.CreateFPExt(x, d.fty());
    Value* jd = d.roundEven(d.mul(xd, d.c(0.63661977236758134308)));
    Value* rd = d.fma(jd, d.c(-1.5707963267948965580), xd);  // pi/2 in two doubles
    rd = d.fma(jd, d.c(-6.1232339957367658e-17), rd);
    *r = b_.CreateFPTrunc(rd, fty_);
    *j = b_.CreateFPToSI(jd, ity_);
  }
  llvm::Type* doubleType() {
    return fty_->isVectorTy()
               ? llvm::VectorType::get(b_.getDoubleTy(), llvm::cast<llvm::VectorType>(fty_)->getElementCount())
               : b_.getDoubleTy();
  }
  // Cephes sinf/cosf polynomials on |r| <= pi/4.
  Value* sinPoly(Value* r, Value* z) {
    Value* p = poly(z, {-1.9515295891E-4f, 8.3321608736E-3f, -1.6666654611E-1f});
    return fma(mul(r, z), p, r);
  }
  Value* cosPoly(Value* z) {
    Value* p = poly(z, {2.443315711809948E-5f, -1.388731625493765E-3f, 4.166664568298827E-2f});
    return add(c(1.0f), fma(mul(z, z), p, mul(z, c(-0.5f))));
  }

  /// sin (cosine = false) or cos of x; lanes with |x| > kTrigFastLimit call libm.
  Value* sinCos(Value* x, bool cosine) {
    Value* fast = le(abs(x), c(kTrigFastLimit));
    Value *r, *j;
    trigReduce(sel(fast, x, c(0.0f)), &r, &j);
    return slowLanes(trigValue(x, fast, r, j, cosine), x, nullptr, fast, cosine ? "cosf" : "sinf");
  }
  /// sin and cos of one x from one reduction, with one rare block for both (apart, the second's
  /// reduction stays live across the first's libm calls: 57 registers a thread instead of 32).
  std::pair<Value*, Value*> sinAndCos(Value* x) {
    Value* fast = le(abs(x), c(kTrigFastLimit));
    Value *r, *j;
    trigReduce(sel(fast, x, c(0.0f)), &r, &j);
    std::vector<Value*> v = slowLanesN({trigValue(x, fast, r, j, false), trigValue(x, fast, r, j, true)}, x, nullptr,
                                       fast, {"sinf", "cosf"});
    return {v[0], v[1]};
  }
  /// The fast lanes' sin or cos from the reduction (r, quadrant j); NaN where x is not finite.
  Value* trigValue(Value* x, Value* fast, Value* r, Value* j, bool cosine) {
    if (cosine) j = b_.CreateAdd(j, ci(1));
    Value* z = mul(r, r);
    Value* v = sel(b_.CreateICmpNE(b_.CreateAnd(j, ci(1)), ci(0)), cosPoly(z), sinPoly(r, z));
    Value* flip = b_.CreateShl(b_.CreateAnd(j, ci(2)), ci(30));  // sign bit for quadrants 2, 3
    v = fromBits(b_.CreateXor(bits(v), flip));
    if (!cosine) v = sel(eq(x, c(0.0f)), x, v);  // sin(-0) = -0
    return sel(fast, v, sub(x, x));              // inf and NaN -> NaN
  }

  Value* tan(Value* x) {
    Value* fast = le(abs(x), c(kTrigFastLimit));
    Value* xs = sel(fast, x, c(0.0f));
    Value *r, *j;
    trigReducePrecise(xs, &r, &j);
    // Cephes tanf's polynomial on |r| <= pi/4; -1/tan(r) in the odd quadrants.
    Value* z = mul(r, r);
    Value* p = poly(z, {9.38540185543E-3f, 3.11992232697E-3f, 2.44301354525E-2f, 5.34112807005E-2f, 1.33387994085E-1f,
                        3.33331568548E-1f});
    Value* t = fma(mul(r, z), p, r);
    Value* odd = b_.CreateICmpNE(b_.CreateAnd(j, ci(1)), ci(0));
    Value* v = sel(odd, div(c(-1.0f), t), t);
    v = sel(eq(x, c(0.0f)), x, v);
    v = sel(fast, v, sub(x, x));
    return slowLanes(v, x, nullptr, fast, "tanf");
  }

  /// tanh(|x|): below 0.625 Cephes' tanhf polynomial (a + a z P(z)); above, expm1(2|x|) /
  /// (expm1(2|x|) + 2) (no cancellation there), 1 from |x| = 9 (tanh rounds to 1).
  Value* tanh(Value* x) {
    Value* a = abs(x);
    Value* em = expm1(min(mul(a, c(2.0f)), c(18.0f)));
    Value* t = div(em, add(em, c(2.0f)));
    Value* z = mul(a, a);
    Value* p =
        poly(z, {-5.70498872745E-3f, 2.06390887954E-2f, -5.37397155531E-2f, 1.33314422036E-1f, -3.33332819422E-1f});
    t = sel(lt(a, c(0.625f)), fma(mul(a, z), p, a), t);
    t = sel(lt(a, c(9.0f)), t, c(1.0f));
    return sel(isNan(x), x, copySign(t, x));
  }

  /// erf: |x| < 1: x (c0 + t Q(t)), t = x^2, with c0 = 2/sqrt(pi) in two parts; 1 <= |x|:
  /// 1 - e^(-x^2) R(|x| - 1). Q and R are our minimax fits (docs/cpu-math.md).
  Value* erf(Value* x) {
    Value* a = abs(x);
    Value* t = mul(a, a);
    Value* q = poly(t, {7.842548803e-05f, -8.009398589e-04f, 5.188598298e-03f, -2.685420215e-02f, 1.128360331e-01f,
                        -3.761262894e-01f});
    Value* small = fma(a, c(1.128379226e+00f), mul(a, fma(t, q, c(-5.863538277e-08f))));
    Value* ab = min(a, c(4.0f));  // erf rounds to 1 from 3.92
    Value* rp = poly(sub(ab, c(1.0f)),
                     {-2.796194167e-05f, 3.203647211e-04f, -1.712567871e-03f, 5.956149194e-03f, -1.604246348e-02f,
                      3.734305874e-02f, -7.917941362e-02f, 1.543667465e-01f, -2.732118368e-01f, 4.275835752e-01f});
    Value* big = fma(neg(exp(neg(mul(ab, ab)))), rp, c(1.0f));
    Value* v = copySign(sel(lt(a, c(1.0f)), small, big), x);
    return sel(isNan(x), x, v);
  }

  /// sinh and cosh from h = e^|x| / 2 (scaled as 2^(n-1) (1 + q), so no early overflow):
  /// h -+ 1/(4h); sinh of |x| < 1 by its Taylor series (truncation < 2^-32).
  Value* sinhCosh(Value* x, bool cosine) {
    Value* a = abs(x);
    Value *q, *n;
    expParts(a, &q, &n);
    Value* h = scale(add(c(1.0f), q), b_.CreateSub(n, ci(1)));
    Value* quarter = div(c(0.25f), h);
    if (cosine) return sel(isNan(x), x, add(h, quarter));
    Value* t = mul(a, a);
    Value* p = poly(t, {1.0f / 39916800.0f, 1.0f / 362880.0f, 1.0f / 5040.0f, 1.0f / 120.0f, 1.0f / 6.0f});
    Value* small = fma(mul(a, t), p, a);
    Value* v = sel(lt(a, c(1.0f)), small, sub(h, quarter));
    return sel(isNan(x), x, copySign(v, x));
  }

  /// atan of s in [0, inf] (Cephes atanf: reduced by pi/4 or pi/2 to |s'| <= tan(pi/8)).
  Value* atanPositive(Value* s) {
    Value* big = gt(s, c(2.414213562373095f));
    Value* mid = gt(s, c(0.4142135623730950f));
    Value* sr = sel(big, div(c(-1.0f), s), sel(mid, div(sub(s, c(1.0f)), add(s, c(1.0f))), s));
    Value* hi = sel(big, c(kPio2Hi), sel(mid, c(kPio4Hi), c(0.0f)));
    Value* lo = sel(big, c(kPio2Lo), sel(mid, c(kPio4Lo), c(0.0f)));
    Value* z = mul(sr, sr);
    Value* p = poly(z, {8.05374449538e-2f, -1.38776856032E-1f, 1.99777106478E-1f, -3.33329491539E-1f});
    return add(hi, add(fma(mul(sr, z), p, sr), lo));
  }

  Value* atan(Value* x) { return copySign(atanPositive(abs(x)), x); }

  /// atan2(y, x): the first-quadrant angle from min/max, then mirrored by the signs.
  Value* atan2(Value* y, Value* x) {
    Value* ay = abs(y);
    Value* ax = abs(x);
    Value* yBig = gt(ay, ax);
    Value* s = div(sel(yBig, ax, ay), sel(yBig, ay, ax));
    s = sel(b_.CreateAnd(eq(ax, c(kInf)), eq(ay, c(kInf))), c(1.0f), s);
    s = sel(b_.CreateAnd(eq(ax, c(0.0f)), eq(ay, c(0.0f))), c(0.0f), s);
    Value* r = atanPositive(s);
    // The angle is hi + lo +- r: r, pi/2 - r, pi/2 + r or pi - r by quadrant.
    Value* xNeg = signBit(x);
    Value* hi = sel(yBig, c(kPio2Hi), sel(xNeg, c(kPiHi), c(0.0f)));
    Value* lo = sel(yBig, c(kPio2Lo), sel(xNeg, c(kPiLo), c(0.0f)));
    Value* sr = sel(b_.CreateXor(yBig, xNeg), neg(r), r);
    return copySign(add(hi, add(lo, sr)), y);  // NaN inputs give NaN through s
  }

  /// asin(s) for |s| <= 1/2, z = s^2 (Cephes asinf's polynomial). asin and acos reduce
  /// |x| > 1/2 to it through asin(a) = pi/2 - 2 asin(sqrt((1-a)/2)).
  Value* asinPoly(Value* s, Value* z) {
    Value* p = poly(z, {4.2163199048E-2f, 2.4181311049E-2f, 4.5470025998E-2f, 7.4953002686E-2f, 1.6666752422E-1f});
    return fma(mul(s, z), p, s);
  }
  Value* asin(Value* x) {
    Value* a = abs(x);
    Value* upper = gt(a, c(0.5f));
    Value* zu = mul(c(0.5f), sub(c(1.0f), a));
    Value* z = sel(upper, zu, mul(a, a));
    Value* s = sel(upper, sqrt(zu), a);
    Value* w = asinPoly(s, z);
    Value* v = sel(upper, add(c(kPio2Hi), fma(w, c(-2.0f), c(kPio2Lo))), w);
    return copySign(v, x);  // |x| > 1 and NaN: NaN from sqrt
  }
  Value* acos(Value* x) {
    Value* a = abs(x);
    Value* upper = gt(a, c(0.5f));
    Value* zu = mul(c(0.5f), sub(c(1.0f), a));
    Value* z = sel(upper, zu, mul(a, a));
    Value* s = sel(upper, sqrt(zu), x);
    Value* w = asinPoly(s, z);
    Value* mid = add(c(kPio2Hi), sub(c(kPio2Lo), w));         // pi/2 - asin(x)
    Value* pos = mul(c(2.0f), w);                             // x > 1/2
    Value* negv = add(c(kPiHi), fma(w, c(-2.0f), c(kPiLo)));  // x < -1/2
    return sel(upper, sel(signBit(x), negv, pos), mid);
  }

  /// asinh(|x|) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) below 2, log(2a + 1/(sqrt(a^2+1) + a))
  /// up to 2^28, log(a) + ln 2 above (a^2 would overflow).
  Value* asinh(Value* x) {
    Value* a = abs(x);
    Value* huge = gt(a, c(0x1p28f));
    Value* t = mul(a, a);
    Value* sq = sqrt(add(t, c(1.0f)));
    Value* small = log1p(add(a, div(t, add(c(1.0f), sq))));
    Value* big = log(sel(huge, a, add(mul(a, c(2.0f)), div(c(1.0f), add(sq, a)))));
    big = add(big, sel(huge, c(kLn2Hi), c(0.0f)));
    Value* v = sel(lt(a, c(2.0f)), small, big);
    return sel(isNan(x), x, copySign(v, x));
  }

  /// acosh: log1p(t + sqrt(2t + t^2)), t = x - 1 (exact) below 2; log(2x - 1/(x + sqrt(x^2-1)))
  /// up to 2^28; log(x) + ln 2 above. x < 1 -> NaN (log1p of a negative below -1, or sqrt).
  Value* acosh(Value* x) {
    Value* huge = gt(x, c(0x1p28f));
    Value* t = sub(x, c(1.0f));
    Value* small = log1p(add(t, sqrt(fma(t, t, mul(t, c(2.0f))))));
    Value* sq = sqrt(fma(x, x, c(-1.0f)));
    Value* big = log(sel(huge, x, sub(mul(x, c(2.0f)), div(c(1.0f), add(x, sq)))));
    big = add(big, sel(huge, c(kLn2Hi), c(0.0f)));
    Value* v = sel(lt(x, c(2.0f)), small, big);
    return sel(lt(x, c(1.0f)), c(__builtin_nanf("")), v);
  }

  /// atanh(|x|) = log1p(2a + 2a^2 / (1 - a)) / 2 (fdlibm's form: exact 2a plus a correction).
  Value* atanh(Value* x) {
    Value* a = abs(x);
    Value* t = add(a, a);
    Value* v = mul(c(0.5f), log1p(add(t, div(mul(t, a), sub(c(1.0f), a)))));
    v = sel(gt(a, c(1.0f)), c(__builtin_nanf("")), v);
    return sel(isNan(x), x, copySign(v, x));
  }

  /// pow(x, y) = 2^(y log2|x|) evaluated in double (|y log2 x| < 2^8 needs log2 to ~2^-34):
  /// log2 m = 2 atanh((m-1)/(m+1)) / ln 2 by its series, 2^r (|r| <= 1/2) by Taylor, one
  /// rounding to float at the end (so denormal results are right). The sign and Annex F's
  /// special cases are selected afterwards.
  Value* pow(Value* x, Value* y) {
    llvm::Type* dty = doubleType();
    Emitter d(b_, dty);
    Value* ax = abs(x);
    Value* finitePos = b_.CreateAnd(gt(ax, c(0.0f)), lt(ax, c(kInf)));
    Value *m, *k;
    split(sel(finitePos, ax, c(1.0f)), &m, &k);
    Value* md = b_.CreateFPExt(m, dty);
    Value* s = d.div(d.sub(md, d.c(1.0)), d.add(md, d.c(1.0)));  // |s| <= 0.172
    Value* s2 = d.mul(s, s);
    Value* ser = d.poly(s2, {1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0});
    Value* l2 = d.fma(d.mul(s, ser), d.c(2.0 / 0.6931471805599453094), b_.CreateSIToFP(k, dty));
    // |x| = 0 or inf: log2 = -inf or inf; NaN stays NaN.
    Value* xd = b_.CreateFPExt(ax, dty);
    l2 = d.sel(finitePos, l2, d.sel(eq(ax, c(0.0f)), d.c(-kInf), xd));
    Value* t = d.mul(b_.CreateFPExt(y, dty), l2);
    Value* tc = d.max(d.min(t, d.c(200.0)), d.c(-200.0));  // NaN -> clamped; fixed below
    Value* n = d.roundEven(tc);
    Value* r = d.mul(d.sub(tc, n), d.c(0.6931471805599453094));
    Value* e = d.poly(r, {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120,
                          1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0});
    llvm::Type* i64 = dty->getWithNewType(b_.getInt64Ty());
    Value* ni = b_.CreateFPToSI(n, i64);
    Value* p2 = b_.CreateBitCast(
        b_.CreateShl(b_.CreateAdd(ni, llvm::ConstantInt::get(i64, 1023)), llvm::ConstantInt::get(i64, 52)), dty);
    Value* v = b_.CreateFPTrunc(d.mul(e, p2), fty_);
    v = sel(isNan(t), c(__builtin_nanf("")), v);
    // Negative x: an odd integer y negates, a non-integer y is NaN (finite x only).
    Value* ay = abs(y);
    Value* yInt = eq(roundEven(y), y);
    Value* yOdd = b_.CreateAnd(b_.CreateAnd(yInt, lt(ay, c(0x1p24f))),
                               b_.CreateICmpNE(b_.CreateAnd(toInt(sel(lt(ay, c(0x1p24f)), y, c(0.0f))), ci(1)), ci(0)));
    Value* xNeg = signBit(x);
    v = sel(b_.CreateAnd(xNeg, yOdd), neg(v), v);
    Value* badNeg =
        b_.CreateAnd(b_.CreateAnd(lt(x, c(0.0f)), gt(x, c(-kInf))), b_.CreateAnd(b_.CreateNot(yInt), lt(ay, c(kInf))));
    v = sel(badNeg, c(__builtin_nanf("")), v);
    // pow(-1, +-inf) = 1 (|x| = 1 with infinite y gives 0 * inf above), pow(1, y) = 1 and
    // pow(x, +-0) = 1 even for NaN.
    Value* one =
        b_.CreateOr(b_.CreateOr(eq(x, c(1.0f)), eq(y, c(0.0f))), b_.CreateAnd(eq(x, c(-1.0f)), eq(ay, c(kInf))));
    return sel(one, c(1.0f), v);
  }

  // ---- f64: the same reductions with double constants, and Taylor / atanh series long
  // enough for a truncation below 2^-56 (no coefficients to trust but the series' own).

  /// e^x = 2^n (1 + q) for x clamped to [-746, 712] (past sinh and cosh overflow at 710.48):
  /// q = e^r - 1 by Taylor to r^13.
  void expParts64(Value* x, Value** q, Value** n) {
    x = max(min(x, c(712.0)), c(-746.0));
    Value* nf = roundEven(mul(x, c(1.4426950408889634)));
    Value* r = fma(nf, c(-6.93147180369123816490e-01), x);  // fdlibm's ln2 head: exact
    r = fma(nf, c(-1.9082149292705877e-10), r);
    Value* p = poly(r, {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                        1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5});
    *q = fma(mul(r, r), p, r);
    *n = toInt(nf);
  }
  Value* exp64(Value* x) {
    Value *q, *n;
    expParts64(x, &q, &n);
    return sel(isNan(x), x, scale(add(c(1.0), q), n));
  }
  Value* expm164(Value* x) {
    Value *q, *n;
    expParts64(max(min(x, c(709.8)), c(-40.0)), &q, &n);
    Value* h = pow2i(b_.CreateSub(n, ci(1)));
    Value* r = mul(c(2.0), fma(h, q, sub(h, c(0.5))));
    return sel(b_.CreateOr(isNan(x), eq(x, c(0.0))), x, r);
  }
  /// log: x = 2^k m, m in [sqrt(1/2), sqrt(2)); log m = fdlibm's f - (f^2/2 - s (f^2/2 + R)),
  /// s = f / (2 + f), R the atanh series in s^2 to s^22. For positive finite x; `corr` is
  /// added to the small terms (log1p's rounding correction); `log2` scales by log2(e).
  Value* logCore64(Value* xs, Value* corr, bool log2) {
    Value* tiny = lt(xs, c(0x1p-1022));
    xs = sel(tiny, mul(xs, c(0x1p54)), xs);
    const int64_t sqrtHalf = 0x3fe6a09e667f3bcdLL;
    Value* i = b_.CreateSub(bits(xs), ci64(sqrtHalf));
    Value* k = b_.CreateAShr(i, ci(52));
    k = sel(tiny, b_.CreateSub(k, ci(54)), k);
    Value* m = fromBits(b_.CreateAdd(b_.CreateAnd(i, ci64(0x000fffffffffffffLL)), ci64(sqrtHalf)));
    Value* f = sub(m, c(1.0));
    Value* sv = div(f, add(c(2.0), f));
    Value* z = mul(sv, sv);
    Value* rr = mul(z, poly(z, {2.0 / 23, 2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9, 2.0 / 7,
                                2.0 / 5, 2.0 / 3}));
    Value* hfsq = mul(c(0.5), mul(f, f));
    Value* kd = toFloat(k);
    if (log2) {
      Value* l = sub(f, sub(hfsq, fma(sv, add(hfsq, rr), corr != nullptr ? corr : c(0.0))));
      return add(kd, fma(l, c(1.4426950408889634), mul(l, c(2.0355273740931033e-17))));
    }
    Value* small = mul(kd, c(1.9082149292705877e-10));
    if (corr != nullptr) small = add(small, corr);
    Value* inner = sub(hfsq, fma(sv, add(hfsq, rr), small));
    return fma(kd, c(6.93147180369123816490e-01), sub(f, inner));
  }
  /// log's special values: below zeroAt (or NaN) NaN, at zeroAt -inf, inf -> inf.
  Value* logSpecial64(Value* x, Value* finite, Value* zeroAt) {
    Value* special = sel(eq(x, zeroAt), c(-kInf), sel(eq(x, c(kInf)), x, c(__builtin_nan(""))));
    return sel(b_.CreateAnd(gt(x, zeroAt), lt(x, c(kInf))), finite, special);
  }
  Value* log64(Value* x, bool log2) {
    return logSpecial64(x, logCore64(sel(gt(x, c(0.0)), x, c(1.0)), nullptr, log2), c(0.0));
  }
  /// log1p(x) = log(u) + c/u, u = 1 + x rounded, c = x - (u - 1) its rounding error.
  Value* log1p64(Value* x) {
    Value* xs = sel(gt(x, c(-1.0)), x, c(0.0));
    Value* u = add(c(1.0), xs);
    Value* corr = div(sub(xs, sub(u, c(1.0))), u);
    Value* r = sel(eq(x, c(0.0)), x, logCore64(u, corr, false));
    return logSpecial64(x, r, c(-1.0));
  }
  /// sinh, cosh: h = e^|x| / 2 as 2^(n-1) (1 + q); h -+ 1/(4h); sinh of |x| < 1 by Taylor to x^21.
  Value* sinhCosh64(Value* x, bool cosine) {
    Value* a = abs(x);
    Value *q, *n;
    expParts64(a, &q, &n);
    Value* h = scale(add(c(1.0), q), b_.CreateSub(n, ci(1)));
    Value* quarter = div(c(0.25), h);
    if (cosine) return sel(isNan(x), x, add(h, quarter));
    Value* t = mul(a, a);
    Value* p = poly(
        t, {1.0 / 51090942171709440000.0, 1.0 / 121645100408832000.0, 1.0 / 355687428096000.0, 1.0 / 1307674368000.0,
            1.0 / 6227020800.0, 1.0 / 39916800.0, 1.0 / 362880.0, 1.0 / 5040.0, 1.0 / 120.0, 1.0 / 6.0});
    Value* v = sel(lt(a, c(1.0)), fma(mul(a, t), p, a), sub(h, quarter));
    return sel(isNan(x), x, copySign(v, x));
  }
  /// sin / cos: j = round(x 2/pi), r = x - j pi/2 (three doubles, FMA) for |x| <= 1e5, Taylor
  /// series of sin and cos on |r| <= pi/4 (to r^19 and r^18); libm beyond.
  Value* sinCos64(Value* x, bool cosine) {
    Value* fast = le(abs(x), c(1.0e5));
    Value* xs = sel(fast, x, c(0.0));
    Value* jf = roundEven(mul(xs, c(0.6366197723675814)));
    Value* r = fma(jf, c(-1.5707963267948966), xs);
    r = fma(jf, c(-6.123233995736766e-17), r);
    r = fma(jf, c(1.4973849048591698e-33), r);
    Value* j = toInt(jf);
    if (cosine) j = b_.CreateAdd(j, ci(1));
    Value* z = mul(r, r);
    Value* sp =
        poly(z, {1.0 / 121645100408832000.0, -1.0 / 355687428096000.0, 1.0 / 1307674368000.0, -1.0 / 6227020800.0,
                 1.0 / 39916800.0, -1.0 / 362880.0, 1.0 / 5040.0, -1.0 / 120.0, 1.0 / 6.0});
    Value* sn = fma(mul(r, z), neg(sp), r);
    Value* cp = poly(z, {1.0 / 6402373705728000.0, -1.0 / 20922789888000.0, 1.0 / 87178291200.0, -1.0 / 479001600.0,
                         1.0 / 3628800.0, -1.0 / 40320.0, 1.0 / 720.0, -1.0 / 24.0});
    Value* cs = add(c(1.0), fma(mul(z, z), neg(cp), mul(z, c(-0.5))));
    Value* v = sel(b_.CreateICmpNE(b_.CreateAnd(j, ci(1)), ci(0)), cs, sn);
    v = fromBits(b_.CreateXor(bits(v), b_.CreateShl(b_.CreateAnd(j, ci(2)), ci(62))));
    if (!cosine) v = sel(eq(x, c(0.0)), x, v);
    v = sel(fast, v, sub(x, x));
    return slowLanes(v, x, nullptr, fast, cosine ? "cos" : "sin");
  }
  /// tanh(|x|) = expm1(2|x|) / (expm1(2|x|) + 2), 1 from 22.
  Value* tanh64(Value* x) {
    Value* a = abs(x);
    Value* em = expm164(min(mul(a, c(2.0)), c(44.0)));
    Value* t = sel(lt(a, c(22.0)), div(em, add(em, c(2.0))), c(1.0));
    return sel(isNan(x), x, copySign(t, x));
  }
  /// erf: |x| < 0.75: x (c0 + t Q(t)), t = x^2, Q erf's Taylor series to t^15, c0 = 2/sqrt(pi)
  /// in two parts; to 6: 1 - e^(-x^2) erfcx(|x|), erfcx a degree-31 polynomial (the
  /// Chebyshev interpolant); 1 beyond (tools/fit_math_poly.py erf64).
  Value* erf64(Value* x) {
    Value* a = abs(x);
    Value* t = mul(a, a);
    Value* q =
        poly(t, {1.6342614095367152e-15, -2.7835162072109215e-14, 4.4632242632864775e-13, -6.7113668551641105e-12,
                 9.422759064650411e-11, -1.2290555301717928e-09, 1.4807192815879218e-08, -1.6365844691234924e-07,
                 1.6462114365889248e-06, -1.492565035840625e-05, 0.00012055332981789664, -0.0008548327023450853,
                 0.005223977625442188, -0.026866170645131252, 0.11283791670955126, -0.37612638903183754});
    Value* small = fma(a, c(1.1283791670955126), mul(a, fma(t, q, c(1.533545961316588e-17))));
    Value* ab = max(min(a, c(6.0)), c(0.75));
    Value* u = fma(ab, c(2.0 / 5.25), c(-6.75 / 5.25));  // [0.75, 6] -> [-1, 1]
    // erfcx's 32-point Chebyshev interpolant, as a polynomial in u (well conditioned: the
    // sum of |coefficients| is 0.507, erfcx at most 0.506).
    Value* r =
        poly(u, {-2.6802472120613013e-09, 6.321336468023788e-09,  6.659282673577688e-09,   -1.6298439866112645e-08,
                 -3.822592977767963e-08,  8.852212967414102e-08,  -3.45961508703767e-08,   6.578567249224377e-08,
                 -3.638580241129997e-07,  7.76768835075709e-07,   -1.3918348949938152e-06, 2.84812296596005e-06,
                 -5.93598813144596e-06,   1.1886858117983153e-05, -2.3386647193577104e-05, 4.553514443355814e-05,
                 -8.74248849608736e-05,   0.00016529044173578227, -0.0003076640000166943,  0.0005634768498201195,
                 -0.0010146946813204191,  0.0017952548808709814,  -0.0031180996403077084,  0.005311664421131707,
                 -0.008865592817558105,   0.014482034519169011,   -0.023122916922887638,   0.0360345680789263,
                 -0.054719425869450625,   0.08081256050359194,    -0.11581357525851184,    0.1606310681265444});
    // The rounding of x^2 moves e^(-x^2) by < 6.7e-15 relative where erfc(x) < 2^-40 and by
    // < 0.3 ulp of erf below, so no head-and-tail product is needed (measured: no change).
    Value* e = exp64(neg(mul(ab, ab)));
    Value* big = fma(neg(e), r, c(1.0));
    Value* v = sel(lt(a, c(0.75)), small, sel(lt(a, c(6.0)), big, c(1.0)));
    return sel(isNan(x), x, copySign(v, x));
  }
  Value* ci64(int64_t v) { return llvm::ConstantInt::get(ity_, static_cast<uint64_t>(v), true); }

  /// Lanes where `fast` is false and x is finite get libm's value (a rarely taken block).
  Value* slowLanes(Value* v, Value* x, Value* y, Value* fast, const char* libm) {
    return slowLanesN({v}, x, y, fast, {libm})[0];
  }
  /// The same for several functions of the same arguments in one block: vs[f] from libms[f].
  std::vector<Value*> slowLanesN(const std::vector<Value*>& vs, Value* x, Value* y, Value* fast,
                                 const std::vector<const char*>& libms) {
    Value* need = b_.CreateAnd(b_.CreateNot(fast), b_.CreateFCmpOLT(abs(x), c(kInf)));
    unsigned lanes = 1;
    Value* any = need;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(fty_)) {
      lanes = vt->getNumElements();
      any = b_.CreateICmpNE(b_.CreateBitCast(need, b_.getIntNTy(lanes)), b_.getIntN(lanes, 0));
    }
    llvm::LLVMContext& ctx = b_.getContext();
    llvm::BasicBlock* cur = b_.GetInsertBlock();
    llvm::Function* fn = cur->getParent();
    llvm::Module* m = fn->getParent();
    // Split at the insertion point when the block is complete; else the join block is new.
    llvm::BasicBlock* join;
    if (cur->getTerminator() != nullptr) {
      join = cur->splitBasicBlock(b_.GetInsertPoint(), "math.join");
      cur->getTerminator()->eraseFromParent();
    } else {
      join = llvm::BasicBlock::Create(ctx, "math.join", fn);
    }
    auto* slow = llvm::BasicBlock::Create(ctx, "math.slow", fn, join);
    b_.SetInsertPoint(cur);
    b_.CreateCondBr(any, slow, join, llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(slow);
    llvm::Type* el = fty_->getScalarType();
    auto* fty = y != nullptr ? llvm::FunctionType::get(el, {el, el}, false) : llvm::FunctionType::get(el, {el}, false);
    std::vector<Value*> outs = vs;
    for (unsigned i = 0; i < lanes; ++i) {
      auto lane = [&](Value* w) { return lanes == 1 ? w : b_.CreateExtractElement(w, i); };
      for (size_t f = 0; f < vs.size(); ++f) {
        llvm::FunctionCallee callee = m->getOrInsertFunction(libms[f], fty);
        llvm::CallInst* call =
            y != nullptr ? b_.CreateCall(callee, {lane(x), lane(y)}) : b_.CreateCall(callee, {lane(x)});
        // Rare: kept out of line where the function's body is linked in (libdevice on the GPU:
        // inlined, its Payne-Hanek reduction per lane and per function made a pointwise kernel
        // thousands of instructions long).
        call->addFnAttr(llvm::Attribute::NoInline);
        call->addFnAttr(llvm::Attribute::Cold);
        Value* pick = b_.CreateSelect(lane(need), call, lane(vs[f]));
        outs[f] = lanes == 1 ? pick : b_.CreateInsertElement(outs[f], pick, i);
      }
    }
    b_.CreateBr(join);
    if (join->empty()) {
      b_.SetInsertPoint(join);
    } else {
      b_.SetInsertPoint(join, join->begin());
    }
    std::vector<Value*> results;
    for (size_t f = 0; f < vs.size(); ++f) {
      llvm::PHINode* phi = b_.CreatePHI(fty_, 2, "math.result");
      phi->addIncoming(vs[f], cur);
      phi->addIncoming(outs[f], slow);
      results.push_back(phi);
    }
    return results;
  }

 private:
  llvm::IRBuilderBase& b_;
  llvm::Type* fty_;
  llvm::Type* ity_;
  MathTarget target_;
};

}  // namespace

const char* libmNameF32(MathFn fn) {
  switch (fn) {
    case MathFn::kExp: return "expf";
    case MathFn::kExpm1: return "expm1f";
    case MathFn::kLog: return "logf";
    case MathFn::kLog1p: return "log1pf";
    case MathFn::kLog2: return "log2f";
    case MathFn::kSin: return "sinf";
    case MathFn::kCos: return "cosf";
    case MathFn::kTan: return "tanf";
    case MathFn::kTanh: return "tanhf";
    case MathFn::kErf: return "erff";
    case MathFn::kSinh: return "sinhf";
    case MathFn::kCosh: return "coshf";
    case MathFn::kAtan: return "atanf";
    case MathFn::kAsin: return "asinf";
    case MathFn::kAcos: return "acosf";
    case MathFn::kAsinh: return "asinhf";
    case MathFn::kAcosh: return "acoshf";
    case MathFn::kAtanh: return "atanhf";
    case MathFn::kAtan2: return "atan2f";
    case MathFn::kPow: return "powf";
  }
  return "";
}

llvm::Value* emitMathF32(llvm::IRBuilderBase& b, MathFn fn, llvm::Value* x, llvm::Value* y, const MathTarget& target) {
  if (x == nullptr || !x->getType()->getScalarType()->isFloatTy()) return nullptr;
  llvm::IRBuilderBase::FastMathFlagGuard keepFlags(b);
  b.clearFastMathFlags();  // the NaN, infinity and signed-zero handling below relies on IEEE
  Emitter e(b, x->getType(), target);
  switch (fn) {
    case MathFn::kExp: return e.exp(x);
    case MathFn::kExpm1: return e.expm1(x);
    case MathFn::kLog: return e.log(x);
    case MathFn::kLog1p: return e.log1p(x);
    case MathFn::kLog2: return e.log2(x);
    case MathFn::kSin: return e.sinCos(x, false);
    case MathFn::kCos: return e.sinCos(x, true);
    case MathFn::kTan: return e.tan(x);
    case MathFn::kTanh: return e.tanh(x);
    case MathFn::kErf: return e.erf(x);
    case MathFn::kSinh: return e.sinhCosh(x, false);
    case MathFn::kCosh: return e.sinhCosh(x, true);
    case MathFn::kAtan: return e.atan(x);
    case MathFn::kAsin: return e.asin(x);
    case MathFn::kAcos: return e.acos(x);
    case MathFn::kAsinh: return e.asinh(x);
    case MathFn::kAcosh: return e.acosh(x);
    case MathFn::kAtanh: return e.atanh(x);
    case MathFn::kAtan2:
      if (y == nullptr || y->getType() != x->getType()) return nullptr;
      return e.atan2(x, y);
    case MathFn::kPow:
      if (y == nullptr || y->getType() != x->getType()) return nullptr;
      return e.pow(x, y);
  }
  return nullptr;
}

std::pair<llvm::Value*, llvm::Value*> emitSinCosF32(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::IRBuilderBase::FastMathFlagGuard keepFlags(b);
  b.clearFastMathFlags();
  return Emitter(b, x->getType()).sinAndCos(x);
}

llvm::Value* emitMathF64(llvm::IRBuilderBase& b, MathFn fn, llvm::Value* x) {
  if (x == nullptr || !x->getType()->getScalarType()->isDoubleTy()) return nullptr;
  llvm::IRBuilderBase::FastMathFlagGuard keepFlags(b);
  b.clearFastMathFlags();
  Emitter e(b, x->getType());
  switch (fn) {
    case MathFn::kExp: return e.exp64(x);
    case MathFn::kExpm1: return e.expm164(x);
    case MathFn::kLog: return e.log64(x, false);
    case MathFn::kLog2: return e.log64(x, true);
    case MathFn::kLog1p: return e.log1p64(x);
    case MathFn::kSinh: return e.sinhCosh64(x, false);
    case MathFn::kCosh: return e.sinhCosh64(x, true);
    case MathFn::kSin: return e.sinCos64(x, false);
    case MathFn::kCos: return e.sinCos64(x, true);
    case MathFn::kTanh: return e.tanh64(x);
    case MathFn::kErf: return e.erf64(x);
    default: return nullptr;
  }
}

}  // namespace plugsdk::lowering
