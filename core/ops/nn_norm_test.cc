// Tests for _softmax / _log_softmax / _safe_softmax, layer norm, group norm and the batch-norm variants:
// hand-computed values (stability, NaN/inf rows, eps = 0), statistics outputs, errors.
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

const char* kSoftmax = "aten._softmax";
const char* kLogSoftmax = "aten._log_softmax";
AttrMap sm(int64_t dim, bool h2f = false) { return {{"dim", ai(dim)}, {"half_to_float", ab(h2f)}}; }

TEST(NNSoftmax, Values) {
  HostTensor x = F({3}, {1, 2, 3});
  const double s = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  expectValues(run1(kSoftmax, {&x}, sm(0)), {3}, {std::exp(-2.0) / s, std::exp(-1.0) / s, 1.0 / s}, 1e-15);
  expectValues(run1(kLogSoftmax, {&x}, sm(-1)), {3}, {-2 - std::log(s), -1 - std::log(s), -std::log(s)}, 1e-15);
  HostTensor z = F({2}, {0, 0});
  expectValues(run1(kSoftmax, {&z}, sm(0)), {2}, {0.5, 0.5});
  expectValues(run1(kLogSoftmax, {&z}, sm(0)), {2}, {-std::log(2.0), -std::log(2.0)});
}

TEST(NNSoftmax, StableForLargeInputs) {
  HostTensor x = F({2}, {1000, 1000}), y = F({2}, {1000, 0});
  expectValues(run1(kSoftmax, {&x}, sm(0)), {2}, {0.5, 0.5});
  expectValues(run1(kLogSoftmax, {&y}, sm(0)), {2}, {0, -1000});
}

TEST(NNSoftmax, NaNAndInfRows) {
  HostTensor allNegInf = F({2}, {-kInf, -kInf}), posInf = F({2}, {kInf, 1}), nan = F({2}, {kNaN, 1});
  HostTensor oneNegInf = F({2}, {-kInf, 0});
  expectValues(run1(kSoftmax, {&allNegInf}, sm(0)), {2}, {kNaN, kNaN});
  expectValues(run1(kSoftmax, {&posInf}, sm(0)), {2}, {kNaN, kNaN});
  expectValues(run1(kLogSoftmax, {&posInf}, sm(0)), {2}, {kNaN, kNaN});
  expectValues(run1(kSoftmax, {&nan}, sm(0)), {2}, {kNaN, kNaN});
  expectValues(run1(kSoftmax, {&oneNegInf}, sm(0)), {2}, {0, 1});
  expectValues(run1(kLogSoftmax, {&oneNegInf}, sm(0)), {2}, {-kInf, 0});
}

TEST(NNSoftmax, DimsRankZeroAndHalfToFloat) {
  HostTensor x = F({2, 2}, {0, 1, 0, 1});
  expectValues(run1(kSoftmax, {&x}, sm(-2)), {2, 2}, {0.5, 0.5, 0.5, 0.5});
  HostTensor s = F({}, {3});
  expectValues(run1(kSoftmax, {&s}, sm(0)), {}, {1});
  expectValues(run1(kLogSoftmax, {&s}, sm(-1)), {}, {0});
  HostTensor h = F({2}, {1, 1}, DType::kF16);
  HostTensor r = run1(kSoftmax, {&h}, sm(0, true));
  EXPECT_EQ(r.dtype(), DType::kF32);
  expectValues(r, {2}, {0.5, 0.5});
  HostTensor e = F({0, 3}, {});
  expectValues(run1(kSoftmax, {&e}, sm(1)), {0, 3}, {});
}

TEST(NNSoftmax, Errors) {
  HostTensor i = I({2}, {1, 2}), x = F({2, 2}, {});
  expectError(run(kSoftmax, {&i}, sm(0)), {"floating"});
  expectError(run(kSoftmax, {&x}, sm(2)), {"dim 2 out of range"});
  expectError(run(kLogSoftmax, {&x}, sm(0, true)), {"half_to_float", "f16"});
}

// ---- _safe_softmax -------------------------------------------------------------------

const char* kSafeSoftmax = "aten._safe_softmax";
AttrMap ssm(int64_t dim) { return {{"dim", ai(dim)}}; }
AttrMap ssm(int64_t dim, DType dt) { return {{"dim", ai(dim)}, {"dtype", adt(dt)}}; }

