// Tests for scaled_dot_product_attention (masks, causal, broadcasting, GQA, fully masked rows), its
// CPU flash form (logsumexp), native_dropout (seeded mask) and the losses (nll_loss_forward, mse_loss, bce).
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

const char* kSdpa = "aten.scaled_dot_product_attention";

TEST(NNAttention, ScaleAndFloatMask) {
  // Scores [ln 3, 0] give weights [3/4, 1/4] over values [10, 20].
  HostTensor q = F({1, 1, 2}, {1, 0}), k = F({1, 2, 2}, {1, 0, 0, 1}), v = F({1, 2, 1}, {10, 20});
  expectValues(run1(kSdpa, {&q, &k, &v, nullptr}, {{"scale", af(std::log(3.0))}}), {1, 1, 1}, {12.5}, 1e-12);
  HostTensor q0 = F({1, 1, 2}, {0, 0}), m = F({1, 2}, {std::log(3.0), 0});
  expectValues(run1(kSdpa, {&q0, &k, &v, &m}), {1, 1, 1}, {12.5}, 1e-12);
}

TEST(NNAttention, DefaultScaleIsInverseSqrtOfEmbedDim) {
  HostTensor q = F({1, 4}, {1, 1, 1, 1}), k = F({2, 4}, {1, 1, 1, 1, 0, 0, 0, 0}), v = F({2, 1}, {1, 0});
  // Scores [4 / sqrt(4), 0] = [2, 0].
  expectValues(run1(kSdpa, {&q, &k, &v, nullptr}), {1, 1}, {std::exp(2.0) / (std::exp(2.0) + 1)}, 1e-15);
}

TEST(NNAttention, BoolMaskCausalAndFullyMaskedRows) {
  HostTensor q = F({2, 2}, {0, 0, 0, 0}), k = F({2, 2}, {1, 2, 3, 4}), v = F({2, 1}, {10, 20});
  HostTensor keepSecond = I({2}, {0, 1}, DType::kBool);
  expectValues(run1(kSdpa, {&q, &k, &v, &keepSecond}), {2, 1}, {20, 20});
  HostTensor rows = I({2, 2}, {0, 0, 1, 1}, DType::kBool);
  expectValues(run1(kSdpa, {&q, &k, &v, &rows}), {2, 1}, {0, 15});  // a fully masked row gives 0
  expectValues(run1(kSdpa, {&q, &k, &v, nullptr}, {{"is_causal", ab(true)}}), {2, 1}, {10, 15});
  HostTensor ninf = F({2, 2}, {-kInf, -kInf, 0, 0});
  expectValues(run1(kSdpa, {&q, &k, &v, &ninf}), {2, 1}, {0, 15});
}

TEST(NNAttention, BatchBroadcastAndGroupedQueryHeads) {
  HostTensor q = F({2, 1, 1, 2}, {0, 0, 0, 0}), k = F({1, 1, 2, 2}, {1, 2, 3, 4}), v = F({1, 1, 2, 1}, {10, 20});
  expectValues(run1(kSdpa, {&q, &k, &v, nullptr}), {2, 1, 1, 1}, {15, 15});
  HostTensor q4 = F({1, 4, 1, 2}, std::vector<double>(8, 0.0)), k2 = F({1, 2, 2, 2}, std::vector<double>(8, 1.0));
  HostTensor v2 = F({1, 2, 2, 1}, {10, 20, 2, 4});
  expectValues(run1(kSdpa, {&q4, &k2, &v2, nullptr}, {{"enable_gqa", ab(true)}}), {1, 4, 1, 1}, {15, 15, 3, 3});
  expectError(run(kSdpa, {&q4, &k2, &v2, nullptr}), {"do not broadcast"});
  HostTensor k3 = F({1, 3, 2, 2}, std::vector<double>(12, 1.0)), v3 = F({1, 3, 2, 1}, std::vector<double>(6, 1.0));
  expectError(run(kSdpa, {&q4, &k3, &v3, nullptr}, {{"enable_gqa", ab(true)}}), {"key heads (3)", "query heads (4)"});
}

