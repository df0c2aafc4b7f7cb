// Hand-computed tests of the norm, convolution and pooling backward ops (inference,
// reference kernels, bad-input errors).
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

// ---- native_layer_norm_backward ----------------------------------------------------------

TEST(BackwardLayerNorm, OneRowWithWeight) {
  // x = [0, 1, 5], mean 2, rstd 0.5 -> xhat = [-1, -0.5, 1.5]; g*w = [1, 2, 6]:
  // dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) = 0.5 * ([1, 2, 6] - 3 - xhat * 7/3).
  HostTensor g = F({1, 3}, {1, 2, 3});
  HostTensor x = F({1, 3}, {0, 1, 5});
  HostTensor mean = F({1, 1}, {2});
  HostTensor rstd = F({1, 1}, {0.5});
  HostTensor w = F({3}, {1, 1, 2});
  HostTensor b = F({3}, {0, 0, 0});
  auto r = run("aten.native_layer_norm_backward", {&g, &x, &mean, &rstd, &w, &b},
               {{"normalized_shape", al({3})}, {"output_mask", mask3()}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 3}, {1.0 / 6, 1.0 / 12, -0.25}, 1e-15);
  expectValues((*r)[1], {3}, {-1, -1, 4.5});
  expectValues((*r)[2], {3}, {1, 2, 3});
}

