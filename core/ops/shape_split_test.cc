// Tests for cat, stack, slice, select, narrow, split, split_with_sizes, chunk and unbind:
// hand-computed values, type promotion, symbolic bounds and bad input.
#include <limits>

#include "core/exec/reference_executor.h"
#include "core/ir/verifier.h"
#include "core/ops/shape_test_util.h"

namespace plugsdk::ops::testing {
namespace {

constexpr DType F16 = DType::kF16, F32 = DType::kF32, F64 = DType::kF64, I64 = DType::kI64, I32 = DType::kI32,
                U8 = DType::kU8, B = DType::kBool;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CatStack, CatValuesAndPromotion) {
  HostTensor a = I(I32, {2}, {1, -2});
  HostTensor b = D(F32, {1}, {0.5});
  expectValues(run1("aten.cat", {&a, &b}), F32, {3}, {1, -2, 0.5});
  HostTensor c = D(F16, {1}, {2.5});
  HostTensor big = I(I64, {1}, {2049});
  // int64 into float16: the cast rounds 2049 to 2048 (float16 has 11 significant bits).
  expectValues(run1("aten.cat", {&big, &c}), F16, {2}, {2048, 2.5});
  HostTensor t = I(B, {1}, {1}), u = I(U8, {1}, {200});
  expectInts(run1("aten.cat", {&t, &u}), U8, {2}, {1, 200});

  HostTensor x = iota(F64, {2, 1}), y = D(F64, {2, 2}, {3, 4, 5, 6});
  expectValues(run1("aten.cat", {&x, &y}, {{"dim", A(1)}}), F64, {2, 3}, {0, 3, 4, 1, 5, 6});
  expectValues(run1("aten.cat", {&x, &y}, {{"dim", A(-1)}}), F64, {2, 3}, {0, 3, 4, 1, 5, 6});
  HostTensor z = D(F64, {1, 1}, {9});
  expectValues(run1("aten.cat", {&x, &z, &x}), F64, {5, 1}, {0, 1, 9, 0, 1});
}

TEST(CatStack, CatSkipsLegacyEmptyTensors) {
  HostTensor x = iota(F32, {2, 2}), e(F64, {0});
  expectValues(run1("aten.cat", {&x, &e}, {{"dim", A(1)}}), F64, {2, 2}, {0, 1, 2, 3});
  expectValues(run1("aten.cat", {&e, &e}), F64, {0}, {});
}

TEST(CatStack, CatErrors) {
  HostTensor x = iota(F32, {2, 3}), y = iota(F32, {2}), z = iota(F32, {3, 3}), s = D(F32, {}, {1});
  EXPECT_CONTAINS(runError("aten.cat", {&x, &y}), "same rank");
  EXPECT_CONTAINS(runError("aten.cat", {&x, &z}, {{"dim", A(1)}}), "sizes of tensors must match except in dimension 1");
  EXPECT_CONTAINS(runError("aten.cat", {&s, &s}), "zero-dimensional tensor (at position 0)");
  EXPECT_CONTAINS(runError("aten.cat", {&x, &x}, {{"dim", A(2)}}), "out of range");
  EXPECT_CONTAINS(inferError("aten.cat", {}), "non-empty");
  EXPECT_CONTAINS(inferError("aten.cat", {T(F32, {S("s0"), S("s2")}), T(F32, {S("s1"), 3})}), "not provably equal");
  auto r = infer("aten.cat", {T(F32, {S("s0"), 2}), T(F32, {S("s1"), 2})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[s0+s1, 2]");
}

TEST(CatStack, Stack) {
  HostTensor a = I(I64, {2}, {1, 2}), b = I(I64, {2}, {3, 4});
  expectInts(run1("aten.stack", {&a, &b}), I64, {2, 2}, {1, 2, 3, 4});
  expectInts(run1("aten.stack", {&a, &b}, {{"dim", A(1)}}), I64, {2, 2}, {1, 3, 2, 4});
  expectInts(run1("aten.stack", {&a, &b}, {{"dim", A(-1)}}), I64, {2, 2}, {1, 3, 2, 4});
  HostTensor f = D(F64, {2}, {0.5, -0.0});
  expectValues(run1("aten.stack", {&a, &f}), F64, {2, 2}, {1, 2, 0.5, -0.0});
  HostTensor s = D(F32, {}, {7});
  expectValues(run1("aten.stack", {&s, &s, &s}), F32, {3}, {7, 7, 7});
  HostTensor c = I(I64, {3}, {1, 2, 3});
  EXPECT_CONTAINS(runError("aten.stack", {&a, &c}), "equal size");
  EXPECT_CONTAINS(runError("aten.stack", {&a, &b}, {{"dim", A(3)}}), "out of range");
}

TEST(Slicing, SliceClampsLikePython) {
  HostTensor x = iota(I64, {10});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"start", A(-3)}, {"step", A(2)}}), I64, {2}, {7, 9});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"start", A(-30)}, {"end", A(100)}, {"step", A(3)}}), I64, {4},
             {0, 3, 6, 9});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"start", A(7)}, {"end", A(2)}}), I64, {0}, {});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"start", A(8)}, {"end", A(kMax)}}), I64, {2}, {8, 9});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"end", A(-8)}}), I64, {2}, {0, 1});
  expectInts(run1("aten.slice.Tensor", {&x}, {{"start", A(1)}, {"step", A(kMax)}}), I64, {1}, {1});
  HostTensor y = iota(F32, {2, 4});
  expectValues(run1("aten.slice.Tensor", {&y}, {{"dim", A(1)}, {"start", A(1)}, {"end", A(-1)}}), F32, {2, 2},
               {1, 2, 5, 6});
  EXPECT_CONTAINS(runError("aten.slice.Tensor", {&x}, {{"step", A(0)}}), "step must be positive");
  EXPECT_CONTAINS(runError("aten.slice.Tensor", {&x}, {{"step", A(-1)}}), "step must be positive");
  HostTensor s = I(I64, {}, {1});
  EXPECT_CONTAINS(runError("aten.slice.Tensor", {&s}), "0-dim");
}