TEST(NNAttention, SymbolicShapes) {
  TensorType q = tt(DType::kF32, {sym("b"), 12, sym("t"), 64}), k = tt(DType::kF32, {sym("b"), 12, sym("s"), 64});
  TensorType v = tt(DType::kF32, {sym("b"), 12, sym("s"), 32}), m = tt(DType::kBool, {sym("t"), sym("s")});
  auto r = infer(kSdpa, {&q, &k, &v, &m});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].shape, (ir::Shape{sym("b"), 12, sym("t"), 32}));
  TensorType bad = tt(DType::kBool, {sym("s"), sym("t")});
  expectError(infer(kSdpa, {&q, &k, &v, &bad}), {"attn_mask", "does not broadcast"});
}

TEST(NNAttention, Errors) {
  HostTensor q = F({1, 2, 4}, {}), k = F({1, 3, 4}, {}), v = F({1, 3, 5}, {}), k2 = F({1, 3, 2}, {});
  expectError(run(kSdpa, {&q, &k2, &v, nullptr}), {"embedding dims", "4 and 2"});
  HostTensor v2 = F({1, 2, 5}, {});
  expectError(run(kSdpa, {&q, &k, &v2, nullptr}), {"sequence lengths", "3 and 2"});
  HostTensor kf = F({1, 3, 4}, {}, DType::kF32);
  expectError(run(kSdpa, {&q, &kf, &v, nullptr}), {"same dtype"});
  HostTensor m = I({2, 3}, {}, DType::kBool), mi = I({2, 3}, {}, DType::kI64);
  expectError(run(kSdpa, {&q, &k, &v, &m}, {{"is_causal", ab(true)}}), {"is_causal"});
  expectError(run(kSdpa, {&q, &k, &v, &mi}), {"attn_mask must be bool"});
  HostTensor qi = I({2, 4}, {});
  expectError(run(kSdpa, {&qi, &qi, &qi, nullptr}), {"query must have a floating dtype"});
  auto d = run(kSdpa, {&q, &k, &v, nullptr}, {{"dropout_p", af(0.5)}});
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(d.status().message().find("unimplemented in the reference executor"), std::string::npos);
}

// ---- _scaled_dot_product_flash_attention_for_cpu ------------------------------------

const char* kFlash = "aten._scaled_dot_product_flash_attention_for_cpu";

TEST(NNFlashAttentionCpu, OutputAndLogsumexp) {
  // Scores [ln 3, 0]: weights [3/4, 1/4], logsumexp ln(3 + 1).
  HostTensor q = F({1, 1, 1, 2}, {1, 0}), k = F({1, 1, 2, 2}, {1, 0, 0, 1}), v = F({1, 1, 2, 2}, {10, 1, 20, 2});
  auto r = run(kFlash, {&q, &k, &v, nullptr}, {{"scale", af(std::log(3.0))}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].dtype(), DType::kF64);
  expectValues((*r)[0], {1, 1, 1, 2}, {12.5, 1.25}, 1e-14);
  expectValues((*r)[1], {1, 1, 1}, {std::log(4.0)}, 1e-15);
}

TEST(NNFlashAttentionCpu, CausalAndFullyMaskedRows) {
  HostTensor q = F({1, 1, 2, 1}, {0, 0}), k = F({1, 1, 2, 1}, {1, 2}), v = F({1, 1, 2, 1}, {10, 20});
  auto plain = run(kFlash, {&q, &k, &v, nullptr});
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
  expectValues((*plain)[0], {1, 1, 2, 1}, {15, 15});
  expectValues((*plain)[1], {1, 1, 2}, {std::log(2.0), std::log(2.0)});
  // Causal (top-left): row 0 sees key 0 only, so its logsumexp is log(exp(0)) = 0.
  auto causal = run(kFlash, {&q, &k, &v, nullptr}, {{"is_causal", ab(true)}});
  ASSERT_TRUE(causal.isOk()) << causal.status().toString();
  expectValues((*causal)[0], {1, 1, 2, 1}, {10, 15});
  expectValues((*causal)[1], {1, 1, 2}, {0, std::log(2.0)});
  // A fully masked row gives output 0 and logsumexp 0 (PyTorch sets max 0 and sum 1 there).
  HostTensor m = F({2, 2}, {-kInf, -kInf, std::log(3.0), 0});
  auto masked = run(kFlash, {&q, &k, &v, &m});
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  expectValues((*masked)[0], {1, 1, 2, 1}, {0, 12.5}, 1e-14);
  expectValues((*masked)[1], {1, 1, 2}, {0, std::log(4.0)}, 1e-15);
}

