// Tests for convolution (1-3 spatial dims, stride, padding, dilation, groups, transposed,
// integers) and 2-d pooling: hand-computed values, symbolic output sizes, bad-input errors.
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

AttrMap conv(std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
             bool transposed = false, std::vector<int64_t> outPad = {0}, int64_t groups = 1) {
  return {{"stride", al(stride)},         {"padding", al(padding)},       {"dilation", al(dilation)},
          {"transposed", ab(transposed)}, {"output_padding", al(outPad)}, {"groups", ai(groups)}};
}
const char* kConv = "aten.convolution";

TEST(NNConv, Conv2dBasicWithBias) {
  HostTensor x = F({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), w = F({1, 1, 2, 2}, {1, 0, 0, 1}), b = F({1}, {10});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({1}, {0}, {1})), {1, 1, 2, 2}, {6, 8, 12, 14});
  expectValues(run1(kConv, {&x, &w, &b}, conv({1, 1}, {0, 0}, {1, 1})), {1, 1, 2, 2}, {16, 18, 22, 24});
}

TEST(NNConv, Conv2dStrideAndPadding) {
  HostTensor x = F({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), w = F({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({2}, {1}, {1})), {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(NNConv, Conv1dDilationAnd3d) {
  HostTensor x = F({1, 1, 5}, {1, 2, 3, 4, 5}), w = F({1, 1, 2}, {1, 1});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({1}, {0}, {2})), {1, 1, 3}, {4, 6, 8});
  HostTensor x3 = iota({1, 1, 2, 2, 2}), w3 = F({1, 1, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1});
  expectValues(run1(kConv, {&x3, &w3, nullptr}, conv({1}, {0}, {1})), {1, 1, 1, 1, 1}, {28});
}

TEST(NNConv, Groups) {
  HostTensor x = F({1, 2, 1, 1}, {3, 5}), w = F({2, 1, 1, 1}, {2, 10});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({1}, {0}, {1}, false, {0}, 2)), {1, 2, 1, 1}, {6, 50});
  // Two groups of two input channels, one output channel each.
  HostTensor x4 = F({1, 4, 1}, {1, 2, 3, 4}), w4 = F({2, 2, 1}, {1, 10, 100, 1000});
  expectValues(run1(kConv, {&x4, &w4, nullptr}, conv({1}, {0}, {1}, false, {0}, 2)), {1, 2, 1}, {21, 4300});
}

TEST(NNConv, Transposed) {
  HostTensor x = F({1, 1, 2}, {1, 2}), w = F({1, 1, 3}, {1, 1, 1});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({2}, {0}, {1}, true)), {1, 1, 5}, {1, 1, 3, 2, 2});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({2}, {1}, {1}, true)), {1, 1, 3}, {1, 3, 2});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({2}, {0}, {1}, true, {1})), {1, 1, 6}, {1, 1, 3, 2, 2, 0});
  HostTensor x2 = F({1, 2, 1}, {1, 2}), w2 = F({2, 1, 1}, {3, 4}), b2 = F({2}, {0.5, -0.5});
  expectValues(run1(kConv, {&x2, &w2, &b2}, conv({1}, {0}, {1}, true, {0}, 2)), {1, 2, 1}, {3.5, 7.5});
}

TEST(NNConv, IntegersWrapAndFloatBiasTruncates) {
  HostTensor x = I({1, 1, 1, 2}, {int64_t{1} << 62, int64_t{1} << 62}), w = I({1, 1, 1, 2}, {2, 2});
  expectInts(run1(kConv, {&x, &w, nullptr}, conv({1}, {0}, {1})), {1, 1, 1, 1}, {0});
  HostTensor x3 = I({1, 1, 1, 2}, {3, 3}), b = F({1}, {0.7});
  expectInts(run1(kConv, {&x3, &w, &b}, conv({1}, {0}, {1})), {1, 1, 1, 1}, {12});
  HostTensor xu = I({1, 1, 1, 2}, {3, 3}, DType::kU8), wu = I({1, 1, 1, 2}, {200, 200}, DType::kU8);
  expectInts(run1(kConv, {&xu, &wu, nullptr}, conv({1}, {0}, {1})), {1, 1, 1, 1}, {176});  // 1200 mod 256
}

