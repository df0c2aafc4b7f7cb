// Fused matmul epilogues without a GPU: the epilogue kernels the core's scheduler actually
// emits for linear layers (bias, relu, the tanh and erf GELUs, residuals, bf16 with its
// casts) are recognized as cuBLASLt's epilogues exactly when cuBLASLt computes the same
// thing, and left to the epilogue kernel otherwise; the accumulator's row-major layout.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/library/epilogue_kernel.h"
#include "backends/cuda/library/epilogue_match.h"
#include "core/compile/pipeline.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"
#include "core/text/parser.h"

namespace plugsdk::cuda {
namespace {

/// The epilogue kernel the core schedules for `graph` (matmul epilogues on), matched.
struct Matched {
  std::string kernelText;
  std::optional<NativeEpilogue> native;
  std::string why;
};
Matched matchGraph(const std::string& graph) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, graph);
  EXPECT_TRUE(g.isOk()) << g.status().message();
  compile::CompileOptions o;
  o.decomp.expand = {"prims.convolution", "prims.sdpa", "prims.sdpa_backward"};
  StatusOr<compile::Compiled> c = compile::compileGraph(*ctx, *g, o);
  EXPECT_TRUE(c.isOk()) << c.status().message();
  Matched m;
  for (const kernel::Kernel& k : c->program.kernels) {
    if (k.name.find("epilogue") == std::string::npos) continue;
    StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(k);
    EXPECT_TRUE(e.isOk());
    m.kernelText = kernel::printKernel(k);
    m.native = matchNativeEpilogue(sdk::KernelView((*e)->get()), &m.why);
    return m;
  }
  ADD_FAILURE() << "no epilogue kernel scheduled";
  return m;
}

std::string linear(const std::string& dt, const std::string& tail, const std::string& extraInputs = "") {
  return "graph @g(%x: " + dt + "[s0, 64], %w: " + dt + "[32, 64], %b: " + dt + "[32]" + extraInputs +
         ") {\n  %wt = aten.t(%w)\n  %y = aten.addmm(%b, %x, %wt)\n" + tail + "}\n";
}

TEST(CudaEpilogue, ReluWithBiasInBf16IsCuBLASLtsReluBias) {
  Matched m = matchGraph(linear("bf16", "  %r = aten.relu(%y)\n  return %r\n"));
  ASSERT_TRUE(m.native) << m.why << "\n" << m.kernelText;
  EXPECT_EQ(m.native->act, Activation::kRelu);
  EXPECT_GE(m.native->bias, 0);
  EXPECT_EQ(m.native->residual, -1);
  EXPECT_EQ(m.native->outDtype, PLUGSDK_DTYPE_BF16);
  EXPECT_EQ(m.native->biasDtype, PLUGSDK_DTYPE_BF16);
}

TEST(CudaEpilogue, TwoStoresStayWithTheKernel) {
  // y is an output and is read again: the epilogue stores y and y*y.
  Matched m = matchGraph(linear("f32", "  %z = aten.mul.Tensor(%y, %y)\n  return %y, %z\n"));
  EXPECT_FALSE(m.native) << m.kernelText;
  EXPECT_EQ(m.why, "more than one store") << m.kernelText;
}

TEST(CudaEpilogue, TanhGeluWithBiasMatchesAndTheErfGeluDoesNot) {
  Matched tanh = matchGraph(linear("bf16", "  %g = aten.gelu(%y) {approximate = \"tanh\"}\n  return %g\n"));
  ASSERT_TRUE(tanh.native) << tanh.why << "\n" << tanh.kernelText;
  EXPECT_EQ(tanh.native->act, Activation::kGeluTanh);
  EXPECT_GE(tanh.native->bias, 0);
  EXPECT_EQ(tanh.native->describe().substr(0, 10), "gelu_tanh(");
  // cuBLASLt's GELU is the tanh approximation: the erf GELU (BERT's, ViT's) differs by up to
  // 4e-4 and must stay with the epilogue kernel.
  Matched erf = matchGraph(linear("f32", "  %g = aten.gelu(%y)\n  return %g\n"));
  EXPECT_FALSE(erf.native) << erf.kernelText;
  EXPECT_NE(erf.why.find("not act"), std::string::npos) << erf.why;
}

