// The blocked, packed, parallel GEMM driver of the CPU backend (see gemm.h).
//
// Loop nest of one tile of C (rows [m0, m1), columns [n0, n1)), Goto/BLIS style:
//   for jc in columns step NC            B block KC x NC, packed once, lives in L2
//     for pc in 0..K step KC
//       pack B[pc:pc+KC, jc:jc+NC] into NR-column panels
//       for ic in rows step MC
//         pack A[ic:ic+MC, pc:pc+KC] into MR-row panels
//         for each MR panel of A          its KC x MR panel stays in L1
//           for each NR panel of B        streamed from L2
//             micro-kernel (overwrite on the first KC block, accumulate after)
//         after the last KC block: the MC x NC block is final -> the caller's callback
// Tiles of C are the parallel tasks: each packs its own A and B, so tasks share nothing and
// need no barriers; the tile split keeps the repacking small (see planTiles).
#include "backends/cpu/library/gemm.h"

#include <emmintrin.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

namespace plugsdk::cpu {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer allocate(int64_t floats) {
  const size_t bytes = static_cast<size_t>(roundUp(std::max<int64_t>(floats, 16) * 4, 64));
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

/// IEEE binary16 to binary32 without branches (so the packing loop still vectorizes):
/// move exponent and mantissa into place, rebias, then fix infinities/NaNs (exponent 31)
/// and subnormals (renormalized by a float subtraction).
inline float halfToFloat(uint16_t h) {
  const uint32_t shiftedExp = 0x7c00u << 13;
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = o & shiftedExp;
  o += (127u - 15u) << 23;
  o += exp == shiftedExp ? (128u - 16u) << 23 : 0u;
  float f = std::bit_cast<float>(o + (exp == 0 ? 1u << 23 : 0u));
  f -= exp == 0 ? std::bit_cast<float>(113u << 23) : 0.0f;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | ((static_cast<uint32_t>(h) & 0x8000u) << 16));
}

inline float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

struct F32 {
  using T = float;
  static float get(float v) { return v; }
};
struct F16 {
  using T = uint16_t;
  static float get(uint16_t v) { return halfToFloat(v); }
};
struct BF16 {
  using T = uint16_t;
  static float get(uint16_t v) { return bf16ToFloat(v); }
};

/// Four consecutive source elements as f32 (SSE2: x86-64's baseline).
inline __m128 load4(const float* p) { return _mm_loadu_ps(p); }
inline __m128 load4(const uint16_t* p, BF16) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), x));
}

/// One panel: dst[k * w + i] = src[i * sI + k * sK] for i < rows and k < depth, zero for
/// rows <= i < w. A's panels are (rows of A, MR); B's are (columns of B, NR).
template <typename E>
void packPanel(const typename E::T* src, int64_t sI, int64_t sK, int rows, int w, int64_t depth, float* dst) {
  int64_t k = 0;
  if (sI == 1) {
    // Contiguous along the panel's width (B row-major, or A column-major): a row copy per k.
    for (; k < depth; ++k) {
      const typename E::T* s = src + k * sK;
      float* d = dst + k * w;
      if constexpr (std::is_same_v<E, F32>) {
        std::memcpy(d, s, sizeof(float) * rows);  // -O2 does not vectorize a runtime-length loop
      } else {
        for (int i = 0; i < rows; ++i) d[i] = E::get(s[i]);
      }
      for (int i = rows; i < w; ++i) d[i] = 0.0f;
    }
    return;
  }
  if constexpr (!std::is_same_v<E, F16>) {  // f16 needs F16C to convert four at once: scalar path
    if (sK == 1) {
      // Contiguous along k (A row-major, or B transposed as nn.Linear's weight): a transpose,
      // done 4 x 4 in SSE registers for the full groups of four rows.
      const int64_t depth4 = depth & ~int64_t{3};
      int i0 = 0;
      for (; i0 + 4 <= rows; i0 += 4) {
        const typename E::T* s = src + i0 * sI;
        for (int64_t kk = 0; kk < depth4; kk += 4) {
          __m128 r0, r1, r2, r3;
          if constexpr (std::is_same_v<E, F32>) {
            r0 = load4(s + kk), r1 = load4(s + sI + kk), r2 = load4(s + 2 * sI + kk), r3 = load4(s + 3 * sI + kk);
          } else {
            r0 = load4(s + kk, E{}), r1 = load4(s + sI + kk, E{}), r2 = load4(s + 2 * sI + kk, E{}),
            r3 = load4(s + 3 * sI + kk, E{});
          }
          _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
          float* d = dst + kk * w + i0;
          _mm_storeu_ps(d, r0);
          _mm_storeu_ps(d + w, r1);
          _mm_storeu_ps(d + 2 * w, r2);
          _mm_storeu_ps(d + 3 * w, r3);
        }
      }
      for (int64_t kk = 0; kk < depth; ++kk) {
        float* d = dst + kk * w;
        const int from = kk < depth4 ? i0 : 0;
        for (int i = from; i < rows; ++i) d[i] = E::get(src[i * sI + kk]);
        for (int i = rows; i < w; ++i) d[i] = 0.0f;
      }
      return;
    }
  }
  for (; k < depth; ++k) {
    float* d = dst + k * w;
    for (int i = 0; i < rows; ++i) d[i] = E::get(src[i * sI + k * sK]);
    for (int i = rows; i < w; ++i) d[i] = 0.0f;
  }
}

