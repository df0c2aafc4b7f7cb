// prims.convolution's cuDNN geometry without a GPU: attributes parsed and checked, 1-d
// convolutions given a unit dim, packed operands recognised (and strided or permuted ones
// not, so the executable copies them), large batches chunked below 32-bit indexing, and
// calls the plugin leaves to the core refused with the reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cuda/library/conv_plan.h"

namespace plugsdk::cuda {
namespace {

struct Operand {
  uint32_t dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
};

std::vector<int64_t> rowMajor(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;) s[i] = s[i + 1] * sizes[i + 1];
  return s;
}

Operand packed(uint32_t dtype, std::vector<int64_t> sizes) { return {dtype, sizes, rowMajor(sizes)}; }

/// compile_library's call for constant descriptors and attribute text.
struct Call {
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_tensor_desc_t> descs;
  std::vector<std::vector<plugsdk_index_expr_t>> exprs;
  std::string attrs;
  sdk::StatusOr<ConvCall> make(const Operand& x, const Operand& w, const Operand& y) {
    for (const Operand* o : {&x, &w, &y}) {
      std::vector<plugsdk_index_expr_t> e;
      auto expr = [&](int64_t v) {
        pool.push_back(plugsdk_index_insn_t{PLUGSDK_INDEX_CONST, 0, v});
        return plugsdk_index_expr_t{static_cast<uint32_t>(pool.size() - 1), 1};
      };
      for (int64_t s : o->sizes) e.push_back(expr(s));
      for (int64_t s : o->strides) e.push_back(expr(s));
      e.push_back(expr(o->offset));
      exprs.push_back(e);
    }
    for (size_t i = 0; i < 3; ++i) {
      const Operand& o = i == 0 ? x : i == 1 ? w : y;
      plugsdk_tensor_desc_t d{};
      d.dtype = o.dtype;
      d.rank = static_cast<uint32_t>(o.sizes.size());
      d.sizes = exprs[i].data();
      d.strides = exprs[i].data() + d.rank;
      d.offset = exprs[i][2 * d.rank];
      descs.push_back(d);
    }
    sdk::LibraryCall c{};
    c.op = PLUGSDK_LIBRARY_CONVOLUTION;
    c.attributes = attrs;
    c.inputs = sdk::Span<const plugsdk_tensor_desc_t>(descs.data(), 2);
    c.outputs = sdk::Span<const plugsdk_tensor_desc_t>(descs.data() + 2, 1);
    c.indexPool = sdk::Span<const plugsdk_index_insn_t>(pool.data(), pool.size());
    return ConvCall::from(c);
  }
};

std::string attrs(const std::string& stride, const std::string& pad, const std::string& dil, int groups,
                  bool transposed = false) {
  return "stride = " + stride + ", padding = " + pad + ", dilation = " + dil +
         ", transposed = " + (transposed ? "true" : "false") +
         ", output_padding = [0], groups = " + std::to_string(groups);
}

constexpr uint32_t BF16 = PLUGSDK_DTYPE_BF16, F32 = PLUGSDK_DTYPE_F32;

sdk::StatusOr<DnnGeometry> geometryOf(Call& call, const Operand& x, const Operand& w, const Operand& y) {
  sdk::StatusOr<ConvCall> c = call.make(x, w, y);
  if (!c.isOk()) return c.status();
  sdk::StatusOr<ConvShape> s = ConvShape::eval(*c, {});
  if (!s.isOk()) return s.status();
  return dnnGeometry(*c, *s);
}

TEST(ConvPlan, ResnetStemIsOnePackedCall) {
  Call call;
  call.attrs = attrs("[2, 2]", "[3, 3]", "[1, 1]", 1);
  sdk::StatusOr<DnnGeometry> g =
      geometryOf(call, packed(BF16, {32, 3, 224, 224}), packed(BF16, {64, 3, 7, 7}), packed(BF16, {32, 64, 112, 112}));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->describe(),
            "x [32, 3, 224, 224] w [64, 3, 7, 7] -> y [32, 64, 112, 112], padding [3, 3] stride [2, 2] dilation "
            "[1, 1], 32 images a call");
  EXPECT_TRUE(g->xPacked && g->wPacked && g->yPacked);
  EXPECT_EQ(g->xImage, 3 * 224 * 224);
}

