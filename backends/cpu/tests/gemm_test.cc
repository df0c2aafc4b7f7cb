// The CPU backend's GEMM against a float64 reference, on every ISA path this host runs:
// odd sizes, transposed and strided operands, batches, K = 0, f16/bf16 storage,
// accumulation, tiny cache blocks (every loop boundary), the parallel path, and the block
// callback (each element exactly once, already final). Error bound per element, Higham's
// for a dot product of length K in f32: |c - ref| <= 2 * (K + 2) * 2^-24 * sum_k |a||b|
// (+ |C0| when accumulating). A sabotaged micro-kernel must fail the same checks.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tbb/task_arena.h>

#include "backends/cpu/library/gemm.h"

namespace plugsdk::cpu {
namespace {

/// One Jit and its kernels per ISA, built once for the whole test program.
struct IsaKernels {
  std::unique_ptr<Jit> jit;
  GemmKernels kernels;
};

const IsaKernels* kernelsFor(const std::string& isaName) {
  static std::map<std::string, std::unique_ptr<IsaKernels>> cache;
  auto it = cache.find(isaName);
  if (it != cache.end()) return it->second.get();
  auto isa = selectIsa(hostFeatures(), isaName);
  if (!isa.isOk()) return cache.emplace(isaName, nullptr).first->second.get();
  auto k = std::make_unique<IsaKernels>();
  auto jit = Jit::create(*isa);
  EXPECT_TRUE(jit.isOk()) << jit.status().message();
  k->jit = std::move(*jit);
  auto built = buildGemmKernels(*k->jit);
  EXPECT_TRUE(built.isOk()) << built.status().message();
  k->kernels = *built;
  return cache.emplace(isaName, std::move(k)).first->second.get();
}

uint16_t toHalfBits(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
float fromHalfBits(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
uint16_t toBf16Bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round to nearest even
}
float fromBf16Bits(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// A logical batch x rows x cols operand in a chosen storage layout, with its exact values
/// (after rounding to the storage type) kept for the reference.
struct Operand {
  std::vector<float> f32;
  std::vector<uint16_t> bits;
  std::vector<double> value;  // [b][r][c], what the storage holds
  GemmOperand op;
  int64_t rows = 0, cols = 0;
  double at(int64_t b, int64_t r, int64_t c) const { return value[(b * rows + r) * cols + c]; }
};

/// `transposed`: column-major (rowStride 1); `pad`: extra elements per stored line;
/// `colStep` > 1 spreads the columns apart (a generic stride, neither one contiguous).
Operand makeOperand(int64_t batch, int64_t rows, int64_t cols, GemmElement e, bool transposed, int64_t pad,
                    int64_t colStep, bool broadcastBatch, uint32_t seed) {
  Operand o;
  o.rows = rows, o.cols = cols;
  int64_t rs, cs, lines;
  if (transposed) {
    rs = 1, cs = rows + pad, lines = cols;
  } else {
    rs = cols * colStep + pad, cs = colStep, lines = rows;
  }
  const int64_t perBatch = transposed ? cs * lines : rs * lines;
  const int64_t storedBatches = broadcastBatch ? 1 : batch;
  const int64_t total = std::max<int64_t>(perBatch * storedBatches, 1);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  o.value.resize(batch * rows * cols);
  std::vector<float> raw(total, std::nanf(""));  // padding stays NaN: reading it would show
  for (int64_t b = 0; b < storedBatches; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) raw[b * perBatch + r * rs + c * cs] = d(g);
  if (e == GemmElement::kF32) {
    o.f32 = raw;
  } else {
    o.bits.resize(total);
    for (int64_t i = 0; i < total; ++i) o.bits[i] = e == GemmElement::kF16 ? toHalfBits(raw[i]) : toBf16Bits(raw[i]);
  }
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = (broadcastBatch ? 0 : b * perBatch) + r * rs + c * cs;
        o.value[(b * rows + r) * cols + c] = e == GemmElement::kF32   ? o.f32[i]
                                             : e == GemmElement::kF16 ? fromHalfBits(o.bits[i])
                                                                      : fromBf16Bits(o.bits[i]);
      }
  o.op.data = e == GemmElement::kF32 ? static_cast<const void*>(o.f32.data()) : o.bits.data();
  o.op.element = e;
  o.op.rowStride = rs, o.op.colStride = cs, o.op.batchStride = broadcastBatch ? 0 : perBatch;
  return o;
}

struct Config {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool transA = false, transB = false;
  int64_t padA = 0, padB = 0, padC = 0, colStepA = 1, colStepB = 1;
  GemmElement ea = GemmElement::kF32, eb = GemmElement::kF32;
  bool accumulate = false, broadcastB = false;
  GemmBlocking blocking;
  tbb::task_arena* arena = nullptr;
  bool checkCallback = false;
  /// B read in place through row offsets: its rows stored in reverse order, each followed by
  /// a gap of NaN the micro-kernel reads for partial panels (and must never store).
  bool rowTable = false;
};

/// Runs one problem and checks every element against the float64 reference.
::testing::AssertionResult check(const GemmKernels& kernels, const Config& cfg) {
  const Operand a = makeOperand(cfg.batch, cfg.m, cfg.k, cfg.ea, cfg.transA, cfg.padA, cfg.colStepA, false, 11);
  const Operand b =
      makeOperand(cfg.batch, cfg.k, cfg.n, cfg.eb, cfg.transB, cfg.padB, cfg.colStepB, cfg.broadcastB, 12);
  const int64_t ldc = cfg.n + cfg.padC, strideC = cfg.m * ldc;
  const float sentinel = 12345.0f;
  std::vector<float> c(std::max<int64_t>(cfg.batch * strideC, 1), sentinel), c0;
  std::mt19937 g(13);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (int64_t bi = 0; bi < cfg.batch; ++bi)
    for (int64_t i = 0; i < cfg.m; ++i)
      for (int64_t j = 0; j < cfg.n; ++j)
        c[bi * strideC + i * ldc + j] = cfg.accumulate ? d(g) : std::nanf("");  // unwritten -> NaN -> fails
  c0 = c;
  // Reference and bound.
  std::vector<double> ref(c.size()), bound(c.size());
  for (int64_t bi = 0; bi < cfg.batch; ++bi)
    for (int64_t i = 0; i < cfg.m; ++i)
      for (int64_t j = 0; j < cfg.n; ++j) {
        double s = 0, sa = 0;
        for (int64_t kk = 0; kk < cfg.k; ++kk) {
          const double x = a.at(bi, i, kk) * b.at(bi, kk, j);
          s += x;
          sa += std::fabs(x);
        }
        const int64_t ci = bi * strideC + i * ldc + j;
        if (cfg.accumulate) {
          s += c0[ci];
          sa += std::fabs(c0[ci]);
        }
        ref[ci] = s;
        bound[ci] = 2.0 * static_cast<double>(cfg.k + 2) * std::ldexp(1.0, -24) * sa;
      }
  GemmProblem p;
  p.batch = cfg.batch, p.m = cfg.m, p.n = cfg.n, p.k = cfg.k;
  p.a = a.op, p.b = b.op;
  std::vector<float> pool;
  std::vector<int64_t> rowOffsets(static_cast<size_t>(cfg.k));
  if (cfg.rowTable) {
    const int64_t pitch = cfg.n + 37, perBatch = cfg.k * pitch + 3 + 64;
    pool.assign(static_cast<size_t>(std::max<int64_t>(cfg.batch * perBatch, 1)), std::nanf(""));
    for (int64_t kk = 0; kk < cfg.k; ++kk) rowOffsets[kk] = (cfg.k - 1 - kk) * pitch + 3;
    for (int64_t bi = 0; bi < cfg.batch; ++bi)
      for (int64_t kk = 0; kk < cfg.k; ++kk)
        for (int64_t j = 0; j < cfg.n; ++j)
          pool[bi * perBatch + rowOffsets[kk] + j] = static_cast<float>(b.at(bi, kk, j));
    p.b = {pool.data(), GemmElement::kF32, 0, 1, perBatch};
    p.b.rowOffsets = rowOffsets.data();
  }
  p.c = c.data(), p.ldc = ldc, p.batchStrideC = strideC;
  GemmOptions o;
  o.accumulate = cfg.accumulate;
  o.blocking = cfg.blocking;
  o.arena = cfg.arena;
  std::vector<std::atomic<int>> seen(c.size());
  std::atomic<int64_t> notFinal{0}, calls{0};
  if (cfg.checkCallback) {
    o.onBlockDone = [&](int64_t bi, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      ++calls;
      for (int64_t i = m0; i < m1; ++i)
        for (int64_t j = n0; j < n1; ++j) {
          const int64_t ci = bi * strideC + i * ldc + j;
          seen[ci]++;
          if (!(std::fabs(c[ci] - ref[ci]) <= bound[ci])) ++notFinal;
        }
    };
  }
  sdk::Status st = gemm(kernels, p, o);
  if (!st.isOk()) return ::testing::AssertionFailure() << "gemm failed: " << st.message();
  int64_t bad = 0;
  std::string first;
  for (int64_t bi = 0; bi < cfg.batch; ++bi)
    for (int64_t i = 0; i < cfg.m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const int64_t ci = bi * strideC + i * ldc + j;
        const bool ok = j < cfg.n ? std::fabs(c[ci] - ref[ci]) <= bound[ci] : c[ci] == sentinel;
        if (!ok && bad++ == 0)
          first = "C[" + std::to_string(bi) + "][" + std::to_string(i) + "][" + std::to_string(j) +
                  "] = " + std::to_string(c[ci]) + ", want " + (j < cfg.n ? std::to_string(ref[ci]) : "untouched") +
                  " (bound " + std::to_string(bound[ci]) + ")";
        if (cfg.checkCallback && j < cfg.n && seen[ci] != 1 && bad++ == 0)
          first = "element seen by the callback " + std::to_string(seen[ci]) + " times";
      }
  if (cfg.checkCallback && notFinal > 0)
    return ::testing::AssertionFailure() << notFinal << " elements not final in the callback";
  if (cfg.checkCallback && cfg.m > 0 && cfg.n > 0 && calls == 0) return ::testing::AssertionFailure() << "no callback";
  if (bad) return ::testing::AssertionFailure() << bad << " bad elements; first " << first;
  return ::testing::AssertionSuccess();
}

std::string describe(const Config& c) {
  return "batch " + std::to_string(c.batch) + " m " + std::to_string(c.m) + " n " + std::to_string(c.n) + " k " +
         std::to_string(c.k) + (c.transA ? " A^T" : "") + (c.transB ? " B^T" : "") +
         (c.accumulate ? " accumulate" : "");
}

class GemmIsa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    k_ = kernelsFor(GetParam());
    if (!k_) GTEST_SKIP() << "this CPU cannot run " << GetParam();
  }
  const GemmKernels& kernels() const { return k_->kernels; }
  const IsaKernels* k_ = nullptr;
};

TEST_P(GemmIsa, OddSizes) {
  const int64_t sizes[] = {1, 7, 13, 31, 100, 257};
  int cases = 0;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : {1, 13, 257}) {
        if (m * n * k > 4'000'000) continue;
        Config c;
        c.m = m, c.n = n, c.k = k;
        EXPECT_TRUE(check(kernels(), c)) << describe(c);
        ++cases;
      }
  EXPECT_GT(cases, 90);
}

