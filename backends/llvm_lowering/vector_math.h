// Vectorized f32 math functions emitted as LLVM IR for the LLVM backends' code generators:
// exp, log, tanh, erf, sin, cos and their relatives as range reduction + minimax polynomial
// on whole vectors (FMA, no table lookups, no libm calls on the common path), so a fused
// elementwise kernel stays vectorized through its transcendentals. Accuracy (measured over
// every f32 input) and the special values are documented in docs/cpu-math.md.
#pragma once

#include <utility>

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace plugsdk::lowering {

/// The math prims with an f32 lowering here (the kernel IR's transcendental prims).
enum class MathFn {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kLog2,
  kSin,
  kCos,
  kTan,
  kTanh,
  kErf,
  kSinh,
  kCosh,
  kAtan,
  kAsin,
  kAcos,
  kAsinh,
  kAcosh,
  kAtanh,
  kAtan2,
  kPow,
};

/// What the target offers the f32 functions beyond IEEE arithmetic (Target's fields of the
/// same names). Default: nothing, the portable polynomials.
struct MathTarget {
  /// An intrinsic (llvm::Intrinsic::ID) taking a scalar float t, |t| <= 1/2 + 2^-16, to 2^t
  /// within 2 ulp (NVPTX: llvm.nvvm.ex2.approx.ftz.f, ex2.approx.ftz.f32; its flush of
  /// denormals cannot matter there: 2^t is in [0.7, 1.42] and a denormal t gives 1). exp,
  /// and erf's e^(-x^2), take 2^t from it after reducing x to n + t in base 2; 0: none.
  unsigned exp2Intrinsic = 0;
  /// llvm.minimum / llvm.maximum are one instruction (NVPTX sm_80: min.NaN / max.NaN): the
  /// clamps of exp's argument use them, so a NaN passes through to the result without a
  /// select at the end.
  bool nanMinMax = false;
};

/// The C library name of `fn`'s f32 function ("expf", "atan2f"): what the caller calls per
/// lane when emitMathF32 returns nullptr, and what the slow paths call.
const char* libmNameF32(MathFn fn);

/// Emits fn(x) (fn(x, y) for atan2 and pow: atan2(x, y) is C's atan2f(x, y), pow(x, y) is
/// powf(x, y)) on `x` of type float or <N x float> at the builder's insertion point, and
/// returns the result (same type). Within 4 ulp of the correctly rounded result for every
/// input (the table in docs/cpu-math.md), with C99 Annex F special values, signed zeros and
/// denormals. Common inputs are branch-free; sin, cos and tan of |x| > 1e5 call the libm
/// function for those lanes in a rarely taken block, so this may split the current basic
/// block (the insertion point is left after the emitted code, in the join block). The
/// builder's fast-math flags are ignored (cleared while emitting). Returns nullptr when
/// `fn` has no inline implementation (the caller then calls libm per lane).
llvm::Value* emitMathF32(llvm::IRBuilderBase& b, MathFn fn, llvm::Value* x, llvm::Value* y = nullptr,
                         const MathTarget& target = {});

/// sin(x) and cos(x) of `x` (float or <N x float>) as emitMathF32 gives them, bit for bit,
/// sharing the range reduction and the rare libm block (one branch for both).
std::pair<llvm::Value*, llvm::Value*> emitSinCosF32(llvm::IRBuilderBase& b, llvm::Value* x);

/// The f64 counterpart, for exp, expm1, log, log1p, log2, sin, cos, tanh, sinh, cosh and erf (`x` of type double or
/// <N x double>; within 4 ulp on the tests of docs/cpu-math.md, the same special values;
/// sin and cos of |x| > 1e5 call libm's sin/cos for those lanes). nullptr for every other
/// function and for non-double values: the caller calls libm per lane.
llvm::Value* emitMathF64(llvm::IRBuilderBase& b, MathFn fn, llvm::Value* x);

}  // namespace plugsdk::lowering