TEST(CudaEpilogue, AutocastLinearThroughViewsHasAnF32Bias) {
  // As Dynamo traces a linear layer on [b, s, k] under bf16 autocast: the weight and bias
  // cast to bf16, the rows flattened, the result viewed back; the GELU follows the view.
  Matched m = matchGraph(
      "graph @g(%x: bf16[2, 37, 64], %w: f32[32, 64], %b: f32[32]) {\n"
      "  %wb = aten._to_copy(%w) {dtype = bf16}\n  %bb = aten._to_copy(%b) {dtype = bf16}\n"
      "  %v = aten.view(%x) {size = [74, 64]}\n  %wt = aten.t(%wb)\n  %y = aten.addmm(%bb, %v, %wt)\n"
      "  %u = aten.view(%y) {size = [2, 37, 32]}\n  %g = aten.gelu(%u) {approximate = \"tanh\"}\n  return %g\n}\n");
  ASSERT_TRUE(m.native) << m.why << "\n" << m.kernelText;
  EXPECT_EQ(m.native->act, Activation::kGeluTanh);
  EXPECT_EQ(m.native->biasDtype, PLUGSDK_DTYPE_F32);  // read in f32, cast in the epilogue
  EXPECT_EQ(m.native->outDtype, PLUGSDK_DTYPE_BF16);
}

TEST(CudaEpilogue, ResidualBeforeTheActivationIsCAfterItIsNot) {
  const std::string r = ", %r: f32[s0, 32]";
  Matched before = matchGraph(linear("f32", "  %s = aten.add.Tensor(%y, %r)\n  %t = aten.relu(%s)\n  return %t\n", r));
  ASSERT_TRUE(before.native) << before.why << "\n" << before.kernelText;
  EXPECT_EQ(before.native->act, Activation::kRelu);
  EXPECT_GE(before.native->residual, 0);
  EXPECT_GE(before.native->bias, 0);
  Matched plain = matchGraph(linear("f32", "  %s = aten.add.Tensor(%y, %r)\n  return %s\n", r));
  ASSERT_TRUE(plain.native) << plain.why << "\n" << plain.kernelText;
  EXPECT_EQ(plain.native->act, Activation::kNone);
  EXPECT_GE(plain.native->residual, 0);
  // cuBLASLt adds C before the activation, never after it.
  Matched after = matchGraph(linear("f32", "  %t = aten.relu(%y)\n  %s = aten.add.Tensor(%t, %r)\n  return %s\n", r));
  EXPECT_FALSE(after.native) << after.kernelText;
}

TEST(CudaEpilogue, ScaledOrRowBroadcastTermsStayWithTheKernel) {
  // A per-row vector (r[s0, 1]) and a scaled sum are not cuBLASLt's bias epilogue.
  Matched row = matchGraph(linear("f32", "  %s = aten.add.Tensor(%y, %r)\n  return %s\n", ", %r: f32[s0, 1]"));
  EXPECT_FALSE(row.native) << row.kernelText;
  Matched scaled = matchGraph(linear("f32", "  %s = aten.mul.Tensor(%y, %y)\n  return %s\n"));
  EXPECT_FALSE(scaled.native) << scaled.kernelText;
  // sigmoid is not one of the activations.
  Matched sig = matchGraph(linear("f32", "  %s = aten.sigmoid(%y)\n  return %s\n"));
  EXPECT_FALSE(sig.native) << sig.kernelText;
}

TEST(CudaEpilogue, RowMajorStridesAreProductsOfTheSizesAfter) {
  OperandDesc d;
  std::vector<plugsdk_index_insn_t> pool = {
      {PLUGSDK_INDEX_CONST, 0, 3}, {PLUGSDK_INDEX_SYMBOL, 0, 0}, {PLUGSDK_INDEX_CONST, 0, 5}};
  d.sizes = {{0, 1}, {1, 1}, {2, 1}};
  d.strides = {{0, 1}, {0, 1}, {0, 1}};
  makeRowMajor(d, pool);
  const std::vector<int64_t> symbols = {7};
  sdk::IndexEnv env{{}, {}, sdk::Span<const int64_t>(symbols.data(), symbols.size())};
  const sdk::Span<const plugsdk_index_insn_t> p(pool.data(), pool.size());
  auto value = [&](plugsdk_index_expr_t e) {
    sdk::StatusOr<int64_t> v = sdk::evalIndex(p, e, env);
    EXPECT_TRUE(v.isOk());
    return v.isOk() ? *v : -1;
  };
  EXPECT_EQ(value(d.strides[0]), 35);
  EXPECT_EQ(value(d.strides[1]), 5);
  EXPECT_EQ(value(d.strides[2]), 1);
  EXPECT_EQ(value(d.offset), 0);
}

}  // namespace
}  // namespace plugsdk::cuda
