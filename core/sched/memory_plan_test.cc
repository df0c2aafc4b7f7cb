// Memory planning: slot reuse by liveness, in-place updates, symbolic sizes, and the
// program interpreter's check that catches a plan which reuses memory too early.
#include "core/sched/memory_plan.h"

#include <gtest/gtest.h>

#include "core/decomp/decompose.h"
#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

using exec::HostTensor;

StatusOr<Program> scheduleText(const std::shared_ptr<const ir::Context>& ctx, const char* text,
                               ScheduleOptions options = {}) {
  ASSIGN_OR_RETURN(ir::Graph g, text::parseGraph(*ctx, text));
  ASSIGN_OR_RETURN(ir::Graph prims, decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), g));
  return schedule(*ctx, prims, options);
}

std::vector<const Buffer*> temps(const Program& p) {
  std::vector<const Buffer*> out;
  for (const Buffer& b : p.buffers)
    if (b.role == BufferRole::kTemp) out.push_back(&b);
  return out;
}

HostTensor iotaTensor(std::vector<int64_t> shape, double scale) {
  HostTensor t(ir::DType::kF64, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, scale * static_cast<double>(i % 7) - 1.0);
  return t;
}

const char* kChain = R"(graph @chain(%x: f64[8, 8], %w: f64[8, 8]) {
  %a = aten.mm(%x, %w)
  %b = aten.mm(%a, %w)
  %c = aten.mm(%b, %w)
  %d = aten.mm(%c, %w)
  return %d
})";

TEST(MemoryPlan, ChainReusesTwoSlots) {
  auto ctx = ir::makeDefaultContext();
  auto p = scheduleText(ctx, kChain);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto t = temps(*p);
  ASSERT_EQ(t.size(), 3u);  // a, b, c
  // a and b are alive together (b = a @ w); c can take a's slot.
  EXPECT_NE(t[0]->slot, t[1]->slot);
  EXPECT_EQ(t[0]->slot, t[2]->slot);
  EXPECT_EQ(p->arenaBytes, SymExpr(2 * 8 * 8 * 8));
}

TEST(MemoryPlan, WithoutReuseEveryTemporaryHasItsOwnSlot) {
  auto ctx = ir::makeDefaultContext();
  ScheduleOptions o;
  o.planMemory = false;
  ScheduleStats stats;
  auto g = text::parseGraph(*ctx, kChain);
  ASSERT_TRUE(g.isOk());
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *g);
  ASSERT_TRUE(prims.isOk());
  auto p = schedule(*ctx, *prims, o, &stats);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->arenaBytes, SymExpr(3 * 8 * 8 * 8));
  EXPECT_EQ(stats.tempBytesUnplanned, stats.tempBytesPlanned);
}

TEST(MemoryPlan, PlannedProgramComputesTheSameNumbers) {
  auto ctx = ir::makeDefaultContext();
  auto p = scheduleText(ctx, kChain);
  ASSERT_TRUE(p.isOk());
  ProgramInterpreter interp(ctx);
  HostTensor x = iotaTensor({8, 8}, 0.25), w = iotaTensor({8, 8}, 0.125);
  auto out = interp.run(*p, {x, w});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  // Reference: four naive products.
  std::vector<double> cur(x.doubles()), next(64);
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        double s = 0;
        for (int l = 0; l < 8; ++l)
          s += cur[static_cast<size_t>(i * 8 + l)] * w.doubles()[static_cast<size_t>(l * 8 + j)];
        next[static_cast<size_t>(i * 8 + j)] = s;
      }
    cur = next;
  }
  for (int i = 0; i < 64; ++i) EXPECT_DOUBLE_EQ((*out)[0].getDouble(i), cur[static_cast<size_t>(i)]) << i;
}

TEST(MemoryPlan, InterpreterCatchesASlotReusedTooEarly) {
  auto ctx = ir::makeDefaultContext();
  auto p = scheduleText(ctx, kChain);
  ASSERT_TRUE(p.isOk());
  // Corrupt the plan: all temporaries in one slot, so b = a @ w would overwrite a while the
  // product still reads it (a library call never works in place).
  for (Buffer& b : p->buffers)
    if (b.role == BufferRole::kTemp) b.slot = 0;
  ProgramInterpreter interp(ctx);
  auto out = interp.run(*p, {iotaTensor({8, 8}, 0.25), iotaTensor({8, 8}, 0.125)});
  ASSERT_FALSE(out.isOk());
  EXPECT_NE(out.status().message().find("memory plan"), std::string::npos) << out.status().toString();
}

TEST(MemoryPlan, ElementwiseKernelUpdatesADyingInputInPlace) {
  auto ctx = ir::makeDefaultContext();
  // exp(x @ w) is materialized (a library result), then sigmoid of it runs in place... the
  // pointwise consumer fuses as an epilogue by default, so turn epilogues off to force a
  // separate elementwise kernel over the temporary.
  ScheduleOptions o;
  o.caps.libraryEpilogue = false;
  auto p = scheduleText(ctx, R"(graph @g(%x: f64[4, 4], %w: f64[4, 4]) {
  %a = aten.mm(%x, %w)
  %e = aten.exp(%a)
  %f = aten.mm(%e, %w)
  return %f
})",
                        o);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto t = temps(*p);
  ASSERT_EQ(t.size(), 2u);  // a and e
  EXPECT_EQ(t[0]->slot, t[1]->slot) << printProgram(*p);
  EXPECT_EQ(p->arenaBytes, SymExpr(4 * 4 * 8));
  ProgramInterpreter interp(ctx);
  auto out = interp.run(*p, {iotaTensor({4, 4}, 0.1), iotaTensor({4, 4}, 0.2)});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
}

TEST(MemoryPlan, SymbolicSizesReuseWhenProvablyLargeEnough) {
  auto ctx = ir::makeDefaultContext();
  auto p = scheduleText(ctx, R"(graph @g(%x: f64[s0, 16], %w: f64[16, 16], %v: f64[16, 8]) {
  %a = aten.mm(%x, %w)
  %b = aten.mm(%a, %w)
  %c = aten.mm(%b, %v)
  %d = aten.mm(%c, %v)
  return %d
})");
  ASSERT_FALSE(p.isOk());  // c is [s0, 8] and v [16, 8]: a bad graph is an error, not a plan
  auto q = scheduleText(ctx, R"(graph @g(%x: f64[s0, 16], %w: f64[16, 16], %v: f64[16, 8]) {
  %a = aten.mm(%x, %w)
  %b = aten.mm(%a, %w)
  %c = aten.mm(%b, %v)
  %d = aten.relu(%c)
  %e = aten.sum.dim_IntList(%d) {dim = [1]}
  return %e
})");
  ASSERT_TRUE(q.isOk()) << q.status().toString();
  auto t = temps(*q);
  // a [s0,16] and b [s0,16] live together; c [s0,8] fits a's freed slot (16*s0 >= 8*s0 provably).
  ASSERT_GE(t.size(), 3u);
  EXPECT_EQ(t[0]->slot, t[2]->slot) << printProgram(*q);
  EXPECT_EQ(q->arenaBytes.toString(), "256*s0") << printProgram(*q);  // two slots of 16*s0 f64
}

}  // namespace
}  // namespace plugsdk::sched
