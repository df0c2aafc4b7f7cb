// Hand-computed tests of the reduction ops on the reference executor: dims and keepdim, dtype
// rules (integer sums in i64, dtype=), NaN propagation, first-occurrence indices, empty inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/context.h"
#include "core/ops/pointwise_test_util.h"

namespace plugsdk {
namespace {

using namespace testing_pw;  // NOLINT
const double kNaN = std::nan("");
const double kInf = INFINITY;

HostTensor iota23() { return D({2, 3}, {0, 1, 2, 3, 4, 5}); }

TEST(Reduction, SumDimsAndKeepdim) {
  HostTensor x = iota23();
  expectDoubles(run1("aten.sum.dim_IntList", {&x}, {{"dim", aL({1})}}), DType::kF64, {2}, {3, 12});
  expectDoubles(run1("aten.sum.dim_IntList", {&x}, {{"dim", aL({-2})}, {"keepdim", aB(true)}}), DType::kF64, {1, 3},
                {3, 5, 7});
  expectDoubles(run1("aten.sum.dim_IntList", {&x}), DType::kF64, {}, {15});
  expectDoubles(run1("aten.sum.dim_IntList", {&x}, {{"dim", aL({})}}), DType::kF64, {}, {15});
  expectDoubles(run1("aten.sum.dim_IntList", {&x}, {{"dim", aL({1, 0})}, {"keepdim", aB(true)}}), DType::kF64, {1, 1},
                {15});
  expectDoubles(run1("aten.sum", {&x}), DType::kF64, {}, {15});
  HostTensor s = D({}, {2.5});
  expectDoubles(run1("aten.sum.dim_IntList", {&s}, {{"dim", aL({0})}, {"keepdim", aB(true)}}), DType::kF64, {}, {2.5});
  HostTensor e = D({0, 3}, {});
  expectDoubles(run1("aten.sum.dim_IntList", {&e}, {{"dim", aL({0})}}), DType::kF64, {3}, {0, 0, 0});
  HostTensor n = D({3}, {1, kNaN, kInf});
  expectDoubles(run1("aten.sum", {&n}), DType::kF64, {}, {kNaN});
}

TEST(Reduction, SumDTypes) {
  HostTensor i = I(DType::kI32, {2}, {INT32_MAX, INT32_MAX});
  expectInts(run1("aten.sum.dim_IntList", {&i}, {{"dim", aL({0})}}), DType::kI64, {}, {4294967294});
  expectInts(run1("aten.sum.dim_IntList", {&i}, {{"dim", aL({0})}, {"dtype", aT(DType::kI32)}}), DType::kI32, {}, {-2});
  HostTensor i8 = I(DType::kI8, {3}, {100, 100, 100});
  expectInts(run1("aten.sum", {&i8}, {{"dtype", aT(DType::kI8)}}), DType::kI8, {}, {44});
  expectInts(run1("aten.sum", {&i8}), DType::kI64, {}, {300});
  HostTensor f = D({2}, {1.7, 300.0});
  expectInts(run1("aten.sum", {&f}, {{"dtype", aT(DType::kI8)}}), DType::kI8, {}, {45});  // cast first: 1 + 44
  HostTensor b = B({3}, {1, 1, 0});
  expectInts(run1("aten.sum", {&b}), DType::kI64, {}, {2});
  expectDoubles(run1("aten.sum", {&b}, {{"dtype", aT(DType::kF32)}}), DType::kF32, {}, {2.0});
}

TEST(Reduction, SumBadDims) {
  HostTensor x = iota23();
  expectError(runErr("aten.sum.dim_IntList", {&x}, {{"dim", aL({0, -2})}}), {"more than once"});
  expectError(runErr("aten.sum.dim_IntList", {&x}, {{"dim", aL({2})}}), {"dim 2 out of range", "rank 2"});
  expectError(runErr("aten.sum.dim_IntList", {&x}, {{"dim", aI(1)}}), {"dim", "int[]"});
  ir::TensorType sym{DType::kF32, {ir::SymExpr::symbol("s0"), 4}, std::nullopt};
  const ir::OpDef* def = ctx()->ops.find("aten.sum.dim_IntList");
  ASSERT_NE(def, nullptr);
  ir::AttrMap attrs{{"dim", Attribute::fromInts(std::vector<ir::SymExpr>{ir::SymExpr::symbol("s0")})}};
  // int[] (not SymInt[]) refuses size expressions when the attributes are checked.
  expectError(ir::normalizeAttrs(def->schema, attrs, "test").status(), {"dim", "plain integers"});
  // The inference rule refuses them too, should it ever be called unchecked.
  expectError(ir::inferTypes(*def, {&sym}, attrs, {}).status(), {"constant ints"});
}

TEST(Reduction, SymbolicShapes) {
  ir::TensorType x{DType::kI32, {ir::SymExpr::symbol("s0"), ir::SymExpr::symbol("s1"), 4}, std::nullopt};
  auto infer = [&](const std::string& op, const ir::AttrMap& attrs) {
    const ir::OpDef* def = ctx()->ops.find(op);
    EXPECT_NE(def, nullptr) << op;
    auto norm = ir::normalizeAttrs(def->schema, attrs, "test");
    EXPECT_TRUE(norm.isOk()) << norm.status().toString();
    auto r = ir::inferTypes(*def, {&x}, *norm, {});
    EXPECT_TRUE(r.isOk()) << r.status().toString();
    std::string s;
    for (const auto& t : *r) s += t.toString() + ";";
    return s;
  };
  EXPECT_EQ(infer("aten.sum.dim_IntList", {{"dim", aL({1})}, {"keepdim", aB(true)}}), "i64[s0, 1, 4];");
  EXPECT_EQ(infer("aten.amax", {{"dim", aL({0, 2})}}), "i32[s1];");
  EXPECT_EQ(infer("aten.max.dim", {{"dim", aI(-1)}}), "i32[s0, s1];i64[s0, s1];");
  EXPECT_EQ(infer("aten.argmax", {{"keepdim", aB(true)}}), "i64[1, 1, 1];");
  EXPECT_EQ(infer("aten.cumsum", {{"dim", aI(1)}}), "i64[s0, s1, 4];");
  EXPECT_EQ(infer("aten.logsumexp", {{"dim", aL({1})}}), "f32[s0, 4];");
}

TEST(Reduction, Mean) {
  HostTensor x = D({2, 2}, {1, 2, 3, 5});
  expectDoubles(run1("aten.mean.dim", {&x}, {{"dim", aL({-1, 0})}}), DType::kF64, {}, {2.75});
  expectDoubles(run1("aten.mean.dim", {&x}, {{"dim", aL({0})}, {"keepdim", aB(true)}}), DType::kF64, {1, 2},
                {2.0, 3.5});
  expectDoubles(run1("aten.mean", {&x}), DType::kF64, {}, {2.75});
  HostTensor i = I(DType::kI64, {2}, {1, 2});
  expectDoubles(run1("aten.mean.dim", {&i}, {{"dim", aL({0})}, {"dtype", aT(DType::kF32)}}), DType::kF32, {}, {1.5});
  expectError(runErr("aten.mean.dim", {&i}, {{"dim", aL({0})}}), {"floating-point", "i64"});
  expectError(runErr("aten.mean.dim", {&x}, {{"dim", aL({0})}, {"dtype", aT(DType::kI64)}}), {"dtype", "i64"});
  HostTensor e = D({0, 2}, {});
  expectDoubles(run1("aten.mean.dim", {&e}, {{"dim", aL({0})}}), DType::kF64, {2}, {kNaN, kNaN});
}

TEST(Reduction, Prod) {
  HostTensor i = I(DType::kI32, {3}, {1 << 20, 1 << 20, 3});
  expectInts(run1("aten.prod.dim_int", {&i}, {{"dim", aI(0)}}), DType::kI64, {}, {3298534883328});
  expectInts(run1("aten.prod.dim_int", {&i}, {{"dim", aI(0)}, {"dtype", aT(DType::kI32)}}), DType::kI32, {}, {0});
  HostTensor w = I(DType::kI64, {2}, {int64_t{1} << 40, int64_t{3} << 30});
  expectInts(run1("aten.prod", {&w}), DType::kI64, {}, {0});  // 3 * 2^70 wraps to 0 mod 2^64
  HostTensor x = iota23();
  expectDoubles(run1("aten.prod.dim_int", {&x}, {{"dim", aI(1)}, {"keepdim", aB(true)}}), DType::kF64, {2, 1}, {0, 60});
  HostTensor e = D({2, 0}, {});
  expectDoubles(run1("aten.prod.dim_int", {&e}, {{"dim", aI(1)}}), DType::kF64, {2}, {1, 1});
}

TEST(Reduction, AmaxAminPropagateNaN) {
  HostTensor x = D({2, 3}, {1, kNaN, 3, -kInf, -kInf, 2});
  expectDoubles(run1("aten.amax", {&x}, {{"dim", aL({1})}}), DType::kF64, {2}, {kNaN, 2});
  expectDoubles(run1("aten.amin", {&x}, {{"dim", aL({1})}}), DType::kF64, {2}, {kNaN, -kInf});
  expectDoubles(run1("aten.amax", {&x}, {{"dim", aL({0})}, {"keepdim", aB(true)}}), DType::kF64, {1, 3}, {1, kNaN, 3});
  expectDoubles(run1("aten.amax", {&x}), DType::kF64, {}, {kNaN});
  expectDoubles(run1("aten.max", {&x}), DType::kF64, {}, {kNaN});
  HostTensor z = D({2}, {-0.0, 0.0});
  expectDoubles(run1("aten.amax", {&z}), DType::kF64, {}, {-0.0});
  expectDoubles(run1("aten.amin", {&z}), DType::kF64, {}, {-0.0});
  HostTensor i = I(DType::kI32, {2, 2}, {-5, 7, 3, -9});
  expectInts(run1("aten.amin", {&i}, {{"dim", aL({0})}}), DType::kI32, {2}, {-5, -9});
  expectInts(run1("aten.min", {&i}), DType::kI32, {}, {-9});
  HostTensor e = D({0, 3}, {});
  expectType(run1("aten.amax", {&e}, {{"dim", aL({1})}}), DType::kF64, {0});
  expectError(runErr("aten.amax", {&e}, {{"dim", aL({0})}}), {"dim 0 of size 0"});
  expectError(runErr("aten.amax", {&e}), {"size 0"});
}

TEST(Reduction, MaxMinDimIndices) {
  HostTensor x = D({2, 3}, {1, kNaN, 3, -kInf, -kInf, 2});
  auto mx = runAll("aten.max.dim", {&x}, {{"dim", aI(1)}});
  ASSERT_EQ(mx.size(), 2u);
  expectDoubles(mx[0], DType::kF64, {2}, {kNaN, 2});
  expectInts(mx[1], DType::kI64, {2}, {1, 2});
  auto mn = runAll("aten.min.dim", {&x}, {{"dim", aI(-1)}, {"keepdim", aB(true)}});
  ASSERT_EQ(mn.size(), 2u);
  expectDoubles(mn[0], DType::kF64, {2, 1}, {kNaN, -kInf});
  expectInts(mn[1], DType::kI64, {2, 1}, {1, 0});
  HostTensor t = D({2, 3}, {1, 3, 3, kNaN, 3, kNaN});
  auto tm = runAll("aten.max.dim", {&t}, {{"dim", aI(1)}});
  ASSERT_EQ(tm.size(), 2u);
  expectInts(tm[1], DType::kI64, {2}, {1, 0});  // first max on ties, first NaN
  auto cols = runAll("aten.min.dim", {&t}, {{"dim", aI(0)}});
  ASSERT_EQ(cols.size(), 2u);
  expectDoubles(cols[0], DType::kF64, {3}, {kNaN, 3, kNaN});
  expectInts(cols[1], DType::kI64, {3}, {1, 0, 1});
  HostTensor b = B({3}, {0, 1, 1});
  auto bm = runAll("aten.max.dim", {&b}, {{"dim", aI(0)}});
  ASSERT_EQ(bm.size(), 2u);
  expectInts(bm[0], DType::kBool, {}, {1});
  expectInts(bm[1], DType::kI64, {}, {1});
  HostTensor s = D({}, {3.5});
  auto sm = runAll("aten.max.dim", {&s}, {{"dim", aI(0)}, {"keepdim", aB(true)}});
  ASSERT_EQ(sm.size(), 2u);
  expectDoubles(sm[0], DType::kF64, {}, {3.5});
  expectInts(sm[1], DType::kI64, {}, {0});
  HostTensor e = D({0, 3}, {});
  expectError(runErr("aten.max.dim", {&e}, {{"dim", aI(0)}}), {"size 0"});
  expectError(runErr("aten.max.dim", {&x}, {{"dim", aI(2)}}), {"dim 2 out of range"});
}

TEST(Reduction, ArgmaxArgmin) {
  HostTensor x = D({2, 2}, {1, 5, 7, 2});
  expectInts(run1("aten.argmax", {&x}), DType::kI64, {}, {2});
  expectInts(run1("aten.argmin", {&x}), DType::kI64, {}, {0});
  expectInts(run1("aten.argmax", {&x}, {{"keepdim", aB(true)}}), DType::kI64, {1, 1}, {2});
  expectInts(run1("aten.argmax", {&x}, {{"dim", aI(0)}}), DType::kI64, {2}, {1, 0});
  expectInts(run1("aten.argmin", {&x}, {{"dim", aI(1)}, {"keepdim", aB(true)}}), DType::kI64, {2, 1}, {0, 1});
  HostTensor t = D({2, 3}, {1, 3, 3, 2, kNaN, 2});
  expectInts(run1("aten.argmax", {&t}, {{"dim", aI(1)}}), DType::kI64, {2}, {1, 1});
  expectInts(run1("aten.argmin", {&t}, {{"dim", aI(1)}}), DType::kI64, {2}, {0, 1});
  HostTensor i = I(DType::kU8, {4}, {3, 9, 9, 1});
  expectInts(run1("aten.argmax", {&i}), DType::kI64, {}, {1});
  HostTensor b = B({2}, {0, 1});
  expectError(runErr("aten.argmax", {&b}), {"bool"});
  HostTensor e = D({0, 3}, {});
  expectError(runErr("aten.argmax", {&e}), {"size 0"});
  expectInts(run1("aten.argmax", {&e}, {{"dim", aI(1)}}), DType::kI64, {0}, {});
}

TEST(Reduction, VarStd) {
  HostTensor x = D({3}, {1, 2, 4});
  expectNear(run1("aten.var.correction", {&x}), DType::kF64, {}, {7.0 / 3.0});
  expectNear(run1("aten.var.correction", {&x}, {{"correction", aI(0)}}), DType::kF64, {}, {14.0 / 9.0});
  expectNear(run1("aten.var.correction", {&x}, {{"correction", aF(0.5)}}), DType::kF64, {}, {28.0 / 15.0});
  expectNear(run1("aten.std.correction", {&x}), DType::kF64, {}, {std::sqrt(7.0 / 3.0)});
  HostTensor m = D({2, 2}, {1, 3, 5, 9});
  expectDoubles(run1("aten.var.correction", {&m}, {{"dim", aL({1})}, {"keepdim", aB(true)}}), DType::kF64, {2, 1},
                {2, 8});
  expectDoubles(run1("aten.std.correction", {&m}, {{"dim", aL({0})}, {"correction", aI(0)}}), DType::kF64, {2}, {2, 3});
  HostTensor one = D({2, 1}, {1, 2});
  expectDoubles(run1("aten.var.correction", {&one}, {{"dim", aL({1})}}), DType::kF64, {2}, {kNaN, kNaN});
  HostTensor two = D({2}, {1, 2});
  expectDoubles(run1("aten.var.correction", {&two}, {{"correction", aI(3)}}), DType::kF64, {}, {kInf});
  HostTensor inf = D({2}, {1, kInf});
  expectDoubles(run1("aten.var.correction", {&inf}), DType::kF64, {}, {kNaN});
  HostTensor i = I(DType::kI32, {2}, {1, 2});
  expectError(runErr("aten.var.correction", {&i}), {"floating-point", "i32"});
}

TEST(Reduction, AnyAll) {
  HostTensor x = D({2, 2}, {0, kNaN, 0, -0.0});
  expectInts(run1("aten.any.dim", {&x}, {{"dim", aI(1)}}), DType::kBool, {2}, {1, 0});
  HostTensor y = D({2, 2}, {1, kNaN, 0, -0.0});
  expectInts(run1("aten.all.dim", {&y}, {{"dim", aI(1)}, {"keepdim", aB(true)}}), DType::kBool, {2, 1}, {1, 0});
  HostTensor u = I(DType::kU8, {2, 2}, {0, 3, 0, 0});
  expectInts(run1("aten.any.dim", {&u}, {{"dim", aI(1)}}), DType::kU8, {2}, {1, 0});
  expectInts(run1("aten.all", {&u}), DType::kU8, {}, {0});
  expectInts(run1("aten.any", {&y}), DType::kBool, {}, {1});
  HostTensor e = D({0, 2}, {});
  expectInts(run1("aten.any.dim", {&e}, {{"dim", aI(0)}}), DType::kBool, {2}, {0, 0});
  expectInts(run1("aten.all.dim", {&e}, {{"dim", aI(0)}}), DType::kBool, {2}, {1, 1});
}

TEST(Reduction, Cumsum) {
  HostTensor x = iota23();
  expectDoubles(run1("aten.cumsum", {&x}, {{"dim", aI(-1)}}), DType::kF64, {2, 3}, {0, 1, 3, 3, 7, 12});
  expectDoubles(run1("aten.cumsum", {&x}, {{"dim", aI(0)}}), DType::kF64, {2, 3}, {0, 1, 2, 3, 5, 7});
  HostTensor n = D({4}, {1, kNaN, 2, -kInf});
  expectDoubles(run1("aten.cumsum", {&n}, {{"dim", aI(0)}}), DType::kF64, {4}, {1, kNaN, kNaN, kNaN});
  HostTensor i8 = I(DType::kI8, {3}, {100, 100, 100});
  expectInts(run1("aten.cumsum", {&i8}, {{"dim", aI(0)}, {"dtype", aT(DType::kI8)}}), DType::kI8, {3}, {100, -56, 44});
  expectInts(run1("aten.cumsum", {&i8}, {{"dim", aI(0)}}), DType::kI64, {3}, {100, 200, 300});
  HostTensor f = D({2}, {1.7, 1.7});
  expectInts(run1("aten.cumsum", {&f}, {{"dim", aI(0)}, {"dtype", aT(DType::kI32)}}), DType::kI32, {2}, {1, 2});
  HostTensor s = D({}, {5});
  expectDoubles(run1("aten.cumsum", {&s}, {{"dim", aI(0)}}), DType::kF64, {}, {5});
  expectError(runErr("aten.cumsum", {&x}, {{"dim", aI(2)}}), {"out of range"});
}

TEST(Reduction, Logsumexp) {
  HostTensor x = D({2, 3}, {1, kNaN, 3, -kInf, -kInf, 2});
  expectDoubles(run1("aten.logsumexp", {&x}, {{"dim", aL({1})}}), DType::kF64, {2}, {kNaN, 2});
  HostTensor y = D({3, 2}, {-kInf, -kInf, kInf, 1, kInf, -kInf});
  expectDoubles(run1("aten.logsumexp", {&y}, {{"dim", aL({1})}}), DType::kF64, {3}, {-kInf, kInf, kInf});
  HostTensor i = I(DType::kI64, {1, 2}, {1, 2});
  expectNear(run1("aten.logsumexp", {&i}, {{"dim", aL({1})}, {"keepdim", aB(true)}}), DType::kF32, {1, 1},
             {2.3132616875182228});
  HostTensor big = D({2}, {1000, 1000});
  expectNear(run1("aten.logsumexp", {&big}, {{"dim", aL({0})}}), DType::kF64, {}, {1000 + std::log(2.0)});
  HostTensor e = D({0, 2}, {});
  expectDoubles(run1("aten.logsumexp", {&e}, {{"dim", aL({0})}}), DType::kF64, {2}, {-kInf, -kInf});
}

TEST(Reduction, LargeInputs256x1024) {
  std::vector<double> v(256 * 1024);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k % 5);
  HostTensor x = F(DType::kF32, {256, 1024}, v);
  HostTensor s = run1("aten.sum.dim_IntList", {&x}, {{"dim", aL({1})}});
  ASSERT_EQ(s.numel(), 256);
  EXPECT_EQ(s.getDouble(0), 2046.0);  // 1024 = 204 * 5 + 4: 204 * 10 + (0 + 1 + 2 + 3)
  HostTensor c = run1("aten.cumsum", {&x}, {{"dim", aI(0)}});
  // Column 1 holds (4 j + 1) % 5 = 1, 0, 4, 3, 2, ... : 51 periods of 10 plus a final 1.
  EXPECT_EQ(c.getDouble(255 * 1024 + 1), 511.0);
  HostTensor vr = run1("aten.var.correction", {&x}, {{"dim", aL({0, 1})}});
  EXPECT_EQ(vr.numel(), 1);
  auto mx = runAll("aten.max.dim", {&x}, {{"dim", aI(0)}});
  ASSERT_EQ(mx.size(), 2u);
  EXPECT_EQ(mx[0].getDouble(0), 4.0);
}

}  // namespace
}  // namespace plugsdk