TEST_P(GemmIsa, TransposedAndStrided) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool tiny : {false, true}) {
        Config c;
        c.m = 37, c.n = 45, c.k = 300;
        c.transA = ta, c.transB = tb, c.padA = 3, c.padB = 5, c.padC = 2;
        if (tiny) c.blocking = {kernels().shape.mr * 2, 16, kernels().shape.nr};  // many blocks per loop
        EXPECT_TRUE(check(kernels(), c)) << describe(c) << (tiny ? " tiny blocks" : "");
      }
  Config g;  // neither stride 1
  g.m = 19, g.n = 23, g.k = 29, g.colStepA = 3, g.colStepB = 2, g.padA = 1;
  EXPECT_TRUE(check(kernels(), g)) << "generic strides";
}

TEST_P(GemmIsa, BatchedAndBroadcast) {
  Config c;
  c.batch = 3, c.m = 20, c.n = 33, c.k = 40, c.transB = true, c.padC = 1;
  EXPECT_TRUE(check(kernels(), c)) << describe(c);
  c.broadcastB = true;  // B's batch stride 0: one weight for every batch entry
  EXPECT_TRUE(check(kernels(), c)) << describe(c) << " broadcast B";
}

TEST_P(GemmIsa, ZeroK) {
  Config c;
  c.m = 9, c.n = 40, c.k = 0, c.padC = 3, c.checkCallback = true;
  EXPECT_TRUE(check(kernels(), c)) << "K = 0 must write zeros";
  c.accumulate = true;
  EXPECT_TRUE(check(kernels(), c)) << "K = 0 accumulate must leave C";
}