/// Packs `count` (<= w * panels) rows of the operand into consecutive panels of width w.
void packBlock(const GemmOperand& op, int64_t offset, int64_t sI, int64_t sK, int64_t count, int w, int64_t depth,
               float* dst) {
  for (int64_t p = 0; p * w < count; ++p) {
    const int rows = static_cast<int>(std::min<int64_t>(w, count - p * w));
    const int64_t off = offset + p * w * sI;
    float* d = dst + p * w * depth;
    switch (op.element) {
      case GemmElement::kF32:
        packPanel<F32>(static_cast<const float*>(op.data) + off, sI, sK, rows, w, depth, d);
        break;
      case GemmElement::kF16:
        packPanel<F16>(static_cast<const uint16_t*>(op.data) + off, sI, sK, rows, w, depth, d);
        break;
      case GemmElement::kBF16:
        packPanel<BF16>(static_cast<const uint16_t*>(op.data) + off, sI, sK, rows, w, depth, d);
        break;
    }
  }
}

struct Plan {
  const GemmKernels* kernels;
  const GemmProblem* p;
  const GemmOptions* o;
  int64_t mc, kc, nc;  // cache blocks (mc % MR == 0, nc % NR == 0)
  int64_t tm, tn;      // parallel tiles of C (tm % MR == 0, tn % NR == 0)
  int64_t tilesM, tilesN;
  // A packed once for the whole call, when several tasks would pack the same rows of it (A
  // shared by the batch, or several tiles of N): block (pc, ic) at
  // packedA + (pc / kc) * aPcStride + ic * kb, where kb is that k block's depth.
  const float* packedA = nullptr;
  int64_t aPcStride = 0;
};

/// Packing buffers. Each thread keeps one set between calls (allocating and faulting in
/// about a megabyte per task cost ~10% at 512^3); a set already in use on this thread (a
/// callback that runs TBB work may steal another tile of a GEMM) gets a fresh one instead.
struct Scratch {
  Buffer a, b, tile;
  int64_t aSize = 0, bSize = 0, tileSize = 0;
  bool inUse = false;
  void reserve(const Plan& pl) {
    auto grow = [](Buffer& buf, int64_t& have, int64_t want) {
      if (want > have) buf = allocate(want), have = want;
    };
    grow(a, aSize, pl.mc * pl.kc);
    grow(b, bSize, pl.kc * pl.nc);
    grow(tile, tileSize, int64_t{pl.kernels->shape.mr} * pl.kernels->shape.nr);
  }
};

/// This thread's scratch for the duration of one task.
class ScratchLease {
 public:
  explicit ScratchLease(const Plan& pl) {
    thread_local Scratch cached;
    s_ = cached.inUse ? (own_ = std::make_unique<Scratch>()).get() : &cached;
    s_->inUse = true;
    s_->reserve(pl);
  }
  ~ScratchLease() { s_->inUse = false; }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  Scratch& get() { return *s_; }

 private:
  std::unique_ptr<Scratch> own_;
  Scratch* s_ = nullptr;
};

