// The partitioner: recomputation saves bytes, library ops are never recomputed, symbols the
// backward needs get bound, and whole models (decomposed from the conformance suite's ATen
// graphs) pass gradcheck through the partitioned forward and backward programs.
#include "core/autograd/partition.h"

#include <gtest/gtest.h>

#include "core/autograd/gradcheck.h"
#include "core/autograd/min_cut.h"
#include "core/decomp/decompose.h"
#include "core/exec/reference_executor.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::autograd {
namespace {

StatusOr<TrainingGraphs> partitionText(const ir::Context& ctx, const std::string& text, std::vector<bool> requiresGrad,
                                       bool recompute) {
  ASSIGN_OR_RETURN(ir::Graph g, text::parseGraph(ctx, text));
  ASSIGN_OR_RETURN(JointGraph j, buildJoint(ctx, g, JointSpec{std::move(requiresGrad), {}}, makeVjpTable()));
  PartitionOptions o;
  o.recompute = recompute;
  return partitionJoint(ctx, j, o);
}

int count(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op() == op;
  return n;
}

TEST(MinCut, FindsTheCheapestCut) {
  // s -> a (3), s -> b (2), a -> t (1), b -> t (5), a -> b (4): everything leaving s arrives
  // (a -> t 1, a -> b -> t 2, b -> t 2), so the cut is s's edges, 5.
  FlowNetwork net(4);
  const int s = 0, t = 1, a = 2, b = 3;
  net.addEdge(s, a, 3);
  net.addEdge(s, b, 2);
  net.addEdge(a, t, 1);
  net.addEdge(b, t, 5);
  net.addEdge(a, b, 4);
  EXPECT_EQ(net.maxFlow(s, t), 5);
  EXPECT_TRUE(net.sourceSide()[s]);
  EXPECT_FALSE(net.sourceSide()[t]);
}

TEST(Partition, RecomputingPointwiseChainsSavesTheirBytes) {
  auto ctx = ir::makeDefaultContext();
  const char* g = R"(graph @g(%x: f64[64, 64], %w: f64[64, 64]) {
  %a = prims.sin(%x)
  %b = prims.exp(%a)
  %c = prims.mul(%b, %w)
  %y = prims.sum(%c) {dims = [0, 1]}
  return %y
})";
  auto saveAll = partitionText(*ctx, g, {true, true}, false);
  auto cut = partitionText(*ctx, g, {true, true}, true);
  ASSERT_TRUE(saveAll.isOk()) << saveAll.status().toString();
  ASSERT_TRUE(cut.isOk()) << cut.status().toString();
  // Without recomputation: exp's output and cos(x) (sin's derivative, computed in the forward).
  EXPECT_EQ(saveAll->stats.savedBytes, 2 * 64 * 64 * 8);
  EXPECT_EQ(saveAll->stats.savedBytesNoRecompute, 2 * 64 * 64 * 8);
  EXPECT_EQ(cut->stats.savedBytes, 0);  // sin, exp and cos again from x, which the caller holds
  EXPECT_EQ(cut->stats.savedBytesNoRecompute, 2 * 64 * 64 * 8);
  EXPECT_GE(cut->stats.recomputed, 2);
  EXPECT_EQ(cut->savedInputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(cut->numSavedValues, 0u);
  EXPECT_EQ(count(cut->backward, "prims.exp"), 1);
}

TEST(Partition, LibraryOpsAreSavedNeverRecomputed) {
  auto ctx = ir::makeDefaultContext();
  const char* g = R"(graph @mlp(%x: f64[8, 16], %w1: f64[16, 32], %w2: f64[32, 4]) {
  %h = prims.matmul(%x, %w1)
  %z = prims.full() {dtype = f64, shape = [8, 32], value = 0.0}
  %r = prims.maximum(%h, %z)
  %o = prims.matmul(%r, %w2)
  %y = prims.sum(%o) {dims = [0, 1]}
  return %y
})";
  auto t = partitionText(*ctx, g, {false, true, true}, true);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  EXPECT_EQ(count(t->forward, "prims.matmul"), 2);
  // d w2 = r^T g, d r = g w2^T, d w1 = x^T d h: three, none of them the forward's again.
  EXPECT_EQ(count(t->backward, "prims.matmul"), 3);
  EXPECT_EQ(t->numSavedValues, 1u);  // h; relu is recomputed from it
  EXPECT_EQ(t->stats.savedBytes, 8 * 32 * 8);
  // h, relu's output, and what the backward reads besides (transposes, relu's masks)
  EXPECT_GT(t->stats.savedBytesNoRecompute, 2 * 8 * 32 * 8);
  EXPECT_EQ(t->gradOf, (std::vector<int>{1, 2}));
}

