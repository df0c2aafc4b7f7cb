// Memory planning: slot reuse by liveness, in-place updates, symbolic sizes, the program
// interpreter's checks that catch a plan which reuses memory too early, and the graphs the
// conformance fuzzer found planned wrong (temporaries live at once on the same bytes).
#include "core/sched/memory_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/decomp/decompose.h"
#include "core/exec/reference_executor.h"
#include "core/kernel/kernel_text.h"
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
  // Corrupt the plan: all temporaries in one slot, so b = a @ w would overwrite a while the
  // product still reads it (a library call never works in place). With the offsets left as
  // they were, slots and offsets disagree; with them at 0 too, the bytes really overlap.
  for (const char* what : {"slot only", "slot and offset"}) {
    auto p = scheduleText(ctx, kChain);
    ASSERT_TRUE(p.isOk());
    for (Buffer& b : p->buffers)
      if (b.role == BufferRole::kTemp) {
        b.slot = 0;
        if (std::string(what) != "slot only") b.offset = 0;
      }
    ProgramInterpreter interp(ctx);
    auto out = interp.run(*p, {iotaTensor({8, 8}, 0.25), iotaTensor({8, 8}, 0.125)});
    ASSERT_FALSE(out.isOk()) << what;
    EXPECT_NE(out.status().message().find("memory plan"), std::string::npos) << what << ": " << out.status().toString();
  }
}

TEST(MemoryPlan, ElementwiseKernelUpdatesADyingInputInPlace) {
  auto ctx = ir::makeDefaultContext();
  // exp(x @ w) is materialized (a library result), then sigmoid of it runs in place... the
  // pointwise consumer fuses as an epilogue by default, so turn epilogues off to force a
  // separate elementwise kernel over the temporary.
  ScheduleOptions o;
  o.caps.matmulEpilogue = false;
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

// --- Live-at-once temporaries never share bytes -------------------------------------------

/// A temporary's live range [first step writing it, last step touching it] and its bytes.
struct Live {
  int def = -1, last = -1;
  int64_t begin = 0, end = 0;
};

/// How step `si` uses buffer `b`: (read, written, kernel argument index or -1).
struct UseAt {
  bool read = false, written = false;
  int arg = -1;
};
UseAt useAt(const Program& p, const Step& s, int b) {
  UseAt u;
  auto args = [&](int kernel, const std::vector<int>& bufs) {
    for (size_t i = 0; i < bufs.size(); ++i)
      if (bufs[i] == b) {
        u.read |= p.kernels[static_cast<size_t>(kernel)].args[i].read;
        u.written |= p.kernels[static_cast<size_t>(kernel)].args[i].written;
        u.arg = static_cast<int>(i);
      }
  };
  if (s.kind == Step::Kind::kLaunch) {
    args(s.launch.kernel, s.launch.args);
    return u;
  }
  for (const auto& v : s.call.inputs) u.read |= v && v->buffer == b;
  for (const View& v : s.call.outputs) u.written |= v.buffer == b;
  if (s.call.epilogue >= 0) args(s.call.epilogue, s.call.epilogueArgs);
  return u;
}

/// Every pair of temporaries whose live ranges meet lies on disjoint bytes, except a result
/// written in place over an operand whose last use is that very launch (and which the launch
/// only reads). Liveness is recomputed here from the steps, not taken from the planner.
void expectNoLiveOverlap(const Program& p) {
  std::vector<Live> live(p.buffers.size());
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buf = p.buffers[b];
    if (buf.role != BufferRole::kTemp) continue;
    auto off = buf.offset.evaluate({});
    auto n = buf.numel.evaluate({});
    ASSERT_TRUE(off && n) << "%" << buf.name;
    live[b].begin = *off;
    live[b].end = *off + *n * dtypeBytes(buf.dtype);
    for (size_t si = 0; si < p.steps.size(); ++si) {
      UseAt u = useAt(p, p.steps[si], static_cast<int>(b));
      if (u.written && live[b].def < 0) live[b].def = static_cast<int>(si);
      if (u.read || u.written) live[b].last = static_cast<int>(si);
    }
  }
  for (size_t a = 0; a < p.buffers.size(); ++a)
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      if (a == b || p.buffers[a].role != BufferRole::kTemp || p.buffers[b].role != BufferRole::kTemp) continue;
      const Live &la = live[a], &lb = live[b];
      const bool bytes = la.begin < lb.end && lb.begin < la.end && la.begin < la.end && lb.begin < lb.end;
      const bool time = la.def <= lb.last && lb.def <= la.last;
      if (!bytes || !time) continue;
      // Allowed only as `a` handing its memory to `b` in place at the step where a dies.
      bool inPlace = false;
      if (la.last == lb.def && la.def < lb.def) {
        const Step& s = p.steps[static_cast<size_t>(lb.def)];
        UseAt ua = useAt(p, s, static_cast<int>(a)), ub = useAt(p, s, static_cast<int>(b));
        inPlace = s.kind == Step::Kind::kLaunch && ua.read && !ua.written &&
                  inPlaceLegal(p.kernels[static_cast<size_t>(s.launch.kernel)], ua.arg, ub.arg);
      }
      if (la.def < lb.def || (la.def == lb.def && a < b)) {
        EXPECT_TRUE(inPlace) << "%" << p.buffers[a].name << " (steps " << la.def << ".." << la.last << ") and %"
                             << p.buffers[b].name << " (steps " << lb.def << ".." << lb.last
                             << ") are live at once on the same bytes\n"
                             << printProgram(p);
      }
    }
}

