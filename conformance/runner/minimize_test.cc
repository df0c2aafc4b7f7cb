// The minimizer against synthetic failure predicates, so the shrinking is tested without any
// plugin: the result must be exactly the nodes the predicate needs, every candidate it is
// shown must verify, and a graph that does not fail is refused.
#include "conformance/runner/minimize.h"

#include <gtest/gtest.h>

#include <set>

#include "conformance/runner/fuzz_graph.h"
#include "core/ir/verifier.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::conformance {
namespace {

const std::shared_ptr<const ir::Context>& ctx() {
  static const auto c = ir::makeDefaultContext();
  return c;
}

ir::Graph parse(const std::string& text) {
  auto g = text::parseGraph(*ctx(), text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  return std::move(*g);
}

const char* kChain = R"(graph @chain(%x: f32[4, 8], %y: f32[8], %z: f32[4, 8], %w: f32[4, 1]) {
  %a = aten.add.Tensor(%x, %y) : f32[4, 8]
  %r = aten.relu(%a) : f32[4, 8]
  %m = aten.mul.Tensor(%r, %z) : f32[4, 8]
  %e = aten.exp(%m) : f32[4, 8]
  %t = aten.tanh(%m) : f32[4, 8]
  %s = aten.sum.dim_IntList(%e) {dim = [1], keepdim = true} : f32[4, 1]
  %q = aten.mul.Tensor(%s, %w) : f32[4, 1]
  %d = aten.sub.Tensor(%t, %q) : f32[4, 8]
  %n = aten.neg(%d) : f32[4, 8]
  return %n, %s
})";

/// The synthetic failure: some aten.tanh reads a value made by aten.mul.Tensor.
bool tanhOfMul(const ir::Graph& g) {
  for (const auto& n : g.nodes())
    if (n->op() == "aten.tanh" && n->inputs()[0]->producer() && n->inputs()[0]->producer()->op() == "aten.mul.Tensor")
      return true;
  return false;
}

TEST(Minimize, KeepsExactlyTheTwoNodesThePredicateNeeds) {
  const ir::Graph g = parse(kChain);
  int calls = 0;
  std::vector<std::string> progress;
  auto small = minimizeGraph(
      *ctx(), g,
      [&](const ir::Graph& c) {
        ++calls;
        EXPECT_TRUE(ir::verifyGraph(*ctx(), c).isOk()) << text::printGraph(c);  // only verified candidates
        return tanhOfMul(c);
      },
      [&](const std::string& line) { progress.push_back(line); });
  ASSERT_TRUE(small.isOk()) << small.status().toString();
  ASSERT_EQ(small->nodes().size(), 2u) << text::printGraph(*small);
  EXPECT_EQ(small->nodes()[0]->op(), "aten.mul.Tensor");
  EXPECT_EQ(small->nodes()[1]->op(), "aten.tanh");
  EXPECT_TRUE(tanhOfMul(*small));
  ASSERT_EQ(small->outputs().size(), 1u);
  EXPECT_EQ(small->outputs()[0], small->nodes()[1]->output());
  // pointwise only: every input dim shrinks to 1, and the unused inputs are gone
  ASSERT_EQ(small->inputs().size(), 2u);
  for (const ir::Value* v : small->inputs())
    for (const auto& d : v->type().shape) EXPECT_EQ(d.constant(), 1) << v->type().toString();
  EXPECT_GT(calls, 3);
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.back().find("done: 2 nodes"), std::string::npos) << progress.back();
  // and the result prints as text that parses back to the same graph
  ir::Graph again = parse(text::printGraph(*small));
  std::string why;
  EXPECT_TRUE(again.equals(*small, &why)) << why;
}

TEST(Minimize, FindsOneNodeAnywhereInGeneratedGraphs) {
  plugin::DeviceCaps caps;
  caps.dtypes = (1u << ir::kNumDTypes) - 1;
  int checked = 0;
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    const ir::Graph g = parse(randomGraph(seed, caps));
    if (g.nodes().size() < 3) continue;
    // the failure: some node of the op in the middle of the graph
    const std::string op = g.nodes()[g.nodes().size() / 2]->op();
    auto hasOp = [&](const ir::Graph& c) {
      for (const auto& n : c.nodes())
        if (n->op() == op) return true;
      return false;
    };
    auto small = minimizeGraph(*ctx(), g, hasOp);
    ASSERT_TRUE(small.isOk()) << small.status().toString();
    ASSERT_EQ(small->nodes().size(), 1u) << "seed " << seed << ", op " << op << ":\n" << text::printGraph(*small);
    EXPECT_EQ(small->nodes()[0]->op(), op);
    ++checked;
  }
  EXPECT_GT(checked, 15);
}

TEST(Minimize, ShrinksSizesOnlyWhileTheFailureNeedsNothingBigger) {
  // the failure: a reduction over at least 5 elements
  const ir::Graph g = parse(R"(graph @r(%x: f32[16, 32]) {
  %t = aten.tanh(%x) : f32[16, 32]
  %s = aten.sum.dim_IntList(%t) {dim = [1]} : f32[16]
  return %s
})");
  auto wide = [](const ir::Graph& c) {
    for (const auto& n : c.nodes())
      if (n->op() == "aten.sum.dim_IntList" && n->inputs()[0]->type().shape[1].constant().value_or(0) >= 5) return true;
    return false;
  };
  auto small = minimizeGraph(*ctx(), g, wide);
  ASSERT_TRUE(small.isOk()) << small.status().toString();
  ASSERT_EQ(small->nodes().size(), 1u) << text::printGraph(*small);
  EXPECT_EQ(small->inputs()[0]->type().toString(), "f32[1, 8]");  // 32 -> 16 -> 8, not 4
}

TEST(Minimize, RefusesAGraphThatDoesNotFail) {
  auto r = minimizeGraph(*ctx(), parse(kChain), [](const ir::Graph&) { return false; });
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().toString().find("does not fail"), std::string::npos);
}

TEST(RebuildGraph, ACutValueBecomesAnInputOfItsTypeAndUnusedInputsGo) {
  const ir::Graph g = parse(kChain);
  const ir::Value* m = g.nodes()[2]->output();
  const ir::Value* t = g.nodes()[4]->output();
  auto c = rebuildGraph(*ctx(), g, {{t}, {m}, {}, {}});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ASSERT_EQ(c->inputs().size(), 1u);
  EXPECT_EQ(c->inputs()[0]->name(), "m");
  EXPECT_EQ(c->inputs()[0]->type().toString(), "f32[4, 8]");
  ASSERT_EQ(c->nodes().size(), 1u);
  EXPECT_EQ(c->nodes()[0]->op(), "aten.tanh");
  // a replacement whose type does not fit is rejected by inference, not passed on:
  // %s = sum(%e, dim 1) with %e replaced by the rank-1 %y
  const ir::Value* e = g.nodes()[3]->output();
  auto bad = rebuildGraph(*ctx(), g, {{}, {}, {{e, g.inputs()[1]}}, {}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().toString().find("aten.sum.dim_IntList"), std::string::npos) << bad.status().toString();
}

}  // namespace
}  // namespace plugsdk::conformance