void runTile(const Plan& pl, int64_t batch, int64_t m0, int64_t m1, int64_t n0, int64_t n1, Scratch& s) {
  const GemmProblem& p = *pl.p;
  const int mr = pl.kernels->shape.mr, nr = pl.kernels->shape.nr;
  const GemmMicroKernelFn micro = pl.kernels->micro;
  float* c = p.c + batch * p.batchStrideC;
  const int64_t aBatch = batch * p.a.batchStride, bBatch = batch * p.b.batchStride;
  for (int64_t jc = n0; jc < n1; jc += pl.nc) {
    const int64_t nb = std::min(pl.nc, n1 - jc);
    if (p.k == 0) {
      for (int64_t ic = m0; ic < m1; ic += pl.mc) {
        const int64_t mb = std::min(pl.mc, m1 - ic);
        if (!pl.o->accumulate)
          for (int64_t i = ic; i < ic + mb; ++i) std::memset(c + i * p.ldc + jc, 0, sizeof(float) * nb);
        if (pl.o->onBlockDone) pl.o->onBlockDone(batch, ic, ic + mb, jc, jc + nb);
      }
      continue;
    }
    for (int64_t pc = 0; pc < p.k; pc += pl.kc) {
      const int64_t kb = std::min(pl.kc, p.k - pc);
      const bool last = pc + kb >= p.k;
      const int32_t flags = (pc > 0 || pl.o->accumulate) ? kGemmAccumulate : kGemmOverwrite;
      const float* bRows = nullptr;  // B read in place through its row offsets (no packing)
      if (p.b.rowOffsets)
        bRows = static_cast<const float*>(p.b.data) + bBatch + jc;
      else if (p.b.pack)
        p.b.pack(batch, pc, kb, jc, nb, nr, s.b.get());
      else
        packBlock(p.b, bBatch + pc * p.b.rowStride + jc * p.b.colStride, p.b.colStride, p.b.rowStride, nb, nr, kb,
                  s.b.get());
      for (int64_t ic = m0; ic < m1; ic += pl.mc) {
        const int64_t mb = std::min(pl.mc, m1 - ic);
        const float* aBlock = s.a.get();
        if (pl.packedA)
          aBlock = pl.packedA + (pc / pl.kc) * pl.aPcStride + ic * kb;
        else
          packBlock(p.a, aBatch + ic * p.a.rowStride + pc * p.a.colStride, p.a.rowStride, p.a.colStride, mb, mr, kb,
                    s.a.get());
        for (int64_t ir = 0; ir < mb; ir += mr) {
          const float* ap = aBlock + ir * kb;
          const int64_t rows = std::min<int64_t>(mr, mb - ir);
          for (int64_t jr = 0; jr < nb; jr += nr) {
            const float* bp = bRows ? bRows + jr : s.b.get() + jr * kb;
            const int64_t cols = std::min<int64_t>(nr, nb - jr);
            float* ct = c + (ic + ir) * p.ldc + jc + jr;
            if (rows == mr && cols == nr) {
              if (bRows)
                pl.kernels->microIndirect(kb, ap, bp, p.b.rowOffsets + pc, ct, p.ldc, flags);
              else
                micro(kb, ap, bp, ct, p.ldc, flags);
              continue;
            }
            // A partial tile: compute the whole tile aside, then merge its valid part.
            float* t = s.tile.get();
            if (bRows)
              pl.kernels->microIndirect(kb, ap, bp, p.b.rowOffsets + pc, t, nr, kGemmOverwrite);
            else
              micro(kb, ap, bp, t, nr, kGemmOverwrite);
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t j = 0; j < cols; ++j)
                ct[i * p.ldc + j] = (flags & kGemmAccumulate) ? ct[i * p.ldc + j] + t[i * nr + j] : t[i * nr + j];
          }
        }
        if (last && pl.o->onBlockDone) pl.o->onBlockDone(batch, ic, ic + mb, jc, jc + nb);
      }
    }
  }
}