TEST(NNFlashAttentionCpu, FourDimMaskBroadcastsOverHeadsAndRows) {
  HostTensor q = F({2, 2, 1, 1}, std::vector<double>(4, 0.0)), k = F({2, 2, 2, 1}, std::vector<double>(8, 1.0));
  HostTensor v = F({2, 2, 2, 1}, {10, 20, 30, 40, 50, 60, 70, 80});
  HostTensor m = F({2, 1, 1, 2}, {0, -kInf, -kInf, 0}, DType::kF32);  // batch 0 keeps key 0, batch 1 key 1
  auto r = run(kFlash, {&q, &k, &v, &m});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {2, 2, 1, 1}, {10, 30, 60, 80});
  expectValues((*r)[1], {2, 2, 1}, {0, 0, 0, 0});
}

TEST(NNFlashAttentionCpu, OutputsFeedTheBackward) {
  // q = 0: weights [1/2, 1/2], out = 15. With grad 1: dv = [1/2, 1/2], dS = P * (v - out) =
  // [-2.5, 2.5], dq = scale * dS k = -2.5 + 5 = 2.5, dk = scale * dS^T q = 0.
  HostTensor q = F({1, 1, 1, 1}, {0}), k = F({1, 1, 2, 1}, {1, 2}), v = F({1, 1, 2, 1}, {10, 20});
  auto fw = run(kFlash, {&q, &k, &v, nullptr});
  ASSERT_TRUE(fw.isOk()) << fw.status().toString();
  HostTensor go = F({1, 1, 1, 1}, {1});
  auto bw = run("aten._scaled_dot_product_flash_attention_for_cpu_backward",
                {&go, &q, &k, &v, &(*fw)[0], &(*fw)[1], nullptr}, {{"dropout_p", af(0)}, {"is_causal", ab(false)}});
  ASSERT_TRUE(bw.isOk()) << bw.status().toString();
  expectValues((*bw)[0], {1, 1, 1, 1}, {2.5}, 1e-14);
  expectValues((*bw)[1], {1, 1, 2, 1}, {0, 0});
  expectValues((*bw)[2], {1, 1, 2, 1}, {0.5, 0.5}, 1e-15);
}

TEST(NNFlashAttentionCpu, TypesAndSymbolicShapes) {
  TensorType q = tt(DType::kF16, {sym("b"), 12, sym("t"), 64}), k = tt(DType::kF16, {sym("b"), 12, sym("s"), 64});
  TensorType m = tt(DType::kF32, {sym("t"), sym("s")});
  auto r = infer(kFlash, {&q, &k, &k, &m});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].dtype, DType::kF16);
  EXPECT_EQ((*r)[0].shape, (ir::Shape{sym("b"), 12, sym("t"), 64}));
  EXPECT_EQ((*r)[1].dtype, DType::kF32);  // logsumexp in the accumulation type
  EXPECT_EQ((*r)[1].shape, (ir::Shape{sym("b"), 12, sym("t")}));
  TensorType q64 = tt(DType::kF64, {2, 3, 4, 8}), k64 = tt(DType::kF64, {2, 3, 5, 8});
  auto d = infer(kFlash, {&q64, &k64, &k64, nullptr});
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ((*d)[1].dtype, DType::kF64);
  EXPECT_EQ((*d)[1].shape, (ir::Shape{2, 3, 4}));
  TensorType q32 = tt(DType::kF32, {2, 3, 4, 8}), k32 = tt(DType::kF32, {2, 3, 5, 8});
  auto f = infer(kFlash, {&q32, &k32, &k32, nullptr});
  ASSERT_TRUE(f.isOk()) << f.status().toString();
  EXPECT_EQ((*f)[1].dtype, DType::kF32);
  TensorType bad = tt(DType::kF32, {sym("s"), sym("t")});
  expectError(infer(kFlash, {&q, &k, &k, &bad}), {"attn_mask", "does not broadcast"});
}

