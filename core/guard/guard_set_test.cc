// Every guard kind fails with a message naming the input, the dim and the property, and a
// passing check binds the size symbols; stride classes as torch sees them.
#include "core/guard/guard_set.h"

#include <gtest/gtest.h>

namespace plugsdk::guard {
namespace {

using ir::DType;
using ir::SymExpr;

TensorSignature sig(DType dt, std::vector<int64_t> shape, std::vector<int64_t> strides = {}, std::string device = "cpu",
                    bool grad = false) {
  return TensorSignature{dt, std::move(shape), std::move(strides), std::move(device), grad};
}

// %x: f32[s0, 8] and %y: f32[s0, 2*s0+1] contiguous on cpu, s0 >= 2.
GuardSet twoInputs() {
  SymExpr s0 = SymExpr::symbol("s0");
  return GuardSet({{"x", DType::kF32, {s0, 8}, StrideClass::kContiguous, "cpu", false},
                   {"y", DType::kF32, {s0, s0 * 2 + 1}, StrideClass::kContiguous, "cpu", false}},
                  {{"s0", 2}});
}

void expectFails(const GuardSet& g, const std::vector<TensorSignature>& in, GuardKind kind, int input, int dim,
                 const std::string& part) {
  std::optional<GuardFailure> f = g.check(in);
  ASSERT_TRUE(f.has_value()) << "expected a " << guardKindName(kind) << " failure";
  EXPECT_EQ(f->kind, kind) << f->message;
  EXPECT_EQ(f->input, input) << f->message;
  EXPECT_EQ(f->dim, dim) << f->message;
  EXPECT_NE(f->message.find(part), std::string::npos) << f->message;
}

TEST(GuardSet, PassesAndBindsTheSymbols) {
  std::map<std::string, int64_t> b;
  EXPECT_FALSE(twoInputs().check({sig(DType::kF32, {5, 8}), sig(DType::kF32, {5, 11})}, &b).has_value());
  EXPECT_EQ(b, (std::map<std::string, int64_t>{{"s0", 5}}));
}

TEST(GuardSet, EveryKindFailsNamingWhatFailed) {
  GuardSet g = twoInputs();
  const auto ok = sig(DType::kF32, {5, 11});
  expectFails(g, {sig(DType::kF32, {5, 8})}, GuardKind::kArity, -1, -1, "1 inputs, guard wants 2");
  expectFails(g, {sig(DType::kF16, {5, 8}), ok}, GuardKind::kDType, 0, -1, "input %x: dtype f16, guard wants f32");
  expectFails(g, {sig(DType::kF32, {5, 8, 1}), ok}, GuardKind::kRank, 0, -1, "rank 3, guard wants 2");
  expectFails(g, {sig(DType::kF32, {5, 9}), ok}, GuardKind::kSize, 0, 1, "input %x dim 1: size 9, guard wants 8");
  expectFails(g, {sig(DType::kF32, {1, 8}), sig(DType::kF32, {1, 3})}, GuardKind::kSymbol, 0, 0, "s0 >= 2");
  expectFails(g, {sig(DType::kF32, {5, 8}), sig(DType::kF32, {6, 13})}, GuardKind::kSymbol, 1, 0,
              "guard wants s0 = 5 (bound by input %x dim 0)");
  expectFails(g, {sig(DType::kF32, {5, 8}), sig(DType::kF32, {5, 12})}, GuardKind::kSize, 1, 1,
              "size 12, guard wants 2*s0+1 = 11");
  expectFails(g, {sig(DType::kF32, {5, 8}, {1, 5}), ok}, GuardKind::kStrides, 0, -1,
              "strides are strided, guard wants contiguous");
  expectFails(g, {sig(DType::kF32, {5, 8}, {}, "accel:0"), ok}, GuardKind::kDevice, 0, -1,
              "on accel:0, guard wants cpu");
  expectFails(g, {sig(DType::kF32, {5, 8}, {}, "cpu", true), ok}, GuardKind::kRequiresGrad, 0, -1,
              "requires_grad true, guard wants false");
}

TEST(GuardSet, ExpressionWithAnUnboundSymbolFails) {
  SymExpr s1 = SymExpr::symbol("s1");
  GuardSet g({{"x", DType::kF32, {s1 + 1}, StrideClass::kContiguous, "cpu", false}});
  expectFails(g, {sig(DType::kF32, {4})}, GuardKind::kSymbol, 0, 0, "no input dim binds");
}

TEST(GuardSet, TextNamesEveryGuard) {
  EXPECT_EQ(twoInputs().toString(), "%x: f32[s0, 8] contiguous cpu\n%y: f32[s0, 2*s0+1] contiguous cpu\ns0 >= 2\n");
}

TEST(StrideClass, ClassifiesAsTorchDoes) {
  EXPECT_EQ(classifyStrides({2, 3}, {}), StrideClass::kContiguous);
  EXPECT_EQ(classifyStrides({2, 3}, {3, 1}), StrideClass::kContiguous);
  EXPECT_EQ(classifyStrides({2, 1, 3}, {3, 99, 1}), StrideClass::kContiguous) << "a size-1 dim's stride is free";
  EXPECT_EQ(classifyStrides({2, 3}, {1, 2}), StrideClass::kStrided) << "transposed";
  EXPECT_EQ(classifyStrides({2, 3}, {0, 1}), StrideClass::kStrided) << "expanded";
  EXPECT_EQ(classifyStrides({2, 3, 4, 5}, {60, 1, 15, 3}), StrideClass::kChannelsLast);
  EXPECT_EQ(classifyStrides({2, 3, 4, 5, 6}, {360, 1, 90, 18, 3}), StrideClass::kChannelsLast);
  EXPECT_EQ(classifyStrides({2, 3, 4}, {12, 1, 3}), StrideClass::kStrided) << "channels-last needs rank 4 or 5";
  EXPECT_EQ(classifyStrides({0, 3}, {7, 9}), StrideClass::kContiguous) << "an empty tensor";
  ir::Shape cl = channelsLastStrides({SymExpr::symbol("n"), 3, 4, 5});
  EXPECT_EQ(cl[0].toString(), "60");
  EXPECT_EQ(cl[1].toString(), "1");
  EXPECT_EQ(cl[2].toString(), "15");
  EXPECT_EQ(cl[3].toString(), "3");
}

}  // namespace
}  // namespace plugsdk::guard