TEST(ConvPlan, OneSpatialDimGetsAUnitDim) {
  Call call;
  call.attrs = attrs("[2]", "[1]", "[3]", 2);
  sdk::StatusOr<DnnGeometry> g =
      geometryOf(call, packed(F32, {4, 6, 50}), packed(F32, {8, 3, 5}), packed(F32, {4, 8, 20}));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->rank, 4);
  EXPECT_EQ(g->describe(),
            "x [4, 6, 1, 50] w [8, 3, 1, 5] -> y [4, 8, 1, 20], padding [0, 1] stride [1, 2] dilation [1, 3], 4 "
            "images a call");
  EXPECT_TRUE(g->xPacked && g->wPacked && g->yPacked);
}

TEST(ConvPlan, StridedOperandsAreNotPacked) {
  Call call;
  call.attrs = attrs("[1, 1]", "[0, 0]", "[1, 1]", 1);
  // x channels-last (a permuted view), the result a slice of a wider buffer.
  Operand x{F32, {2, 3, 5, 5}, {75, 1, 15, 3}};
  Operand y{F32, {2, 4, 3, 3}, {72, 18, 3, 1}};
  sdk::StatusOr<DnnGeometry> g = geometryOf(call, x, packed(F32, {4, 3, 3, 3}), y);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_FALSE(g->xPacked);
  EXPECT_FALSE(g->yPacked);
  EXPECT_TRUE(g->wPacked);
  EXPECT_EQ(g->xStrides, (std::vector<int>{75, 1, 15, 3}));
  EXPECT_EQ(g->yImage, 72);
}

TEST(ConvPlan, LargeBatchesAreChunkedBelow32BitIndexing) {
  Call call;
  call.attrs = attrs("[1, 1]", "[1, 1]", "[1, 1]", 1);
  // 64 images of 64 x 512 x 512 = 2^24 elements: 2^30 in all, 2^31 - 1 allows 127 images.
  sdk::StatusOr<DnnGeometry> g = geometryOf(call, packed(BF16, {300, 64, 512, 512}), packed(BF16, {64, 64, 3, 3}),
                                            packed(BF16, {300, 64, 512, 512}));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_EQ(g->images, 127);
  EXPECT_EQ(g->x[0], 127);
}

TEST(ConvPlan, CallsLeftToTheCoreAreRefusedWithTheReason) {
  {
    Call call;
    call.attrs = attrs("[1, 1]", "[0, 0]", "[1, 1]", 1, true);
    sdk::StatusOr<ConvCall> c =
        call.make(packed(F32, {1, 4, 5, 5}), packed(F32, {4, 2, 3, 3}), packed(F32, {1, 2, 7, 7}));
    ASSERT_FALSE(c.isOk());
    EXPECT_NE(c.status().message().find("transposed"), std::string::npos) << c.status().message();
  }
  {
    Call call;
    call.attrs = attrs("[1, 1]", "[0, 0]", "[1, 1]", 1);
    const uint32_t I32 = PLUGSDK_DTYPE_I32;
    sdk::StatusOr<ConvCall> c =
        call.make(packed(I32, {1, 4, 5, 5}), packed(I32, {2, 4, 3, 3}), packed(I32, {1, 2, 3, 3}));
    ASSERT_FALSE(c.isOk());
    EXPECT_NE(c.status().message().find("convolution_dtypes"), std::string::npos) << c.status().message();
  }
  {
    Call call;
    call.attrs = "stride = [1, 1], padding = [s0, 0], dilation = [1, 1], transposed = false, groups = 1";
    sdk::StatusOr<ConvCall> c =
        call.make(packed(F32, {1, 4, 5, 5}), packed(F32, {2, 4, 3, 3}), packed(F32, {1, 2, 3, 3}));
    ASSERT_FALSE(c.isOk());
    EXPECT_NE(c.status().message().find("padding"), std::string::npos) << c.status().message();
  }
}