TEST(NNFlashAttentionCpu, Errors) {
  HostTensor q = F({1, 2, 3, 4}, {}), k = F({1, 2, 5, 4}, {}), v = F({1, 2, 5, 4}, {});
  HostTensor q3 = F({2, 3, 4}, {});
  expectError(run(kFlash, {&q3, &q3, &q3, nullptr}), {"query must be 4-D [batch, heads, seq, head size]"});
  HostTensor v2 = F({1, 2, 5, 2}, {});
  expectError(run(kFlash, {&q, &k, &v2, nullptr}), {"value dim 3 and query dim 3 (the head size)", "2 and 4"});
  HostTensor k1 = F({1, 1, 5, 4}, {});
  expectError(run(kFlash, {&q, &k1, &v, nullptr}), {"key dim 1 and query dim 1 (the heads)", "1 and 2"});
  HostTensor v6 = F({1, 2, 6, 4}, {});
  expectError(run(kFlash, {&q, &k, &v6, nullptr}), {"value dim 2 and key dim 2 (the key length)", "6 and 5"});
  HostTensor kf = F({1, 2, 5, 4}, {}, DType::kF32);
  expectError(run(kFlash, {&q, &kf, &v, nullptr}),
              {"query and key must have the same dtype", "f64[1, 2, 3, 4] and f32[1, 2, 5, 4]"});
  HostTensor qi = I({1, 1, 1, 1}, {1});
  expectError(run(kFlash, {&qi, &qi, &qi, nullptr}), {"query must have a floating dtype"});
  HostTensor mb = I({3, 5}, {}, DType::kBool), mh = F({3, 5}, {}, DType::kF16);
  expectError(run(kFlash, {&q, &k, &v, &mb}), {"attn_mask must be f32 or have the query's dtype", "bool[3, 5]"});
  expectError(run(kFlash, {&q, &k, &v, &mh}), {"attn_mask must be f32 or have the query's dtype", "f16[3, 5]"});
  HostTensor m3 = F({1, 3, 5}, {});
  expectError(run(kFlash, {&q, &k, &v, &m3}), {"attn_mask must be 2-D or 4-D"});
  HostTensor m2 = F({2, 5}, {});
  expectError(run(kFlash, {&q, &k, &v, &m2}), {"attn_mask f64[2, 5] does not broadcast", "[1, 2, 3, 5]"});
  expectError(run(kFlash, {&q, &k, &v, nullptr}, {{"dropout_p", af(1.0)}}), {"dropout_p must be in [0, 1), got 1.0"});
  auto d = run(kFlash, {&q, &k, &v, nullptr}, {{"dropout_p", af(0.25)}});
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(d.status().message().find("dropout_p > 0 is unimplemented in the reference executor"), std::string::npos)
      << d.status().toString();
}

// ---- dropout ----------------------------------------------------------------------

const char* kDropout = "aten.native_dropout";

TEST(NNDropout, EvalAndZeroProbabilityAreIdentity) {
  HostTensor x = F({3}, {1, -0.0, kNaN});
  for (const AttrMap& a :
       {AttrMap{{"p", af(0.5)}, {"train", ab(false)}}, AttrMap{{"p", af(0.0)}, {"train", ab(true)}}}) {
    auto r = run(kDropout, {&x}, a);
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    expectValues((*r)[0], {3}, {1, -0.0, kNaN});
    EXPECT_EQ((*r)[1].dtype(), DType::kBool);
    expectInts((*r)[1], {3}, {1, 1, 1});
  }
}

