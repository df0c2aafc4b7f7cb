// Tests for the shape ops (view, permute, expand, squeeze, flip, repeat, pad, tril, roll):
// hand-computed values on the reference executor, symbolic inference, and bad input.
#include <cmath>
#include <limits>

#include "core/ops/shape_test_util.h"

namespace plugsdk::ops::testing {
namespace {

constexpr DType F32 = DType::kF32, F64 = DType::kF64, I64 = DType::kI64, I32 = DType::kI32, I8 = DType::kI8;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ShapeOps, ViewInfersMinusOneAndKeepsValues) {
  HostTensor x = D(F32, {2, 3}, {0, -0.0, kNaN, kInf, 4, 5});
  expectValues(run1("aten.view", {&x}, {{"size", Al({3, -1})}}), F32, {3, 2}, {0, -0.0, kNaN, kInf, 4, 5});
  expectValues(run1("aten.reshape", {&x}, {{"shape", Al({-1})}}), F32, {6}, {0, -0.0, kNaN, kInf, 4, 5});
  expectValues(run1("aten._unsafe_view", {&x}, {{"size", Al({1, 6})}}), F32, {1, 6}, {0, -0.0, kNaN, kInf, 4, 5});
  HostTensor s = D(F64, {}, {2.5});
  expectValues(run1("aten.view", {&s}, {{"size", Al({-1})}}), F64, {1}, {2.5});
  HostTensor one = D(F64, {1}, {2.5});
  expectValues(run1("aten.view", {&one}, {{"size", Al({})}}), F64, {}, {2.5});
}

TEST(ShapeOps, ViewRejectsBadSizes) {
  HostTensor x = iota(F32, {4});
  EXPECT_CONTAINS(runError("aten.view", {&x}, {{"size", Al({-1, -1})}}), "only one dimension can be inferred");
  EXPECT_CONTAINS(runError("aten.view", {&x}, {{"size", Al({-2, -2})}}), "invalid shape dimension -2");
  EXPECT_CONTAINS(runError("aten.view", {&x}, {{"size", Al({3})}}), "invalid for input of 4 elements");
  EXPECT_CONTAINS(runError("aten.view", {&x}, {{"size", Al({3, -1})}}), "not divisible");
  HostTensor e(F32, {0, 2});
  EXPECT_CONTAINS(runError("aten.view", {&e}, {{"size", Al({0, -1})}}), "ambiguous");
}

TEST(ShapeOps, ViewWithSymbolicSizes) {
  auto r = infer("aten.view", {T(F32, {S("s0"), 6})}, {{"size", Al({-1, 3})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[2*s0, 3]");
  r = infer("aten.reshape", {T(F32, {S("s0"), S("s1")})}, {{"shape", Attribute::fromInts({S("s1"), SymExpr(-1)})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[s1, s0]");
  r = infer("aten.view", {T(F32, {S("s0") * 2 + 2})}, {{"size", Al({2, -1})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[2, s0+1]");
  EXPECT_CONTAINS(
      inferError("aten.view", {T(F32, {S("s0"), 6})}, {{"size", Attribute::fromInts({S("s0"), SymExpr(5)})}}),
      "invalid for input");
  EXPECT_CONTAINS(
      inferError("aten.view", {T(F32, {S("s0"), 6})}, {{"size", Attribute::fromInts({S("s1"), SymExpr(6)})}}),
      "not provably equal");
  EXPECT_CONTAINS(inferError("aten.view", {T(F32, {S("s0")})}, {{"size", Al({4, -1})}}), "not provably divisible");
}

TEST(ShapeOps, SymbolicSizesEvaluateAtRunTime) {
  // x: f32[s0, 4]; the size attributes refer to s0 and are evaluated when the graph runs.
  ir::TensorType t = T(F32, {S("s0"), 4});
  auto r = runSymbolic("aten.view", {t}, {iota(F32, {2, 4})}, {{"size", Attribute::fromInts({SymExpr(4), S("s0")})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], F32, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ir::TensorType col = T(F32, {S("s0"), 1});
  r = runSymbolic("aten.expand", {col}, {iota(F32, {3, 1})}, {{"size", Attribute::fromInts({S("s0"), S("s0") * 2})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], F32, {3, 6}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2});
  r = runSymbolic("aten.constant_pad_nd", {t}, {iota(F32, {1, 4})},
                  {{"pad", Attribute::fromInts({SymExpr(-1), S("s0")})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], F32, {1, 4}, {1, 2, 3, 0});
}

TEST(ShapeOps, FlattenAndUnflatten) {
  HostTensor x = iota(I64, {2, 3, 2});
  expectInts(run1("aten.flatten.using_ints", {&x}, {{"start_dim", A(1)}}), I64, {2, 6},
             {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  HostTensor s = I(I64, {}, {7});
  expectInts(run1("aten.flatten.using_ints", {&s}), I64, {1}, {7});
  EXPECT_CONTAINS(runError("aten.flatten.using_ints", {&x}, {{"start_dim", A(2)}, {"end_dim", A(1)}}),
                  "comes after end_dim");
  HostTensor y = iota(I64, {2, 6});
  expectInts(run1("aten.unflatten.int", {&y}, {{"dim", A(-1)}, {"sizes", Al({3, -1})}}), I64, {2, 3, 2},
             {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_CONTAINS(runError("aten.unflatten.int", {&y}, {{"dim", A(1)}, {"sizes", Al({4, -1})}}), "invalid");
}

TEST(ShapeOps, PermuteTransposeAndT) {
  HostTensor x = iota(F64, {2, 3});
  expectValues(run1("aten.permute", {&x}, {{"dims", Al({1, 0})}}), F64, {3, 2}, {0, 3, 1, 4, 2, 5});
  expectValues(run1("aten.permute", {&x}, {{"dims", Al({-1, -2})}}), F64, {3, 2}, {0, 3, 1, 4, 2, 5});
  expectValues(run1("aten.t", {&x}), F64, {3, 2}, {0, 3, 1, 4, 2, 5});
  HostTensor y = iota(I32, {2, 1, 3});
  expectInts(run1("aten.transpose.int", {&y}, {{"dim0", A(0)}, {"dim1", A(-1)}}), I32, {3, 1, 2}, {0, 3, 1, 4, 2, 5});
  HostTensor v = iota(F64, {3});
  expectValues(run1("aten.t", {&v}), F64, {3}, {0, 1, 2});
  HostTensor s = D(F64, {}, {4});
  expectValues(run1("aten.transpose.int", {&s}, {{"dim0", A(0)}, {"dim1", A(-1)}}), F64, {}, {4});

  EXPECT_CONTAINS(runError("aten.permute", {&x}, {{"dims", Al({0})}}), "dims has 1 entries but the tensor has rank 2");
  EXPECT_CONTAINS(runError("aten.permute", {&x}, {{"dims", Al({0, 0})}}), "more than once");
  EXPECT_CONTAINS(runError("aten.permute", {&x}, {{"dims", Al({0, 2})}}), "out of range");
  EXPECT_CONTAINS(runError("aten.transpose.int", {&x}, {{"dim0", A(0)}, {"dim1", A(2)}}), "dim 2 out of range");
  HostTensor z = iota(F64, {1, 1, 1});
  EXPECT_CONTAINS(runError("aten.t", {&z}), "<= 2 dimensions");
}

TEST(ShapeOps, Expand) {
  HostTensor x = D(F32, {3, 1}, {1, -0.0, kNaN});
  expectValues(run1("aten.expand", {&x}, {{"size", Al({2, -1, 2})}}), F32, {2, 3, 2},
               {1, 1, -0.0, -0.0, kNaN, kNaN, 1, 1, -0.0, -0.0, kNaN, kNaN});
  expectValues(run1("aten.expand", {&x}, {{"size", Al({3, 0})}}), F32, {3, 0}, {});
  EXPECT_CONTAINS(runError("aten.expand", {&x}, {{"size", Al({-1, 3, 4})}}),
                  "not allowed in a leading, new dimension 0");
  EXPECT_CONTAINS(runError("aten.expand", {&x}, {{"size", Al({2, 4})}}), "must match the existing size 3");
  EXPECT_CONTAINS(runError("aten.expand", {&x}, {{"size", Al({4})}}), "must be greater or equal to the rank");
  EXPECT_CONTAINS(runError("aten.expand", {&x}, {{"size", Al({3, -2})}}), "negative");

  auto r =
      infer("aten.expand", {T(F32, {S("s0"), 1})}, {{"size", Attribute::fromInts({SymExpr(2), SymExpr(-1), S("s1")})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[2, s0, s1]");
  EXPECT_CONTAINS(inferError("aten.expand", {T(F32, {S("s0"), 1})}, {{"size", Al({4, 1})}}), "not provably equal");
}

TEST(ShapeOps, UnsqueezeAndSqueeze) {
  HostTensor x = iota(I64, {2, 3});
  expectInts(run1("aten.unsqueeze", {&x}, {{"dim", A(-1)}}), I64, {2, 3, 1}, {0, 1, 2, 3, 4, 5});
  expectInts(run1("aten.unsqueeze", {&x}, {{"dim", A(1)}}), I64, {2, 1, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_CONTAINS(runError("aten.unsqueeze", {&x}, {{"dim", A(3)}}), "dim 3 out of range");
  HostTensor s = I(I64, {}, {9});
  expectInts(run1("aten.unsqueeze", {&s}, {{"dim", A(0)}}), I64, {1}, {9});
  expectInts(run1("aten.squeeze.dim", {&s}, {{"dim", A(0)}}), I64, {}, {9});

  HostTensor y = iota(I64, {1, 3, 1});
  expectInts(run1("aten.squeeze.dims", {&y}, {{"dim", Al({0, -1})}}), I64, {3}, {0, 1, 2});
  expectInts(run1("aten.squeeze.dim", {&y}, {{"dim", A(1)}}), I64, {1, 3, 1}, {0, 1, 2});
  expectInts(run1("aten.squeeze", {&y}), I64, {3}, {0, 1, 2});
  EXPECT_CONTAINS(runError("aten.squeeze.dims", {&y}, {{"dim", Al({0, 0})}}), "more than once");

  auto r = infer("aten.squeeze", {T(F32, {1, S("s0") + 1, 4})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(shapeOf((*r)[0]), "[s0+1, 4]");
  EXPECT_CONTAINS(inferError("aten.squeeze.dim", {T(F32, {S("s0"), 4})}, {{"dim", A(0)}}),
                  "cannot decide whether dim 0 (size s0) is 1");
}

TEST(ShapeOps, CloneAndAliasKeepEveryValue) {
  HostTensor x = I(I64, {3}, {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1});
  expectInts(run1("aten.clone", {&x}), I64, {3},
             {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1});
  HostTensor f = D(F32, {4}, {-0.0, kNaN, -kInf, 1e-45});
  expectValues(run1("aten.alias", {&f}), F32, {4}, {-0.0, kNaN, -kInf, 1e-45});
}

TEST(ShapeOps, DetachKeepsEveryValueAndType) {
  HostTensor f = D(DType::kBF16, {2, 2}, {-0.0, kNaN, kInf, 3.5});
  expectValues(run1("aten.detach", {&f}), DType::kBF16, {2, 2}, {-0.0, kNaN, kInf, 3.5});
  HostTensor b = I(DType::kBool, {3}, {1, 0, 1});
  expectInts(run1("aten.detach", {&b}), DType::kBool, {3}, {1, 0, 1});
  auto r = infer("aten.detach", {T(DType::kF16, {S("s0"), 0, 3})});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].dtype, DType::kF16);
  EXPECT_EQ(shapeOf((*r)[0]), "[s0, 0, 3]");
}

TEST(ShapeOps, Flip) {
  HostTensor x = iota(F64, {2, 3});
  expectValues(run1("aten.flip", {&x}, {{"dims", Al({0, 1})}}), F64, {2, 3}, {5, 4, 3, 2, 1, 0});
  expectValues(run1("aten.flip", {&x}, {{"dims", Al({-1})}}), F64, {2, 3}, {2, 1, 0, 5, 4, 3});
  expectValues(run1("aten.flip", {&x}, {{"dims", Al({})}}), F64, {2, 3}, {0, 1, 2, 3, 4, 5});
  HostTensor e(F64, {0, 3});
  expectValues(run1("aten.flip", {&e}, {{"dims", Al({0})}}), F64, {0, 3}, {});
  EXPECT_CONTAINS(runError("aten.flip", {&x}, {{"dims", Al({0, 0})}}), "more than once");
}

TEST(ShapeOps, Repeat) {
  HostTensor x = I(I8, {2}, {1, -2});
  expectInts(run1("aten.repeat", {&x}, {{"repeats", Al({2, 2})}}), I8, {2, 4}, {1, -2, 1, -2, 1, -2, 1, -2});
  HostTensor y = iota(F32, {2, 2});
  expectValues(run1("aten.repeat", {&y}, {{"repeats", Al({2, 1})}}), F32, {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3});
  expectValues(run1("aten.repeat", {&y}, {{"repeats", Al({1, 0})}}), F32, {2, 0}, {});
  EXPECT_CONTAINS(runError("aten.repeat", {&y}, {{"repeats", Al({2})}}), "can not be smaller than the rank");
  EXPECT_CONTAINS(runError("aten.repeat", {&x}, {{"repeats", Al({-1})}}), "negative");
}

TEST(ShapeOps, ConstantPadNd) {
  HostTensor x = iota(F32, {4});
  expectValues(run1("aten.constant_pad_nd", {&x}, {{"pad", Al({-1, 2})}, {"value", Af(-1.0)}}), F32, {5},
               {1, 2, 3, -1, -1});
  expectValues(run1("aten.constant_pad_nd", {&x}, {{"pad", Al({-2, -2})}}), F32, {0}, {});
  // The pad value is stored at float32 precision, as PyTorch fills a float32 tensor.
  expectValues(run1("aten.constant_pad_nd", {&x}, {{"pad", Al({1, 0})}, {"value", Af(0.1)}}), F32, {5},
               {static_cast<double>(0.1f), 0, 1, 2, 3});
  HostTensor i = I(I64, {1, 2}, {5, 6});
  expectInts(run1("aten.constant_pad_nd", {&i}, {{"pad", Al({1, 0, 0, 1})}, {"value", Af(2.7)}}), I64, {2, 3},
             {2, 5, 6, 2, 2, 2});
  HostTensor s = D(F64, {}, {3});
  expectValues(run1("aten.constant_pad_nd", {&s}, {{"pad", Al({})}}), F64, {}, {3});
  HostTensor u = I(DType::kU8, {1}, {7});
  expectInts(run1("aten.constant_pad_nd", {&u}, {{"pad", Al({1, 0})}, {"value", A(-1)}}), DType::kU8, {2}, {255, 7});
  EXPECT_CONTAINS(runError("aten.constant_pad_nd", {&u}, {{"pad", Al({1, 0})}, {"value", A(300)}}),
                  "value 300 cannot be converted to u8 without overflow");
  EXPECT_CONTAINS(runError("aten.constant_pad_nd", {&x}, {{"pad", Al({1})}}), "must be even");
  EXPECT_CONTAINS(runError("aten.constant_pad_nd", {&x}, {{"pad", Al({1, 1, 1, 1})}}), "more than twice the rank");
  EXPECT_CONTAINS(runError("aten.constant_pad_nd", {&x}, {{"pad", Al({-3, -2})}}), "negative size -1");
}

TEST(ShapeOps, TrilTriu) {
  HostTensor x = D(F64, {3, 4}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  expectValues(run1("aten.tril", {&x}, {{"diagonal", A(-1)}}), F64, {3, 4}, {0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0});
  expectValues(run1("aten.triu", {&x}, {{"diagonal", A(1)}}), F64, {3, 4}, {0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1});
  HostTensor b = iota(I64, {2, 2, 2});
  expectInts(run1("aten.tril", {&b}), I64, {2, 2, 2}, {0, 0, 2, 3, 4, 0, 6, 7});
  expectInts(run1("aten.triu", {&b}), I64, {2, 2, 2}, {0, 1, 0, 3, 4, 5, 0, 7});
  HostTensor v = iota(F64, {3});
  EXPECT_CONTAINS(runError("aten.tril", {&v}), "at least 2 dimensions");
}

TEST(ShapeOps, Roll) {
  HostTensor x = iota(I64, {2, 3});
  expectInts(run1("aten.roll", {&x}, {{"shifts", Al({1})}}), I64, {2, 3}, {5, 0, 1, 2, 3, 4});
  expectInts(run1("aten.roll", {&x}, {{"shifts", Al({-7})}}), I64, {2, 3}, {1, 2, 3, 4, 5, 0});
  expectInts(run1("aten.roll", {&x}, {{"shifts", Al({1, -1})}, {"dims", Al({0, 1})}}), I64, {2, 3}, {4, 5, 3, 1, 2, 0});
  expectInts(run1("aten.roll", {&x}, {{"shifts", Al({1, 1})}, {"dims", Al({1, -1})}}), I64, {2, 3}, {1, 2, 0, 4, 5, 3});
  HostTensor e(F32, {0, 3});
  expectValues(run1("aten.roll", {&e}, {{"shifts", Al({1})}, {"dims", Al({0})}}), F32, {0, 3}, {});
  EXPECT_CONTAINS(runError("aten.roll", {&x}, {{"shifts", Al({1, -1})}, {"dims", Al({0})}}),
                  "shifts and dims must align");
  EXPECT_CONTAINS(runError("aten.roll", {&x}, {{"shifts", Al({1, -1})}}), "exactly one entry");
  EXPECT_CONTAINS(runError("aten.roll", {&x}, {{"shifts", Al({1})}, {"dims", Al({2})}}), "out of range");
}

TEST(ShapeOps, LargeTensorsAreFast) {
  HostTensor x = iota(F32, {256, 1024});
  HostTensor t = run1("aten.transpose.int", {&x}, {{"dim0", A(0)}, {"dim1", A(1)}});
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{1024, 256}));
  EXPECT_EQ(t.getDouble(1 * 256 + 2), 2 * 1024 + 1);
  HostTensor f = run1("aten.flip", {&x}, {{"dims", Al({0, 1})}});
  EXPECT_EQ(f.getDouble(0), 256 * 1024 - 1);
  HostTensor r = run1("aten.roll", {&x}, {{"shifts", Al({3, -5})}, {"dims", Al({0, 1})}});
  EXPECT_EQ(r.getDouble(3 * 1024), 5);
  HostTensor p = run1("aten.constant_pad_nd", {&x}, {{"pad", Al({1, 1, 1, 1})}});
  EXPECT_EQ(p.getDouble(1 * 1026 + 1), 0);
  EXPECT_EQ(p.getDouble(2 * 1026 + 2), 1025);
}

}  // namespace
}  // namespace plugsdk::ops::testing