TEST(ConvPlan, WeightGradientsRunAsCudnnWeightGradients) {
  // resnet's 3x3 layer: x [32, 64, 56, 56] and its output gradient [32, 64, 56, 56], both
  // packed, reach the plugin as permuted views: x' [64, 32, 56, 56], w' [64, 32, 56, 56].
  Call call;
  call.attrs = attrs("[1, 1]", "[1, 1]", "[1, 1]", 1);
  Operand x{BF16, {64, 32, 56, 56}, {3136, 200704, 56, 1}}, dy{BF16, {64, 32, 56, 56}, {3136, 200704, 56, 1}};
  sdk::StatusOr<DnnGeometry> g = geometryOf(call, x, dy, packed(BF16, {64, 64, 3, 3}));
  ASSERT_TRUE(g.isOk()) << g.status().message();
  EXPECT_FALSE(g->xPacked);
  ASSERT_TRUE(isWeightGradient(*g, 1));
  const DnnGeometry w = weightGradientForm(*g);
  EXPECT_EQ(w.describe(),
            "weight gradient: x [32, 64, 56, 56] w [32, 64, 56, 56] -> y [64, 64, 3, 3], padding [1, 1] stride [1, 1] "
            "dilation [1, 1], 32 images a call");
  EXPECT_TRUE(w.xPacked);   // the forward's input as it lies
  EXPECT_TRUE(w.wPacked);   // the output gradient as it lies
  EXPECT_FALSE(w.yPacked);  // the gradient is written through a packed temporary
  // A strided forward (stride 2) is a dilated "convolution" here (its result one larger than
  // the kernel, which the core crops): stride and dilation swap back.
  Call strided;
  strided.attrs = attrs("[1, 1]", "[1, 1]", "[2, 2]", 1);
  sdk::StatusOr<DnnGeometry> s2 =
      geometryOf(strided, x, Operand{BF16, {64, 32, 28, 28}, {784, 50176, 28, 1}}, packed(BF16, {64, 64, 4, 4}));
  ASSERT_TRUE(s2.isOk()) << s2.status().message();
  ASSERT_TRUE(isWeightGradient(*s2, 1));
  EXPECT_EQ(weightGradientForm(*s2).stride, (std::vector<int>{2, 2}));
  EXPECT_EQ(weightGradientForm(*s2).dilation, (std::vector<int>{1, 1}));
  // An ordinary convolution (a small filter) or a grouped one is not.
  Call plain;
  plain.attrs = attrs("[1, 1]", "[1, 1]", "[1, 1]", 1);
  sdk::StatusOr<DnnGeometry> p =
      geometryOf(plain, packed(BF16, {32, 64, 56, 56}), packed(BF16, {64, 64, 3, 3}), packed(BF16, {32, 64, 56, 56}));
  ASSERT_TRUE(p.isOk());
  EXPECT_FALSE(isWeightGradient(*p, 1));
  EXPECT_FALSE(isWeightGradient(*g, 2));
}

TEST(ConvPlan, MismatchedSizesNameTheProblem) {
  Call call;
  call.attrs = attrs("[1, 1]", "[0, 0]", "[1, 1]", 1);
  sdk::StatusOr<DnnGeometry> g =
      geometryOf(call, packed(F32, {1, 4, 5, 5}), packed(F32, {2, 4, 3, 3}), packed(F32, {1, 2, 4, 4}));
  ASSERT_FALSE(g.isOk());
  EXPECT_NE(g.status().message().find("spatial dim 0 of the result is 4, the attributes give 3"), std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace plugsdk::cuda