TEST_P(GemmIsa, HalfAndBfloatStorage) {
  for (GemmElement e : {GemmElement::kF16, GemmElement::kBF16})
    for (bool t : {false, true}) {
      Config c;
      c.m = 29, c.n = 35, c.k = 67, c.ea = e, c.eb = e, c.transA = !t, c.transB = t;
      EXPECT_TRUE(check(kernels(), c)) << describe(c) << (e == GemmElement::kF16 ? " f16" : " bf16");
      c.eb = GemmElement::kF32;  // mixed storage
      EXPECT_TRUE(check(kernels(), c)) << describe(c) << " mixed";
    }
}

TEST_P(GemmIsa, Accumulate) {
  Config c;
  c.m = 50, c.n = 70, c.k = 90, c.accumulate = true, c.blocking = {0, 32, 0};  // several KC blocks
  EXPECT_TRUE(check(kernels(), c)) << describe(c);
}

TEST_P(GemmIsa, ParallelWithCallback) {
  tbb::task_arena arena(2);
  Config c;
  c.m = 203, c.n = 301, c.k = 150, c.transB = true, c.arena = &arena, c.checkCallback = true;
  EXPECT_TRUE(check(kernels(), c)) << describe(c);
  c.blocking = {kernels().shape.mr * 3, 64, kernels().shape.nr * 2};
  c.batch = 2, c.padC = 4;
  EXPECT_TRUE(check(kernels(), c)) << describe(c) << " small blocks";
  Config serial = c;  // below the parallel threshold: the calling thread alone
  serial.m = 5, serial.n = 6, serial.k = 7;
  EXPECT_TRUE(check(kernels(), serial)) << describe(serial);
}