TEST(NNConv, NonFiniteWeightTimesZeroPaddingIsNaN) {
  // As PyTorch (im2col): padded zeros are multiplied by the weight, so inf * 0 = NaN.
  HostTensor x = F({1, 1, 3}, {1, 1, 1}), w = F({1, 1, 2}, {1, kInf});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({1}, {1}, {1})), {1, 1, 4}, {kInf, kInf, kInf, kNaN});
}

TEST(NNConv, EmptyBatchAndChannels) {
  HostTensor x = F({0, 1, 3}, {}), w = F({2, 1, 2}, {1, 1, 1, 1});
  expectValues(run1(kConv, {&x, &w, nullptr}, conv({1}, {0}, {1})), {0, 2, 2}, {});
  HostTensor x0 = F({1, 0, 3}, {}), w0 = F({2, 0, 2}, {}), b = F({2}, {1, -2});
  expectValues(run1(kConv, {&x0, &w0, &b}, conv({1}, {0}, {1})), {1, 2, 2}, {1, 1, -2, -2});
}

TEST(NNConv, SymbolicOutputSize) {
  TensorType x = tt(DType::kF32, {sym("n"), 3, sym("h"), sym("w")}), w = tt(DType::kF32, {8, 3, 3, 3});
  auto r = infer(kConv, {&x, &w, nullptr}, conv({2}, {1}, {1}));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].shape,
            (ir::Shape{sym("n"), 8, SymExpr::floorDiv(sym("h") - 1, 2) + 1, SymExpr::floorDiv(sym("w") - 1, 2) + 1}));
  expectError(infer(kConv, {&x, &w, nullptr}, conv({2}, {1}, {1}, true, {1})),
              {"weight dim 0 of a transposed convolution", "3 and 8"});
  // Transposed: weight [Cin, Cout / groups, k...]: Cin 3 needs weight dim 0 = 3.
  TensorType wt = tt(DType::kF32, {3, 4, 3, 3});
  auto u = infer(kConv, {&x, &wt, nullptr}, conv({2}, {1}, {1}, true, {1}));
  ASSERT_TRUE(u.isOk()) << u.status().toString();
  EXPECT_EQ((*u)[0].shape, (ir::Shape{sym("n"), 4, sym("h") * 2, sym("w") * 2}));
}

TEST(NNConv, Errors) {
  HostTensor x = F({1, 3, 5, 5}, {}), w = F({2, 2, 3, 3}, {}), w3 = F({2, 3, 3, 3}, {});
  expectError(run(kConv, {&x, &w, nullptr}, conv({1}, {0}, {1})), {"input channels", "3 and 2"});
  HostTensor small = F({1, 3, 2, 2}, {});
  expectError(run(kConv, {&small, &w3, nullptr}, conv({1}, {0}, {1})), {"smaller than the dilated kernel"});
  HostTensor x2 = F({3, 5}, {});
  expectError(run(kConv, {&x2, &w3, nullptr}, conv({1}, {0}, {1})), {"3-D, 4-D or 5-D"});
  HostTensor x3 = F({3, 5, 5}, {});  // unbatched input is not accepted by aten.convolution
  expectError(run(kConv, {&x3, &w3, nullptr}, conv({1}, {0}, {1})), {"3-D weight for a 3-D input"});
  expectError(run(kConv, {&x, &w3, nullptr}, conv({1}, {-1}, {1})), {"negative padding"});
  expectError(run(kConv, {&x, &w3, nullptr}, conv({0}, {0}, {1})), {"stride", ">= 1"});
  expectError(run(kConv, {&x, &w3, nullptr}, conv({1, 1, 1}, {0}, {1})), {"stride", "list of 2 values"});
  HostTensor b = F({3}, {});
  expectError(run(kConv, {&x, &w3, &b}, conv({1}, {0}, {1})), {"bias", "output channels"});
  HostTensor x4 = F({1, 4, 3, 3}, {}), wg = F({3, 2, 2, 2}, {});
  expectError(run(kConv, {&x4, &wg, nullptr}, conv({1}, {0}, {1}, false, {0}, 2)), {"divisible by groups"});
  HostTensor xt = F({1, 4, 5, 5}, {}), wt = F({4, 3, 3, 3}, {});
  expectError(run(kConv, {&xt, &wt, nullptr}, conv({2}, {1}, {1}, true, {2}, 2)), {"output_padding must be smaller"});
  HostTensor one = F({1, 1, 1, 1}, {}), w1 = F({1, 1, 1, 1}, {});
  expectError(run(kConv, {&one, &w1, nullptr}, conv({1}, {1}, {1}, true)), {"output size", "too small"});
  HostTensor wf = F({2, 3, 3, 3}, {}, DType::kF32);
  expectError(run(kConv, {&x, &wf, nullptr}, conv({1}, {0}, {1})), {"same dtype"});
}