TEST(NNDropout, ProbabilityOneDropsEverything) {
  HostTensor x = F({3}, {2, -3, kNaN});
  auto r = run(kDropout, {&x}, {{"p", af(1.0)}, {"train", Attribute::none()}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {3}, {0, -0.0, kNaN});  // x * 0 * 0, as PyTorch
  expectInts((*r)[1], {3}, {0, 0, 0});
}

TEST(NNDropout, SeededMaskIsDeterministicAndScaled) {
  HostTensor x = F({10000}, std::vector<double>(10000, 3.0));
  auto a = run(kDropout, {&x}, {{"p", af(0.75)}, {"train", ab(true)}});
  auto b = run(kDropout, {&x}, {{"p", af(0.75)}, {"train", ab(true)}, {"seed", ai(0)}});
  auto c = run(kDropout, {&x}, {{"p", af(0.75)}, {"train", ab(true)}, {"seed", ai(7)}});
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_EQ((*a)[1].ints(), (*b)[1].ints());
  EXPECT_NE((*a)[1].ints(), (*c)[1].ints());
  int64_t kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool k = (*a)[1].getInt(i) != 0;
    kept += k;
    EXPECT_EQ((*a)[0].getDouble(i), k ? 12.0 : 0.0);  // 3 / (1 - 0.75)
  }
  EXPECT_GT(kept, 2300);
  EXPECT_LT(kept, 2700);
}

TEST(NNDropout, Errors) {
  HostTensor x = F({2}, {}), i = I({2}, {});
  expectError(run(kDropout, {&x}, {{"p", af(1.5)}, {"train", ab(true)}}), {"p must be in [0, 1]"});
  expectError(run(kDropout, {&i}, {{"p", af(0.5)}, {"train", ab(true)}}), {"floating"});
}

// ---- losses -----------------------------------------------------------------------

const char* kNll = "aten.nll_loss_forward";
AttrMap nll(int64_t reduction, int64_t ignore = -100) {
  return {{"reduction", ai(reduction)}, {"ignore_index", ai(ignore)}};
}

TEST(NNLoss, NllLossReductions) {
  HostTensor x = F({2, 3}, {0.5, 0.25, 0.75, 0.5, -1, 2}), t = I({2}, {2, -100});
  auto none = run(kNll, {&x, &t, nullptr}, nll(0));
  ASSERT_TRUE(none.isOk()) << none.status().toString();
  expectValues((*none)[0], {2}, {-0.75, 0});
  expectValues((*none)[1], {}, {0});
  auto mean = run(kNll, {&x, &t, nullptr}, nll(1));
  ASSERT_TRUE(mean.isOk()) << mean.status().toString();
  expectValues((*mean)[0], {}, {-0.75});
  expectValues((*mean)[1], {}, {1});
  HostTensor w = F({3}, {1, 2, 3}), t2 = I({2}, {1, 0});
  expectValues(run1(kNll, {&x, &t2, &w}, nll(0)), {2}, {-0.5, -0.5});
  expectValues(run1(kNll, {&x, &t2, &w}, nll(1)), {}, {-1.0 / 3});
  expectValues(run1(kNll, {&x, &t2, &w}, nll(2)), {}, {-1});
  expectValues(run1(kNll, {&x, &t2, &w}, nll(2), 1), {}, {3});
}

TEST(NNLoss, NllLossIgnoredEmptyAndOneDim) {
  HostTensor x = F({2, 3}, {0.5, 0.25, 0.75, 0.5, -1, 2}), t = I({2}, {1, 1});
  expectValues(run1(kNll, {&x, &t, nullptr}, nll(1, 1)), {}, {kNaN});  // everything ignored: 0 / 0
  expectValues(run1(kNll, {&x, &t, nullptr}, nll(2, 1)), {}, {0});
  HostTensor e = F({0, 3}, {}), te = I({0}, {});
  expectValues(run1(kNll, {&e, &te, nullptr}, nll(1)), {}, {kNaN});
  expectValues(run1(kNll, {&e, &te, nullptr}, nll(0)), {0}, {});
  HostTensor x1 = F({3}, {0.5, 0.25, 0.75}), t1 = I({}, {1});
  expectValues(run1(kNll, {&x1, &t1, nullptr}, nll(0)), {}, {-0.25});
  HostTensor tu = I({2}, {1, 0}, DType::kU8);
  expectValues(run1(kNll, {&x, &tu, nullptr}, nll(1)), {}, {-0.375});
}