/// Splits C into tiles for the threads: halve the longer side of the tile (in units of the
/// blocks the packing works in) until there are enough tasks to keep every thread busy, but
/// never below tiles worth about a million multiply-adds. Halving N repacks A once more,
/// halving M repacks B once more, so the longer side is the cheaper one to cut.
void planTiles(Plan& pl, int threads) {
  const GemmProblem& p = *pl.p;
  const int64_t mr = pl.kernels->shape.mr, nr = pl.kernels->shape.nr;
  pl.tm = roundUp(std::max<int64_t>(p.m, 1), mr);
  pl.tn = roundUp(std::max<int64_t>(p.n, 1), nr);
  const double minTaskMacs = 1 << 20;
  const int64_t perThread = pl.o->tasksPerThread > 0 ? pl.o->tasksPerThread : 2;
  const int64_t wanted = threads > 1 ? perThread * threads : 1;
  auto tasks = [&] { return p.batch * ceilDiv(p.m, pl.tm) * ceilDiv(p.n, pl.tn); };
  while (tasks() < wanted) {
    const bool cutN = pl.tn >= pl.tm ? pl.tn > nr : pl.tm <= mr;
    const int64_t tm = cutN ? pl.tm : roundUp(ceilDiv(pl.tm, 2), mr);
    const int64_t tn = cutN ? roundUp(ceilDiv(pl.tn, 2), nr) : pl.tn;
    if ((tm == pl.tm && tn == pl.tn) || static_cast<double>(tm) * tn * std::max<int64_t>(p.k, 1) < minTaskMacs) break;
    pl.tm = tm;
    pl.tn = tn;
  }
  pl.tilesM = ceilDiv(p.m, pl.tm);
  pl.tilesN = ceilDiv(p.n, pl.tn);
}

sdk::Status validate(const GemmProblem& p) {
  if (p.batch < 0 || p.m < 0 || p.n < 0 || p.k < 0)
    return sdk::invalidArgument("gemm: negative size (batch " + std::to_string(p.batch) + ", m " + std::to_string(p.m) +
                                ", n " + std::to_string(p.n) + ", k " + std::to_string(p.k) + ")");
  if (p.batch == 0 || p.m == 0 || p.n == 0) return sdk::Status::ok();
  if (p.ldc < p.n)
    return sdk::invalidArgument("gemm: ldc " + std::to_string(p.ldc) + " is less than n " + std::to_string(p.n));
  if (!p.c) return sdk::invalidArgument("gemm: C is null");
  if (p.k > 0 && (!p.a.data || (!p.b.data && !p.b.pack))) return sdk::invalidArgument("gemm: A or B is null");
  if (p.b.rowOffsets && (p.b.element != GemmElement::kF32 || p.b.colStride != 1 || p.b.pack))
    return sdk::invalidArgument("gemm: a B read through row offsets must be f32 with column stride 1, not packed");
  return sdk::Status::ok();
}

}  // namespace

GemmBlocking defaultGemmBlocking(const GemmKernels& kernels) {
  // KC: an MR x KC panel of A in L1 (8 KiB for AVX-512 8 x 256) beside the B panel being
  // streamed. NC: a KC x NC block of B in L2 (512 KiB of Zen 4's 1 MiB). MC only sets the
  // size of the blocks handed to the epilogue callback (and the A buffer).
  const int64_t mr = kernels.shape.mr, nr = kernels.shape.nr;
  GemmBlocking b;
  b.kc = 256;
  b.nc = roundUp(512, nr);
  b.mc = roundUp(144, mr);
  return b;
}