/// Deterministic inputs with distinct values: floats in (0.2, 1.5) (log and division stay
/// finite), bools alternating from true.
std::vector<HostTensor> inputsFor(const ir::Graph& g) {
  std::vector<HostTensor> out;
  int seed = 0;
  for (const ir::Value* in : g.inputs()) {
    std::vector<int64_t> shape;
    for (const SymExpr& d : in->type().shape) shape.push_back(*d.evaluate({}));
    HostTensor t(in->type().dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      ++seed;
      if (in->type().dtype == ir::DType::kBool)
        t.setInt(i, i % 2 == 0);
      else
        t.setDouble(i, 0.2 + 0.13 * static_cast<double>((seed * 7) % 10));
    }
    out.push_back(std::move(t));
  }
  return out;
}

struct FuzzFinding {
  const char* name;
  const char* text;
};
void PrintTo(const FuzzFinding& f, std::ostream* os) { *os << f.name; }

// The four graphs of conformance/fuzz_findings (as minimized there), each planned with two
// temporaries live at once on the same bytes before the fix.
const FuzzFinding kFindings[] = {
    // @k3 stores %t7 before it loads %t1 at the same index: not an in-place update.
    {"fused_output_over_input",
     R"(graph @fuzz(%x0: f32[2, 2], %x1: f32[2, 1], %x2: f32[2, 1], %v23: f32[1, 1], %v7: f32[2, 1]) {
  %v0 = aten.mul.Scalar(%x0) {other = 0.5} : f32[2, 2]
  %v1 = aten.mm(%v0, %x1) : f32[2, 1]
  %v3 = aten.mean.dim(%x1) {dim = [1]} : f32[2]
  %v8 = aten.sub.Tensor(%v7, %v3) : f32[2, 2]
  %v10 = aten.mm(%v8, %x2) : f32[2, 1]
  %v24 = aten.div.Tensor(%v0, %v23) : f32[2, 2]
  return %v1, %v10, %v24
})"},
    // One kernel writes two results, each in place over the same dying operand.
    {"two_live_outputs",
     R"(graph @fuzz(%x0: f64[1], %x1: f64[3], %v0: f64[1], %v21: bool[1], %v12: bool[1], %v10: f64[3]) {
  %v1 = aten.abs(%v0) : f64[1]
  %v2 = aten.add.Scalar(%v1) {other = 1.0} : f64[1]
  %v3 = aten.div.Tensor(%x1, %v2) : f64[3]
  %v4 = aten.add.Scalar(%v3) {other = 1.0} : f64[3]
  %v5 = aten.ge.Tensor(%x1, %v1) : bool[3]
  %v6 = aten.mul.Scalar(%v4) {other = -0.5} : f64[3]
  %v7 = aten.where.self(%v5, %v4, %v6) : f64[3]
  %v8 = aten.abs(%v7) : f64[3]
  %v9 = aten.silu(%v8) : f64[3]
  %v11 = aten.amin(%v10) {dim = [-1], keepdim = true} : f64[1]
  %v13 = aten.where.self(%v12, %v9, %v11) : f64[3]
  %v18 = aten.add.Tensor(%v13, %v13) : f64[3]
  %v19 = aten.mul.Scalar(%v18) {other = 0.5} : f64[3]
  %v20 = aten.pow.Tensor_Scalar(%v19) {exponent = 2} : f64[3]
  %v22 = aten.where.self(%v21, %v18, %v20) : f64[3]
  %v23 = aten.cat(%v22, %x0) : f64[4]
  return %v23
})"},
    // The same with the two results read by two library calls.
    {"mm_of_reshaped_reduction",
     R"(graph @fuzz(%x1: f32[1, 1], %x2: f32[1, 1], %x3: f32[1, 1], %v7: f32[1]) {
  %v0 = aten.mean.dim(%x1) {dim = [1]} : f32[1]
  %v1 = aten.select.int(%v0) {dim = 0, index = -1} : f32[]
  %v2 = aten.abs(%v1) : f32[]
  %v8 = aten.log(%v7) : f32[1]
  %v9 = aten.reshape(%v8) {shape = [1, 1]} : f32[1, 1]
  %v10 = aten.mm(%v9, %x2) : f32[1, 1]
  %v16 = aten.reshape(%v2) {shape = [1, 1]} : f32[1, 1]
  %v17 = aten.mm(%v16, %x3) : f32[1, 1]
  return %v10, %v17
})"},
    // The same after a softmax kernel with three results.
    {"two_kept_amax_subtractions", R"(graph @fuzz(%x1: f32[3, 2]) {
  %v0 = aten._softmax(%x1) {dim = 0, half_to_float = false} : f32[3, 2]
  %v4 = aten.pow.Tensor_Scalar(%v0) {exponent = 2} : f32[3, 2]
  %v7 = aten.leaky_relu(%v4) {negative_slope = 0.125} : f32[3, 2]
  %v10 = aten.minimum(%v7, %v4) : f32[3, 2]
  %v12 = aten.erf(%v7) : f32[3, 2]
  %v13 = aten.amax(%v12) {dim = [0], keepdim = true} : f32[1, 2]
  %v14 = aten.sub.Tensor(%v12, %v13) : f32[3, 2]
  %v15 = aten.amax(%v10) {dim = [-1], keepdim = true} : f32[3, 1]
  %v16 = aten.sub.Tensor(%v10, %v15) : f32[3, 2]
  return %v14, %v16
})"},
};