TEST(Slicing, SliceWithSymbolicSizes) {
  auto shapeFor = [](const AttrMap& attrs) {
    auto r = infer("aten.slice.Tensor", {T(F32, {S("s0")})}, attrs);
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    return r.isOk() ? shapeOf((*r)[0]) : std::string();
  };
  EXPECT_EQ(shapeFor({{"start", A(1)}, {"end", A(kMax)}}), "[s0-1]");
  EXPECT_EQ(shapeFor({{"start", A(-2)}}), "[2]");
  EXPECT_EQ(shapeFor({{"end", A(-1)}}), "[s0-1]");
  EXPECT_EQ(shapeFor({{"start", A(0)}, {"end", A(kMax)}, {"step", A(2)}}), "[(s0+1)//2]");
  EXPECT_EQ(shapeFor({{"start", Attribute::fromSym(S("s0") - 1)}}), "[1]");
  EXPECT_EQ(shapeFor({{"end", Attribute::fromSym(S("s0") * 2)}}), "[s0]");
  EXPECT_CONTAINS(inferError("aten.slice.Tensor", {T(F32, {S("s0")})}, {{"step", Attribute::fromSym(S("s0") - 1)}}),
                  "not provably positive");
}

TEST(Slicing, SymbolicBoundOutOfRangeIsARuntimeError) {
  // x[2:] on a dim of size s0 assumes s0 >= 2; running it with s0 = 1 must fail clearly.
  const auto& ctx = context();
  ir::Graph g("slice");
  ir::Value* in = g.addInput("x", T(F32, {S("s0")}));
  AttrMap attrs = {{"start", A(2)}};
  const ir::OpDef* def = ctx->ops.find("aten.slice.Tensor");
  auto types = ir::checkAndInfer(*ctx, *def, {in}, attrs, "test");
  ASSERT_TRUE(types.isOk()) << types.status().toString();
  EXPECT_EQ(shapeOf((*types)[0]), "[s0-2]");
  ir::Node* node = g.addNode("aten.slice.Tensor", def, {in}, attrs, *types);
  g.setOutputs(node->outputs());
  exec::ReferenceExecutor ex(ctx);
  auto ok = ex.run(g, {iota(F32, {5})});
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  expectValues((*ok)[0], F32, {3}, {2, 3, 4});
  auto bad = ex.run(g, {iota(F32, {1})});
  ASSERT_FALSE(bad.isOk());
  EXPECT_CONTAINS(bad.status().message(), "-1");
}