TEST_P(GemmIsa, RowOffsetB) {
  tbb::task_arena arena(2);
  Config c;
  c.rowTable = true, c.checkCallback = true;
  for (int64_t n : {1, 31, 33, 100}) {
    c.m = 21, c.n = n, c.k = 45;
    EXPECT_TRUE(check(kernels(), c)) << describe(c) << " row offsets";
  }
  c.batch = 3, c.m = 70, c.n = 301, c.k = 150, c.padC = 2, c.arena = &arena;  // parallel, several KC blocks
  c.blocking = {kernels().shape.mr * 2, 64, kernels().shape.nr * 3};
  EXPECT_TRUE(check(kernels(), c)) << describe(c) << " row offsets, small blocks";
  c.accumulate = true;
  EXPECT_TRUE(check(kernels(), c)) << describe(c) << " row offsets";
  // A B read through offsets must be plain f32 rows.
  GemmProblem p;
  std::vector<float> a(4), b(64), out(4);
  int64_t offsets[1] = {0};
  p.m = 2, p.n = 2, p.k = 1, p.ldc = 2, p.c = out.data();
  p.a = {a.data(), GemmElement::kF32, 1, 1, 0};
  p.b = {b.data(), GemmElement::kF16, 0, 1, 0};
  p.b.rowOffsets = offsets;
  sdk::Status st = gemm(kernels(), p);
  EXPECT_EQ(st.code(), sdk::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("row offsets"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(Isas, GemmIsa, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

/// The micro-kernel alone, on panels laid out as documented, every kc remainder and both flags.
TEST(GemmMicroKernel, MatchesDefinition) {
  for (const char* name : {"avx512", "avx2", "scalar"}) {
    const IsaKernels* ik = kernelsFor(name);
    if (!ik) continue;
    const GemmKernels& k = ik->kernels;
    const int mr = k.shape.mr, nr = k.shape.nr;
    for (int64_t kc : {0, 1, 3, 4, 5, 17, 64}) {
      std::mt19937 g(static_cast<uint32_t>(kc));
      std::uniform_int_distribution<int> d(-8, 8);  // small integers: exact in f32
      std::vector<float> a(mr * std::max<int64_t>(kc, 1)), b(nr * std::max<int64_t>(kc, 1));
      for (float& x : a) x = static_cast<float>(d(g));
      for (float& x : b) x = static_cast<float>(d(g));
      const int64_t ldc = nr + 3;
      for (int32_t flags : {kGemmOverwrite, kGemmAccumulate}) {
        std::vector<float> c(mr * ldc, 2.0f);
        k.micro(kc, a.data(), b.data(), c.data(), ldc, flags);
        for (int i = 0; i < mr; ++i)
          for (int j = 0; j < ldc; ++j) {
            float want = j < nr ? (flags ? 2.0f : 0.0f) : 2.0f;
            for (int64_t p = 0; j < nr && p < kc; ++p) want += a[p * mr + i] * b[p * nr + j];
            ASSERT_EQ(c[i * ldc + j], want) << name << " kc " << kc << " flags " << flags << " at " << i << "," << j;
          }
      }
    }
  }
}

// Sabotage: a micro-kernel that drops the last k step, and one that loses one element of
// the tile, must both be caught by the checks above.
GemmMicroKernelFn gReal = nullptr;
void dropLastK(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int32_t flags) {
  gReal(kc > 1 ? kc - 1 : kc, a, b, c, ldc, flags);
}
void loseCorner(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int32_t flags) {
  const float keep = c[ldc + 1];
  gReal(kc, a, b, c, ldc, flags);
  c[ldc + 1] = keep;  // as if one accumulator were never stored
}

TEST(GemmSabotage, BrokenMicroKernelsAreCaught) {
  const IsaKernels* ik = kernelsFor("");
  ASSERT_NE(ik, nullptr);
  gReal = ik->kernels.micro;
  for (GemmMicroKernelFn broken : {&dropLastK, &loseCorner}) {
    GemmKernels k = ik->kernels;
    k.micro = broken;
    Config c;
    c.m = 40, c.n = 70, c.k = 33;
    EXPECT_FALSE(check(k, c)) << "a broken micro-kernel passed";
  }
}

TEST(GemmErrors, InvalidArguments) {
  const IsaKernels* ik = kernelsFor("");
  ASSERT_NE(ik, nullptr);
  std::vector<float> x(64);
  GemmProblem p;
  p.m = 4, p.n = 4, p.k = 4;
  p.a = {x.data(), GemmElement::kF32, 4, 1, 0};
  p.b = p.a;
  p.c = x.data() + 32, p.ldc = 3;
  sdk::Status st = gemm(ik->kernels, p);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("ldc"), std::string::npos) << st.message();
  p.ldc = 4, p.k = -1;
  EXPECT_FALSE(gemm(ik->kernels, p).isOk());
  p.k = 4, p.b.data = nullptr;
  EXPECT_FALSE(gemm(ik->kernels, p).isOk());
  GemmMicroKernelShape tooBig{20, 64};
  EXPECT_FALSE(validateGemmMicroKernelShape(ik->kernels.isa, tooBig).isOk());
}

}  // namespace
}  // namespace plugsdk::cpu
