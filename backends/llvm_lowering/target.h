// What the kernel lowering needs to know about the machine it generates code for: plain
// data, filled by each backend (the CPU backend from its ISA, the CUDA backend for NVPTX).
#pragma once

#include <cstdint>
#include <string>

namespace plugsdk::lowering {

class ThreadGroup;
class FailureRaiser;

struct Target {
  std::string cpu;       ///< LLVM "target-cpu" of the entry function ("znver4", "sm_90"); empty: none
  std::string features;  ///< LLVM "target-features"
  /// f32 elements per vector operation; 1 lowers every kernel to scalar code.
  uint32_t f32Lanes = 1;
  bool wideVectors = false;  ///< prefer 512-bit vectors (LLVM's "prefer-vector-width")
  /// Each outer grid point first reads the status word and stops once another has failed
  /// (worth it for a CPU thread walking many points; a GPU thread has one, and the load
  /// would cost every thread a memory access).
  bool stopOnFailure = true;
  /// The threads that share one program (thread_group.h); nullptr: one thread (the CPU).
  const ThreadGroup* group = nullptr;
  /// Facts the launch guarantees, which let contiguous vector accesses be aligned (Triton's
  /// specialization on divisibility): every argument pointer is aligned to `argAlign` bytes
  /// (0: nothing known; set, it also promises that each call's inner points start at a
  /// multiple of f32Lanes) and every symbol is a multiple of `symbolDivisor` (a power of two).
  uint32_t argAlign = 0;
  int64_t symbolDivisor = 1;
  /// Raises failures through the native runtime when the launch sets bit 0 of the status
  /// pointer (failure_raiser.h); nullptr: the status word only, and the bit is never set.
  const FailureRaiser* raiser = nullptr;
  /// Elementwise ops (a bit per plugsdk_scalar_op_t) taken from the target's math library
  /// per lane instead of the inline polynomials: where its scalar code branches on the
  /// argument's range (a GPU thread runs one range, a vector of lanes pays for every one).
  uint64_t libraryMath = 0;
  /// An f32 -> bf16 conversion rounds to nearest even in one instruction (NVPTX from sm_80:
  /// cvt.rn.bf16.f32, two values in cvt.rn.bf16x2.f32); otherwise the rounding is done on
  /// the bits (~7 integer operations, a GELU kernel's two bf16 roundings were a fifth of its
  /// instructions). Set, a bf16 rounding that stays in registers is that conversion and
  /// back (fptrunc + fpext, no 16-bit unpacking), and a NaN is stored as the conversion
  /// makes it (PTX's canonical 0x7fff, what torch's own CUDA kernels store through
  /// __float2bfloat16) instead of the CPU's 0x7fc0: the conformance suite compares NaN as
  /// NaN, not its bits (conformance/runner/check.cc).
  bool nativeBf16 = false;
  /// NaN-propagating f32 maximum / minimum are one instruction each (NVPTX from sm_80:
  /// max.NaN.f32 / min.NaN.f32, what LLVM's llvm.maximum / llvm.minimum become there):
  /// elementwise maximum and minimum, max and min reductions and their combines use the
  /// intrinsics instead of two NaN tests and selects. They order -0 below +0 (IEEE 754-2019
  /// maximum), where the compare-and-select keeps the first operand of equal zeros.
  bool nanMinMax = false;
  /// An intrinsic (llvm::Intrinsic::ID) for 2^t of a scalar f32, |t| <= 1/2, within 2 ulp
  /// (NVPTX: ex2.approx.ftz.f32): f32 exp reduces its argument in base 2 and takes 2^t from it
  /// instead of the degree-6 polynomial (vector_math.h, MathTarget); 0: the polynomial.
  unsigned exp2Intrinsic = 0;
  /// Grid extents that are constants are constants in the code (divisions by them are
  /// multiplications), and nested grid dims that every index reads as one (constant extents,
  /// each dim's stride its inner neighbour's times that one's extent, in every access,
  /// index and rand: [32, 197, 3072] read at 605184*i0+3072*i1+i2) are walked as one dim.
  /// When the group of the last dim grows (its extent a multiple of the lanes), the entry's
  /// inner range [lo, hi) spans all of its dims (LoweredKernel::innerGridDims): the caller
  /// must walk them so (the CUDA wrapper); off, the entry's arguments mean what frame.h says.
  bool collapseGrid = false;
  /// A combining sum store of f32 / f64 is one atomic add (NVPTX: red.global.add.f32/.f64,
  /// sm_60+), not a compare-and-swap loop: a scatter-add with many equal indices (BERT's
  /// token-type embedding gradient: 2048 rows into one) serialized the loop's retries, 17.7 ms
  /// on the H100. The order of the additions is the hardware's either way.
  bool floatAtomicAdd = false;
};

// Math without an inline polynomial (vector_math.h), and the polynomials' rare slow lanes,
// call libm by its C name ("sinf", "pow"): the host links libm; a device backend renames the
// calls to its math library's (NVPTX: libdevice's "__nv_sinf").

}  // namespace plugsdk::lowering
