// Library operands over computed values (schedule.cc, readsOperandFromBase): im2col's columns
// are gathered straight from the convolution's input (no padded copy) and from the previous
// layer's pointwise tail (no activation materialized in between); a transposed operand with
// 16-byte aligned rows stays a view of its materialized base, an unaligned one is written in
// its own row-major layout; a matmul operand whose batch dims do not flatten is copied. The
// programs still compute their graphs (against double loops).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/compile/pipeline.h"
#include "core/ir/tensor_type.h"
#include "core/sched/conv_reference_test_util.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

/// A device with prims.matmul only, and no library epilogues.
StatusOr<Program> lowerForMatmulOnly(const ir::Context& ctx, const char* text) {
  auto g = text::parseGraph(ctx, text);
  if (!g.isOk()) return g.status();
  compile::CompileOptions o;
  o.decomp.expand = {"prims.convolution", "prims.sdpa"};
  o.schedule.caps.matmulEpilogue = false;
  ASSIGN_OR_RETURN(compile::Compiled c, compile::compileGraph(ctx, *g, o));
  return std::move(c.program);
}

std::vector<const LibraryCall*> callsOf(const Program& p) {
  std::vector<const LibraryCall*> calls;
  for (const Step& s : p.steps)
    if (s.kind == Step::Kind::kCall) calls.push_back(&s.call);
  return calls;
}

int launchesOf(const Program& p) {
  return static_cast<int>(
      std::count_if(p.steps.begin(), p.steps.end(), [](const Step& s) { return s.kind == Step::Kind::kLaunch; }));
}

exec::HostTensor filled(std::vector<int64_t> shape, double a) {
  exec::HostTensor t(ir::DType::kF64, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, std::sin(a * static_cast<double>(i + 1)));
  return t;
}

// 7x7 outputs in f64: rows of 49 points are 392 bytes, so the columns take a row per point.
const char* kTwoConvs = R"(graph @g(%x: f64[2, 4, 7, 7], %w1: f64[6, 4, 3, 3], %w2: f64[8, 6, 1, 1]) {
  %c = aten.convolution(%x, %w1, none) {stride = [1, 1], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  %r = aten.relu(%c)
  %d = aten.convolution(%r, %w2, none) {stride = [1, 1], padding = [0, 0], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  %s = aten.sigmoid(%d)
  return %s
})";

TEST(LibraryOperands, Im2colColumnsAreGatheredFromTheProducersWithoutCopies) {
  auto ctx = ir::makeDefaultContext();
  auto p = lowerForMatmulOnly(*ctx, kTwoConvs);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const std::vector<const LibraryCall*> calls = callsOf(*p);
  ASSERT_EQ(calls.size(), 2u) << printProgram(*p);
  for (const LibraryCall* c : calls) {
    ASSERT_TRUE(c->inputs[0].has_value());
    const View& cols = *c->inputs[0];
    EXPECT_EQ(cols.strides, ir::contiguousStrides(cols.shape)) << "columns materialized row-major\n"
                                                               << printProgram(*p);
    ASSERT_GE(cols.shape.size(), 2u);
    EXPECT_EQ(cols.shape.back(), ir::SymExpr(calls.front() == c ? 4 * 9 : 6)) << "a row per output point";
  }
  // Columns of the first (reading %x itself: no padded copy), columns of the second (the
  // relu inlined: no activation between), the sigmoid reading the result through a permute.
  EXPECT_EQ(launchesOf(*p), 3) << printProgram(*p);
  const Step& first = p->steps.front();
  ASSERT_EQ(first.kind, Step::Kind::kLaunch);
  const int xBuffer = p->inputs[0].buffer;
  EXPECT_NE(std::find(first.launch.args.begin(), first.launch.args.end(), xBuffer), first.launch.args.end())
      << "the first columns read the input directly";

  const exec::HostTensor x = filled({2, 4, 7, 7}, 0.37), w1 = filled({6, 4, 3, 3}, 0.91),
                         w2 = filled({8, 6, 1, 1}, 0.53);
  auto out = ProgramInterpreter(ctx).run(*p, {x, w1, w2});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  std::vector<double> r(2 * 6 * 49);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 6; ++o)
      for (int64_t y = 0; y < 7; ++y)
        for (int64_t xx = 0; xx < 7; ++xx)
          r[static_cast<size_t>(((n * 6 + o) * 7 + y) * 7 + xx)] =
              std::max(convAt(x, w1, 4, 7, 7, 3, 1, n, o, y, xx), 0.0);
  const exec::HostTensor& got = (*out)[0];
  ASSERT_EQ(got.numel(), 2 * 8 * 49);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 8; ++o)
      for (int64_t q = 0; q < 49; ++q) {
        double acc = 0;
        for (int64_t c = 0; c < 6; ++c) acc += r[static_cast<size_t>((n * 6 + c) * 49 + q)] * w2.getDouble(o * 6 + c);
        const int64_t at = (n * 8 + o) * 49 + q;
        EXPECT_NEAR(got.getDouble(at), 1 / (1 + std::exp(-acc)), 1e-12) << "at " << at;
      }
}

// 14x14 outputs in f64 (rows of 196 points, 1568 bytes): a row per channel, the result in place.
TEST(LibraryOperands, AlignedPointRowsKeepTheChannelRowLayout) {
  auto ctx = ir::makeDefaultContext();
  auto p = lowerForMatmulOnly(*ctx, R"(graph @g(%x: f64[2, 4, 14, 14], %w: f64[6, 4, 3, 3]) {
  %c = aten.convolution(%x, %w, none) {stride = [1, 1], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  return %c
})");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const std::vector<const LibraryCall*> calls = callsOf(*p);
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_TRUE(calls[0]->inputs[1].has_value());
  EXPECT_EQ(calls[0]->inputs[1]->shape.back(), ir::SymExpr(196)) << printProgram(*p);
}

