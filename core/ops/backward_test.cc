// Hand-computed tests of the activation, softmax, loss and embedding backward ops
// (inference, reference kernels, bad-input errors).
#include "core/ops/op_test_util.h"

namespace plugsdk::optest {
namespace {

// ---- activations -------------------------------------------------------------------------

TEST(BackwardPointwise, ThresholdBackwardZeroesAtOrBelowThreshold) {
  HostTensor g = F({5}, {1, 2, 3, 4, 5});
  HostTensor x = F({5}, {-1, 0, 0.5, kNaN, -0.0});
  // NaN <= 0 is false (the gradient passes); -0.0 <= 0 is true.
  expectValues(run1("aten.threshold_backward", {&g, &x}, {{"threshold", ai(0)}}), {5}, {0, 0, 3, 4, 0});
}

TEST(BackwardPointwise, ThresholdBackwardBroadcastsAndPromotes) {
  HostTensor g = F({2, 1}, {1, 2}, DType::kF32);
  HostTensor x = F({3}, {-1, 5, 7}, DType::kF64);
  HostTensor out = run1("aten.threshold_backward", {&g, &x}, {{"threshold", af(6)}});
  EXPECT_EQ(out.dtype(), DType::kF64);
  expectValues(out, {2, 3}, {0, 0, 1, 0, 0, 2});
}

TEST(BackwardPointwise, ThresholdBackwardIntegersAndTruncatedThreshold) {
  HostTensor g = I({3}, {7, 8, 9});
  HostTensor x = I({3}, {1, 2, 3}, DType::kI32);
  HostTensor out = run1("aten.threshold_backward", {&g, &x}, {{"threshold", ai(2)}});
  EXPECT_EQ(out.dtype(), DType::kI64);
  expectInts(out, {3}, {0, 0, 9});
  // A float threshold is converted to the integer dtype first (-0.5 -> 0), so 0 <= 0 zeroes.
  HostTensor x0 = I({2}, {0, 1});
  HostTensor g0 = I({2}, {5, 6});
  expectInts(run1("aten.threshold_backward", {&g0, &x0}, {{"threshold", af(-0.5)}}), {2}, {0, 6});
}

TEST(BackwardPointwise, ThresholdIsRoundedToTheComputeDtype) {
  // In f32, 0.1f <= float(0.1) holds although 0.1f > 0.1 in float64.
  HostTensor g = F({1}, {3}, DType::kF32);
  HostTensor x = F({1}, {static_cast<double>(0.1f)}, DType::kF32);
  expectValues(run1("aten.threshold_backward", {&g, &x}, {{"threshold", af(0.1)}}), {1}, {0});
}

TEST(BackwardPointwise, ThresholdBackwardErrors) {
  HostTensor g = F({2}, {1, 2});
  HostTensor x = F({3}, {1, 2, 3});
  expectError("aten.threshold_backward", {&g, &x}, {{"threshold", ai(0)}}, "do not broadcast");
  HostTensor b = I({2}, {1, 0}, DType::kBool);
  expectError("aten.threshold_backward", {&b, &b}, {{"threshold", ai(0)}}, "not implemented for dtype bool");
}

TEST(BackwardPointwise, GeluBackwardExactAndTanh) {
  HostTensor g = F({4}, {2, 1, 1, 1});
  HostTensor x = F({4}, {0, 1, -1, kNaN});
  // cdf(1) + pdf(1) = 0.841344746068543 + 0.241970724519143; at -1: 0.158655253931457 - 0.241970724519143.
  expectValues(run1("aten.gelu_backward", {&g, &x}), {4}, {1, 1.0833154705876864, -0.08331547058768633, kNaN}, 1e-15);
  HostTensor x0 = F({2}, {0, 1});
  HostTensor g0 = F({2}, {3, 1});
  // tanh form at 0: 0.5 * dy; at 1: 0.5*(1+t) + 0.5*(1-t^2)*b*(1+3k), t = tanh(b*(1+k)), b = sqrt(2/pi), k = 0.044715.
  double b = std::sqrt(2 / M_PI), k = 0.044715, t = std::tanh(b * (1 + k));
  double want = 0.5 * (1 + t) + 0.5 * (1 - t * t) * b * (1 + 3 * k);
  EXPECT_NEAR(want, 1.0829640838457826, 1e-15);  // torch.ops.aten.gelu_backward(.., approximate="tanh")
  expectValues(run1("aten.gelu_backward", {&g0, &x0}, {{"approximate", astr("tanh")}}), {2}, {1.5, want}, 1e-15);
}

TEST(BackwardPointwise, GeluBackwardErrors) {
  HostTensor x = F({2}, {0, 1});
  expectError("aten.gelu_backward", {&x, &x}, {{"approximate", astr("erf")}}, "approximate must be");
  HostTensor i = I({2}, {0, 1});
  expectError("aten.gelu_backward", {&i, &i}, {}, "floating dtype is required");
}

TEST(BackwardPointwise, TanhSigmoidSiluBackward) {
  HostTensor g = F({3}, {2, 3, 4});
  HostTensor y = F({3}, {0.5, -1, 0.25});
  expectValues(run1("aten.tanh_backward", {&g, &y}), {3}, {1.5, 0, 3.75});
  expectValues(run1("aten.sigmoid_backward", {&g, &y}), {3}, {0.5, -6, 0.75});
  HostTensor x = F({3}, {0, kInf, -kInf});
  // silu'(0) = 0.5; at +inf: sigmoid 1 -> dy * 1 * (1 + inf * 0) = nan, as in PyTorch; at -inf: 0 * (1 + -inf) = nan.
  HostTensor s = run1("aten.silu_backward", {&g, &x});
  EXPECT_EQ(s.getDouble(0), 1.0);
  EXPECT_TRUE(std::isnan(s.getDouble(1)));
  HostTensor i = I({3}, {1, 2, 3});
  expectError("aten.tanh_backward", {&i, &i}, {}, "floating dtype is required");
}

TEST(BackwardPointwise, HardtanhBackwardPassesStrictlyInside) {
  HostTensor g = F({6}, {1, 2, 3, 4, 5, 6});
  HostTensor x = F({6}, {-2, -1, 0, 1, 2, kNaN});
  // NaN gives 0 (PyTorch's vectorized CPU kernel: x > min_val && x < max_val).
  expectValues(run1("aten.hardtanh_backward", {&g, &x}, {{"min_val", ai(-1)}, {"max_val", ai(1)}}), {6},
               {0, 0, 3, 0, 0, 0});
}

TEST(BackwardPointwise, LeakyReluBackward) {
  HostTensor g = F({4}, {4, 4, 4, 4});
  HostTensor x = F({4}, {2, -1, 0, kNaN});
  AttrMap a{{"negative_slope", af(0.5)}, {"self_is_result", ab(false)}};
  expectValues(run1("aten.leaky_relu_backward", {&g, &x}, a), {4}, {4, 2, 2, 2});
  AttrMap bad{{"negative_slope", af(-0.5)}, {"self_is_result", ab(true)}};
  expectError("aten.leaky_relu_backward", {&g, &x}, bad, "negative negative_slope");
}

// ---- softmax -----------------------------------------------------------------------------

TEST(BackwardSoftmax, SoftmaxBackwardData) {
  HostTensor g = F({2, 2}, {1, 5, 2, 7});
  HostTensor y = F({2, 2}, {0.25, 0.5, 0.75, 0.5});
  // dim -2 (columns): col 0: s = 0.25 + 1.5 = 1.75 -> [0.25 * -0.75, 0.75 * 0.25]; col 1: s = 6 -> [-0.5, 0.5].
  AttrMap a{{"dim", ai(-2)}, {"input_dtype", adt(DType::kF64)}};
  expectValues(run1("aten._softmax_backward_data", {&g, &y}, a), {2, 2}, {-0.1875, -0.5, 0.1875, 0.5});
}

TEST(BackwardSoftmax, LogSoftmaxBackwardData) {
  HostTensor g = F({2}, {1, 2});
  HostTensor y = F({2}, {std::log(0.25), std::log(0.75)});
  AttrMap a{{"dim", ai(0)}, {"input_dtype", adt(DType::kF64)}};
  expectValues(run1("aten._log_softmax_backward_data", {&g, &y}, a), {2}, {0.25, -0.25}, 1e-15);
}

TEST(BackwardSoftmax, ZeroDimAndEmpty) {
  HostTensor g = F({}, {3});
  HostTensor y = F({}, {1});
  AttrMap a{{"dim", ai(-1)}, {"input_dtype", adt(DType::kF64)}};
  expectValues(run1("aten._softmax_backward_data", {&g, &y}, a), {}, {0});
  HostTensor e = F({0, 3}, {});
  AttrMap a1{{"dim", ai(1)}, {"input_dtype", adt(DType::kF64)}};
  expectValues(run1("aten._log_softmax_backward_data", {&e, &e}, a1), {0, 3}, {});
}

TEST(BackwardSoftmax, DtypeRulesAndErrors) {
  TensorType f32 = tt(DType::kF32, {2, sym("s0")});
  auto half = infer("aten._softmax_backward_data", {&f32, &f32}, {{"dim", ai(1)}, {"input_dtype", adt(DType::kF16)}});
  ASSERT_TRUE(half.isOk()) << half.status().toString();
  EXPECT_EQ((*half)[0].dtype, DType::kF16);  // half_to_float: the gradient has the input dtype
  EXPECT_EQ((*half)[0].shape, (ir::Shape{2, sym("s0")}));
  HostTensor g = F({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor y3 = F({3}, {1, 2, 3});
  HostTensor y32 = F({2, 3}, {1, 2, 3, 4, 5, 6}, DType::kF32);
  AttrMap a{{"dim", ai(1)}, {"input_dtype", adt(DType::kF64)}};
  expectError("aten._softmax_backward_data", {&g, &y3}, a, "same shape");
  expectError("aten._softmax_backward_data", {&g, &y32}, a, "same dtype");
  expectError("aten._log_softmax_backward_data", {&g, &g}, {{"dim", ai(2)}, {"input_dtype", adt(DType::kF64)}},
              "out of range");
  expectError("aten._log_softmax_backward_data", {&g, &g}, {{"dim", ai(1)}, {"input_dtype", adt(DType::kI64)}},
              "input_dtype must be a floating dtype");
}

// ---- embedding ---------------------------------------------------------------------------

TEST(BackwardEmbedding, SumsRowsPerIndex) {
  HostTensor g = F({2, 2, 1}, {1, 2, 3, 4});
  HostTensor idx = I({2, 2}, {0, 2, 2, 1});
  AttrMap a{{"num_weights", ai(4)}, {"padding_idx", ai(-1)}, {"scale_grad_by_freq", ab(false)}};
  expectValues(run1("aten.embedding_dense_backward", {&g, &idx}, a), {4, 1}, {1, 4, 5, 0});
  a["padding_idx"] = ai(2);
  expectValues(run1("aten.embedding_dense_backward", {&g, &idx}, a), {4, 1}, {1, 4, 0, 0});
  a["padding_idx"] = ai(-1);
  a["scale_grad_by_freq"] = ab(true);
  expectValues(run1("aten.embedding_dense_backward", {&g, &idx}, a), {4, 1}, {1, 4, 2.5, 0});
  HostTensor idx32 = I({4}, {3, 3, 3, 0}, DType::kI32);
  HostTensor g2 = F({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  a["scale_grad_by_freq"] = ab(false);
  expectValues(run1("aten.embedding_dense_backward", {&g2, &idx32}, a), {4, 2}, {4, 40, 0, 0, 0, 0, 6, 60});
}

TEST(BackwardEmbedding, ErrorsAndSymbolicRows) {
  HostTensor g = F({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor idx = I({2}, {0, 4});
  AttrMap a{{"num_weights", ai(4)}, {"padding_idx", ai(-1)}, {"scale_grad_by_freq", ab(false)}};
  expectError("aten.embedding_dense_backward", {&g, &idx}, a, "index 4 at position 1");
  HostTensor neg = I({2}, {-1, 0});
  expectError("aten.embedding_dense_backward", {&g, &neg}, a, "index -1");
  HostTensor idx3 = I({3}, {0, 1, 2});
  expectError("aten.embedding_dense_backward", {&g, &idx3}, a, "one row of size 3");
  HostTensor fidx = F({2}, {0, 1});
  expectError("aten.embedding_dense_backward", {&g, &fidx}, a, "indices must be i64 or i32");
  TensorType gt = tt(DType::kF32, {sym("b"), sym("t"), 8});
  TensorType it = tt(DType::kI64, {sym("b"), sym("t")});
  AttrMap sa{{"num_weights", Attribute::fromSym(sym("v"))}, {"padding_idx", ai(-1)}, {"scale_grad_by_freq", ab(false)}};
  auto r = infer("aten.embedding_dense_backward", {&gt, &it}, sa);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[v, 8]");
}

// ---- losses ------------------------------------------------------------------------------

TEST(BackwardLoss, NllLossBackwardReductions) {
  HostTensor self = F({2, 3}, {0, 0, 0, 0, 0, 0});
  HostTensor target = I({2}, {2, -100});
  HostTensor w = F({3}, {1, 2, 3});
  HostTensor tw = F({}, {3});
  HostTensor g = F({}, {1.5});
  AttrMap a{{"reduction", ai(1)}, {"ignore_index", ai(-100)}};
  // mean: -w[t] * g / total_weight at the target; the ignored row stays 0.
  expectValues(run1("aten.nll_loss_backward", {&g, &self, &target, &w, &tw}, a), {2, 3}, {0, 0, -1.5, 0, 0, 0});
  a["reduction"] = ai(2);
  expectValues(run1("aten.nll_loss_backward", {&g, &self, &target, &w, &tw}, a), {2, 3}, {0, 0, -4.5, 0, 0, 0});
  HostTensor gRows = F({2}, {2, 7});
  HostTensor t2 = I({2}, {0, 1});
  a["reduction"] = ai(0);
  expectValues(run1("aten.nll_loss_backward", {&gRows, &self, &t2, nullptr, &tw}, a), {2, 3}, {-2, 0, 0, 0, -7, 0});
  // 1-D self with a 0-D target; total_weight 0 gives -inf as in PyTorch.
  HostTensor s1 = F({3}, {0, 0, 0});
  HostTensor t0 = I({}, {1});
  HostTensor zero = F({}, {0});
  a["reduction"] = ai(1);
  expectValues(run1("aten.nll_loss_backward", {&g, &s1, &t0, nullptr, &zero}, a), {3}, {0, -kInf, 0});
}

TEST(BackwardLoss, NllLossBackwardErrors) {
  HostTensor self = F({2, 3}, {0, 0, 0, 0, 0, 0});
  HostTensor tw = F({}, {1});
  HostTensor g = F({}, {1});
  AttrMap a{{"reduction", ai(1)}, {"ignore_index", ai(-100)}};
  HostTensor bad = I({2}, {0, 3});
  expectError("aten.nll_loss_backward", {&g, &self, &bad, nullptr, &tw}, a, "target 3 at position 1 is out of bounds");
  HostTensor t = I({2}, {0, 1});
  HostTensor g2 = F({2}, {1, 1});
  expectError("aten.nll_loss_backward", {&g2, &self, &t, nullptr, &tw}, a, "grad_output element count");
  HostTensor w2 = F({2}, {1, 1});
  expectError("aten.nll_loss_backward", {&g, &self, &t, &w2, &tw}, a, "weight size");
  HostTensor t3 = I({3}, {0, 1, 2});
  expectError("aten.nll_loss_backward", {&g, &self, &t3, nullptr, &tw}, a, "target size");
  HostTensor ti32 = I({2}, {0, 1}, DType::kI32);
  expectError("aten.nll_loss_backward", {&g, &self, &ti32, nullptr, &tw}, a, "target must be i64");
  a["reduction"] = ai(3);
  expectError("aten.nll_loss_backward", {&g, &self, &t, nullptr, &tw}, a, "reduction must be");
}

TEST(BackwardLoss, MseLossBackward) {
  HostTensor x = F({2}, {1, 2});
  HostTensor t = F({2}, {0.5, 4});
  HostTensor one = F({}, {1});
  expectValues(run1("aten.mse_loss_backward", {&one, &x, &t}, {{"reduction", ai(1)}}), {2}, {0.5, -2});
  expectValues(run1("aten.mse_loss_backward", {&one, &x, &t}, {{"reduction", ai(2)}}), {2}, {1, -4});
  HostTensor g = F({2}, {2, 3});
  expectValues(run1("aten.mse_loss_backward", {&g, &x, &t}, {{"reduction", ai(0)}}), {2}, {2, -12});
  // Broadcasting self [2, 1] against target [3].
  HostTensor xc = F({2, 1}, {1, 2});
  HostTensor t3 = F({3}, {0, 1, 2});
  expectValues(run1("aten.mse_loss_backward", {&one, &xc, &t3}, {{"reduction", ai(2)}}), {2, 3}, {2, 0, -2, 4, 2, 0});
  // Integers: norm = int(2 / numel): 1 for two elements, 0 for three.
  HostTensor xi = I({2}, {5, 7});
  HostTensor ti = I({2}, {1, 1});
  HostTensor gi = I({}, {1});
  expectInts(run1("aten.mse_loss_backward", {&gi, &xi, &ti}, {{"reduction", ai(1)}}), {2}, {4, 6});
  HostTensor xi3 = I({3}, {5, 7, 9});
  HostTensor ti3 = I({3}, {1, 1, 1});
  expectInts(run1("aten.mse_loss_backward", {&gi, &xi3, &ti3}, {{"reduction", ai(1)}}), {3}, {0, 0, 0});
}

TEST(BackwardLoss, MseLossBackwardErrors) {
  HostTensor x = F({2}, {1, 2});
  HostTensor t32 = F({2}, {1, 2}, DType::kF32);
  HostTensor one = F({}, {1});
  expectError("aten.mse_loss_backward", {&one, &x, &t32}, {{"reduction", ai(1)}}, "same dtype");
  HostTensor t3 = F({3}, {1, 2, 3});
  expectError("aten.mse_loss_backward", {&one, &x, &t3}, {{"reduction", ai(1)}}, "do not broadcast");
  expectError("aten.mse_loss_backward", {&one, &x, &x}, {{"reduction", ai(-1)}}, "reduction must be");
}

// ---- dropout, select, slice ---------------------------------------------------------------

TEST(BackwardDropout, MasksAndScales) {
  HostTensor g = F({4}, {1, kNaN, 3, kInf});
  HostTensor mask = I({4}, {1, 0, 0, 1}, DType::kBool);
  // A dropped NaN stays NaN (NaN * 0), as in PyTorch's grad * mask * scale.
  expectValues(run1("aten.native_dropout_backward", {&g, &mask}, {{"scale", af(2)}}), {4}, {2, kNaN, 0, kInf});
  HostTensor fmask = F({4}, {1, 0, 0, 1});
  expectError("aten.native_dropout_backward", {&g, &fmask}, {{"scale", af(2)}}, "mask must be bool");
}

TEST(BackwardSelect, PlacesGradAtIndex) {
  HostTensor g = F({2}, {1, 2});
  AttrMap a{{"input_sizes", al({2, 3})}, {"dim", ai(1)}, {"index", ai(-1)}};
  expectValues(run1("aten.select_backward", {&g}, a), {2, 3}, {0, 0, 1, 0, 0, 2});
  HostTensor gi = I({3}, {7, 8, 9}, DType::kI32);
  expectInts(run1("aten.select_backward", {&gi}, {{"input_sizes", al({2, 3})}, {"dim", ai(0)}, {"index", ai(1)}}),
             {2, 3}, {0, 0, 0, 7, 8, 9});
  a["index"] = ai(3);
  expectError("aten.select_backward", {&g}, a, "index 3 is out of range for dim 1 of size 3");
  HostTensor g3 = F({3}, {1, 2, 3});
  a["index"] = ai(0);
  expectError("aten.select_backward", {&g3}, a, "grad_output dim 0 and input_sizes[0]");
  TensorType gt = tt(DType::kF32, {3});
  auto r = infer(
      "aten.select_backward", {&gt},
      {{"input_sizes", Attribute::fromInts(std::vector<SymExpr>{sym("s"), 3})}, {"dim", ai(0)}, {"index", ai(0)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[s, 3]");
}

TEST(BackwardSlice, PlacesGradInTheSlice) {
  HostTensor g = F({2, 2}, {1, 2, 3, 4});
  AttrMap a{{"input_sizes", al({2, 5})}, {"dim", ai(1)}, {"start", ai(-3)}, {"end", ai(INT64_MAX)}, {"step", ai(2)}};
  expectValues(run1("aten.slice_backward", {&g}, a), {2, 5}, {0, 0, 1, 0, 2, 0, 0, 3, 0, 4});
  // An empty slice (start past end) gives zeros.
  HostTensor e = F({2, 0}, {});
  AttrMap b{{"input_sizes", al({2, 5})}, {"dim", ai(-1)}, {"start", ai(4)}, {"end", ai(2)}, {"step", ai(1)}};
  expectValues(run1("aten.slice_backward", {&e}, b), {2, 5}, std::vector<double>(10, 0));
  HostTensor g3 = F({2, 3}, {1, 2, 3, 4, 5, 6});
  b["start"] = ai(0);
  expectError("aten.slice_backward", {&g3}, b, "grad_output dim 1 and the slice length");
  b["step"] = ai(0);
  expectError("aten.slice_backward", {&g3}, b, "step must be a constant >= 1");
  // Symbolic sizes: "to the end" is decidable; a constant end against a symbolic size is checked at run time.
  TensorType gt = tt(DType::kF32, {2, sym("s") - 1});
  auto sizes = Attribute::fromInts(std::vector<SymExpr>{2, sym("s")});
  auto r = infer("aten.slice_backward", {&gt},
                 {{"input_sizes", sizes}, {"dim", ai(1)}, {"start", ai(1)}, {"end", ai(INT64_MAX)}, {"step", ai(1)}});
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ((*r)[0].toString(), "f32[2, s]");
  TensorType g2 = tt(DType::kF32, {2, 2});
  auto u = infer("aten.slice_backward", {&g2},
                 {{"input_sizes", sizes}, {"dim", ai(1)}, {"start", ai(0)}, {"end", ai(2)}, {"step", ai(1)}});
  EXPECT_TRUE(u.isOk()) << u.status().toString();
}

}  // namespace
}  // namespace plugsdk::optest