TEST(NNSafeSoftmax, FullyNegInfRowsGivePositiveZero) {
  HostTensor x = F({3, 3}, {-kInf, -kInf, -kInf, 0, -kInf, std::log(3.0), kNaN, -kInf, -kInf});
  // Row 1: weights [1, 0, 3] / 4; row 2 is not all -inf, so NaN propagates as in _softmax.
  expectValues(run1(kSafeSoftmax, {&x}, ssm(1)), {3, 3}, {0, 0, 0, 0.25, 0, 0.75, kNaN, kNaN, kNaN}, 1e-15);
  HostTensor cols = F({2, 2}, {-kInf, 0, -kInf, 0});
  expectValues(run1(kSafeSoftmax, {&cols}, ssm(0)), {2, 2}, {0, 0.5, 0, 0.5});
  HostTensor posInf = F({2}, {kInf, -kInf});
  expectValues(run1(kSafeSoftmax, {&posInf}, ssm(-1)), {2}, {kNaN, kNaN});
  HostTensor s = F({}, {-kInf}), five = F({}, {5});
  expectValues(run1(kSafeSoftmax, {&s}, ssm(0)), {}, {0});
  expectValues(run1(kSafeSoftmax, {&five}, ssm(-1)), {}, {1});
  HostTensor e = F({3, 0}, {});
  expectValues(run1(kSafeSoftmax, {&e}, ssm(1)), {3, 0}, {});
}

TEST(NNSafeSoftmax, DtypeConvertsTheInputFirst) {
  HostTensor i = I({2}, {7, 7});
  HostTensor r = run1(kSafeSoftmax, {&i}, ssm(0, DType::kF64));
  EXPECT_EQ(r.dtype(), DType::kF64);
  expectValues(r, {2}, {0.5, 0.5});
  // -1e300 becomes -inf in f32, so softmax gives NaN; the row is not all -inf before the
  // conversion, so it is not zeroed (PyTorch checks self, not the converted input).
  HostTensor big = F({2}, {-1e300, -1e300});
  HostTensor f = run1(kSafeSoftmax, {&big}, ssm(0, DType::kF32));
  EXPECT_EQ(f.dtype(), DType::kF32);
  expectValues(f, {2}, {kNaN, kNaN});
  expectValues(run1(kSafeSoftmax, {&big}, ssm(0)), {2}, {0.5, 0.5});
  TensorType h = tt(DType::kF16, {sym("n"), 4});
  auto t = infer(kSafeSoftmax, {&h}, ssm(1, DType::kF32));
  ASSERT_TRUE(t.isOk()) << t.status().toString();
  EXPECT_EQ((*t)[0].dtype, DType::kF32);
  EXPECT_EQ((*t)[0].shape, (ir::Shape{sym("n"), 4}));
  auto same = infer(kSafeSoftmax, {&h}, ssm(0));
  ASSERT_TRUE(same.isOk()) << same.status().toString();
  EXPECT_EQ((*same)[0].dtype, DType::kF16);
}

TEST(NNSafeSoftmax, Errors) {
  HostTensor i = I({2}, {1, 2}), x = F({2, 2}, {});
  expectError(run(kSafeSoftmax, {&i}, ssm(0)), {"self (with dtype none) must have a floating dtype", "i64[2]"});
  expectError(run(kSafeSoftmax, {&x}, ssm(0, DType::kI64)), {"dtype must be floating, got i64"});
  expectError(run(kSafeSoftmax, {&x}, ssm(2)), {"dim 2 out of range"});
  HostTensor s = F({}, {1});
  expectError(run(kSafeSoftmax, {&s}, ssm(1)), {"dim 1 out of range"});
}

// ---- layer norm and group norm ----------------------------------------------------

const char* kLayerNorm = "aten.native_layer_norm";
const char* kGroupNorm = "aten.native_group_norm";

