// Fused matmul and convolution epilogues without a GPU: the epilogue kernels the core's
// scheduler actually emits for linear layers (bias, relu, the tanh and erf GELUs, residuals,
// bf16 with its casts) and convolutions (bias by channel, a residual, a batch norm's affine
// map) are recognized as cuBLASLt's (cuDNN's) epilogues exactly when the library computes the
// same thing, and left to the epilogue kernel otherwise; the accumulator's row-major layout.
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

/// The epilogue kernel the core schedules for `graph` (matmul and convolution epilogues on),
/// matched with the bias read by grid dim `biasDim` (-1: the last).
struct Matched {
  std::string kernelText;
  std::optional<NativeEpilogue> native;
  std::string why;
  size_t grid = 0;
  int resultArg = -1;         ///< EpilogueKernel::resultArg() of the kernel
  size_t compiledStores = 0;  ///< stores in the kernel EpilogueKernel compiles
  size_t stores = 0;          ///< stores in the scheduled kernel
};
Matched matchGraph(const std::string& graph, int biasDim = -1) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, graph);
  EXPECT_TRUE(g.isOk()) << g.status().message();
  compile::CompileOptions o;
  o.decomp.expand = {"prims.sdpa", "prims.sdpa_backward"};
  StatusOr<compile::Compiled> c = compile::compileGraph(*ctx, *g, o);
  EXPECT_TRUE(c.isOk()) << c.status().message();
  Matched m;
  for (const kernel::Kernel& k : c->program.kernels) {
    if (k.name.find("epilogue") == std::string::npos) continue;
    StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(k);
    EXPECT_TRUE(e.isOk());
    m.kernelText = kernel::printKernel(k);
    const sdk::KernelView view((*e)->get());
    m.native = matchNativeEpilogue(view, &m.why, biasDim);
    m.grid = k.grid.size();
    auto stores = [](const sdk::KernelView& v) {
      size_t n = 0;
      for (size_t i = 0; i < v.numStmts(); ++i) n += v.stmt(i).kind == PLUGSDK_STMT_STORE;
      return n;
    };
    m.stores = stores(view);
    // What EpilogueKernel compiles, seen through a compile function that only looks.
    auto ek =
        EpilogueKernel::create(view, 0, [&](const sdk::KernelView& c) -> sdk::StatusOr<std::unique_ptr<LoadedKernel>> {
          m.compiledStores = stores(c);
          return std::make_unique<LoadedKernel>();
        });
    EXPECT_TRUE(ek.isOk()) << ek.status().message();
    if (ek.isOk()) m.resultArg = (*ek)->resultArg();
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
  // y = acc + bias is not the result itself: both stores are compiled.
  EXPECT_EQ(m.compiledStores, 2u) << m.kernelText;
  EXPECT_EQ(m.resultArg, -1) << m.kernelText;
}

/// A bias-free matmul in `dt` whose result is %y, then `tail`.
std::string product(const std::string& dt, const std::string& tail) {
  return "graph @g(%x: " + dt + "[s0, 64], %w: " + dt + "[32, 64]) {\n  %wt = aten.t(%w)\n  %y = aten.mm(%x, %wt)\n" +
         tail + "}\n";
}

TEST(CudaEpilogue, AStoreOfTheResultItselfIsTakenOut) {
  // y is returned and squared: the epilogue stores acc unchanged, so that store is taken out
  // and the matmul computes into y's buffer.
  Matched m = matchGraph(product("f32", "  %z = aten.mul.Tensor(%y, %y)\n  return %y, %z\n"));
  EXPECT_EQ(m.stores, 2u) << m.kernelText;
  EXPECT_EQ(m.compiledStores, 1u) << m.kernelText;
  EXPECT_GE(m.resultArg, 0) << m.kernelText;
  // Returned in another dtype (a conversion, not the result itself): the store stays.
  Matched cast =
      matchGraph(product("bf16", "  %f = aten._to_copy(%y) {dtype = f32}\n  %z = aten.relu(%y)\n  return %f, %z\n"));
  EXPECT_EQ(cast.compiledStores, cast.stores) << cast.kernelText;
  EXPECT_EQ(cast.resultArg, -1) << cast.kernelText;
  // A plain tail stores once, and keeps it.
  Matched plain = matchGraph(product("f32", "  %r = aten.relu(%y)\n  return %r\n"));
  EXPECT_EQ(plain.compiledStores, 1u) << plain.kernelText;
  EXPECT_EQ(plain.resultArg, -1) << plain.kernelText;
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

/// A 2-d convolution [2, 3, 9, 8] * [8, 3, 3, 3] -> [2, 8, 9, 8] in `dt`, then `tail` on %c.
std::string conv(const std::string& dt, const std::string& tail, bool bias, const std::string& extraInputs = "") {
  return "graph @g(%x: " + dt + "[2, 3, 9, 8], %w: " + dt + "[8, 3, 3, 3]" + (bias ? ", %b: " + dt + "[8]" : "") +
         extraInputs + ") {\n  %c = aten.convolution(%x, %w, " + (bias ? "%b" : "none") +
         ") {stride = [1, 1], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], "
         "groups = 1}\n" +
         tail + "}\n";
}

TEST(CudaEpilogue, ConvolutionBiasByChannelAndResidualAreCuDnnsForm) {
  // The grid is the result [N, K, H, W]; the bias is read by channel (grid dim 1).
  Matched m = matchGraph(conv("bf16", "  %y = aten.relu(%c)\n  return %y\n", true), 1);
  ASSERT_TRUE(m.native) << m.why << "\n" << m.kernelText;
  EXPECT_EQ(m.grid, 4u);
  EXPECT_EQ(m.native->act, Activation::kRelu);
  EXPECT_GE(m.native->bias, 0);
  EXPECT_EQ(m.native->residual, -1);
  EXPECT_EQ(m.native->outDtype, PLUGSDK_DTYPE_BF16);
  // A residual block's end: relu(conv + bias + identity).
  Matched r = matchGraph(
      conv("f32", "  %s = aten.add.Tensor(%c, %r)\n  %y = aten.relu(%s)\n  return %y\n", true, ", %r: f32[2, 8, 9, 8]"),
      1);
  ASSERT_TRUE(r.native) << r.why << "\n" << r.kernelText;
  EXPECT_GE(r.native->bias, 0);
  EXPECT_GE(r.native->residual, 0);
  // Read as a matmul's epilogue (the bias by the last dim), the channel bias is no bias.
  Matched column = matchGraph(conv("f32", "  %y = aten.relu(%c)\n  return %y\n", true), -1);
  EXPECT_FALSE(column.native) << column.kernelText;
}

TEST(CudaEpilogue, ConvolutionBatchNormAndWidthVectorsStayWithTheKernel) {
  // An inference batch norm scales the sum by channel: not a bias.
  const std::string bn = ", %m: f32[8], %v: f32[8], %g: f32[8], %h: f32[8]";
  Matched norm = matchGraph(conv("f32",
                                 "  %n, %n1, %n2 = aten._native_batch_norm_legit_no_training(%c, %g, %h, %m, %v) "
                                 "{momentum = 0.1, eps = 1e-05}\n  %y = aten.relu(%n)\n  return %y\n",
                                 false, bn),
                            1);
  EXPECT_FALSE(norm.native) << norm.kernelText;
  // A vector read by width (the last dim) is not a channel bias.
  Matched width = matchGraph(conv("f32", "  %s = aten.add.Tensor(%c, %r)\n  return %s\n", false, ", %r: f32[8]"), 1);
  EXPECT_FALSE(width.native) << width.kernelText;
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
