// Hand-computed tests of the binary pointwise ops on the reference executor: broadcasting, type
// promotion with tensors / zero-dim tensors / scalars, division and remainder modes, pow, NaN rules.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/ir/context.h"
#include "core/ops/pointwise_test_util.h"

namespace plugsdk {
namespace {

using namespace testing_pw;  // NOLINT
const double kNaN = std::nan("");
const double kInf = INFINITY;

TEST(PointwiseBinary, AddBroadcastsWithAlpha) {
  HostTensor a = D({2, 1}, {1, 2});
  HostTensor b = D({3}, {10, 20, 30});
  expectDoubles(run1("aten.add.Tensor", {&a, &b}, {{"alpha", aI(2)}}), DType::kF64, {2, 3}, {21, 41, 61, 22, 42, 62});
  expectDoubles(run1("aten.sub.Tensor", {&a, &b}), DType::kF64, {2, 3}, {-9, -19, -29, -8, -18, -28});
  HostTensor e = D({0, 3}, {});
  expectType(run1("aten.mul.Tensor", {&e, &b}), DType::kF64, {0, 3});
}

TEST(PointwiseBinary, TypePromotion) {
  HostTensor i32 = I(DType::kI32, {2}, {1, 2});
  expectDoubles(run1("aten.add.Scalar", {&i32}, {{"other", aF(2.5)}}), DType::kF32, {2}, {3.5, 4.5});
  HostTensor i64zero = I(DType::kI64, {}, {5});
  expectInts(run1("aten.add.Tensor", {&i32, &i64zero}), DType::kI32, {2}, {6, 7});
  HostTensor f64zero = D({}, {0.5});
  expectDoubles(run1("aten.add.Tensor", {&i32, &f64zero}), DType::kF64, {2}, {1.5, 2.5});
  HostTensor f16 = F(DType::kF16, {2}, {1.0, 2.0});
  expectDoubles(run1("aten.mul.Tensor", {&f16, &f64zero}), DType::kF16, {2}, {0.5, 1.0});
  HostTensor b = B({2}, {1, 0});
  expectInts(run1("aten.add.Scalar", {&b}, {{"other", aI(2)}}), DType::kI64, {2}, {3, 2});
  expectInts(run1("aten.add.Tensor", {&b, &b}, {{"alpha", aI(2)}}), DType::kBool, {2}, {1, 0});
  expectInts(run1("aten.mul.Scalar", {&b}, {{"other", aB(true)}}), DType::kBool, {2}, {1, 0});
  HostTensor u8 = I(DType::kU8, {1}, {1});
  expectInts(run1("aten.add.Scalar", {&u8}, {{"other", aI(300)}}), DType::kU8, {1}, {45});
  expectDoubles(run1("aten.div.Scalar", {&i32}, {{"other", aI(4)}}), DType::kF32, {2}, {0.25, 0.5});
}

TEST(PointwiseBinary, ReducedFloatScalarsFollowTorch) {
  // add / sub / remainder / pow cast a Scalar (and alpha) to f16 first: f16(1.0004) = 1.0.
  HostTensor h = F(DType::kF16, {2}, {0.5, 1000.0});
  expectDoubles(run1("aten.add.Scalar", {&h}, {{"other", aF(1.0004)}}), DType::kF16, {2}, {1.5, 1001.0});
  expectDoubles(run1("aten.add.Tensor", {&h, &h}, {{"alpha", aF(1.0004)}}), DType::kF16, {2}, {1.0, 2000.0});
  expectDoubles(run1("aten.remainder.Scalar", {&h}, {{"other", aF(1.0004)}}), DType::kF16, {2}, {0.5, 0.0});
  // mul and div keep a zero-dim second operand in float32: 1000 * f32(1.0004).
  const double s32 = static_cast<double>(1.0004f);
  expectDoubles(run1("aten.mul.Scalar", {&h}, {{"other", aF(1.0004)}}), DType::kF16, {2}, {0.5 * s32, 1000.0 * s32});
  HostTensor z = D({}, {1.0004});
  expectDoubles(run1("aten.div.Tensor", {&h, &z}), DType::kF16, {2}, {0.5 / s32, 1000.0 / s32});
  expectDoubles(run1("aten.div.Tensor_mode", {&h, &z}, {{"rounding_mode", aS("floor")}}), DType::kF16, {2},
                {0.0, 999.0});
  // ... but a zero-dim first operand is cast to f16.
  expectDoubles(run1("aten.mul.Tensor", {&z, &h}), DType::kF16, {2}, {0.5, 1000.0});
}

TEST(PointwiseBinary, IntegerArithmeticWraps) {
  HostTensor a = I(DType::kI8, {2}, {100, -128});
  HostTensor b = I(DType::kI8, {2}, {3, -1});
  expectInts(run1("aten.mul.Tensor", {&a, &b}), DType::kI8, {2}, {44, -128});
  HostTensor big = I(DType::kI64, {1}, {INT64_MAX});
  HostTensor one = I(DType::kI64, {1}, {1});
  expectInts(run1("aten.add.Tensor", {&big, &one}), DType::kI64, {1}, {INT64_MIN});
  HostTensor small = I(DType::kI64, {1}, {INT64_MIN});
  expectInts(run1("aten.sub.Tensor", {&small, &one}), DType::kI64, {1}, {INT64_MAX});
  HostTensor x = I(DType::kI32, {2}, {1, 2});
  expectInts(run1("aten.rsub.Scalar", {&x}, {{"other", aI(10)}, {"alpha", aI(3)}}), DType::kI32, {2}, {7, 4});
  expectInts(run1("aten.sub.Scalar", {&x}, {{"other", aI(10)}, {"alpha", aI(2)}}), DType::kI32, {2}, {-19, -18});
}

TEST(PointwiseBinary, AlphaAndBoolChecks) {
  HostTensor i = I(DType::kI32, {2}, {1, 2});
  HostTensor f = D({2}, {1, 2});
  HostTensor b = B({2}, {1, 0});
  expectError(runErr("aten.add.Tensor", {&i, &i}, {{"alpha", aF(2.5)}}), {"alpha", "floating-point", "i32"});
  expectError(runErr("aten.add.Tensor", {&f, &f}, {{"alpha", aB(true)}}), {"bool alpha"});
  expectError(runErr("aten.sub.Tensor", {&b, &b}), {"subtraction", "bool"});
  expectError(runErr("aten.sub.Tensor", {&f, &b}), {"subtraction", "bool"});
  expectError(runErr("aten.sub.Scalar", {&f}, {{"other", aB(true)}}), {"subtraction", "bool"});
  expectError(runErr("aten.rsub.Scalar", {&i}, {{"other", aI(1)}, {"alpha", aF(0.5)}}), {"alpha"});
  // A float alpha is fine when the result is floating (i32 + 1.5 is f32).
  expectDoubles(run1("aten.add.Scalar", {&i}, {{"other", aF(1.5)}, {"alpha", aF(2.5)}}), DType::kF32, {2},
                {4.75, 5.75});
  HostTensor c = D({3}, {1, 2, 3});
  expectError(runErr("aten.add.Tensor", {&f, &c}), {"shapes [2] and [3] do not broadcast"});
}

TEST(PointwiseBinary, ScalarConversionsAreChecked) {
  HostTensor i8 = I(DType::kI8, {2}, {1, 2});
  expectError(runErr("aten.add.Tensor", {&i8, &i8}, {{"alpha", aI(300)}}), {"alpha", "300", "i8", "overflow"});
  expectInts(run1("aten.add.Tensor", {&i8, &i8}, {{"alpha", aI(-128)}}), DType::kI8, {2}, {-127, 2});  // 1-128, 2-256
  HostTensor u8 = I(DType::kU8, {2}, {1, 2});
  expectError(runErr("aten.pow.Tensor_Scalar", {&u8}, {{"exponent", aI(300)}}), {"exponent", "u8", "overflow"});
  HostTensor h = F(DType::kF16, {1}, {1.0});
  expectError(runErr("aten.pow.Tensor_Scalar", {&h}, {{"exponent", aF(1e6)}}), {"exponent", "f16", "overflow"});
  HostTensor f = F(DType::kF32, {1}, {1.0});
  expectDoubles(run1("aten.pow.Tensor_Scalar", {&f}, {{"exponent", aF(1e6)}}), DType::kF32, {1}, {1.0});
  // A bool result converts alpha to bool: -1 is true, so this is a logical or.
  HostTensor b1 = B({3}, {1, 0, 0}), b2 = B({3}, {1, 1, 0});
  expectInts(run1("aten.add.Tensor", {&b1, &b2}, {{"alpha", aI(-1)}}), DType::kBool, {3}, {1, 1, 0});
}

TEST(PointwiseBinary, TrueDivision) {
  HostTensor a = I(DType::kI32, {4}, {7, -7, 1, 0});
  HostTensor b = I(DType::kI32, {4}, {2, 2, 0, 0});
  expectDoubles(run1("aten.div.Tensor", {&a, &b}), DType::kF32, {4}, {3.5, -3.5, kInf, kNaN});
  expectDoubles(run1("aten.div.Tensor_mode", {&a, &b}), DType::kF32, {4}, {3.5, -3.5, kInf, kNaN});
}

TEST(PointwiseBinary, FloorAndTruncDivisionOfFloats) {
  HostTensor a = D({8}, {7, -7, 7, -7, 0, 1, 5, -1});
  HostTensor b = D({8}, {2, 2, -2, -2, -1, -kInf, kInf, 3});
  expectDoubles(run1("aten.div.Tensor_mode", {&a, &b}, {{"rounding_mode", aS("floor")}}), DType::kF64, {8},
                {3, -4, -4, 3, -0.0, -1, 0.0, -1});
  expectDoubles(run1("aten.div.Tensor_mode", {&a, &b}, {{"rounding_mode", aS("trunc")}}), DType::kF64, {8},
                {3, -3, -3, 3, -0.0, -0.0, 0.0, -0.0});
  HostTensor z = D({3}, {1, -1, 0});
  HostTensor zero = D({3}, {0, 0, 0});
  expectDoubles(run1("aten.div.Tensor_mode", {&z, &zero}, {{"rounding_mode", aS("floor")}}), DType::kF64, {3},
                {kInf, -kInf, kNaN});
}

TEST(PointwiseBinary, FloorAndTruncDivisionOfIntegers) {
  HostTensor a = I(DType::kI64, {5}, {7, -7, 7, -7, INT64_MIN});
  HostTensor b = I(DType::kI64, {5}, {2, 2, -2, -2, -1});
  expectInts(run1("aten.div.Tensor_mode", {&a, &b}, {{"rounding_mode", aS("floor")}}), DType::kI64, {5},
             {3, -4, -4, 3, INT64_MIN});
  expectInts(run1("aten.div.Tensor_mode", {&a, &b}, {{"rounding_mode", aS("trunc")}}), DType::kI64, {5},
             {3, -3, -3, 3, INT64_MIN});
  HostTensor c = I(DType::kI8, {2}, {-128, 7});
  HostTensor d = I(DType::kI8, {2}, {-1, 2});
  expectInts(run1("aten.div.Tensor_mode", {&c, &d}, {{"rounding_mode", aS("floor")}}), DType::kI8, {2}, {-128, 3});
  HostTensor zero = I(DType::kI64, {5}, {0, 1, 1, 1, 1});
  expectError(runErr("aten.div.Tensor_mode", {&a, &zero}, {{"rounding_mode", aS("floor")}}), {"division by zero"});
  expectError(runErr("aten.div.Tensor_mode", {&a, &b}, {{"rounding_mode", aS("round")}}), {"rounding_mode", "round"});
  HostTensor t = B({1}, {1});
  expectError(runErr("aten.div.Tensor_mode", {&t, &t}, {{"rounding_mode", aS("trunc")}}), {"bool"});
}

TEST(PointwiseBinary, RemainderAndFmod) {
  HostTensor a = D({7}, {7, -7, 7, -7, 1, -0.0, 5});
  HostTensor b = D({7}, {2, 2, -2, -2, -kInf, 1, 0});
  expectDoubles(run1("aten.remainder.Tensor", {&a, &b}), DType::kF64, {7}, {1, 1, -1, -1, -kInf, -0.0, kNaN});
  expectDoubles(run1("aten.fmod.Tensor", {&a, &b}), DType::kF64, {7}, {1, -1, 1, -1, 1, -0.0, kNaN});
  HostTensor i = I(DType::kI32, {4}, {7, -7, 7, -7});
  HostTensor j = I(DType::kI32, {4}, {2, 2, -2, -2});
  expectInts(run1("aten.remainder.Tensor", {&i, &j}), DType::kI32, {4}, {1, 1, -1, -1});
  expectInts(run1("aten.fmod.Tensor", {&i, &j}), DType::kI32, {4}, {1, -1, 1, -1});
  expectInts(run1("aten.remainder.Scalar", {&i}, {{"other", aI(-3)}}), DType::kI32, {4}, {-2, -1, -2, -1});
  expectDoubles(run1("aten.remainder.Scalar", {&i}, {{"other", aF(1.5)}}), DType::kF32, {4}, {1.0, 0.5, 1.0, 0.5});
  HostTensor zero = I(DType::kI32, {4}, {0, 1, 1, 1});
  expectError(runErr("aten.remainder.Tensor", {&i, &zero}), {"division by zero"});
  expectError(runErr("aten.fmod.Tensor", {&i, &zero}), {"division by zero"});
  HostTensor t = B({1}, {1});
  expectError(runErr("aten.fmod.Tensor", {&t, &t}), {"bool"});
}

TEST(PointwiseBinary, PowIntegers) {
  HostTensor a = I(DType::kI32, {6}, {2, -1, 1, 3, 2, 0});
  HostTensor b = I(DType::kI32, {6}, {-1, -3, -5, 40, 31, 0});
  expectInts(run1("aten.pow.Tensor_Tensor", {&a, &b}), DType::kI32, {6}, {0, -1, 1, 689956897, INT32_MIN, 1});
  HostTensor u = I(DType::kU8, {2}, {2, 3});
  HostTensor v = I(DType::kU8, {2}, {9, 6});
  expectInts(run1("aten.pow.Tensor_Tensor", {&u, &v}), DType::kU8, {2}, {0, 217});
  HostTensor w = I(DType::kI32, {2}, {70000, -3});
  expectInts(run1("aten.pow.Tensor_Scalar", {&w}, {{"exponent", aI(2)}}), DType::kI32, {2}, {605032704, 9});
  expectDoubles(run1("aten.pow.Tensor_Scalar", {&w}, {{"exponent", aF(0.5)}}), DType::kF32, {2},
                {std::sqrt(70000.0), kNaN});
  HostTensor t = B({2}, {1, 0});
  expectInts(run1("aten.pow.Tensor_Scalar", {&t}, {{"exponent", aI(2)}}), DType::kI64, {2}, {1, 0});
  expectError(runErr("aten.pow.Tensor_Scalar", {&w}, {{"exponent", aI(-1)}}), {"negative integer powers"});
  expectError(runErr("aten.pow.Tensor_Tensor", {&t, &t}), {"bool"});
}

TEST(PointwiseBinary, PowFloatSpecialExponents) {
  HostTensor x = D({6}, {-0.0, -kInf, 4.0, kNaN, -2.0, 0.0});
  auto pw = [&](double e) { return run1("aten.pow.Tensor_Scalar", {&x}, {{"exponent", aF(e)}}); };
  expectDoubles(pw(0.5), DType::kF64, {6}, {-0.0, kNaN, 2.0, kNaN, kNaN, 0.0});
  expectDoubles(pw(-0.5), DType::kF64, {6}, {-kInf, kNaN, 0.5, kNaN, kNaN, kInf});
  expectDoubles(pw(3.0), DType::kF64, {6}, {-0.0, -kInf, 64.0, kNaN, -8.0, 0.0});
  expectDoubles(pw(-1.0), DType::kF64, {6}, {-kInf, -0.0, 0.25, kNaN, -0.5, kInf});
  expectDoubles(pw(0.0), DType::kF64, {6}, {1, 1, 1, 1, 1, 1});
  expectDoubles(pw(2.5), DType::kF64, {6}, {0.0, kInf, 32.0, kNaN, kNaN, 0.0});
  HostTensor y = D({3}, {-8.0, 0.0, 2.0});
  HostTensor e = D({3}, {1.0 / 3.0, -1.0, 10.0});
  expectDoubles(run1("aten.pow.Tensor_Tensor", {&y, &e}), DType::kF64, {3}, {kNaN, kInf, 1024.0});
}

TEST(PointwiseBinary, MaximumMinimumPropagateNaN) {
  HostTensor a = D({4}, {kNaN, 1.0, -0.0, 0.0});
  HostTensor b = D({4}, {1.0, kNaN, 0.0, -0.0});
  expectDoubles(run1("aten.maximum", {&a, &b}), DType::kF64, {4}, {kNaN, kNaN, -0.0, 0.0});
  expectDoubles(run1("aten.minimum", {&a, &b}), DType::kF64, {4}, {kNaN, kNaN, -0.0, 0.0});
  HostTensor i = I(DType::kI32, {2}, {3, -4});
  HostTensor h = F(DType::kF16, {2}, {2.5, -8.0});
  expectDoubles(run1("aten.maximum", {&i, &h}), DType::kF16, {2}, {3.0, -4.0});
  expectDoubles(run1("aten.minimum", {&i, &h}), DType::kF16, {2}, {2.5, -8.0});
  HostTensor b1 = B({2}, {1, 0}), b2 = B({2}, {0, 0});
  expectInts(run1("aten.maximum", {&b1, &b2}), DType::kBool, {2}, {1, 0});
}

TEST(PointwiseBinary, Atan2) {
  HostTensor y = I(DType::kI64, {3}, {1, 0, 0});
  HostTensor x = I(DType::kI64, {3}, {0, -1, 1});
  expectDoubles(run1("aten.atan2", {&y, &x}), DType::kF32, {3}, {std::numbers::pi / 2, std::numbers::pi, 0.0});
  HostTensor ny = D({2}, {-0.0, -1.0}), nx = D({2}, {-1.0, kInf});
  expectDoubles(run1("aten.atan2", {&ny, &nx}), DType::kF64, {2}, {-std::numbers::pi, -0.0});
}

TEST(PointwiseBinary, BitwiseOps) {
  HostTensor a = I(DType::kI8, {2}, {5, -3});
  HostTensor three = I(DType::kI64, {}, {3});
  expectInts(run1("aten.bitwise_and.Tensor", {&a, &three}), DType::kI8, {2}, {1, 1});
  expectInts(run1("aten.bitwise_or.Tensor", {&a, &three}), DType::kI8, {2}, {7, -1});
  expectInts(run1("aten.bitwise_xor.Tensor", {&a, &three}), DType::kI8, {2}, {6, -2});
  HostTensor t = B({1}, {1});
  HostTensor i = I(DType::kI32, {1}, {3});
  expectInts(run1("aten.bitwise_xor.Tensor", {&t, &i}), DType::kI32, {1}, {2});
  HostTensor f = F(DType::kF32, {1}, {1.0});
  expectError(runErr("aten.bitwise_and.Tensor", {&i, &f}), {"integer or bool", "f32"});
}

TEST(PointwiseBinary, LogicalOps) {
  HostTensor a = D({3}, {kNaN, 0.0, -0.0});
  HostTensor b = I(DType::kI32, {3}, {0, 0, 7});
  expectInts(run1("aten.logical_xor", {&a, &b}), DType::kBool, {3}, {1, 0, 1});
  expectInts(run1("aten.logical_and", {&a, &b}), DType::kBool, {3}, {0, 0, 0});
  expectInts(run1("aten.logical_or", {&a, &b}), DType::kBool, {3}, {1, 0, 1});
}

TEST(PointwiseBinary, ComparisonsCastToTheCommonDType) {
  HostTensor u = I(DType::kU8, {2}, {44, 255});
  expectInts(run1("aten.eq.Scalar", {&u}, {{"other", aI(300)}}), DType::kBool, {2}, {1, 0});
  expectInts(run1("aten.eq.Scalar", {&u}, {{"other", aI(-1)}}), DType::kBool, {2}, {0, 1});
  HostTensor big = I(DType::kI64, {1}, {16777217});
  HostTensor f = F(DType::kF32, {1}, {16777216.0});
  expectInts(run1("aten.eq.Tensor", {&big, &f}), DType::kBool, {1}, {1});
  HostTensor i = I(DType::kI32, {2}, {2, 3});
  expectInts(run1("aten.lt.Scalar", {&i}, {{"other", aF(2.5)}}), DType::kBool, {2}, {1, 0});
  expectInts(run1("aten.ge.Scalar", {&i}, {{"other", aI(3)}}), DType::kBool, {2}, {0, 1});
  HostTensor h = F(DType::kF16, {1}, {0.0999755859375});  // f16(0.1)
  expectInts(run1("aten.eq.Scalar", {&h}, {{"other", aF(0.1)}}), DType::kBool, {1}, {1});
  HostTensor n = D({3}, {kNaN, 1.0, -0.0});
  HostTensor m = D({3}, {kNaN, kNaN, 0.0});
  expectInts(run1("aten.eq.Tensor", {&n, &m}), DType::kBool, {3}, {0, 0, 1});
  expectInts(run1("aten.ne.Tensor", {&n, &m}), DType::kBool, {3}, {1, 1, 0});
  expectInts(run1("aten.le.Tensor", {&n, &m}), DType::kBool, {3}, {0, 0, 1});
  expectInts(run1("aten.gt.Tensor", {&n, &m}), DType::kBool, {3}, {0, 0, 0});
  HostTensor col = I(DType::kI32, {2, 1}, {1, 2});
  HostTensor row = D({2}, {1.5, 0.5});
  expectInts(run1("aten.gt.Tensor", {&col, &row}), DType::kBool, {2, 2}, {0, 1, 1, 1});
}

TEST(PointwiseBinary, SymbolicShapeInference) {
  const auto& c = *ctx();
  ir::TensorType a{DType::kF32, {ir::SymExpr::symbol("s0"), 3}, std::nullopt};
  ir::TensorType b{DType::kI32, {3}, std::nullopt};
  ir::TensorType d{DType::kF32, {ir::SymExpr::symbol("s1")}, std::nullopt};
  const ir::OpDef* add = c.ops.find("aten.add.Tensor");
  ASSERT_NE(add, nullptr);
  auto attrs = ir::normalizeAttrs(add->schema, {}, "test");
  ASSERT_TRUE(attrs.isOk());
  auto r = ir::inferTypes(*add, {&a, &b}, *attrs, c.assumptions);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[s0, 3]");
  auto bad = ir::inferTypes(*add, {&d, &b}, *attrs, c.assumptions);
  expectError(bad.status(), {"do not broadcast", "s1"});
  ir::TensorType one{DType::kF64, {1, ir::SymExpr::symbol("s2")}, std::nullopt};
  auto r2 = ir::inferTypes(*add, {&a, &one}, *attrs, c.assumptions);
  expectError(r2.status(), {"not provably equal"});
  ir::TensorType e{DType::kF64, {ir::SymExpr::symbol("s0"), 1}, std::nullopt};
  auto r3 = ir::inferTypes(*add, {&e, &b}, *attrs, c.assumptions);
  ASSERT_TRUE(r3.isOk()) << r3.status().toString();
  EXPECT_EQ((*r3)[0].toString(), "f64[s0, 3]");
}

}  // namespace
}  // namespace plugsdk