TEST(BackwardLayerNorm, NoWeightSumsParameterGradsOverRows) {
  HostTensor g = F({2, 2}, {1, 0, 2, 4});
  HostTensor x = F({2, 2}, {1, 3, 0, 2});
  HostTensor mean = F({2}, {2, 1});
  HostTensor rstd = F({2}, {1, 1});
  // Masked-off outputs are still computed (dgamma = sum g * xhat, dbeta = sum g).
  auto r = run("aten.native_layer_norm_backward", {&g, &x, &mean, &rstd, nullptr, nullptr},
               {{"normalized_shape", al({2})}, {"output_mask", al({1, 0, 0})}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  // Two elements per row: the normalized output is always (-1, 1), so dx = 0.
  expectValues((*r)[0], {2, 2}, {0, 0, 0, 0}, 1e-15);
  expectValues((*r)[1], {2}, {-1 - 2, 0 + 4});
  expectValues((*r)[2], {2}, {3, 4});
}

TEST(BackwardLayerNorm, EmptyRowsGiveZeroParameterGrads) {
  HostTensor g = F({0, 2}, {});
  HostTensor mean = F({0, 1}, {});
  HostTensor w = F({2}, {1, 1});
  auto r = run("aten.native_layer_norm_backward", {&g, &g, &mean, &mean, &w, &w},
               {{"normalized_shape", al({2})}, {"output_mask", mask3()}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {0, 2}, {});
  expectValues((*r)[1], {2}, {0, 0});
}

TEST(BackwardLayerNorm, InferenceAndErrors) {
  TensorType x = tt(DType::kF32, {sym("b"), sym("t"), 16});
  TensorType stat = tt(DType::kF32, {sym("b"), sym("t"), 1});
  TensorType w = tt(DType::kF32, {16});
  AttrMap a{{"normalized_shape", al({16})}, {"output_mask", mask3()}};
  auto r = infer("aten.native_layer_norm_backward", {&x, &x, &stat, &stat, &w, &w}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[b, t, 16]");
  EXPECT_EQ((*r)[1].toString(), "f32[16]");
  EXPECT_EQ((*r)[2].toString(), "f32[16]");
  TensorType w8 = tt(DType::kF32, {8});
  auto bad = infer("aten.native_layer_norm_backward", {&x, &x, &stat, &stat, &w8, nullptr}, a);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("weight f32[8] must have the normalized_shape"), std::string::npos)
      << bad.status().toString();
  TensorType stat2 = tt(DType::kF32, {sym("b"), 1, 1});
  auto badStat = infer("aten.native_layer_norm_backward", {&x, &x, &stat2, &stat, nullptr, nullptr}, a);
  ASSERT_FALSE(badStat.isOk());
  EXPECT_NE(badStat.status().message().find("mean element count"), std::string::npos) << badStat.status().toString();
  auto badNorm = infer("aten.native_layer_norm_backward", {&x, &x, &stat, &stat, nullptr, nullptr},
                       {{"normalized_shape", al({8})}, {"output_mask", mask3()}});
  ASSERT_FALSE(badNorm.isOk());
  EXPECT_NE(badNorm.status().message().find("normalized_shape[0]"), std::string::npos) << badNorm.status().toString();
  auto badMask = infer("aten.native_layer_norm_backward", {&x, &x, &stat, &stat, nullptr, nullptr},
                       {{"normalized_shape", al({16})}, {"output_mask", al({1, 1})}});
  ASSERT_FALSE(badMask.isOk());
  EXPECT_NE(badMask.status().message().find("output_mask"), std::string::npos) << badMask.status().toString();
}

// ---- native_batch_norm_backward ----------------------------------------------------------

TEST(BackwardBatchNorm, TrainAndEval) {
  // N = 3, C = 1: mean 3, invstd 0.5, w 2; sum(g) = 6, dotp = sum((x - 3) * g) = 5.
  HostTensor g = F({3, 1}, {1, 2, 3});
  HostTensor x = F({3, 1}, {1, 2, 6});
  HostTensor w = F({1}, {2});
  HostTensor m = F({1}, {3});
  HostTensor inv = F({1}, {0.5});
  HostTensor var = F({1}, {3});
  AttrMap a{{"train", ab(true)}, {"eps", af(1)}, {"output_mask", mask3()}};
  auto r = run("aten.native_batch_norm_backward", {&g, &x, &w, nullptr, nullptr, &m, &inv}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  // dx = (g - sum/N - (x - mean) * dotp * invstd^2 / N) * invstd * w.
  expectValues((*r)[0], {3, 1}, {-1.0 / 6, 5.0 / 12, -0.25}, 1e-15);
  expectValues((*r)[1], {1}, {2.5});
  expectValues((*r)[2], {1}, {6});
  // Eval: invstd = 1 / sqrt(running_var + eps) = 0.5, dx = g * invstd * w = g.
  a["train"] = ab(false);
  auto e = run("aten.native_batch_norm_backward", {&g, &x, &w, &m, &var, nullptr, nullptr}, a);
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  expectValues((*e)[0], {3, 1}, {1, 2, 3});
  expectValues((*e)[1], {1}, {2.5});
  expectValues((*e)[2], {1}, {6});
}

TEST(BackwardBatchNorm, SpatialChannelsWithoutWeight) {
  // [N=1, C=2, L=2]; channel 0 x = [0, 2] mean 1 invstd 1 g = [1, 1] -> dx = 0 (constant grad);
  // channel 1 x = [5, 5] mean 5 g = [3, -1] -> sum 2, dotp 0: dx = g - 1 = [2, -2].
  HostTensor g = F({1, 2, 2}, {1, 1, 3, -1});
  HostTensor x = F({1, 2, 2}, {0, 2, 5, 5});
  HostTensor m = F({2}, {1, 5});
  HostTensor inv = F({2}, {1, 1});
  auto r = run("aten.native_batch_norm_backward", {&g, &x, nullptr, nullptr, nullptr, &m, &inv},
               {{"train", ab(true)}, {"eps", af(1e-5)}, {"output_mask", mask3()}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 2, 2}, {0, 0, 2, -2});
  expectValues((*r)[1], {2}, {0, 0});
  expectValues((*r)[2], {2}, {2, 2});
}

TEST(BackwardBatchNorm, Errors) {
  HostTensor g = F({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor v3 = F({3}, {1, 1, 1});
  HostTensor v2 = F({2}, {1, 1});
  AttrMap a{{"train", ab(true)}, {"eps", af(1e-5)}, {"output_mask", mask3()}};
  expectError("aten.native_batch_norm_backward", {&g, &g, nullptr, &v3, &v3, nullptr, nullptr}, a,
              "needs save_mean and save_invstd");
  expectError("aten.native_batch_norm_backward", {&g, &g, &v2, nullptr, nullptr, &v3, &v3}, a, "weight size");
  a["train"] = ab(false);
  expectError("aten.native_batch_norm_backward", {&g, &g, nullptr, nullptr, nullptr, &v3, &v3}, a,
              "needs running_mean and running_var");
  HostTensor one = F({3}, {1, 2, 3});
  expectError("aten.native_batch_norm_backward", {&one, &one, nullptr, &v3, &v3, nullptr, nullptr}, a,
              "at least 2 dims");
}

// ---- convolution_backward ----------------------------------------------------------------

AttrMap convAttrs(std::vector<int64_t> stride, std::vector<int64_t> pad, std::vector<int64_t> dil, bool transposed,
                  std::vector<int64_t> outPad, int64_t groups) {
  return {{"bias_sizes", Attribute::none()},
          {"stride", al(stride)},
          {"padding", al(pad)},
          {"dilation", al(dil)},
          {"transposed", ab(transposed)},
          {"output_padding", al(outPad)},
          {"groups", ai(groups)},
          {"output_mask", mask3()}};
}

TEST(BackwardConvolution, OneDimensional) {
  // y[o] = x[o] * 1 + x[o + 1] * -1, g = [1, 10].
  HostTensor x = F({1, 1, 3}, {1, 2, 3});
  HostTensor w = F({1, 1, 2}, {1, -1});
  HostTensor g = F({1, 1, 2}, {1, 10});
  auto r = run("aten.convolution_backward", {&g, &x, &w}, convAttrs({1}, {0}, {1}, false, {0}, 1));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 1, 3}, {1, 9, -10});
  expectValues((*r)[1], {1, 1, 2}, {21, 32});
  expectValues((*r)[2], {1}, {11});
  // Stride 2, padding 1: o = 0 covers (pad, x0), o = 1 covers (x1, x2).
  auto s = run("aten.convolution_backward", {&g, &x, &w}, convAttrs({2}, {1}, {1}, false, {0}, 1));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  expectValues((*s)[0], {1, 1, 3}, {-1, 10, -10});
  expectValues((*s)[1], {1, 1, 2}, {20, 31});
  // Dilation 2 with a [1, 1, 3] input: one output, taps x0 and x2.
  HostTensor g1 = F({1, 1, 1}, {5});
  auto d = run("aten.convolution_backward", {&g1, &x, &w}, convAttrs({1}, {0}, {2}, false, {0}, 1));
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  expectValues((*d)[0], {1, 1, 3}, {5, 0, -5});
  expectValues((*d)[1], {1, 1, 2}, {5, 15});
}

TEST(BackwardConvolution, Transposed) {
  // y = conv_transpose(x = [1, 10], w = [1, -1]) = [1, 9, -10]; gy = [1, 2, 3].
  HostTensor x = F({1, 1, 2}, {1, 10});
  HostTensor w = F({1, 1, 2}, {1, -1});
  HostTensor gy = F({1, 1, 3}, {1, 2, 3});
  auto r = run("aten.convolution_backward", {&gy, &x, &w}, convAttrs({1}, {0}, {1}, true, {0}, 1));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 1, 2}, {-1, -1});
  expectValues((*r)[1], {1, 1, 2}, {21, 32});
  expectValues((*r)[2], {1}, {6});
}

TEST(BackwardConvolution, GroupsTwoDimensional) {
  // Two groups of 1x1 convolutions: y0 = 2 * x0, y1 = 3 * x1.
  HostTensor x = F({1, 2, 1, 2}, {1, 2, 3, 4});
  HostTensor w = F({2, 1, 1, 1}, {2, 3});
  HostTensor g = F({1, 2, 1, 2}, {1, 1, 1, -1});
  AttrMap a = convAttrs({1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 2);
  a["bias_sizes"] = al({2});
  auto r = run("aten.convolution_backward", {&g, &x, &w}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 2, 1, 2}, {2, 2, 3, -3});
  expectValues((*r)[1], {2, 1, 1, 1}, {3, -1});
  expectValues((*r)[2], {2}, {2, 0});
}

TEST(BackwardConvolution, SymbolicInferenceAndErrors) {
  TensorType x = tt(DType::kF32, {sym("n"), 3, sym("h"), sym("h")});
  TensorType w = tt(DType::kF32, {8, 3, 3, 3});
  SymExpr o = SymExpr::floorDiv(sym("h") - 1, 2) + 1;
  TensorType g = tt(DType::kF32, {sym("n"), 8, o, o});
  AttrMap a = convAttrs({2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1);
  auto r = infer("aten.convolution_backward", {&g, &x, &w}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[n, 3, h, h]");
  EXPECT_EQ((*r)[1].toString(), "f32[8, 3, 3, 3]");
  EXPECT_EQ((*r)[2].toString(), "f32[8]");
  TensorType gBad = tt(DType::kF32, {sym("n"), 8, sym("h"), o});
  auto bad = infer("aten.convolution_backward", {&gBad, &x, &w}, a);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("grad_output dim 2 and the convolution's output size"), std::string::npos)
      << bad.status().toString();
  auto badGroups =
      infer("aten.convolution_backward", {&g, &x, &w}, convAttrs({2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 3));
  ASSERT_FALSE(badGroups.isOk());
  EXPECT_NE(badGroups.status().message().find("weight dim 1 * groups and input channels"), std::string::npos)
      << badGroups.status().toString();
  auto badList = infer("aten.convolution_backward", {&g, &x, &w}, convAttrs({2}, {1, 1}, {1, 1}, false, {0, 0}, 1));
  ASSERT_FALSE(badList.isOk());
  EXPECT_NE(badList.status().message().find("stride must have 2 entries"), std::string::npos)
      << badList.status().toString();
  TensorType w64 = tt(DType::kF64, {8, 3, 3, 3});
  auto badType = infer("aten.convolution_backward", {&g, &x, &w64}, a);
  ASSERT_FALSE(badType.isOk());
  EXPECT_NE(badType.status().message().find("same dtype"), std::string::npos) << badType.status().toString();
}

// ---- pooling -----------------------------------------------------------------------------

AttrMap maxPoolAttrs(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, bool ceil = false) {
  return {
      {"kernel_size", al(k)}, {"stride", al(s)}, {"padding", al(p)}, {"dilation", al({1, 1})}, {"ceil_mode", ab(ceil)}};
}

TEST(BackwardPooling, MaxPoolScattersToIndicesAndAccumulates) {
  HostTensor self = F({1, 1, 2, 2}, {0, 0, 0, 0});
  HostTensor g = F({1, 1, 1, 1}, {5});
  HostTensor idx = I({1, 1, 1, 1}, {3});
  expectValues(run1("aten.max_pool2d_with_indices_backward", {&g, &self, &idx}, maxPoolAttrs({2, 2}, {2, 2}, {0, 0})),
               {1, 1, 2, 2}, {0, 0, 0, 5});
  // Overlapping windows (kernel 1x2, stride 1) both pick element 1: the gradients add up.
  HostTensor self3 = F({1, 1, 3}, {0, 0, 0});
  HostTensor g2 = F({1, 1, 2}, {1, 2});
  HostTensor idx2 = I({1, 1, 2}, {1, 1});
  expectValues(
      run1("aten.max_pool2d_with_indices_backward", {&g2, &self3, &idx2}, maxPoolAttrs({1, 2}, {1, 1}, {0, 0})),
      {1, 1, 3}, {0, 3, 0});
  HostTensor bad = I({1, 1, 2}, {1, 3});
  expectError("aten.max_pool2d_with_indices_backward", {&g2, &self3, &bad}, maxPoolAttrs({1, 2}, {1, 1}, {0, 0}),
              "index 3 at position 1 of indices is outside the input plane");
}

TEST(BackwardPooling, MaxPoolShapeChecks) {
  TensorType self = tt(DType::kF32, {sym("n"), 3, 7, 7});
  TensorType g = tt(DType::kF32, {sym("n"), 3, 4, 4});
  TensorType idx = tt(DType::kI64, {sym("n"), 3, 4, 4});
  // (7 + 2 - 3) / 2 + 1 = 4; ceil_mode gives 4 as well ((7 + 2 - 3 + 1) // 2 + 1 = 4).
  auto r = infer("aten.max_pool2d_with_indices_backward", {&g, &self, &idx}, maxPoolAttrs({3}, {2}, {1}, true));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[n, 3, 7, 7]");
  auto bad = infer("aten.max_pool2d_with_indices_backward", {&g, &self, &idx}, maxPoolAttrs({3}, {1}, {1}));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("grad_output dim 2 and the pooled output size"), std::string::npos)
      << bad.status().toString();
  auto pad = infer("aten.max_pool2d_with_indices_backward", {&g, &self, &idx}, maxPoolAttrs({3}, {2}, {2}));
  ASSERT_FALSE(pad.isOk());
  EXPECT_NE(pad.status().message().find("padding must be at most half"), std::string::npos) << pad.status().toString();
  TensorType idx32 = tt(DType::kI32, {sym("n"), 3, 4, 4});
  auto badIdx = infer("aten.max_pool2d_with_indices_backward", {&g, &self, &idx32}, maxPoolAttrs({3}, {2}, {1}));
  ASSERT_FALSE(badIdx.isOk());
  EXPECT_NE(badIdx.status().message().find("indices must be i64"), std::string::npos) << badIdx.status().toString();
  // Symbolic input size with ceil_mode (kernel 2, stride 2, padding 1): whether the last window
  // starts inside depends on the parity of h, so the correction cannot be decided.
  TensorType selfSym = tt(DType::kF32, {1, 3, sym("h"), 7});
  TensorType g1 = tt(DType::kF32, {1, 3, 4, 4});
  TensorType idx1 = tt(DType::kI64, {1, 3, 4, 4});
  auto undecided =
      infer("aten.max_pool2d_with_indices_backward", {&g1, &selfSym, &idx1}, maxPoolAttrs({2}, {2}, {1}, true));
  ASSERT_FALSE(undecided.isOk());
  EXPECT_NE(undecided.status().message().find("ceil_mode"), std::string::npos) << undecided.status().toString();
}

TEST(BackwardPooling, AvgPoolPaddingModes) {
  // 2x2 input, kernel 2, stride 2, padding 1: four windows, each holding one real element.
  HostTensor self = F({1, 1, 2, 2}, {0, 0, 0, 0});
  HostTensor g = F({1, 1, 2, 2}, {4, 8, 12, 16});
  AttrMap a{{"kernel_size", al({2, 2})}, {"stride", al({2, 2})},          {"padding", al({1, 1})},
            {"ceil_mode", ab(false)},    {"count_include_pad", ab(true)}, {"divisor_override", Attribute::none()}};
  expectValues(run1("aten.avg_pool2d_backward", {&g, &self}, a), {1, 1, 2, 2}, {1, 2, 3, 4});
  a["count_include_pad"] = ab(false);
  expectValues(run1("aten.avg_pool2d_backward", {&g, &self}, a), {1, 1, 2, 2}, {4, 8, 12, 16});
  a["divisor_override"] = ai(8);
  expectValues(run1("aten.avg_pool2d_backward", {&g, &self}, a), {1, 1, 2, 2}, {0.5, 1, 1.5, 2});
  // Overlapping windows, no padding, stride [] = kernel: 3x3 kernel over 3x3 spreads g / 9.
  HostTensor self3 = F({1, 3, 3}, std::vector<double>(9, 0));
  HostTensor g1 = F({1, 1, 1}, {9});
  AttrMap b{{"kernel_size", al({3})},
            {"stride", al({})},
            {"padding", al({0})},
            {"ceil_mode", ab(false)},
            {"count_include_pad", ab(true)}};
  expectValues(run1("aten.avg_pool2d_backward", {&g1, &self3}, b), {1, 3, 3}, std::vector<double>(9, 1));
  b["divisor_override"] = ai(0);
  expectError("aten.avg_pool2d_backward", {&g1, &self3}, b, "divisor_override must not be 0");
}

TEST(BackwardPooling, AdaptiveAvgPoolBins) {
  // Input height 3 into 2 bins: [0, 2) and [1, 3); g = [2, 4] -> [1, 1 + 2, 2].
  HostTensor self = F({1, 3, 1}, {0, 0, 0});
  HostTensor g = F({1, 2, 1}, {2, 4});
  expectValues(run1("aten._adaptive_avg_pool2d_backward", {&g, &self}), {1, 3, 1}, {1, 3, 2});
  HostTensor g4 = F({2, 2, 1}, {1, 1, 1, 1});
  expectError("aten._adaptive_avg_pool2d_backward", {&g4, &self}, {}, "grad_output dim 0 and self dim 0");
  HostTensor flat = F({3}, {0, 0, 0});
  expectError("aten._adaptive_avg_pool2d_backward", {&flat, &flat}, {}, "self must be 3-D");
}

// ---- _scaled_dot_product_flash_attention_for_cpu_backward --------------------------------

TEST(BackwardAttention, OneQueryTwoKeys) {
  // Equal scores: p = [0.5, 0.5], logsumexp = ln 2, out = 0.5 * 1 + 0.5 * 3 = 2; dO = 1:
  // D = 2, dP = [1, 3], dS = p * (dP - D) = [-0.5, 0.5]; dq = dS k = 0, dk = dS q, dv = p dO.
  HostTensor q = F({1, 1, 1, 1}, {1});
  HostTensor k = F({1, 1, 2, 1}, {0, 0});
  HostTensor v = F({1, 1, 2, 1}, {1, 3});
  HostTensor out = F({1, 1, 1, 1}, {2});
  HostTensor lse = F({1, 1, 1}, {std::log(2.0)});
  HostTensor go = F({1, 1, 1, 1}, {1});
  AttrMap a{{"dropout_p", af(0)}, {"is_causal", ab(false)}};
  auto r = run("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&go, &q, &k, &v, &out, &lse, nullptr}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 1, 1, 1}, {0}, 1e-15);
  expectValues((*r)[1], {1, 1, 2, 1}, {-0.5, 0.5}, 1e-15);
  expectValues((*r)[2], {1, 1, 2, 1}, {0.5, 0.5}, 1e-15);
  // Causal (top-left aligned: query 0 sees key 0 only), or the same through an additive -inf mask:
  // p = [1, 0], logsumexp 0, out = 1; D = 1, dS = [0, 0], dv = [1, 0].
  HostTensor out1 = F({1, 1, 1, 1}, {1});
  HostTensor lse0 = F({1, 1, 1}, {0});
  a["is_causal"] = ab(true);
  auto c =
      run("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&go, &q, &k, &v, &out1, &lse0, nullptr}, a);
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  expectValues((*c)[1], {1, 1, 2, 1}, {0, 0});
  expectValues((*c)[2], {1, 1, 2, 1}, {1, 0});
  HostTensor mask = F({1, 2}, {0, -kInf});
  a["is_causal"] = ab(false);
  auto m = run("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&go, &q, &k, &v, &out1, &lse0, &mask}, a);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  expectValues((*m)[2], {1, 1, 2, 1}, {1, 0});
  a["dropout_p"] = af(0.1);
  expectError("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&go, &q, &k, &v, &out1, &lse0, nullptr}, a,
              "dropout_p > 0 is not supported by the reference executor");
}

TEST(BackwardAttention, ShapeErrors) {
  TensorType q = tt(DType::kF32, {2, 4, sym("l"), 8});
  TensorType k = tt(DType::kF32, {2, 4, sym("s"), 8});
  TensorType o = tt(DType::kF32, {2, 4, sym("l"), 8});
  TensorType lse = tt(DType::kF32, {2, 4, sym("l")});
  AttrMap a{{"dropout_p", af(0)}, {"is_causal", ab(true)}};
  auto r = infer("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&o, &q, &k, &k, &o, &lse, nullptr}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[1].toString(), "f32[2, 4, s, 8]");
  TensorType k6 = tt(DType::kF32, {2, 4, sym("s"), 6});
  auto bad =
      infer("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&o, &q, &k6, &k, &o, &lse, nullptr}, a);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("key dim 3 and query dim 3"), std::string::npos) << bad.status().toString();
  TensorType mask = tt(DType::kF32, {3, sym("s")});
  auto badMask =
      infer("aten._scaled_dot_product_flash_attention_for_cpu_backward", {&o, &q, &k, &k, &o, &lse, &mask}, a);
  ASSERT_FALSE(badMask.isOk());
  EXPECT_NE(badMask.status().message().find("attn_mask f32[3, s] must broadcast"), std::string::npos)
      << badMask.status().toString();
}

// ---- sizes -------------------------------------------------------------------------------

TEST(BackwardSizes, LargeInputsAreLinearTime) {
  // 256 x 1024 inputs (and a ResNet-sized convolution) must run in well under a second each.
  const int64_t rows = 256, cols = 1024;
  std::vector<double> ones(static_cast<size_t>(rows * cols), 1.0);
  HostTensor g = F({rows, cols}, ones);
  HostTensor y = F({rows, cols}, std::vector<double>(ones.size(), 1.0 / cols));
  HostTensor sm = run1("aten._softmax_backward_data", {&g, &y}, {{"dim", ai(1)}, {"input_dtype", adt(DType::kF64)}});
  EXPECT_EQ(sm.getDouble(rows * cols - 1), 0.0);  // y * (g - sum(g * y)) = y * (1 - 1)
  HostTensor mean = F({rows, 1}, std::vector<double>(rows, 1.0));
  auto ln = run("aten.native_layer_norm_backward", {&g, &g, &mean, &mean, nullptr, nullptr},
                {{"normalized_shape", al({cols})}, {"output_mask", mask3()}});
  ASSERT_TRUE(ln.isOk()) << ln.status().toString();
  EXPECT_EQ((*ln)[2].getDouble(0), static_cast<double>(rows));
  HostTensor idx = I({rows * 4}, std::vector<int64_t>(rows * 4, 7));
  HostTensor ge = F({rows * 4, cols / 4}, ones);
  HostTensor emb = run1("aten.embedding_dense_backward", {&ge, &idx},
                        {{"num_weights", ai(50000)}, {"padding_idx", ai(-1)}, {"scale_grad_by_freq", ab(true)}});
  EXPECT_EQ(emb.getDouble(7 * (cols / 4)), 1.0);
  HostTensor x = F({1, 64, 28, 28}, std::vector<double>(64 * 28 * 28, 1.0));
  HostTensor w = F({64, 64, 3, 3}, std::vector<double>(64 * 64 * 9, 1.0));
  HostTensor gy = F({1, 64, 28, 28}, std::vector<double>(64 * 28 * 28, 1.0));
  auto c = run("aten.convolution_backward", {&gy, &x, &w}, convAttrs({1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  EXPECT_EQ((*c)[0].getDouble(28 + 1), 64.0 * 9);  // an interior input position sees all 9 taps of 64 channels
  EXPECT_EQ((*c)[2].getDouble(0), 28.0 * 28);
}

}  // namespace
}  // namespace plugsdk::optest