// ---- pooling ----------------------------------------------------------------------

const char* kMax = "aten.max_pool2d_with_indices";
const char* kAvg = "aten.avg_pool2d";
const char* kAdaptive = "aten._adaptive_avg_pool2d";

TEST(NNPool, MaxPoolValuesAndIndices) {
  HostTensor x = iota({1, 1, 4, 4});
  auto r = run(kMax, {&x}, {{"kernel_size", al({2, 2})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 1, 2, 2}, {5, 7, 13, 15});
  EXPECT_EQ((*r)[1].dtype(), DType::kI64);
  expectInts((*r)[1], {1, 1, 2, 2}, {5, 7, 13, 15});
}

TEST(NNPool, MaxPoolNaNWinsAndPaddingIndices) {
  HostTensor x = F({1, 2, 2}, {1, kNaN, kNaN, 5});
  auto r = run(kMax, {&x}, {{"kernel_size", al({2})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 1, 1}, {kNaN});
  expectInts((*r)[1], {1, 1, 1}, {2});  // the last NaN, as PyTorch's CPU kernel
  HostTensor m = F({1, 2, 2}, {-kInf, -kInf, -kInf, -kInf});
  auto p = run(kMax, {&m}, {{"kernel_size", al({2, 2})}, {"stride", al({1, 1})}, {"padding", al({1, 1})}});
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  expectValues((*p)[0], {1, 3, 3}, std::vector<double>(9, -kInf));
  expectInts((*p)[1], {1, 3, 3}, {0, 0, 1, 0, 0, 1, 2, 2, 3});  // the first in-bounds element of each window
}

TEST(NNPool, MaxPoolCeilModeAndDilation) {
  HostTensor x = iota({1, 5, 5});
  auto r = run(kMax, {&x}, {{"kernel_size", al({2, 2})}, {"stride", al({2, 2})}, {"ceil_mode", ab(true)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 3, 3}, {6, 8, 9, 16, 18, 19, 21, 23, 24});
  HostTensor y = F({1, 1, 5}, {1, 5, 2, 4, 3});
  auto d = run(kMax, {&y}, {{"kernel_size", al({1, 2})}, {"stride", al({1})}, {"dilation", al({1, 2})}});
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  expectValues((*d)[0], {1, 1, 3}, {2, 5, 3});
  expectInts((*d)[1], {1, 1, 3}, {2, 1, 4});
  HostTensor i = I({1, 1, 2}, {-7, -3}, DType::kI32);
  auto q = run(kMax, {&i}, {{"kernel_size", al({1, 2})}});
  ASSERT_TRUE(q.isOk()) << q.status().toString();
  EXPECT_EQ((*q)[0].dtype(), DType::kI32);
  expectInts((*q)[0], {1, 1, 1}, {-3});
}

TEST(NNPool, MaxPoolErrors) {
  HostTensor x = F({1, 4, 4}, {});
  expectError(run(kMax, {&x}, {{"kernel_size", al({2})}, {"padding", al({2})}}), {"pad should be at most half"});
  expectError(run(kMax, {&x}, {{"kernel_size", al({0})}}), {"kernel_size must be positive"});
  expectError(run(kMax, {&x}, {{"kernel_size", al({1})}, {"stride", al({0})}}), {"stride must be positive"});
  expectError(run(kMax, {&x}, {{"kernel_size", al({5})}}), {"too small"});
  expectError(run(kMax, {&x}, {{"kernel_size", al({1, 2, 3})}}), {"kernel_size", "two ints"});
  HostTensor x2 = F({4, 4}, {}), e = F({1, 0, 4}, {});
  expectError(run(kMax, {&x2}, {{"kernel_size", al({1})}}), {"3-D", "4-D"});
  expectError(run(kMax, {&e}, {{"kernel_size", al({1})}}), {"input dim 1 is empty"});
}

TEST(NNPool, PoolSymbolicOutputSize) {
  TensorType x = tt(DType::kF32, {sym("n"), 3, sym("h"), 8});
  auto r = infer(kMax, {&x}, {{"kernel_size", al({3})}, {"stride", al({2})}, {"padding", al({1})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].shape, (ir::Shape{sym("n"), 3, SymExpr::floorDiv(sym("h") - 1, 2) + 1, 4}));
  EXPECT_EQ((*r)[1].dtype, DType::kI64);
}

TEST(NNPool, AvgPoolPaddingModes) {
  HostTensor x = F({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  AttrMap a{{"kernel_size", al({2})}, {"stride", al({2})}, {"padding", al({1})}};
  expectValues(run1(kAvg, {&x}, a), {1, 2, 2}, {0.25, 1.25, 2.75, 7});
  a["count_include_pad"] = ab(false);
  expectValues(run1(kAvg, {&x}, a), {1, 2, 2}, {1, 2.5, 5.5, 7});
  a["divisor_override"] = ai(2);
  expectValues(run1(kAvg, {&x}, a), {1, 2, 2}, {0.5, 2.5, 5.5, 14});
}

TEST(NNPool, AvgPoolCeilModeCountsPaddingOnlyInsidePaddedInput) {
  HostTensor x = F({1, 4, 4}, std::vector<double>(16, 1.0));
  HostTensor r =
      run1(kAvg, {&x}, {{"kernel_size", al({3})}, {"stride", al({2})}, {"padding", al({1})}, {"ceil_mode", ab(true)}});
  expectValues(r, {1, 3, 3}, {4.0 / 9, 6.0 / 9, 3.0 / 9, 6.0 / 9, 1, 0.5, 3.0 / 9, 0.5, 0.25}, 1e-15);
}

TEST(NNPool, AvgPoolIntegerTruncatesAndErrors) {
  HostTensor x = I({1, 2, 2}, {1, 2, 3, 5}), n = I({1, 2, 2}, {-1, -2, -3, -5});
  expectInts(run1(kAvg, {&x}, {{"kernel_size", al({2})}}), {1, 1, 1}, {2});
  expectInts(run1(kAvg, {&n}, {{"kernel_size", al({2})}}), {1, 1, 1}, {-2});
  HostTensor i32 = I({1, 2, 2}, {1, 2, 3, 5}, DType::kI32), f = F({1, 2, 2}, {});
  expectError(run(kAvg, {&i32}, {{"kernel_size", al({2})}}), {"floating or i64"});
  expectError(run(kAvg, {&f}, {{"kernel_size", al({2})}, {"divisor_override", ai(0)}}), {"divisor_override"});
  expectError(run(kAvg, {&f}, {{"kernel_size", al({2})}, {"padding", al({2})}}), {"pad should be at most half"});
}

TEST(NNPool, AdaptiveAvgPoolBins) {
  HostTensor x = iota({1, 2, 5});
  expectValues(run1(kAdaptive, {&x}, {{"output_size", al({1, 3})}}), {1, 1, 3}, {3, 4.5, 6});
  // Growing: 2 -> 3 bins over [a, b] are [a], [a, b] mean, [b].
  HostTensor y = F({1, 1, 2}, {2, 4});
  expectValues(run1(kAdaptive, {&y}, {{"output_size", al({1, 3})}}), {1, 1, 3}, {2, 3, 4});
  expectValues(run1(kAdaptive, {&x}, {{"output_size", al({0, 3})}}), {1, 0, 3}, {});
  HostTensor e = F({1, 1, 0, 5}, {}), i = I({1, 2, 2}, {});
  expectError(run(kAdaptive, {&e}, {{"output_size", al({1, 1})}}), {"empty"});
  expectError(run(kAdaptive, {&i}, {{"output_size", al({1, 1})}}), {"floating"});
  expectError(run(kAdaptive, {&x}, {{"output_size", al({1, 2, 3})}}), {"output_size must have 2 elements"});
}

}  // namespace
}  // namespace plugsdk::optest
