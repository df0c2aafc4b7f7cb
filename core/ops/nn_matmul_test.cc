// Tests for the matrix-product ops (mm, bmm, addmm, baddbmm, dot, mv): hand-computed values,
// integer wrapping, NaN/inf, broadcasting of self, symbolic shapes and bad-input errors.
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

TEST(NNMatmul, MmValues) {
  HostTensor a = F({2, 3}, {1, 2, 3, 4, 5, 6}), b = F({3, 2}, {1, 0, 0, 1, 1, 1});
  expectValues(run1("aten.mm", {&a, &b}), {2, 2}, {4, 5, 10, 11});
}

TEST(NNMatmul, MmInfTimesZeroIsNaN) {
  HostTensor a = F({1, 2}, {kInf, 1}), b = F({2, 1}, {0, 1});
  expectValues(run1("aten.mm", {&a, &b}), {1, 1}, {kNaN});
}

TEST(NNMatmul, MmIntegersWrap) {
  HostTensor a = I({1, 2}, {int64_t{1} << 62, int64_t{1} << 62}), b = I({2, 1}, {2, 2});
  expectInts(run1("aten.mm", {&a, &b}), {1, 1}, {0});  // 2^64 wraps to 0
  HostTensor c = I({1, 1}, {int64_t{1} << 30}, DType::kI32), d = I({1, 1}, {3}, DType::kI32);
  HostTensor r = run1("aten.mm", {&c, &d});
  EXPECT_EQ(r.dtype(), DType::kI32);
  expectInts(r, {1, 1}, {-1073741824});  // 3 * 2^30 wrapped to 32 bits
  HostTensor e = I({1, 2}, {200, 200}, DType::kU8), f = I({2, 1}, {1, 1}, DType::kU8);
  expectInts(run1("aten.mm", {&e, &f}), {1, 1}, {144});  // 400 mod 256
}

TEST(NNMatmul, MmEmptyInnerDimGivesZeros) {
  HostTensor a = F({2, 0}, {}), b = F({0, 3}, {});
  expectValues(run1("aten.mm", {&a, &b}), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(NNMatmul, MmErrors) {
  HostTensor a = F({2, 3}, {}), b = F({4, 3}, {}), c = F({3}, {}), d = F({3, 2}, {}, DType::kF32);
  expectError(run("aten.mm", {&a, &b}), {"cannot be multiplied", "2x3 and 4x3", "3 and 4"});
  expectError(run("aten.mm", {&a, &c}), {"mat2", "2-D"});
  expectError(run("aten.mm", {&a, &d}), {"same dtype", "f64", "f32"});
  HostTensor e = I({1, 1}, {1}, DType::kBool);
  expectError(run("aten.mm", {&e, &e}), {"bool"});
}

TEST(NNMatmul, MmSymbolicShapes) {
  TensorType a = tt(DType::kF32, {sym("s0"), sym("s1") * 2}), b = tt(DType::kF32, {sym("s1") + sym("s1"), 4});
  auto r = infer("aten.mm", {&a, &b});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].shape, (ir::Shape{sym("s0"), 4}));
  TensorType c = tt(DType::kF32, {sym("s2"), 4});
  expectError(infer("aten.mm", {&a, &c}), {"not provably equal", "2*s1", "s2"});
}

TEST(NNMatmul, BmmValuesAndBatchCheck) {
  HostTensor a = F({2, 1, 2}, {1, 2, 3, 4}), b = F({2, 2, 1}, {1, 1, 2, 0});
  expectValues(run1("aten.bmm", {&a, &b}), {2, 1, 1}, {3, 6});
  HostTensor c = F({1, 2, 1}, {1, 1});
  expectError(run("aten.bmm", {&a, &c}), {"batch sizes", "2 and 1"});
}

TEST(NNMatmul, AddmmBetaAlphaAndBroadcastSelf) {
  HostTensor self = F({2}, {10, 20}), a = F({2, 2}, {1, 2, 3, 4}), b = F({2, 2}, {1, 0, 0, 1});
  expectValues(run1("aten.addmm", {&self, &a, &b}, {{"beta", ai(2)}, {"alpha", ai(3)}}), {2, 2}, {23, 46, 29, 52});
  HostTensor s0 = F({}, {1.5});
  expectValues(run1("aten.addmm", {&s0, &a, &b}), {2, 2}, {2.5, 3.5, 4.5, 5.5});
}

TEST(NNMatmul, AddmmBetaZeroIgnoresNaNSelfButAlphaZeroKeepsNaNProduct) {
  HostTensor nanSelf = F({1}, {kNaN}), a = F({1, 1}, {2}), b = F({1, 1}, {3});
  expectValues(run1("aten.addmm", {&nanSelf, &a, &b}, {{"beta", ai(0)}}), {1, 1}, {6});
  HostTensor one = F({1}, {1}), nanA = F({1, 1}, {kNaN});
  expectValues(run1("aten.addmm", {&one, &nanA, &b}, {{"alpha", af(0.0)}}), {1, 1}, {kNaN});
}

TEST(NNMatmul, AddmmIntegerScalarsTruncate) {
  HostTensor self = I({1}, {1}), a = I({1, 1}, {1}), b = I({1, 1}, {1});
  expectInts(run1("aten.addmm", {&self, &a, &b}, {{"beta", af(0.5)}}), {1, 1}, {1});  // beta -> 0
  HostTensor three = I({1}, {3});
  expectInts(run1("aten.addmm", {&three, &a, &b}, {{"beta", ai(2)}, {"alpha", ai(3)}}), {1, 1}, {9});
}

TEST(NNMatmul, AddmmErrors) {
  HostTensor bad = F({3}, {}), a = F({2, 3}, {}), b = F({3, 2}, {}), f32 = F({2}, {}, DType::kF32);
  expectError(run("aten.addmm", {&bad, &a, &b}), {"self", "cannot be broadcast", "[2, 2]"});
  expectError(run("aten.addmm", {&f32, &a, &b}), {"same dtype"});
}

TEST(NNMatmul, BaddbmmBroadcastSelf) {
  HostTensor self = F({1, 1, 2}, {1, -1}), a = F({2, 1, 1}, {2, 3}), b = F({2, 1, 2}, {1, 2, 4, 5});
  expectValues(run1("aten.baddbmm", {&self, &a, &b}), {2, 1, 2}, {3, 3, 13, 14});
  expectValues(run1("aten.baddbmm", {&self, &a, &b}, {{"beta", af(-1.0)}, {"alpha", af(0.5)}}), {2, 1, 2},
               {0, 3, 5, 8.5});
}

TEST(NNMatmul, DotAndMv) {
  HostTensor a = I({3}, {1, 2, 3}), b = I({3}, {4, -5, 6});
  expectInts(run1("aten.dot", {&a, &b}), {}, {12});
  HostTensor c = I({2}, {1, 2});
  expectError(run("aten.dot", {&a, &c}), {"sizes of self and tensor", "3 and 2"});
  HostTensor m = F({2, 2}, {1, 2, 3, 4}), v = F({2}, {1, -1});
  expectValues(run1("aten.mv", {&m, &v}), {2}, {-1, -1});
}

}  // namespace
}  // namespace plugsdk::optest