TEST(NNLayerNorm, ValuesAndStatistics) {
  HostTensor x = F({2, 2}, {1, 3, 2, 2});
  auto r = run(kLayerNorm, {&x, nullptr, nullptr}, {{"normalized_shape", al({2})}, {"eps", af(0)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {2, 2}, {-1, 1, kNaN, kNaN});  // a constant row with eps 0: 0 * inf
  expectValues((*r)[1], {2, 1}, {2, 2});
  expectValues((*r)[2], {2, 1}, {1, kInf});
  HostTensor w = F({2}, {2, 1}), b = F({2}, {0.5, 0});
  auto a = run(kLayerNorm, {&x, &w, &b}, {{"normalized_shape", al({2})}, {"eps", af(0)}});
  ASSERT_TRUE(a.isOk()) << a.status().toString();
  expectValues((*a)[0], {2, 2}, {-1.5, 1, kNaN, kNaN});
}

TEST(NNLayerNorm, SeveralNormalizedDims) {
  HostTensor x = F({1, 2, 2}, {1, 2, 3, 4});
  auto r = run(kLayerNorm, {&x, nullptr, nullptr}, {{"normalized_shape", al({2, 2})}, {"eps", af(0.75)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  const double k = 1 / std::sqrt(2.0);
  expectValues((*r)[0], {1, 2, 2}, {-1.5 * k, -0.5 * k, 0.5 * k, 1.5 * k}, 1e-15);
  expectValues((*r)[1], {1, 1, 1}, {2.5});
  expectValues((*r)[2], {1, 1, 1}, {k}, 1e-15);
}

TEST(NNLayerNorm, SymbolicAndErrors) {
  TensorType x = tt(DType::kBF16, {sym("b"), sym("t"), 8}), w = tt(DType::kF32, {8});
  auto r = infer(kLayerNorm, {&x, &w, &w}, {{"normalized_shape", al({8})}, {"eps", af(1e-5)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].dtype, DType::kBF16);
  EXPECT_EQ((*r)[1].dtype, DType::kF32);  // mixed precision: statistics in f32
  EXPECT_EQ((*r)[1].shape, (ir::Shape{sym("b"), sym("t"), 1}));
  HostTensor y = F({2, 3}, {}), w2 = F({2}, {}), wf = F({3}, {}, DType::kF32);
  expectError(run(kLayerNorm, {&y, nullptr, nullptr}, {{"normalized_shape", al({2})}, {"eps", af(0)}}),
              {"input dim 1 and normalized_shape[0]", "3 and 2"});
  expectError(run(kLayerNorm, {&y, &w2, nullptr}, {{"normalized_shape", al({3})}, {"eps", af(0)}}),
              {"weight dim 0 and normalized_shape"});
  expectError(run(kLayerNorm, {&y, nullptr, nullptr}, {{"normalized_shape", al({})}, {"eps", af(0)}}),
              {"at least one element"});
  expectError(run(kLayerNorm, {&y, &wf, nullptr}, {{"normalized_shape", al({3})}, {"eps", af(0)}}),
              {"weight has dtype f32"});
}

TEST(NNGroupNorm, ValuesAndStatistics) {
  HostTensor x = F({1, 4, 1}, {1, 3, 10, 14}), w = F({4}, {1, 2, 3, 4}), b = F({4}, {0, 0, 0, 1});
  AttrMap a{{"N", ai(1)}, {"C", ai(4)}, {"HxW", ai(1)}, {"group", ai(2)}, {"eps", af(0)}};
  auto r = run(kGroupNorm, {&x, &w, &b}, a);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {1, 4, 1}, {-1, 2, -3, 5});
  expectValues((*r)[1], {1, 2}, {2, 12});
  expectValues((*r)[2], {1, 2}, {1, 0.5});
  a["group"] = ai(3);
  expectError(run(kGroupNorm, {&x, &w, &b}, a), {"divisible by group = 3"});
  a["group"] = ai(2);
  a["N"] = ai(2);
  expectError(run(kGroupNorm, {&x, &w, &b}, a), {"input dim 0 and N"});
}

// ---- batch norm -------------------------------------------------------------------

TEST(NNBatchNorm, NoTrainingUsesRunningStats) {
  HostTensor x = F({2, 2}, {1, 2, 3, 4}), w = F({2}, {2, 1}), b = F({2}, {0, 1}), rm = F({2}, {1, 2}),
             rv = F({2}, {3, 0});
  auto r =
      run("aten._native_batch_norm_legit_no_training", {&x, &w, &b, &rm, &rv}, {{"momentum", af(0.1)}, {"eps", af(1)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {2, 2}, {0, 1, 2, 3});
  expectValues((*r)[1], {0}, {});
  expectValues((*r)[2], {0}, {});
}

TEST(NNBatchNorm, TrainingStatistics) {
  HostTensor x = F({2, 1, 2}, {1, 2, 3, 6});
  auto r = run("aten.native_batch_norm", {&x, nullptr, nullptr, nullptr, nullptr},
               {{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(0.5)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  expectValues((*r)[0], {2, 1, 2}, {-1, -0.5, 0, 1.5});
  expectValues((*r)[1], {1}, {3});
  expectValues((*r)[2], {1}, {0.5});
  auto n = run("aten._native_batch_norm_legit.no_stats", {&x, nullptr, nullptr},
               {{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(0.5)}});
  ASSERT_TRUE(n.isOk()) << n.status().toString();
  expectValues((*n)[0], {2, 1, 2}, {-1, -0.5, 0, 1.5});
}

TEST(NNBatchNorm, FunctionalUpdatesRunningStats) {
  HostTensor x = F({2, 1, 2}, {1, 2, 3, 6}), rm = F({1}, {1}), rv = F({1}, {2});
  const char* op = "aten._native_batch_norm_legit_functional";
  auto r = run(op, {&x, nullptr, nullptr, &rm, &rv}, {{"training", ab(true)}, {"momentum", af(0.5)}, {"eps", af(0.5)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  ASSERT_EQ(r->size(), 5u);
  expectValues((*r)[0], {2, 1, 2}, {-1, -0.5, 0, 1.5});
  expectValues((*r)[3], {1}, {2});
  expectValues((*r)[4], {1}, {10.0 / 3}, 1e-15);  // 0.5 * 2 + 0.5 * (14 / 3): unbiased variance
  HostTensor rv3 = F({1}, {3});
  auto e = run(op, {&x, nullptr, nullptr, &rm, &rv3}, {{"training", ab(false)}, {"momentum", af(0.5)}, {"eps", af(1)}});
  ASSERT_TRUE(e.isOk()) << e.status().toString();
  expectValues((*e)[0], {2, 1, 2}, {0, 0.5, 1, 2.5});
  expectValues((*e)[1], {0}, {});
  expectValues((*e)[3], {1}, {1});
  expectValues((*e)[4], {1}, {3});
  HostTensor one = F({1, 2}, {5, 7}), rm2 = F({2}, {0, 0}), rv2 = F({2}, {1, 1});
  auto o =
      run(op, {&one, nullptr, nullptr, &rm2, &rv2}, {{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(1)}});
  ASSERT_TRUE(o.isOk()) << o.status().toString();
  expectValues((*o)[0], {1, 2}, {0, 0});
  expectValues((*o)[3], {2}, {0.5, 0.7}, 1e-15);
  expectValues((*o)[4], {2}, {kNaN, kNaN});  // unbiased variance of one value: 0 / 0
}

TEST(NNBatchNorm, MixedPrecisionStatsDType) {
  TensorType x = tt(DType::kF16, {sym("n"), 3, 4}), p = tt(DType::kF32, {3});
  auto r = infer("aten.native_batch_norm", {&x, &p, &p, &p, &p},
                 {{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(1e-5)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].dtype, DType::kF16);
  EXPECT_EQ((*r)[1].dtype, DType::kF32);
  EXPECT_EQ((*r)[1].shape, (ir::Shape{3}));
}

TEST(NNBatchNorm, Errors) {
  HostTensor x = F({2, 3}, {}), rm = F({2}, {}), rv = F({2}, {}), w32 = F({3}, {}, DType::kF32);
  AttrMap a{{"training", ab(false)}, {"momentum", af(0.1)}, {"eps", af(1e-5)}};
  const char* op = "aten.native_batch_norm";
  expectError(run(op, {&x, nullptr, nullptr, &rm, &rv}, a), {"running_mean size and channels", "2 and 3"});
  expectError(run(op, {&x, nullptr, nullptr, nullptr, nullptr}, a), {"required when training is false"});
  expectError(
      run(op, {&x, &w32, nullptr, nullptr, nullptr}, {{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(0)}}),
      {"weight has dtype f32"});
  HostTensor i = I({2, 3}, {}), v = F({3}, {}), e = F({0, 3}, {});
  AttrMap t{{"training", ab(true)}, {"momentum", af(0.1)}, {"eps", af(1e-5)}};
  expectError(run(op, {&i, nullptr, nullptr, nullptr, nullptr}, t), {"floating"});
  expectError(run(op, {&v, nullptr, nullptr, nullptr, nullptr}, t), {"at least 2 dims"});
  expectError(run(op, {&e, nullptr, nullptr, nullptr, nullptr}, t), {"at least one"});
}

}  // namespace
}  // namespace plugsdk::optest
