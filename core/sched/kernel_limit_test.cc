// The kernel size limit: an elementwise chain too long for one kernel is split into several
// kernels below the limit (values whose inlined expression would fill a quarter of it become
// roots) instead of failing to schedule, and the split program still computes the graph.
#include <gtest/gtest.h>

#include <cmath>

#include "core/decomp/decompose.h"
#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

std::string chain(int n) {
  std::string text = "graph @chain(%x: f64[3, 5]) {\n  %v0 = aten.sin(%x)\n";
  for (int i = 1; i < n; ++i)
    text += "  %v" + std::to_string(i) + " = aten." + (i % 2 ? "cos" : "sin") + "(%v" + std::to_string(i - 1) + ")\n";
  return text + "  return %v" + std::to_string(n - 1) + "\n}\n";
}

TEST(KernelLimit, LongChainSplitsBelowTheLimit) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, chain(300));
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *g);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  for (int64_t limit : {64, 512}) {
    ScheduleOptions o;
    o.caps.maxKernelStmts = limit;
    ScheduleStats stats;
    auto p = schedule(*ctx, *prims, o, &stats);
    ASSERT_TRUE(p.isOk()) << "limit " << limit << ": " << p.status().toString();
    EXPECT_GE(p->kernels.size(), static_cast<size_t>(300 / limit + 1)) << "limit " << limit;
    for (const kernel::Kernel& k : p->kernels) EXPECT_LE(k.numStmts(), limit) << k.name;
    exec::HostTensor x(ir::DType::kF64, {3, 5});
    for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, 0.1 * static_cast<double>(i) - 0.7);
    auto out = ProgramInterpreter(ctx).run(*p, {x});
    ASSERT_TRUE(out.isOk()) << out.status().toString();
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = x.getDouble(i);
      for (int k = 0; k < 300; ++k) v = k % 2 ? std::cos(v) : std::sin(v);
      EXPECT_NEAR((*out)[0].getDouble(i), v, 1e-12) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace plugsdk::sched
