// Tests for the C++ graph builder: graphs it records, numbers they compute (hand-checked),
// and deferred errors.
#include "core/builder/builder.h"

#include <gtest/gtest.h>

#include "core/exec/reference_executor.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace plugsdk::builder {
namespace {

using exec::HostTensor;

TEST(Builder, LinearReluComputesByHand) {
  auto ctx = ir::makeDefaultContext();
  GraphBuilder b(ctx, "lin");
  Tensor x = b.input("x", DType::kF32, {2, 3});
  Tensor w = b.input("w", DType::kF32, {2, 3});
  Tensor bias = b.input("b", DType::kF32, {2});
  Tensor y = relu(matmul(x, transpose(w, 0, 1)) + bias);
  auto g = b.finish({y});
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->outputs()[0]->type().toString(), "f32[2, 2]");

  HostTensor xv = HostTensor::fromDoubles(DType::kF32, {2, 3}, {1, 2, 3, -1, -2, -3});
  HostTensor wv = HostTensor::fromDoubles(DType::kF32, {2, 3}, {1, 0, 1, 0.5, 0.5, 0.5});
  HostTensor bv = HostTensor::fromDoubles(DType::kF32, {2}, {0.25, -1});
  exec::ReferenceExecutor ex(ctx);
  auto out = ex.run(*g, {xv, wv, bv});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  // row0: [1+3, 3] + [0.25, -1] = [4.25, 2]; row1: [-4, -3] + b -> relu -> [0, 0]
  const std::vector<double> want = {4.25, 2.0, 0.0, 0.0};
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ((*out)[0].getDouble(i), want[static_cast<size_t>(i)]) << i;
}

TEST(Builder, BroadcastingAndPromotionFollowTorch) {
  auto ctx = ir::makeDefaultContext();
  GraphBuilder b(ctx);
  Tensor i = b.input("i", DType::kI32, {4, 1});
  Tensor f = b.input("f", DType::kF16, {3});
  Tensor s = i + f;    // i32[4,1] + f16[3] -> f16[4,3]
  Tensor t = i * 2.5;  // int tensor times float scalar -> default float f32
  auto g = b.finish({s, t});
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->outputs()[0]->type().toString(), "f16[4, 3]");
  EXPECT_EQ(g->outputs()[1]->type().toString(), "f32[4, 1]");
}

TEST(Builder, SymbolicBatchMatmulAndRoundTrip) {
  auto ctx = ir::makeDefaultContext();
  GraphBuilder b(ctx, "attn");
  SymExpr n = SymExpr::symbol("n");
  Tensor q = b.input("q", DType::kF32, {2, n, 8});
  Tensor k = b.input("k", DType::kF32, {2, n, 8});
  Tensor scores = softmax(matmul(q, transpose(k, 1, 2)) * 0.125, -1);
  Tensor flat = matmul(b.input("x", DType::kF32, {3, n, 8}), b.input("w", DType::kF32, {8, 5}));
  auto g = b.finish({scores, flat});
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  EXPECT_EQ(g->outputs()[0]->type().toString(), "f32[2, n, n]");
  EXPECT_EQ(g->outputs()[1]->type().toString(), "f32[3, n, 5]");
  auto again = text::parseGraph(*ctx, text::printGraph(*g));
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  std::string why;
  EXPECT_TRUE(g->equals(*again, &why)) << why;
}

TEST(Builder, ErrorsAreDeferredAndNamed) {
  auto ctx = ir::makeDefaultContext();
  GraphBuilder b(ctx);
  Tensor x = b.input("x", DType::kF32, {2, 3});
  Tensor w = b.input("w", DType::kF32, {4, 5});
  Tensor y = relu(matmul(x, w));  // inner dims 3 vs 4
  EXPECT_FALSE(y.valid());
  EXPECT_FALSE(b.status().isOk());
  auto g = b.finish({y});
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("aten.mm"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("3"), std::string::npos) << g.status().message();

  GraphBuilder b2(ctx);
  Tensor z = b2.op("aten.no_such_op", {b2.input("x", DType::kF32, {1})});
  EXPECT_FALSE(z.valid());
  EXPECT_NE(b2.status().message().find("unknown op 'aten.no_such_op'"), std::string::npos);
}

}  // namespace
}  // namespace plugsdk::builder
