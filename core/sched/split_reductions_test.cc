// Split reductions: which reductions are split and how many ways (chooseReductionSplit), and
// that a split program computes what the whole one does, a bf16 column sum through f32
// partials included.
#include "core/sched/split_reductions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/decomp/decompose.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

FusionCaps caps(int64_t rows, int64_t columns) {
  FusionCaps c;
  c.splitRowReductions = rows;
  c.splitColumnReductions = columns;
  return c;
}

TEST(SplitReductions, ChoosesSlicesFromTheOutermostReducedDims) {
  // A batch norm's sums over (N, H, W) of 64 channels: 1024 rows wanted, 16 slices of N.
  ReductionSplit s = chooseReductionSplit({32, 64, 56, 56}, {0, 2, 3}, caps(1024, 0));
  EXPECT_EQ(s.slices, 16);
  EXPECT_EQ(s.wholeDims, 0u);
  EXPECT_EQ(s.factor, 16);
  // A bias gradient (column sum of 2048 x 768): 86 slices wanted, at most 2048 / 32.
  s = chooseReductionSplit({2048, 768}, {0}, caps(0, 65536));
  EXPECT_EQ(s.slices, 64);
  // A layer norm's weight gradient over (batch, sequence): the batch whole, then 8 of 256.
  s = chooseReductionSplit({8, 256, 768}, {0, 1}, caps(0, 65536));
  EXPECT_EQ(s.wholeDims, 1u);
  EXPECT_EQ(s.factor, 8);
  EXPECT_EQ(s.slices, 64);
  // The kind of reduction picks the capability: rows do not split column sums.
  EXPECT_EQ(chooseReductionSplit({2048, 768}, {0}, caps(1024, 0)).slices, 1);
  EXPECT_EQ(chooseReductionSplit({32, 64, 56, 56}, {0, 2, 3}, caps(0, 65536)).slices, 1);
  // Enough rows already; too little to reduce; an extent with no divisor below the target.
  EXPECT_EQ(chooseReductionSplit({2048, 768}, {1}, caps(1024, 0)).slices, 1);
  EXPECT_EQ(chooseReductionSplit({16, 40}, {1}, caps(1024, 0)).slices, 1);
  EXPECT_EQ(chooseReductionSplit({2053, 4}, {0}, caps(0, 65536), /*canPad=*/false).slices, 1);
  // ... which is padded when the reduction has an identity: 2053 -> 2112, 64 slices of 33.
  s = chooseReductionSplit({2053, 4}, {0}, caps(0, 65536));
  EXPECT_EQ(s.slices, 64);
  EXPECT_EQ(s.paddedExtent, 2112);
  // vit_b_16's layer norm weight gradient over (32 images, 197 tokens): 197 is prime; the
  // batch whole, then 197 padded to 198 for 2 slices each (not 32 slices only).
  s = chooseReductionSplit({32, 197, 768}, {0, 1}, caps(0, 65536));
  EXPECT_EQ(s.wholeDims, 1u);
  EXPECT_EQ(s.factor, 2);
  EXPECT_EQ(s.paddedExtent, 198);
  EXPECT_EQ(s.slices, 64);
  // No padding past an eighth of the extent, nor below kMinSplitPartial per slice.
  EXPECT_EQ(chooseReductionSplit({67, 4}, {0}, caps(0, 65536)).slices, 2);
  EXPECT_EQ(chooseReductionSplit({67, 4}, {0}, caps(0, 65536)).paddedExtent, 68);
}

constexpr const char* kGraph = R"(graph @g(%x: f64[8, 16, 12, 12], %w: bf16[256, 24], %y: f64[131, 5]) {
  %s = aten.sum.dim_IntList(%x) {dim = [0, 2, 3]}
  %m = aten.amax(%x) {dim = [0, 2, 3]}
  %c = aten.sum.dim_IntList(%w) {dim = [0]}
  %o = aten.amax(%y) {dim = [0]}
  %t = aten.sum.dim_IntList(%y) {dim = [0]}
  return %s, %m, %c, %o, %t
}
)";

