// The CPU backend's matrix multiply: C = A @ B (or C += A @ B) over strided, batched
// operands, f32 compute with A and B stored as f32, f16 or bf16 (converted while packing)
// and C in f32. Goto/BLIS blocking around the JIT-generated micro-kernel
// (gemm_microkernel.h): B is packed into NR-column panels per (NC x KC) block, A into MR-row
// panels per (MC x KC) block, and C is split into tiles computed in parallel with oneTBB.
// A per-block callback lets the caller run a fused epilogue (bias, activation, conversion)
// on each block of C as soon as it is final, while it is still in cache.
#pragma once

#include <cstdint>
#include <functional>

#include <tbb/task_arena.h>

#include "backends/cpu/library/gemm_microkernel.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cpu {

/// How A or B is stored.
enum class GemmElement { kF32, kF16, kBF16 };

/// One input operand: element (b, r, c) is at data + b * batchStride + r * rowStride +
/// c * colStride, in elements. Strides may be anything (0 broadcasts, negative walks back);
/// a transposed operand (nn.Linear's weight as B) is rowStride 1, colStride = its rows.
struct GemmOperand {
  const void* data = nullptr;
  GemmElement element = GemmElement::kF32;
  int64_t rowStride = 0, colStride = 1, batchStride = 0;
  /// B only: an operand computed while it is packed instead of read through strides (a
  /// convolution's im2col matrix, never stored whole). pack(batch, k0, depth, j0, count, w,
  /// dst) fills panels of width w: dst[p * w * depth + k * w + i] = B(k0 + k, j0 + p * w + i)
  /// for p * w + i < count, and 0 for the rest of the last panel. Called concurrently.
  std::function<void(int64_t batch, int64_t k0, int64_t depth, int64_t j0, int64_t count, int w, float* dst)> pack;
  /// B only, f32 with colStride 1: rows read in place through a table instead of packed.
  /// B(b, k, j) = data[b * batchStride + rowOffsets[k] + j] (rowStride unused). The
  /// micro-kernel reads whole NR-column panels, so every row must stay readable NR - 1
  /// elements past column n - 1 (the caller's slack; those columns are never stored).
  const int64_t* rowOffsets = nullptr;
};

/// C[b] (+)= A[b] @ B[b] for b < batch; A[b] is m x k, B[b] is k x n, C[b] is m x n, row-major
/// with row stride ldc (>= n) at c + b * batchStrideC. C must not overlap A or B.
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmOperand a, b;
  float* c = nullptr;
  int64_t ldc = 0, batchStrideC = 0;
};

/// Cache blocking; 0 picks the default for the kernels' ISA. mc and nc are rounded up to the
/// micro-kernel's MR and NR. Tests pass tiny values to exercise every loop boundary.
struct GemmBlocking {
  int64_t mc = 0, kc = 0, nc = 0;
};

/// Called once for every block of C that is final: rows [m0, m1) and columns [n0, n1) of
/// batch entry `batch` hold A @ B (plus the old C when accumulating) and will not be written
/// again by this call. The blocks partition C exactly (every element is in one block, also
/// when k == 0). It runs on the thread that computed the block, right after its last
/// micro-kernel call (the block is at most MC x NC, so still in L2); calls for different
/// blocks may run concurrently, so it must only touch its own block (and read shared data).
using GemmBlockCallback = std::function<void(int64_t batch, int64_t m0, int64_t m1, int64_t n0, int64_t n1)>;

struct GemmOptions {
  bool accumulate = false;  ///< C += A @ B instead of C = A @ B
  /// Where the parallel loop runs: the caller's arena (its concurrency bounds the threads),
  /// or the current one (TBB's default: one thread per core) when null.
  tbb::task_arena* arena = nullptr;
  int maxThreads = 0;  ///< a further bound on the threads (0: the arena's concurrency)
  GemmBlocking blocking;
  /// Parallel tiles of C wanted per thread (0: the default, 2); more balances load better,
  /// fewer repacks less. For tuning and tests.
  int tasksPerThread = 0;
  GemmBlockCallback onBlockDone;  ///< optional fused epilogue
};

/// Runs the problem with `kernels`. Problems under about a million multiply-adds run on the
/// calling thread; larger ones are split into tiles of C (never more parallel tasks than
/// useful, never more threads than the arena has). INVALID_ARGUMENT for negative sizes,
/// ldc < n or missing data pointers.
sdk::Status gemm(const GemmKernels& kernels, const GemmProblem& problem, const GemmOptions& options = {});

/// The default blocking for `kernels` (exposed for the benchmark's report).
GemmBlocking defaultGemmBlocking(const GemmKernels& kernels);

}  // namespace plugsdk::cpu
