// Windowed reductions (pooling) over a computed value: the value is computed once as a root
// (here the convolution's epilogue) instead of being inlined into the pooling loop, where it
// would run once per window read; the program still computes the graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/decomp/decompose.h"
#include "core/sched/conv_reference_test_util.h"
#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

const char* kConvPool = R"(graph @g(%x: f64[2, 3, 9, 9], %w: f64[4, 3, 3, 3]) {
  %c = aten.convolution(%x, %w, none) {stride = [1, 1], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  %s = aten.sigmoid(%c)
  %p, %i = aten.max_pool2d_with_indices(%s) {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]}
  return %p
})";

/// Whether `body` computes an exp (sigmoid's prims), inside loops too.
bool hasExp(const std::vector<kernel::Stmt>& body) {
  return std::any_of(body.begin(), body.end(), [](const kernel::Stmt& s) {
    return (s.kind == kernel::StmtKind::kScalar && s.op == prims::ScalarOp::kExp) || hasExp(s.body);
  });
}

bool hasLoop(const kernel::Kernel& k) {
  return std::any_of(k.body.begin(), k.body.end(),
                     [](const kernel::Stmt& s) { return s.kind == kernel::StmtKind::kLoop; });
}

TEST(WindowRoots, PoolingReadsAComputedValueInsteadOfRecomputingIt) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kConvPool);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *g);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  auto p = schedule(*ctx, *prims, ScheduleOptions{});
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  int epilogues = 0;
  for (const Step& s : p->steps)
    if (s.kind == Step::Kind::kCall && s.call.epilogue >= 0) {
      ++epilogues;
      EXPECT_TRUE(hasExp(p->kernels[static_cast<size_t>(s.call.epilogue)].body))
          << "the sigmoid is the convolution's epilogue";
    }
  EXPECT_EQ(epilogues, 1);
  for (const kernel::Kernel& k : p->kernels)
    if (hasLoop(k)) {
      EXPECT_FALSE(hasExp(k.body)) << k.name << " recomputes the sigmoid per window";
    }

  // Against the graph's own reference: the sigmoid of a direct convolution, max-pooled.
  exec::HostTensor x(ir::DType::kF64, {2, 3, 9, 9}), w(ir::DType::kF64, {4, 3, 3, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, std::sin(0.37 * static_cast<double>(i)));
  for (int64_t i = 0; i < w.numel(); ++i) w.setDouble(i, std::cos(0.91 * static_cast<double>(i)));
  auto out = ProgramInterpreter(ctx).run(*p, {x, w});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  auto sig = [&](int64_t n, int64_t o, int64_t y, int64_t xx) {
    return 1 / (1 + std::exp(-convAt(x, w, 3, 9, 9, 3, 1, n, o, y, xx)));
  };
  const exec::HostTensor& got = (*out)[0];
  ASSERT_EQ(got.numel(), 2 * 4 * 5 * 5);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t y = 0; y < 5; ++y)
        for (int64_t xx = 0; xx < 5; ++xx) {
          double want = -INFINITY;
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 3; ++b) {
              const int64_t iy = 2 * y + a - 1, ix = 2 * xx + b - 1;
              if (iy >= 0 && iy < 9 && ix >= 0 && ix < 9) want = std::max(want, sig(n, o, iy, ix));
            }
          EXPECT_NEAR(got.getDouble(((n * 4 + o) * 5 + y) * 5 + xx), want, 1e-12)
              << n << " " << o << " " << y << " " << xx;
        }
}

}  // namespace
}  // namespace plugsdk::sched