TEST(Partition, TheBackwardGetsAnInputBindingEachOfItsSymbols) {
  auto ctx = ir::makeDefaultContext();
  const char* g = R"(graph @g(%x: f64[s0, 8], %w: f64[8]) {
  %b = prims.broadcast_in_dim(%w) {broadcast_dimensions = [1], shape = [s0, 8]}
  %m = prims.mul(%b, %b)
  %y = prims.sum(%m) {dims = [0, 1]}
  %z = prims.sum(%x) {dims = [0, 1]}
  return %y, %z
})";
  auto t = partitionText(*ctx, g, {false, true}, true);
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  ASSERT_FALSE(t->savedInputs.empty());
  EXPECT_EQ(t->savedInputs.front(), 0);  // x, for s0
  exec::ReferenceExecutor ex(ir::makeDefaultContext());
  std::vector<exec::HostTensor> bwIn;
  bwIn.push_back(exec::HostTensor(ir::DType::kF64, {5, 8}));
  bwIn.push_back(exec::HostTensor::fromDoubles(ir::DType::kF64, {8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  bwIn.push_back(exec::HostTensor::scalar(ir::DType::kF64, 1.0));  // the tangent of y
  ASSERT_EQ(t->backward.inputs().size(), bwIn.size()) << text::printGraph(t->backward);
  auto out = ex.run(t->backward, bwIn);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_DOUBLE_EQ((*out)[0].getDouble(2), 2 * 5 * 3.0);  // d/dw sum_s w^2 = 2 s w
}

TEST(Partition, MaxPoolGradientScattersOncePerPooledPoint) {
  // The decomposition returns x gathered at the window's argmax, so the backward adds each
  // pooled point's gradient once (150 points), not a one-hot over its 9 window positions.
  auto ctx = ir::makeDefaultContext();
  auto aten = text::parseGraph(*ctx, R"(graph @g(%x: f64[2, 3, 9, 9]) {
  %p, %i = aten.max_pool2d_with_indices(%x) {kernel_size = [3, 3], stride = [2, 2], padding = [1, 1]}
  return %p
})");
  ASSERT_TRUE(aten.isOk()) << aten.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *aten);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  auto j = buildJoint(*ctx, *prims, JointSpec{{true}, {}}, makeVjpTable());
  ASSERT_TRUE(j.isOk()) << j.status().toString();
  auto t = partitionJoint(*ctx, *j, PartitionOptions{});
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  int scatters = 0;
  for (const auto& n : t->backward.nodes())
    if (n->op() == "prims.scatter") {
      ++scatters;
      EXPECT_EQ(n->inputs()[1]->type().numel().constant(), std::optional<int64_t>(2 * 3 * 5 * 5))
          << text::printGraph(t->backward);
    }
  EXPECT_EQ(scatters, 1) << text::printGraph(t->backward);
  GradcheckOptions o;
  o.maxElements = 20;
  auto r = gradcheck(ctx, *prims, o);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(r->ok) << r->failure;
}

class ModelGradcheck : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelGradcheck, PartitionedProgramsMatchFiniteDifferences) {
  auto ctx = ir::makeDefaultContext();
  auto aten =
      text::parseGraphFile(*ctx, std::string(PLUGSDK_SOURCE_DIR) + "/conformance/models/" + GetParam() + ".f64.pgraph");
  ASSERT_TRUE(aten.isOk()) << aten.status().toString();
  auto prims = decomp::decompose(*ctx, decomp::makeDefaultDecompositions(), *aten);
  ASSERT_TRUE(prims.isOk()) << prims.status().toString();
  GradcheckOptions o;
  o.maxElements = 3;
  o.lo = -0.5;
  o.hi = 0.5;
  o.atol = 1e-6;
  o.rtol = 1e-4;
  auto r = gradcheck(ctx, *prims, o);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(r->ok) << r->failure;
  EXPECT_GT(r->checked, 10);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelGradcheck, ::testing::Values("mlp", "transformer_encoder", "gpt2_block"));

}  // namespace
}  // namespace plugsdk::autograd
