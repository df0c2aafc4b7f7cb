// The register-blocked micro-kernel at the bottom of the CPU backend's GEMM: an LLVM IR
// function generated for the client's ISA (AVX-512, AVX2 or scalar) that multiplies one
// packed MR-row panel of A by one packed NR-column panel of B into an MR x NR tile of C held
// in vector registers. The driver (gemm.h) does the blocking, packing and threading; this
// file only decides the tile shape and emits the inner loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/isa.h"
#include "backends/cpu/jit.h"
#include "plugsdk/status.hpp"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace plugsdk::cpu {

/// Bits of the micro-kernel's `flags` argument.
enum GemmKernelFlag : int32_t {
  kGemmOverwrite = 0,   ///< C = A * B
  kGemmAccumulate = 1,  ///< C += A * B
};

/// C[MR x NR] (+)= A[MR x kc] * B[kc x NR] over packed panels:
///   a[k * MR + i] is A(i, k), b[k * NR + j] is B(k, j), C(i, j) is c[i * ldc + j].
/// The whole MR x NR tile is read (when accumulating) and written: partial tiles go through
/// a scratch tile (the driver's job). kc may be 0 (C = 0, or C unchanged when accumulating).
/// Panels need no particular alignment; the driver aligns them to 64 bytes anyway.
using GemmMicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int32_t flags);

/// The same tile with B read in place through a table of row offsets instead of a packed
/// panel: B(k, j) is b[rows[k] + j] (rows in elements), NR contiguous floats per k. A
/// convolution's shifted input rows (conv_shifted.cc) are B this way, with nothing packed.
using GemmIndirectMicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, const int64_t* rows, float* c,
                                           int64_t ldc, int32_t flags);

/// The tile a micro-kernel computes, and how its k loop is generated.
struct GemmMicroKernelShape {
  int mr = 0;             ///< rows of C per call (broadcasts of A per k step)
  int nr = 0;             ///< columns of C per call: a multiple of the ISA's f32 lanes
  int unroll = 4;         ///< k steps per iteration of the main loop (a remainder loop does the rest)
  int prefetchB = 0;      ///< prefetch the B panel this many k steps ahead (0: none)
  bool prefetchC = true;  ///< prefetch the C tile before the k loop, so its misses overlap the FMAs
};

/// The shape measured best for `isa` on the machines we have (see gemm_bench's
/// micro-kernel row): AVX-512 8x32 (16 accumulators of 32 ZMM), AVX2 6x16 (12 of 16 YMM),
/// scalar 4x3.
GemmMicroKernelShape defaultGemmMicroKernelShape(const Isa& isa);

/// Checks that `shape` fits `isa`: nr a multiple of the lanes, the accumulators plus a row
/// of B and a broadcast within the vector registers, sane unroll and prefetch distances.
sdk::Status validateGemmMicroKernelShape(const Isa& isa, const GemmMicroKernelShape& shape);

/// Emits the micro-kernel as `name` into `m` (which must already be prepared for the ISA's
/// target by Jit::prepare): a GemmMicroKernelFn, or with `indirectB` a
/// GemmIndirectMicroKernelFn. Returns the function.
llvm::Function* emitGemmMicroKernel(llvm::Module& m, const Isa& isa, const GemmMicroKernelShape& shape,
                                    const std::string& name, bool indirectB = false);

/// The compiled GEMM kernels of one ISA. Copyable; the code stays mapped while any copy
/// lives. The Jit that built them must outlive every copy.
struct GemmKernels {
  Isa isa;
  GemmMicroKernelShape shape;
  GemmMicroKernelFn micro = nullptr;
  GemmIndirectMicroKernelFn microIndirect = nullptr;
  std::shared_ptr<LoadedObject> code;  ///< owns the machine code `micro` points into
};

/// Generates, optimizes (O3) and loads the micro-kernel for `jit`'s ISA, with the default
/// shape or an explicit one (the benchmark tries several).
sdk::StatusOr<GemmKernels> buildGemmKernels(Jit& jit);
sdk::StatusOr<GemmKernels> buildGemmKernels(Jit& jit, const GemmMicroKernelShape& shape);

}  // namespace plugsdk::cpu