class FuzzFindingPlan : public ::testing::TestWithParam<FuzzFinding> {};

TEST_P(FuzzFindingPlan, LiveTemporariesDoNotOverlap) {
  auto ctx = ir::makeDefaultContext();
  auto p = scheduleText(ctx, GetParam().text);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  expectNoLiveOverlap(*p);
}

TEST_P(FuzzFindingPlan, ProgramInterpreterMatchesTheReference) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, GetParam().text);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto p = scheduleText(ctx, GetParam().text);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const std::vector<HostTensor> ins = inputsFor(*g);
  auto want = exec::ReferenceExecutor(ctx).run(*g, ins);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  auto got = ProgramInterpreter(ctx).run(*p, ins);
  ASSERT_TRUE(got.isOk()) << got.status().toString() << "\n" << printProgram(*p);
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < got->size(); ++o) {
    ASSERT_EQ((*got)[o].numel(), (*want)[o].numel());
    for (int64_t i = 0; i < (*got)[o].numel(); ++i) {
      const double w = (*want)[o].getDouble(i);
      ASSERT_TRUE(std::isfinite(w)) << "output " << o << " element " << i;  // the inputs keep it finite
      EXPECT_NEAR((*got)[o].getDouble(i), w, 1e-5 * (1 + std::fabs(w))) << "output " << o << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Findings, FuzzFindingPlan, ::testing::ValuesIn(kFindings),
                         [](const ::testing::TestParamInfo<FuzzFinding>& i) { return std::string(i.param.name); });

// --- In-place legality and the interpreter's checks, on hand-built plans -------------------

TEST(MemoryPlan, InPlaceNeedsEveryLoadBeforeTheStore) {
  auto loadFirst = kernel::parseKernel(R"(kernel @k(%a: f32 in, %b: f32 out) grid [4] {
  %0 = load %a[i0] : f32
  %1 = neg %0 : f32
  store %b[i0], %1
})");
  ASSERT_TRUE(loadFirst.isOk()) << loadFirst.status().toString();
  EXPECT_TRUE(inPlaceLegal(*loadFirst, 0, 1));
  auto storeFirst = kernel::parseKernel(R"(kernel @k(%c: f32 in, %b: f32 out, %a: f32 in, %d: f32 out) grid [4] {
  %0 = load %c[i0] : f32
  store %b[i0], %0
  %1 = load %a[i0] : f32
  store %d[i0], %1
})");
  ASSERT_TRUE(storeFirst.isOk()) << storeFirst.status().toString();
  EXPECT_FALSE(inPlaceLegal(*storeFirst, 2, 1));  // %b over %a: %a is loaded after %b is stored
  EXPECT_TRUE(inPlaceLegal(*storeFirst, 2, 3));   // %d over %a: loaded first
  EXPECT_TRUE(inPlaceLegal(*storeFirst, 0, 1));
}

