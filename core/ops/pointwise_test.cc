// Hand-computed tests of the unary pointwise ops, where, clamp, masked_fill, _to_copy, lerp and
// addcmul on the reference executor: dtypes, NaN / inf / -0.0, integer wrapping, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/ops/pointwise_test_util.h"

namespace plugsdk {
namespace {

using namespace testing_pw;  // NOLINT
const double kNaN = std::nan("");
const double kInf = INFINITY;

TEST(PointwiseUnary, AbsNegFloatEdgeCases) {
  HostTensor x = D({5}, {-0.0, -2.5, kNaN, -kInf, 3.0});
  expectDoubles(run1("aten.abs", {&x}), DType::kF64, {5}, {0.0, 2.5, kNaN, kInf, 3.0});
  expectDoubles(run1("aten.neg", {&x}), DType::kF64, {5}, {0.0, 2.5, kNaN, kInf, -3.0});
}

TEST(PointwiseUnary, AbsNegIntegersWrap) {
  HostTensor x = I(DType::kI32, {3}, {INT32_MIN, 5, -3});
  expectInts(run1("aten.abs", {&x}), DType::kI32, {3}, {INT32_MIN, 5, 3});
  expectInts(run1("aten.neg", {&x}), DType::kI32, {3}, {INT32_MIN, -5, 3});
  HostTensor u = I(DType::kU8, {2}, {1, 0});
  expectInts(run1("aten.neg", {&u}), DType::kU8, {2}, {255, 0});
  HostTensor big = I(DType::kI64, {1}, {INT64_MIN});
  expectInts(run1("aten.abs", {&big}), DType::kI64, {1}, {INT64_MIN});
}

TEST(PointwiseUnary, FloatMathPromotesIntegersToF32) {
  HostTensor x = I(DType::kI32, {2, 1}, {4, 9});
  expectDoubles(run1("aten.sqrt", {&x}), DType::kF32, {2, 1}, {2.0, 3.0});
  HostTensor b = B({2}, {1, 0});
  expectDoubles(run1("aten.exp", {&b}), DType::kF32, {2}, {std::exp(1.0), 1.0});
  HostTensor h = F(DType::kF16, {1}, {4.0});
  expectDoubles(run1("aten.rsqrt", {&h}), DType::kF16, {1}, {0.5});
}

TEST(PointwiseUnary, FloatMathSpecialValues) {
  HostTensor x = D({4}, {-0.0, 0.0, -1.0, kInf});
  expectDoubles(run1("aten.sqrt", {&x}), DType::kF64, {4}, {-0.0, 0.0, kNaN, kInf});
  expectDoubles(run1("aten.log", {&x}), DType::kF64, {4}, {-kInf, -kInf, kNaN, kInf});
  expectDoubles(run1("aten.reciprocal", {&x}), DType::kF64, {4}, {-kInf, kInf, -1.0, 0.0});
  expectDoubles(run1("aten.rsqrt", {&x}), DType::kF64, {4}, {-kInf, kInf, kNaN, 0.0});
  expectDoubles(run1("aten.log1p", {&x}), DType::kF64, {4}, {-0.0, 0.0, -kInf, kInf});
  expectDoubles(run1("aten.expm1", {&x}), DType::kF64, {4}, {-0.0, 0.0, std::expm1(-1.0), kInf});
  HostTensor s = D({3}, {0.0, -kInf, kInf});
  expectDoubles(run1("aten.sigmoid", {&s}), DType::kF64, {3}, {0.5, 0.0, 1.0});
  expectDoubles(run1("aten.tanh", {&s}), DType::kF64, {3}, {0.0, -1.0, 1.0});
  expectDoubles(run1("aten.erf", {&s}), DType::kF64, {3}, {0.0, -1.0, 1.0});
}

TEST(PointwiseUnary, RoundingOps) {
  HostTensor x = D({6}, {0.5, 1.5, 2.5, -0.5, -2.5, -0.0});
  expectDoubles(run1("aten.round", {&x}), DType::kF64, {6}, {0.0, 2.0, 2.0, -0.0, -2.0, -0.0});
  expectDoubles(run1("aten.floor", {&x}), DType::kF64, {6}, {0.0, 1.0, 2.0, -1.0, -3.0, -0.0});
  expectDoubles(run1("aten.ceil", {&x}), DType::kF64, {6}, {1.0, 2.0, 3.0, -0.0, -2.0, -0.0});
  expectDoubles(run1("aten.trunc", {&x}), DType::kF64, {6}, {0.0, 1.0, 2.0, -0.0, -2.0, -0.0});
  HostTensor i = I(DType::kI32, {2}, {-7, 7});
  expectInts(run1("aten.floor", {&i}), DType::kI32, {2}, {-7, 7});
  expectInts(run1("aten.round", {&i}), DType::kI32, {2}, {-7, 7});
}

TEST(PointwiseUnary, SignAndRelu) {
  HostTensor x = D({5}, {kNaN, -0.0, 3.0, -kInf, -2.0});
  expectDoubles(run1("aten.sign", {&x}), DType::kF64, {5}, {0.0, 0.0, 1.0, -1.0, -1.0});
  expectDoubles(run1("aten.relu", {&x}), DType::kF64, {5}, {kNaN, -0.0, 3.0, 0.0, 0.0});
  HostTensor i = I(DType::kI32, {3}, {-5, 0, 7});
  expectInts(run1("aten.sign", {&i}), DType::kI32, {3}, {-1, 0, 1});
  expectInts(run1("aten.relu", {&i}), DType::kI32, {3}, {0, 0, 7});
  HostTensor b = B({2}, {1, 0});
  expectInts(run1("aten.sign", {&b}), DType::kBool, {2}, {1, 0});
}

TEST(PointwiseUnary, Activations) {
  HostTensor x = D({4}, {-1.0, 2.5, kNaN, -kInf});
  expectNear(run1("aten.gelu", {&x}), DType::kF64, {4}, {-0.15865525393145702, 2.4844758366855597, kNaN, kNaN});
  expectNear(run1("aten.gelu", {&x}, {{"approximate", aS("tanh")}}), DType::kF64, {4},
             {-0.15880800939172324, 2.484915733910001, kNaN, kNaN});
  expectNear(run1("aten.silu", {&x}), DType::kF64, {4}, {-0.2689414213699951, 2.3103545499468914, kNaN, kNaN});
  HostTensor l = D({4}, {-2.0, 3.0, -0.0, kNaN});
  expectDoubles(run1("aten.leaky_relu", {&l}), DType::kF64, {4}, {-0.02, 3.0, -0.0, kNaN});
  expectDoubles(run1("aten.leaky_relu", {&l}, {{"negative_slope", aF(-0.0)}}), DType::kF64, {4}, {0.0, 3.0, 0.0, kNaN});
}

TEST(PointwiseUnary, Hardtanh) {
  HostTensor x = D({6}, {-2.0, -0.5, 0.5, 2.0, kNaN, -0.0});
  expectDoubles(run1("aten.hardtanh", {&x}), DType::kF64, {6}, {-1.0, -0.5, 0.5, 1.0, kNaN, -0.0});
  expectDoubles(run1("aten.hardtanh", {&x}, {{"min_val", aF(2.0)}, {"max_val", aF(1.0)}}), DType::kF64, {6},
                {1.0, 1.0, 1.0, 1.0, kNaN, 1.0});
  HostTensor i = I(DType::kI32, {3}, {-5, 5, 0});
  expectInts(run1("aten.hardtanh", {&i}, {{"min_val", aF(-1.5)}, {"max_val", aF(2.5)}}), DType::kI32, {3}, {-1, 2, 0});
}

TEST(PointwiseUnary, PredicatesAndBitwiseNot) {
  HostTensor x = D({4}, {0.0, -0.0, kNaN, -kInf});
  expectInts(run1("aten.logical_not", {&x}), DType::kBool, {4}, {1, 1, 0, 0});
  expectInts(run1("aten.isnan", {&x}), DType::kBool, {4}, {0, 0, 1, 0});
  expectInts(run1("aten.isinf", {&x}), DType::kBool, {4}, {0, 0, 0, 1});
  HostTensor i = I(DType::kI8, {2}, {5, -1});
  expectInts(run1("aten.bitwise_not", {&i}), DType::kI8, {2}, {-6, 0});
  expectInts(run1("aten.isinf", {&i}), DType::kBool, {2}, {0, 0});
  HostTensor u = I(DType::kU8, {1}, {5});
  expectInts(run1("aten.bitwise_not", {&u}), DType::kU8, {1}, {250});
  HostTensor b = B({2}, {1, 0});
  expectInts(run1("aten.bitwise_not", {&b}), DType::kBool, {2}, {0, 1});
}

TEST(PointwiseUnary, BadInputs) {
  HostTensor b = B({2}, {1, 0});
  HostTensor i = I(DType::kI32, {2}, {1, 2});
  HostTensor f = D({2}, {1, 2});
  HostTensor u = I(DType::kU8, {2}, {1, 2});
  HostTensor i8 = I(DType::kI8, {2}, {1, 2});
  expectError(runErr("aten.abs", {&b}), {"aten.abs", "bool"});
  expectError(runErr("aten.neg", {&b}), {"bool"});
  expectError(runErr("aten.relu", {&b}), {"bool"});
  expectError(runErr("aten.gelu", {&i}), {"floating-point", "i32"});
  expectError(runErr("aten.gelu", {&f}, {{"approximate", aS("erf")}}), {"approximate", "erf"});
  expectError(runErr("aten.silu", {&i}), {"floating-point"});
  expectError(runErr("aten.leaky_relu", {&i}), {"floating-point"});
  expectError(runErr("aten.bitwise_not", {&f}), {"integer or bool", "f64"});
  expectError(runErr("aten.hardtanh", {&u}), {"unsigned", "negative"});
  expectError(runErr("aten.hardtanh", {&i8}, {{"max_val", aI(300)}}), {"max_val", "300", "i8", "overflow"});
  expectError(runErr("aten.abs", {&f}, {{"alpha", aI(1)}}), {"unknown attribute 'alpha'"});
}

TEST(PointwiseWhere, BroadcastsAndPromotes) {
  HostTensor cond = B({2}, {1, 0});
  HostTensor self = I(DType::kI32, {2, 1}, {1, 2});
  HostTensor other = D({}, {0.5});
  // i32 dimensioned vs f64 zero-dim: the float category wins, as the zero-dim f64 dtype.
  expectDoubles(run1("aten.where.self", {&cond, &self, &other}), DType::kF64, {2, 2}, {1.0, 0.5, 2.0, 0.5});
  HostTensor f32 = F(DType::kF32, {2}, {1.5, 2.5});
  expectDoubles(run1("aten.where.self", {&cond, &self, &f32}), DType::kF32, {2, 2}, {1.0, 2.5, 2.0, 2.5});
  HostTensor u8cond = I(DType::kU8, {2}, {0, 7});
  expectInts(run1("aten.where.self", {&u8cond, &self, &self}), DType::kI32, {2, 2}, {1, 1, 2, 2});
  HostTensor fcond = D({2}, {1, 0});
  expectError(runErr("aten.where.self", {&fcond, &self, &f32}), {"condition", "bool"});
  HostTensor bad = D({3}, {1, 2, 3});
  expectError(runErr("aten.where.self", {&cond, &bad, &f32}), {"broadcast"});
}

TEST(PointwiseClamp, ScalarBounds) {
  HostTensor x = D({6}, {kNaN, -0.0, -5.0, 5.0, 1.0, kInf});
  expectDoubles(run1("aten.clamp", {&x}, {{"min", aF(-1.0)}, {"max", aF(2.0)}}), DType::kF64, {6},
                {kNaN, -0.0, -1.0, 2.0, 1.0, 2.0});
  expectDoubles(run1("aten.clamp", {&x}, {{"min", aF(3.0)}, {"max", aF(2.0)}}), DType::kF64, {6},
                {kNaN, 2.0, 2.0, 2.0, 2.0, 2.0});
  // A NaN bound gives NaN when both bounds are given; a single NaN bound compares false.
  expectDoubles(run1("aten.clamp", {&x}, {{"min", aF(kNaN)}, {"max", aF(1.0)}}), DType::kF64, {6},
                {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
  expectDoubles(run1("aten.clamp", {&x}, {{"min", aF(kNaN)}}), DType::kF64, {6}, {kNaN, -0.0, -5.0, 5.0, 1.0, kInf});
  expectDoubles(run1("aten.clamp", {&x}, {{"max", aF(kNaN)}}), DType::kF64, {6}, {kNaN, -0.0, -5.0, 5.0, 1.0, kInf});
  expectDoubles(run1("aten.clamp", {&x}, {{"min", aF(0.0)}}), DType::kF64, {6}, {kNaN, -0.0, 0.0, 5.0, 1.0, kInf});
  HostTensor i = I(DType::kI32, {2}, {1, 5});
  expectDoubles(run1("aten.clamp", {&i}, {{"min", aF(2.5)}}), DType::kF32, {2}, {2.5, 5.0});
  expectInts(run1("aten.clamp", {&i}, {{"max", aI(3)}}), DType::kI32, {2}, {1, 3});
  HostTensor u = I(DType::kU8, {2}, {1, 5});
  // -1 converts to u8 as 255 (PyTorch allows negative values to wrap into unsigned types).
  expectInts(run1("aten.clamp", {&u}, {{"min", aI(-1)}, {"max", aI(3)}}), DType::kU8, {2}, {3, 3});
  expectError(runErr("aten.clamp", {&x}), {"at least one of 'min' or 'max'"});
  expectError(runErr("aten.clamp", {&u}, {{"max", aI(300)}}), {"max", "300", "u8", "overflow"});
  HostTensor f = F(DType::kF32, {1}, {1.0});
  expectError(runErr("aten.clamp", {&f}, {{"min", aF(1e300)}}), {"min", "f32", "overflow"});
  HostTensor b = B({1}, {1});
  expectError(runErr("aten.clamp", {&b}, {{"min", aB(true)}}), {"bool"});
}

TEST(PointwiseClamp, TensorBounds) {
  HostTensor x = D({3}, {1.0, 5.0, kNaN});
  HostTensor lo = D({3}, {2.0, kNaN, 0.0});
  expectDoubles(run1("aten.clamp.Tensor", {&x, &lo, nullptr}), DType::kF64, {3}, {2.0, kNaN, kNaN});
  HostTensor x2 = I(DType::kI32, {2, 1}, {0, 10});
  HostTensor lo2 = I(DType::kI32, {3}, {1, 2, 3});
  HostTensor hi2 = F(DType::kF32, {}, {2.5});
  // i32 tensors with a zero-dim f32 bound: f32 result, [2, 3] broadcast.
  expectDoubles(run1("aten.clamp.Tensor", {&x2, &lo2, &hi2}), DType::kF32, {2, 3}, {1.0, 2.0, 2.5, 2.5, 2.5, 2.5});
  expectInts(run1("aten.clamp.Tensor", {&x2, nullptr, &lo2}), DType::kI32, {2, 3}, {0, 0, 0, 1, 2, 3});
  expectError(runErr("aten.clamp.Tensor", {&x, nullptr, nullptr}), {"at least one of 'min' or 'max'"});
}

TEST(PointwiseMaskedFill, ValuesCastsAndBroadcast) {
  HostTensor i = I(DType::kI32, {2}, {1, 2});
  HostTensor m = B({2}, {1, 0});
  expectInts(run1("aten.masked_fill.Scalar", {&i, &m}, {{"value", aF(2.7)}}), DType::kI32, {2}, {2, 2});
  HostTensor u = I(DType::kU8, {2}, {1, 2});
  expectInts(run1("aten.masked_fill.Scalar", {&u, &m}, {{"value", aI(-1)}}), DType::kU8, {2}, {255, 2});
  HostTensor f = D({2}, {1.0, 2.0});
  HostTensor col = B({2, 1}, {1, 0});
  expectDoubles(run1("aten.masked_fill.Scalar", {&f, &col}, {{"value", aF(kNaN)}}), DType::kF64, {2, 2},
                {kNaN, kNaN, 1.0, 2.0});
  HostTensor b = B({2}, {0, 0});
  expectInts(run1("aten.masked_fill.Scalar", {&b, &m}, {{"value", aI(5)}}), DType::kBool, {2}, {1, 0});
  HostTensor i8 = I(DType::kI8, {2}, {1, 2});
  expectError(runErr("aten.masked_fill.Scalar", {&i8, &m}, {{"value", aI(300)}}), {"value", "i8", "overflow"});
  expectError(runErr("aten.masked_fill.Scalar", {&i, &m}, {{"value", aF(kNaN)}}), {"value", "overflow"});
  HostTensor um = I(DType::kU8, {2}, {1, 0});
  expectError(runErr("aten.masked_fill.Scalar", {&i, &um}, {{"value", aI(1)}}), {"mask", "bool", "u8"});
}

TEST(PointwiseToCopy, FloatToIntegerCasts) {
  HostTensor x = D({6}, {1.7, -1.7, kNaN, 300.0, -129.0, 1e20});
  expectInts(run1("aten._to_copy", {&x}, {{"dtype", aT(DType::kI8)}}), DType::kI8, {6}, {1, -1, 0, 44, 127, 0});
  HostTensor y = D({3}, {2147483653.0, -3.0, kNaN});
  // i32 saturates to INT32_MIN out of range; u8 goes through int64 and wraps.
  expectInts(run1("aten._to_copy", {&y}, {{"dtype", aT(DType::kI32)}}), DType::kI32, {3}, {INT32_MIN, -3, INT32_MIN});
  expectInts(run1("aten._to_copy", {&y}, {{"dtype", aT(DType::kU8)}}), DType::kU8, {3}, {5, 253, 0});
  expectInts(run1("aten._to_copy", {&y}, {{"dtype", aT(DType::kI64)}}), DType::kI64, {3}, {2147483653, -3, INT64_MIN});
  HostTensor z = D({3}, {kNaN, -0.0, 0.25});
  expectInts(run1("aten._to_copy", {&z}, {{"dtype", aT(DType::kBool)}}), DType::kBool, {3}, {1, 0, 1});
}

TEST(PointwiseToCopy, FloatRoundingAndIntegerWrapping) {
  HostTensor x = D({4}, {65520.0, 0.1, 1.0001, -1e-8});
  expectDoubles(run1("aten._to_copy", {&x}, {{"dtype", aT(DType::kF16)}}), DType::kF16, {4},
                {kInf, 0.0999755859375, 1.0, -0.0});
  expectDoubles(run1("aten._to_copy", {&x}, {{"dtype", aT(DType::kBF16)}}), DType::kBF16, {4},
                {65536.0, 0.10009765625, 1.0, -1.0011717677116394e-08});
  HostTensor i = I(DType::kI64, {3}, {16777217, 300, -129});
  expectDoubles(run1("aten._to_copy", {&i}, {{"dtype", aT(DType::kF32)}}), DType::kF32, {3},
                {16777216.0, 300.0, -129.0});
  expectInts(run1("aten._to_copy", {&i}, {{"dtype", aT(DType::kI8)}}), DType::kI8, {3}, {1, 44, 127});
  HostTensor s = I(DType::kI16, {2}, {-3, 4});
  expectInts(run1("aten._to_copy", {&s}), DType::kI16, {2}, {-3, 4});
}

TEST(PointwiseLerp, BothFormulasAndErrors) {
  HostTensor a = D({4}, {1.0, 2.0, -kInf, 0.0});
  HostTensor b = D({4}, {3.0, -2.0, kInf, 1e308});
  expectDoubles(run1("aten.lerp.Scalar", {&a, &b}, {{"weight", aF(0.25)}}), DType::kF64, {4},
                {1.5, 1.0, kNaN, 2.5e307});
  expectDoubles(run1("aten.lerp.Scalar", {&a, &b}, {{"weight", aF(0.75)}}), DType::kF64, {4},
                {2.5, -1.0, kNaN, 7.5e307});
  HostTensor i = I(DType::kI32, {1}, {1});
  expectError(runErr("aten.lerp.Scalar", {&i, &i}, {{"weight", aF(0.5)}}), {"floating-point"});
  HostTensor f32 = F(DType::kF32, {4}, {1, 2, 3, 4});
  expectError(runErr("aten.lerp.Scalar", {&f32, &a}, {{"weight", aF(0.5)}}), {"end", "f32", "f64"});
}

TEST(PointwiseAddcmul, FloatIntAndErrors) {
  HostTensor a = D({2}, {1.0, 2.0}), b = D({2}, {3.0, 4.0}), c = D({2}, {5.0, 6.0});
  expectDoubles(run1("aten.addcmul", {&a, &b, &c}, {{"value", aF(0.5)}}), DType::kF64, {2}, {8.5, 14.0});
  HostTensor x = I(DType::kI32, {2}, {1, 2}), y = I(DType::kI32, {2}, {3, 4}), z = I(DType::kI32, {2, 1}, {5, 6});
  expectInts(run1("aten.addcmul", {&x, &y, &z}, {{"value", aI(2)}}), DType::kI32, {2, 2}, {31, 42, 37, 50});
  HostTensor t = B({1}, {1});
  expectError(runErr("aten.addcmul", {&t, &t, &t}), {"bool"});
}

TEST(PointwiseScalars, ConversionsAreChecked) {
  HostTensor f = F(DType::kF32, {1}, {1.0});
  HostTensor h = F(DType::kF16, {1}, {-1.0});
  HostTensor i = I(DType::kI32, {1}, {1});
  expectError(runErr("aten.lerp.Scalar", {&f, &f}, {{"weight", aF(1e39)}}), {"weight", "f32", "overflow"});
  expectError(runErr("aten.leaky_relu", {&f}, {{"negative_slope", aF(1e39)}}), {"negative_slope", "overflow"});
  // 16-bit floats compute in float32, so a slope beyond the f16 range is fine.
  expectDoubles(run1("aten.leaky_relu", {&h}, {{"negative_slope", aF(1e6)}}), DType::kF16, {1}, {-1e6});
  expectError(runErr("aten.addcmul", {&i, &i, &i}, {{"value", aI(int64_t{1} << 40)}}), {"value", "i32", "overflow"});
  expectError(runErr("aten.addcmul", {&i, &i, &i}, {{"value", aF(kNaN)}}), {"value", "overflow"});
}

TEST(PointwiseLarge, BroadcastGeluWhereOn256x1024) {
  std::vector<double> v(256 * 1024);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k % 7) - 3.0;
  HostTensor x = F(DType::kF32, {256, 1024}, v);
  HostTensor row = F(DType::kF32, {1024}, std::vector<double>(1024, 0.5));
  HostTensor y = run1("aten.add.Tensor", {&x, &row}, {{"alpha", aF(2.0)}});
  HostTensor g = run1("aten.gelu", {&y});
  HostTensor positive = run1("aten.gt.Scalar", {&x}, {{"other", aI(0)}});
  HostTensor w = run1("aten.where.self", {&positive, &x, &g});
  ASSERT_EQ(w.numel(), 256 * 1024);
  EXPECT_EQ(y.getDouble(1023), -1.0);  // (1023 % 7) - 3 = -2, + 2 * 0.5
  EXPECT_EQ(w.getDouble(4), 1.0);      // x = 1 > 0 keeps x
}

}  // namespace
}  // namespace plugsdk
