// A residual chain (x_i = x_{i-1} + d_i, each x_i also reduced): recomputing a multi-use sum
// in each consumer would make the kernel of layer i read all i branches again; past
// FusionCaps::maxRecomputeReads large reads it is materialized, so every kernel reads a few
// tensors whatever the depth, and the program still computes the graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/decomp/decompose.h"
#include "core/sched/interpreter.h"
#include "core/sched/schedule.h"
#include "core/text/parser.h"

namespace plugsdk::sched {
namespace {

std::string residualChain(int depth) {
  std::string ins = "%x0: f64[16, 64]", body, outs;
  for (int i = 1; i <= depth; ++i) {
    const std::string s = std::to_string(i), prev = std::to_string(i - 1);
    ins += ", %d" + s + ": f64[16, 64]";
    body += "  %x" + s + " = aten.add.Tensor(%x" + prev + ", %d" + s + ")\n";
    body += "  %m" + s + " = aten.sum.dim_IntList(%x" + s + ") {dim = [1]}\n";
    outs += (i > 1 ? ", %m" : "%m") + s;
  }
  return "graph @g(" + ins + ") {\n" + body + "  return " + outs + ", %x" + std::to_string(depth) + "\n}\n";
}

/// The most arguments any kernel reads.
size_t widestRead(const Program& p) {
  size_t most = 0;
  for (const kernel::Kernel& k : p.kernels)
    most = std::max<size_t>(most,
                            std::count_if(k.args.begin(), k.args.end(), [](const kernel::Arg& a) { return a.read; }));
  return most;
}

TEST(ResidualRoots, DeepChainsReadAFewTensorsPerKernel) {
  auto ctx = ir::makeDefaultContext();
  const std::string text = residualChain(12);  // the depth the check below computes
  auto g = text::parseGraph(*ctx, text);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *g);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  auto p = schedule(*ctx, *prims, ScheduleOptions{});
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_LE(widestRead(*p), 4u) << printProgram(*p);
  // Recomputing everything (the old rule alone) reads the whole chain in the last kernels.
  ScheduleOptions recompute;
  recompute.caps.maxRecomputeReads = 1 << 30;
  auto q = schedule(*ctx, *prims, recompute);
  ASSERT_TRUE(q.isOk()) << q.status().toString();
  EXPECT_GE(widestRead(*q), 10u) << printProgram(*q);
  // Both compute the graph: x_i = x0 + d_1 + ... + d_i, m_i its row sums.
  const int depth = 12;
  std::vector<exec::HostTensor> inputs;
  for (int i = 0; i <= depth; ++i) {
    exec::HostTensor t(ir::DType::kF64, {16, 64});
    for (int64_t j = 0; j < t.numel(); ++j) t.setDouble(j, std::cos(0.37 * i + 0.01 * static_cast<double>(j)));
    inputs.push_back(std::move(t));
  }
  for (const Program* prog : {&*p, &*q}) {
    auto got = ProgramInterpreter(ctx).run(*prog, inputs);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got->size(), static_cast<size_t>(depth + 1));
    std::vector<double> x(16 * 64);
    for (int64_t j = 0; j < 16 * 64; ++j) x[static_cast<size_t>(j)] = inputs[0].getDouble(j);
    for (int i = 1; i <= depth; ++i) {
      for (int64_t j = 0; j < 16 * 64; ++j) x[static_cast<size_t>(j)] += inputs[static_cast<size_t>(i)].getDouble(j);
      for (int64_t r = 0; r < 16; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < 64; ++c) sum += x[static_cast<size_t>(r * 64 + c)];
        EXPECT_NEAR((*got)[static_cast<size_t>(i - 1)].getDouble(r), sum, 1e-9) << "m" << i << " row " << r;
      }
    }
    for (int64_t j = 0; j < 16 * 64; ++j) EXPECT_NEAR((*got)[depth].getDouble(j), x[static_cast<size_t>(j)], 1e-12);
  }
}

}  // namespace
}  // namespace plugsdk::sched