/// The two-live-outputs finding's program with the plan corrupted back to the bug.
TEST(MemoryPlan, InterpreterCatchesTwoResultsOnTheSameBytes) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kFindings[1].text);
  ASSERT_TRUE(g.isOk());
  // The schedule the finding was made with: recomputed multi-use values (several temps live
  // at once); the default now materializes one of them, leaving a single temp.
  ScheduleOptions recompute;
  recompute.caps.maxRecomputeReads = 1 << 30;
  auto p = scheduleText(ctx, kFindings[1].text, recompute);
  ASSERT_TRUE(p.isOk());
  ASSERT_GE(temps(*p).size(), 2u) << printProgram(*p);
  for (Buffer& b : p->buffers)
    if (b.role == BufferRole::kTemp) b.slot = 0, b.offset = 0;
  auto out = ProgramInterpreter(ctx).run(*p, inputsFor(*g));
  ASSERT_FALSE(out.isOk()) << printProgram(*p);
  EXPECT_NE(out.status().message().find("memory plan"), std::string::npos) << out.status().toString();
}

/// The fused-output finding's program with the plan corrupted back to the bug: an update over
/// an operand the kernel loads after its store. (Both the static check and the run on shared
/// memory vs private copies catch it; the latter alone caught it with the old inPlaceLegal.)
TEST(MemoryPlan, InterpreterCatchesAnInPlaceUpdateThatChangesTheResult) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kFindings[0].text);
  ASSERT_TRUE(g.isOk());
  auto p = scheduleText(ctx, kFindings[0].text);
  ASSERT_TRUE(p.isOk());
  // The launch that stores %t7 and then loads %t1: put %t7 on %t1's bytes.
  int t1 = -1, t7 = -1;
  for (size_t b = 0; b < p->buffers.size(); ++b) {
    if (p->buffers[b].name == "t1") t1 = static_cast<int>(b);
    if (p->buffers[b].name == "t7") t7 = static_cast<int>(b);
  }
  ASSERT_TRUE(t1 >= 0 && t7 >= 0) << printProgram(*p);
  p->buffers[static_cast<size_t>(t7)].slot = p->buffers[static_cast<size_t>(t1)].slot;
  p->buffers[static_cast<size_t>(t7)].offset = p->buffers[static_cast<size_t>(t1)].offset;
  auto out = ProgramInterpreter(ctx).run(*p, inputsFor(*g));
  ASSERT_FALSE(out.isOk()) << printProgram(*p);
  EXPECT_NE(out.status().message().find("memory plan"), std::string::npos) << out.status().toString();
}

}  // namespace
}  // namespace plugsdk::sched
