// Tests for the creation ops (full, zeros, ones, empty, *_like, new_*, scalar_tensor,
// arange, linspace): dtype rules, values rounded to the dtype, lengths and bad arguments.
#include <cmath>
#include <limits>

#include "core/ops/shape_test_util.h"

namespace plugsdk::ops::testing {
namespace {

constexpr DType F16 = DType::kF16, F32 = DType::kF32, F64 = DType::kF64, I64 = DType::kI64, I32 = DType::kI32,
                U8 = DType::kU8, B = DType::kBool;

const double kInf = std::numeric_limits<double>::infinity();

double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

TEST(Creation, FullTakesItsDTypeFromTheValue) {
  expectValues(run1("aten.full", {}, {{"size", Al({2, 3})}, {"fill_value", Af(1.5)}}), F32, {2, 3},
               {1.5, 1.5, 1.5, 1.5, 1.5, 1.5});
  expectInts(run1("aten.full", {}, {{"size", Al({2})}, {"fill_value", A(3)}}), I64, {2}, {3, 3});
  expectInts(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", Ab(true)}}), B, {1}, {1});
  expectInts(run1("aten.full", {}, {{"size", Al({2})}, {"fill_value", Af(-3.7)}, {"dtype", Adt(I32)}}), I32, {2},
             {-3, -3});
  expectInts(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", A(-1)}, {"dtype", Adt(U8)}}), U8, {1}, {255});
  expectValues(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", Af(0.1)}}), F32, {1}, {f32(0.1)});
  expectValues(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", Af(0.1)}, {"dtype", Adt(F64)}}), F64, {1},
               {0.1});
  expectValues(run1("aten.full", {}, {{"size", Al({})}, {"fill_value", Af(-0.0)}}), F32, {}, {-0.0});
  expectValues(run1("aten.full", {}, {{"size", Al({0, 4})}, {"fill_value", A(1)}, {"dtype", Adt(F32)}}), F32, {0, 4},
               {});
  EXPECT_CONTAINS(runError("aten.full", {}, {{"size", Al({-1})}, {"fill_value", A(1)}}), "negative dimension -1");
  expectInts(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", Af(0.5)}, {"dtype", Adt(B)}}), B, {1}, {1});
  expectValues(run1("aten.full", {}, {{"size", Al({1})}, {"fill_value", Af(-kInf)}, {"dtype", Adt(F16)}}), F16, {1},
               {-kInf});
}

TEST(Creation, FillValuesMustFitTheDType) {
  auto fullError = [](const Attribute& v, DType t) {
    return runError("aten.full", {}, {{"size", Al({1})}, {"fill_value", v}, {"dtype", Adt(t)}});
  };
  EXPECT_CONTAINS(fullError(A(300), U8), "fill_value 300 cannot be converted to u8 without overflow");
  EXPECT_CONTAINS(fullError(A(-256), U8), "overflow");
  EXPECT_CONTAINS(fullError(Af(-0.5), U8), "overflow");
  EXPECT_CONTAINS(fullError(A(128), DType::kI8), "overflow");
  EXPECT_CONTAINS(fullError(Af(std::nan("")), I32), "cannot be converted to i32");
  EXPECT_CONTAINS(fullError(Af(kInf), I32), "overflow");
  EXPECT_CONTAINS(fullError(Af(1e19), I64), "overflow");
  EXPECT_CONTAINS(fullError(A(65520), F16), "cannot be converted to f16");
  EXPECT_CONTAINS(fullError(Af(1e39), F32), "overflow");
  HostTensor x = I(U8, {2}, {1, 2});
  EXPECT_CONTAINS(runError("aten.full_like", {&x}, {{"fill_value", A(300)}}), "overflow");
  EXPECT_CONTAINS(runError("aten.scalar_tensor", {}, {{"s", Af(1e6)}, {"dtype", Adt(F16)}}),
                  "cannot be converted to f16");
  EXPECT_CONTAINS(
      runError("aten.linspace", {}, {{"start", A(-200)}, {"end", A(3)}, {"steps", A(3)}, {"dtype", Adt(DType::kI8)}}),
      "start -200 cannot be converted to i8");

  auto r = infer("aten.full", {}, {{"size", Attribute::fromInts({S("s0"), SymExpr(2)})}, {"fill_value", A(1)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "i64[s0, 2]");
}

TEST(Creation, ZerosOnesEmptyAndLike) {
  expectValues(run1("aten.zeros", {}, {{"size", Al({2})}}), F32, {2}, {0, 0});
  expectInts(run1("aten.ones", {}, {{"size", Al({2})}, {"dtype", Adt(I32)}}), I32, {2}, {1, 1});
  expectValues(run1("aten.empty.memory_format", {}, {{"size", Al({1, 2})}}), F32, {1, 2}, {0, 0});
  HostTensor x = I(I32, {2}, {5, 6});
  expectInts(run1("aten.zeros_like", {&x}), I32, {2}, {0, 0});
  expectValues(run1("aten.ones_like", {&x}, {{"dtype", Adt(F16)}}), F16, {2}, {1, 1});
  expectInts(run1("aten.empty_like", {&x}), I32, {2}, {0, 0});
  expectInts(run1("aten.full_like", {&x}, {{"fill_value", Af(3.7)}}), I32, {2}, {3, 3});
  expectValues(run1("aten.full_like", {&x}, {{"fill_value", Af(3.7)}, {"dtype", Adt(F64)}}), F64, {2}, {3.7, 3.7});
  expectInts(run1("aten.new_zeros", {&x}, {{"size", Al({3})}}), I32, {3}, {0, 0, 0});
  expectInts(run1("aten.new_ones", {&x}, {{"size", Al({1})}}), I32, {1}, {1});
  expectInts(run1("aten.new_empty", {&x}, {{"size", Al({1})}, {"dtype", Adt(B)}}), B, {1}, {0});
  expectInts(run1("aten.new_full", {&x}, {{"size", Al({2})}, {"fill_value", Af(2.5)}}), I32, {2}, {2, 2});
  EXPECT_CONTAINS(runError("aten.zeros", {}, {{"size", Al({2, -3})}}), "negative dimension -3");
}

TEST(Creation, ScalarTensorDefaultsToFloat) {
  expectValues(run1("aten.scalar_tensor", {}, {{"s", A(3)}}), F32, {}, {3});
  expectValues(run1("aten.scalar_tensor", {}, {{"s", Ab(true)}}), F32, {}, {1});
  expectInts(run1("aten.scalar_tensor", {}, {{"s", Af(-2.5)}, {"dtype", Adt(I64)}}), I64, {}, {-2});
  expectValues(run1("aten.scalar_tensor", {}, {{"s", Af(std::numeric_limits<double>::infinity())}}), F32, {},
               {std::numeric_limits<double>::infinity()});
}

TEST(Creation, ArangeLengthsAndDTypes) {
  expectInts(run1("aten.arange", {}, {{"end", A(5)}}), I64, {5}, {0, 1, 2, 3, 4});
  expectValues(run1("aten.arange", {}, {{"end", Af(3.0)}}), F32, {3}, {0, 1, 2});
  expectInts(run1("aten.arange.start", {}, {{"start", A(-2)}, {"end", A(1)}}), I64, {3}, {-2, -1, 0});
  HostTensor t = run1("aten.arange.start_step", {}, {{"start", A(0)}, {"end", A(1)}, {"step", Af(0.1)}});
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{10}));
  EXPECT_EQ(t.dtype(), F32);
  EXPECT_EQ(t.getDouble(3), f32(0.1 * 3));
  EXPECT_EQ(t.getDouble(7), f32(0.7000000000000001));
  expectInts(run1("aten.arange.start_step", {}, {{"start", A(5)}, {"end", A(0)}, {"step", A(-2)}}), I64, {3},
             {5, 3, 1});
  expectInts(run1("aten.arange.start_step", {}, {{"start", A(-9)}, {"end", A(10)}, {"step", A(4)}}), I64, {5},
             {-9, -5, -1, 3, 7});
  expectInts(run1("aten.arange.start_step", {}, {{"start", A(5)}, {"end", A(5)}}), I64, {0}, {});
  expectValues(run1("aten.arange.start_step", {}, {{"start", A(1)}, {"end", Af(2.5)}, {"step", Af(0.5)}}), F32, {3},
               {1, 1.5, 2});
  // Integer outputs convert the bounds to int64 first (0.5, 5.5, 1.5 -> 0, 5, 1) ...
  expectInts(run1("aten.arange.start_step", {},
                  {{"start", Af(0.5)}, {"end", Af(5.5)}, {"step", Af(1.5)}, {"dtype", Adt(I64)}}),
             I64, {5}, {0, 1, 2, 3, 4});
  // ... but narrower integer types take their length from the double arithmetic, as PyTorch does.
  expectInts(run1("aten.arange.start_step", {},
                  {{"start", Af(0.5)}, {"end", Af(5.5)}, {"step", Af(1.5)}, {"dtype", Adt(I32)}}),
             I32, {4}, {0, 1, 2, 3});
  expectInts(run1("aten.arange.start_step", {},
                  {{"start", A(2147483640)}, {"end", A(2147483650)}, {"step", A(3)}, {"dtype", Adt(I32)}}),
             I32, {4}, {2147483640, 2147483643, 2147483646, -2147483647});
  expectInts(run1("aten.arange.start_step", {}, {{"start", Ab(false)}, {"end", Ab(true)}, {"step", Ab(true)}}), I64,
             {1}, {0});
}

TEST(Creation, ArangeErrors) {
  EXPECT_CONTAINS(runError("aten.arange.start_step", {}, {{"start", A(5)}, {"end", A(0)}, {"step", A(2)}}),
                  "inconsistent with step sign");
  EXPECT_CONTAINS(runError("aten.arange.start_step", {}, {{"start", A(0)}, {"end", A(5)}, {"step", A(0)}}),
                  "step must be nonzero");
  EXPECT_CONTAINS(
      runError("aten.arange.start_step", {}, {{"start", A(0)}, {"end", A(3)}, {"step", Af(0.5)}, {"dtype", Adt(I64)}}),
      "step must be nonzero");
  EXPECT_CONTAINS(runError("aten.arange", {}, {{"end", Af(std::numeric_limits<double>::quiet_NaN())}}),
                  "unsupported range");
  EXPECT_CONTAINS(runError("aten.arange", {}, {{"end", Af(std::numeric_limits<double>::infinity())}}),
                  "unsupported range");
  EXPECT_CONTAINS(runError("aten.arange", {}, {{"end", A(2)}, {"dtype", Adt(B)}}), "bool");
}

TEST(Creation, ArangeWithSymbolicEnd) {
  // The schema's Scalar type does not accept size expressions yet; the rule itself does.
  const ir::OpDef* def = context()->ops.find("aten.arange.start_step");
  ASSERT_NE(def, nullptr);
  AttrMap attrs = {{"start", A(0)}, {"end", Attribute::fromSym(S("s0"))}, {"step", A(2)}, {"dtype", Attribute::none()}};
  auto r = ir::inferTypes(*def, {}, attrs, context()->assumptions);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "i64[(s0+1)//2]");
  attrs["step"] = A(-1);
  EXPECT_FALSE(ir::inferTypes(*def, {}, attrs, context()->assumptions).isOk());
}

TEST(Creation, Linspace) {
  expectValues(run1("aten.linspace", {}, {{"start", A(0)}, {"end", A(1)}, {"steps", A(5)}}), F32, {5},
               {0, 0.25, 0.5, 0.75, 1});
  expectValues(run1("aten.linspace", {}, {{"start", A(0)}, {"end", A(1)}, {"steps", A(7)}, {"dtype", Adt(F64)}}), F64,
               {7}, {0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666667, 0.8333333333333334, 1.0});
  expectInts(run1("aten.linspace", {}, {{"start", A(0)}, {"end", A(10)}, {"steps", A(4)}, {"dtype", Adt(I64)}}), I64,
             {4}, {0, 3, 6, 10});
  expectInts(run1("aten.linspace", {}, {{"start", A(10)}, {"end", A(0)}, {"steps", A(4)}, {"dtype", Adt(I64)}}), I64,
             {4}, {10, 6, 3, 0});
  expectInts(run1("aten.linspace", {}, {{"start", A(-3)}, {"end", A(8)}, {"steps", A(7)}, {"dtype", Adt(I64)}}), I64,
             {7}, {-3, -1, 0, 2, 4, 6, 8});
  expectValues(run1("aten.linspace", {}, {{"start", A(3)}, {"end", A(8)}, {"steps", A(1)}}), F32, {1}, {3});
  expectValues(run1("aten.linspace", {}, {{"start", A(3)}, {"end", A(8)}, {"steps", A(0)}}), F32, {0}, {});
  EXPECT_CONTAINS(runError("aten.linspace", {}, {{"start", A(3)}, {"end", A(8)}, {"steps", A(-1)}}), "non-negative");
}

}  // namespace
}  // namespace plugsdk::ops::testing