TEST(NNLoss, NllLossErrors) {
  HostTensor x = F({2, 3}, {}), bad = I({2}, {3, 0}), neg = I({2}, {-1, 0});
  expectError(run(kNll, {&x, &bad, nullptr}, nll(1)), {"Target 3 is out of bounds"});
  expectError(run(kNll, {&x, &neg, nullptr}, nll(0)), {"Target -1 is out of bounds"});
  HostTensor t32 = I({2}, {0, 0}, DType::kI32), t3 = I({3}, {}), w2 = F({2}, {}), x3 = F({2, 3, 4}, {});
  HostTensor t = I({2}, {0, 0});
  expectError(run(kNll, {&x, &t32, nullptr}, nll(1)), {"target must be i64"});
  expectError(run(kNll, {&x, &t3, nullptr}, nll(1)), {"batch sizes", "2 and 3"});
  expectError(run(kNll, {&x, &t, &w2}, nll(1)), {"weight size and classes"});
  expectError(run(kNll, {&x3, &t, nullptr}, nll(1)), {"1-D (C) or 2-D (N, C)"});
  expectError(run(kNll, {&x, &t, nullptr}, nll(3)), {"reduction must be 0 (none), 1 (mean) or 2 (sum)"});
}

TEST(NNLoss, MseLoss) {
  HostTensor a = F({2}, {1, 2}), b = F({2}, {0, kNaN});
  expectValues(run1("aten.mse_loss", {&a, &b}, {{"reduction", ai(0)}}), {2}, {1, kNaN});
  HostTensor m = F({2, 2}, {1, 2, 3, 4}), t = F({2}, {1, 0});
  expectValues(run1("aten.mse_loss", {&m, &t}), {}, {6});  // [0, 4, 4, 16] mean
  expectValues(run1("aten.mse_loss", {&m, &t}, {{"reduction", ai(2)}}), {}, {24});
  HostTensor e = F({0}, {});
  expectValues(run1("aten.mse_loss", {&e, &e}), {}, {kNaN});
  expectValues(run1("aten.mse_loss", {&e, &e}, {{"reduction", ai(2)}}), {}, {0});
  HostTensor li = I({2}, {1, 5}), f = F({2}, {0, 1}, DType::kF32);
  HostTensor r = run1("aten.mse_loss", {&li, &f}, {{"reduction", ai(0)}});
  EXPECT_EQ(r.dtype(), DType::kF32);
  expectValues(r, {2}, {1, 16});
  expectError(run("aten.mse_loss", {&li, &li}), {"floating"});
  HostTensor c = F({3}, {});
  expectError(run("aten.mse_loss", {&a, &c}), {"do not broadcast"});
}

TEST(NNLoss, BinaryCrossEntropy) {
  const char* op = "aten.binary_cross_entropy";
  HostTensor x = F({3}, {0, 1, 0.5}), t = F({3}, {1, 0, 0.25});
  expectValues(run1(op, {&x, &t, nullptr}, {{"reduction", ai(0)}}), {3}, {100, 100, std::log(2.0)}, 1e-15);
  HostTensor w = F({1}, {2});
  expectValues(run1(op, {&x, &t, &w}, {{"reduction", ai(2)}}), {}, {400 + 2 * std::log(2.0)}, 1e-12);
  expectValues(run1(op, {&x, &t, nullptr}), {}, {(200 + std::log(2.0)) / 3}, 1e-12);
  HostTensor big = F({1}, {1.5}), nan = F({1}, {kNaN}), one = F({1}, {1}), two = F({1}, {2}), half = F({1}, {0.5});
  expectError(run(op, {&big, &one, nullptr}), {"input should be between 0 and 1"});
  expectError(run(op, {&nan, &one, nullptr}), {"input should be between 0 and 1"});
  expectError(run(op, {&half, &two, nullptr}), {"target should be between 0 and 1"});
  HostTensor tf = F({3}, {}, DType::kF32);
  expectError(run(op, {&x, &tf, nullptr}), {"same dtype"});
}

}  // namespace
}  // namespace plugsdk::optest