sdk::Status gemm(const GemmKernels& kernels, const GemmProblem& problem, const GemmOptions& options) {
  PLUGSDK_RETURN_IF_ERROR(validate(problem));
  if (!kernels.micro || (problem.b.rowOffsets && !kernels.microIndirect))
    return sdk::failedPrecondition("gemm: the kernels were not built");
  if (problem.batch == 0 || problem.m == 0 || problem.n == 0) return sdk::Status::ok();
  const GemmBlocking def = defaultGemmBlocking(kernels);
  const int64_t mr = kernels.shape.mr, nr = kernels.shape.nr;
  Plan pl{&kernels, &problem, &options, 0, 0, 0, 0, 0, 0, 0};
  pl.mc = roundUp(options.blocking.mc > 0 ? options.blocking.mc : def.mc, mr);
  pl.kc = std::max<int64_t>(1, options.blocking.kc > 0 ? options.blocking.kc : def.kc);
  pl.nc = roundUp(options.blocking.nc > 0 ? options.blocking.nc : def.nc, nr);
  // Never pack more than the problem needs.
  pl.mc = std::min(pl.mc, roundUp(problem.m, mr));
  pl.nc = std::min(pl.nc, roundUp(problem.n, nr));
  pl.kc = std::min(pl.kc, std::max<int64_t>(problem.k, 1));

  int threads = options.arena ? options.arena->max_concurrency() : tbb::this_task_arena::max_concurrency();
  if (options.maxThreads > 0) threads = std::min(threads, options.maxThreads);
  const double macs = static_cast<double>(problem.batch) * problem.m * problem.n * std::max<int64_t>(problem.k, 1);
  if (macs < (1 << 20)) threads = 1;
  planTiles(pl, threads);
  const int64_t tasks = problem.batch * pl.tilesM * pl.tilesN;
  // Pack A once when several tasks would pack the same rows of it (a convolution's weights
  // for every image, or the columns of a wide C split into tiles): read-only afterwards.
  // Its panels lie in row order per k block, so a tile starting at any multiple of MR finds
  // its own at ic * kb. Packed in parallel, one (k block, row block) per task.
  Buffer packedA(nullptr);
  const bool aShared = problem.batch == 1 || problem.a.batchStride == 0;
  if (tasks > pl.tilesM && aShared && problem.k > 0) {
    const int64_t mPad = roundUp(problem.m, mr);
    pl.aPcStride = mPad * pl.kc;
    packedA = allocate(ceilDiv(problem.k, pl.kc) * pl.aPcStride);
    if (packedA) {
      const int64_t rowBlocks = ceilDiv(problem.m, pl.mc), blocks = ceilDiv(problem.k, pl.kc) * rowBlocks;
      auto packOne = [&](int64_t blk) {
        const int64_t pc = (blk / rowBlocks) * pl.kc, ic = (blk % rowBlocks) * pl.mc;
        const int64_t kb = std::min(pl.kc, problem.k - pc), mb = std::min(pl.mc, problem.m - ic);
        packBlock(problem.a, ic * problem.a.rowStride + pc * problem.a.colStride, problem.a.rowStride,
                  problem.a.colStride, mb, mr, kb, packedA.get() + (pc / pl.kc) * pl.aPcStride + ic * kb);
      };
      auto packAll = [&] { tbb::parallel_for(int64_t{0}, blocks, packOne); };
      if (threads == 1 || blocks == 1)
        for (int64_t blk = 0; blk < blocks; ++blk) packOne(blk);
      else if (options.arena)
        options.arena->execute(packAll);
      else
        packAll();
      pl.packedA = packedA.get();
    }
  }

  auto runTask = [&pl, &problem](int64_t t, Scratch& s) {
    const int64_t perBatch = pl.tilesM * pl.tilesN;
    const int64_t batch = t / perBatch, tileM = (t % perBatch) / pl.tilesN, tileN = t % pl.tilesN;
    const int64_t m0 = tileM * pl.tm, n0 = tileN * pl.tn;
    runTile(pl, batch, m0, std::min(problem.m, m0 + pl.tm), n0, std::min(problem.n, n0 + pl.tn), s);
  };
  if (threads == 1 || tasks == 1) {
    ScratchLease s(pl);
    for (int64_t t = 0; t < tasks; ++t) runTask(t, s.get());
    return sdk::Status::ok();
  }
  auto parallel = [&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, tasks, 1),
        [&](const tbb::blocked_range<int64_t>& r) {
          ScratchLease s(pl);
          for (int64_t t = r.begin(); t < r.end(); ++t) runTask(t, s.get());
        },
        tbb::simple_partitioner());
  };
  const int available = options.arena ? options.arena->max_concurrency() : tbb::this_task_arena::max_concurrency();
  if (threads < available) {
    // maxThreads below the arena's concurrency: a smaller arena, so no more threads join.
    tbb::task_arena limited(threads);
    limited.execute(parallel);
  } else if (options.arena) {
    options.arena->execute(parallel);
  } else {
    parallel();
  }
  return sdk::Status::ok();
}

}  // namespace plugsdk::cpu