/// s = sigmoid(a) [16, k]; s^T [k, 16] times w [16, 4].
std::string transposedProduct(int k) {
  const std::string ks = std::to_string(k);
  return "graph @t(%a: f64[16, " + ks + "], %w: f64[16, 4]) {\n  %s = aten.sigmoid(%a)\n  %t = aten.t(%s)\n" +
         "  %m = aten.mm(%t, %w)\n  return %m\n}";
}

TEST(LibraryOperands, TransposedOperandStaysAViewOnlyWithAlignedRows) {
  auto ctx = ir::makeDefaultContext();
  for (int k : {8, 3}) {
    const std::string text = transposedProduct(k);
    auto p = lowerForMatmulOnly(*ctx, text.c_str());
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    const std::vector<const LibraryCall*> calls = callsOf(*p);
    ASSERT_EQ(calls.size(), 1u);
    const View& a = *calls[0]->inputs[0];
    if (k == 8) {
      // 8 f64 = 64-byte rows of the sigmoid's [16, 8]: read transposed as it lies.
      EXPECT_EQ(a.strides, (Shape{ir::SymExpr(1), ir::SymExpr(8)})) << printProgram(*p);
    } else {
      // 3 f64 = 24 bytes: the transpose is written row-major by the sigmoid's kernel.
      EXPECT_EQ(a.strides, (Shape{ir::SymExpr(16), ir::SymExpr(1)})) << printProgram(*p);
    }
    const exec::HostTensor av = filled({16, k}, 0.29), w = filled({16, 4}, 0.71);
    auto out = ProgramInterpreter(ctx).run(*p, {av, w});
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < 4; ++j) {
        double acc = 0;
        for (int r = 0; r < 16; ++r) acc += w.getDouble(r * 4 + j) / (1 + std::exp(-av.getDouble(r * k + i)));
        EXPECT_NEAR((*out)[0].getDouble(i * 4 + j), acc, 1e-12);
      }
  }
}

/// Whether the batch dims of `v` (all but the last two, size 1 skipped) flatten to one stride.
bool batchFlattens(const View& v) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (size_t d = 0; d + 2 < v.shape.size(); ++d)
    if (*v.shape[d].constant() != 1) dims.emplace_back(*v.shape[d].constant(), *v.strides[d].constant());
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (dims[i].second != dims[i + 1].second * dims[i + 1].first) return false;
  return true;
}

// Attention's heads as views of a [B, S, 3 * H * D] projection: q [B, H, S, D] has strides
// [S*3HD, D, 3HD, 1], whose batch dims do not flatten to one stride (a GEMM library would be
// called once per batch point). Each operand is copied into a row-major buffer; k^T is read
// as a transposed view of k's copy (rows of D, not of S).
TEST(LibraryOperands, HeadViewsAreCopiedSoTheBatchFlattens) {
  auto ctx = ir::makeDefaultContext();
  auto p = lowerForMatmulOnly(*ctx, R"(graph @g(%x: f64[2, 5, 24]) {
  %v = aten.view(%x) {size = [2, 5, 3, 2, 4]}
  %p = aten.permute(%v) {dims = [2, 0, 3, 1, 4]}
  %q = aten.select.int(%p) {dim = 0, index = 0}
  %k = aten.select.int(%p) {dim = 0, index = 1}
  %kt = prims.permute(%k) {dims = [0, 1, 3, 2]}
  %s = prims.matmul(%q, %kt)
  return %s
})");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const std::vector<const LibraryCall*> calls = callsOf(*p);
  ASSERT_EQ(calls.size(), 1u) << printProgram(*p);
  const View& q = *calls[0]->inputs[0];
  const View& kt = *calls[0]->inputs[1];
  EXPECT_TRUE(batchFlattens(q)) << printProgram(*p);
  EXPECT_TRUE(batchFlattens(kt)) << printProgram(*p);
  EXPECT_EQ(kt.strides, (Shape{ir::SymExpr(40), ir::SymExpr(20), ir::SymExpr(1), ir::SymExpr(4)}))
      << "k^T as a transposed view of k's row-major copy\n"
      << printProgram(*p);
  const exec::HostTensor x = filled({2, 5, 24}, 0.43);
  auto out = ProgramInterpreter(ctx).run(*p, {x});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  auto at = [&](int64_t b, int64_t s, int64_t which, int64_t h, int64_t d) {
    return x.getDouble(b * 120 + s * 24 + which * 8 + h * 4 + d);
  };
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          double acc = 0;
          for (int64_t d = 0; d < 4; ++d) acc += at(b, i, 0, h, d) * at(b, j, 1, h, d);
          EXPECT_NEAR((*out)[0].getDouble(((b * 2 + h) * 5 + i) * 5 + j), acc, 1e-12);
        }
}

// A batch dim broadcast with stride 0 is left as a view: copied, the operand would grow.
TEST(LibraryOperands, BroadcastBatchStaysAView) {
  auto ctx = ir::makeDefaultContext();
  auto p = lowerForMatmulOnly(*ctx, R"(graph @g(%a: f64[3, 5, 4], %b: f64[2, 3, 4, 6]) {
  %e = aten.expand(%a) {size = [2, 3, 5, 4]}
  %s = prims.matmul(%e, %b)
  return %s
})");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const std::vector<const LibraryCall*> calls = callsOf(*p);
  ASSERT_EQ(calls.size(), 1u) << printProgram(*p);
  EXPECT_EQ(calls[0]->inputs[0]->strides[0], ir::SymExpr(0)) << printProgram(*p);
  EXPECT_EQ(launchesOf(*p), 0) << printProgram(*p);
}

}  // namespace
}  // namespace plugsdk::sched