TEST(SplitReductions, TheSplitProgramComputesTheGraph) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kGraph);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *g);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  // 16 channels, 64 rows wanted: 4 slices of N; 24 columns, 1024 wanted: 8 slices of 256;
  // 5 columns of 131 (prime): padded to 132, 4 slices of 33 (with -inf for the max, 0 for
  // the sum: a wrong identity changes the results below).
  int split = 0;
  auto rewritten = splitReductions(*ctx, *prims, caps(64, 1024), &split);
  ASSERT_TRUE(rewritten.isOk()) << rewritten.status().toString();
  EXPECT_EQ(split, 5);
  ScheduleOptions whole, parts;
  parts.caps = caps(64, 1024);
  auto p = schedule(*ctx, *prims, whole);
  auto q = schedule(*ctx, *prims, parts);
  ASSERT_TRUE(p.isOk() && q.isOk());
  EXPECT_GT(q->numLaunches(), p->numLaunches()) << printProgram(*q);
  // The bf16 column sum's partials are f32.
  bool f32Partials = false;
  for (const Buffer& b : q->buffers)
    f32Partials = f32Partials || (b.role == BufferRole::kTemp && b.dtype == ir::DType::kF32);
  EXPECT_TRUE(f32Partials) << printProgram(*q);

  exec::HostTensor x(ir::DType::kF64, {8, 16, 12, 12}), w(ir::DType::kBF16, {256, 24}), y(ir::DType::kF64, {131, 5});
  // Negative everywhere, so a 0 padded into the max would show.
  for (int64_t j = 0; j < y.numel(); ++j) y.setDouble(j, -1.5 - std::sin(0.37 * static_cast<double>(j)));
  std::vector<double> ymax(5, -INFINITY), ysum(5, 0.0);
  for (int64_t j = 0; j < y.numel(); ++j) {
    ymax[static_cast<size_t>(j % 5)] = std::max(ymax[static_cast<size_t>(j % 5)], y.getDouble(j));
    ysum[static_cast<size_t>(j % 5)] += y.getDouble(j);
  }
  for (int64_t j = 0; j < x.numel(); ++j) x.setDouble(j, std::sin(0.013 * static_cast<double>(j)) + 0.001 * (j % 7));
  for (int64_t j = 0; j < w.numel(); ++j) w.setDouble(j, std::cos(0.11 * static_cast<double>(j)));
  std::vector<double> sum(16, 0.0), max(16, -INFINITY), col(24, 0.0);
  for (int64_t j = 0; j < x.numel(); ++j) {
    const size_t c = static_cast<size_t>((j / 144) % 16);
    sum[c] += x.getDouble(j);
    max[c] = std::max(max[c], x.getDouble(j));
  }
  for (int64_t j = 0; j < w.numel(); ++j) col[static_cast<size_t>(j % 24)] += w.getDouble(j);
  for (const Program* prog : {&*p, &*q}) {
    auto got = ProgramInterpreter(ctx).run(*prog, {x, w, y});
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    for (size_t c = 0; c < 16; ++c) {
      EXPECT_NEAR((*got)[0].getDouble(static_cast<int64_t>(c)), sum[c], 1e-9);
      EXPECT_EQ((*got)[1].getDouble(static_cast<int64_t>(c)), max[c]);
    }
    // One bf16 rounding of the exact sum (half an ulp: at most 2^-8 relative), not one per partial.
    for (size_t c = 0; c < 24; ++c)
      EXPECT_NEAR((*got)[2].getDouble(static_cast<int64_t>(c)), col[c], std::abs(col[c]) * 0x1p-8 + 1e-6)
          << (prog == &*p ? "whole" : "split") << " column " << c;
    for (size_t c = 0; c < 5; ++c) {
      EXPECT_EQ((*got)[3].getDouble(static_cast<int64_t>(c)), ymax[c]);
      EXPECT_NEAR((*got)[4].getDouble(static_cast<int64_t>(c)), ysum[c], 1e-9);
    }
  }
}

}  // namespace
}  // namespace plugsdk::sched