TEST(Slicing, SelectAndNarrow) {
  HostTensor x = iota(I64, {2, 3});
  expectInts(run1("aten.select.int", {&x}, {{"dim", A(1)}, {"index", A(-1)}}), I64, {2}, {2, 5});
  expectInts(run1("aten.select.int", {&x}, {{"dim", A(0)}, {"index", A(1)}}), I64, {3}, {3, 4, 5});
  EXPECT_CONTAINS(runError("aten.select.int", {&x}, {{"dim", A(0)}, {"index", A(2)}}),
                  "index 2 out of range for dim 0 of size 2");
  EXPECT_CONTAINS(runError("aten.select.int", {&x}, {{"dim", A(1)}, {"index", A(-4)}}), "out of range");
  HostTensor y = iota(I64, {10});
  expectInts(run1("aten.narrow", {&y}, {{"dim", A(0)}, {"start", A(-3)}, {"length", A(2)}}), I64, {2}, {7, 8});
  expectInts(run1("aten.narrow", {&y}, {{"dim", A(0)}, {"start", A(10)}, {"length", A(0)}}), I64, {0}, {});
  EXPECT_CONTAINS(runError("aten.narrow", {&y}, {{"dim", A(0)}, {"start", A(8)}, {"length", A(3)}}),
                  "exceeds dimension size");
  EXPECT_CONTAINS(runError("aten.narrow", {&y}, {{"dim", A(0)}, {"start", A(2)}, {"length", A(-1)}}), "non-negative");
}

std::vector<HostTensor> runN(const std::string& op, const HostTensor& x, const AttrMap& attrs) {
  auto r = run(op, {&x}, attrs);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  return r.isOk() ? *r : std::vector<HostTensor>{};
}

TEST(Splitting, SplitPieces) {
  HostTensor x = iota(I64, {10});
  auto p = runN("aten.split.Tensor", x, {{"split_size", A(3)}});
  ASSERT_EQ(p.size(), 4u);
  expectInts(p[0], I64, {3}, {0, 1, 2});
  expectInts(p[2], I64, {3}, {6, 7, 8});
  expectInts(p[3], I64, {1}, {9});
  p = runN("aten.split.Tensor", x, {{"split_size", A(30)}});
  ASSERT_EQ(p.size(), 1u);
  expectInts(p[0], I64, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  HostTensor y = iota(F32, {2, 3});
  p = runN("aten.split.Tensor", y, {{"split_size", A(2)}, {"dim", A(-1)}});
  ASSERT_EQ(p.size(), 2u);
  expectValues(p[0], F32, {2, 2}, {0, 1, 3, 4});
  expectValues(p[1], F32, {2, 1}, {2, 5});
  EXPECT_CONTAINS(runError("aten.split.Tensor", {&x}, {{"split_size", A(0)}}), "split_size can only be 0");
  EXPECT_CONTAINS(runError("aten.split.Tensor", {&x}, {{"split_size", A(-1)}}), "non-negative");

  auto r = infer("aten.split.Tensor", {T(F32, {S("s0") * 2, 3})}, {{"split_size", Attribute::fromSym(S("s0"))}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(shapeOf((*r)[1]), "[s0, 3]");
  EXPECT_CONTAINS(inferError("aten.split.Tensor", {T(F32, {S("s0")})}, {{"split_size", A(2)}}), "not static");
}

TEST(Splitting, SplitWithSizesChunkUnbind) {
  HostTensor x = iota(I32, {5});
  auto p = runN("aten.split_with_sizes", x, {{"split_sizes", Al({2, 0, 3})}});
  ASSERT_EQ(p.size(), 3u);
  expectInts(p[0], I32, {2}, {0, 1});
  expectInts(p[1], I32, {0}, {});
  expectInts(p[2], I32, {3}, {2, 3, 4});
  EXPECT_CONTAINS(runError("aten.split_with_sizes", {&x}, {{"split_sizes", Al({2, 2})}}), "must sum exactly to 5");
  EXPECT_CONTAINS(runError("aten.split_with_sizes", {&x}, {{"split_sizes", Al({6, -1})}}), "negative");

  p = runN("aten.chunk", x, {{"chunks", A(4)}});
  ASSERT_EQ(p.size(), 3u);
  expectInts(p[0], I32, {2}, {0, 1});
  expectInts(p[2], I32, {1}, {4});
  HostTensor e(F32, {0, 2});
  p = runN("aten.chunk", e, {{"chunks", A(3)}});
  ASSERT_EQ(p.size(), 3u);
  expectValues(p[2], F32, {0, 2}, {});
  EXPECT_CONTAINS(runError("aten.chunk", {&x}, {{"chunks", A(0)}}), "chunks must be positive");

  HostTensor y = iota(I64, {2, 3});
  p = runN("aten.unbind.int", y, {{"dim", A(1)}});
  ASSERT_EQ(p.size(), 3u);
  expectInts(p[0], I64, {2}, {0, 3});
  expectInts(p[2], I64, {2}, {2, 5});
  EXPECT_CONTAINS(inferError("aten.unbind.int", {T(F32, {S("s0")})}), "must be static");
  EXPECT_CONTAINS(inferError("aten.unbind.int", {T(F32, {})}), "0-dim");
}

}  // namespace
}  // namespace plugsdk::ops::testing
