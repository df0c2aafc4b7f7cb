// The implicit-GEMM convolution (library/conv_*): its module (validated, two Workgroup tiles,
// two barriers, no divide, a fixed 16 x 16 work-group), exact division by multiplying, the call's attributes and
// launch plan, and its numbers on the OpenCL device (PoCL in the toolbox) against a direct
// double-precision convolution over the same strided views: 1-, 2- and 3-d, groups
// (depthwise included), stride, padding, dilation, permuted and offset operands, a weight
// gradient's shape (a kernel as large as the image), no input channels, and what lies
// between the result's elements left untouched. The device tests skip, saying why, without
// an OpenCL device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/level_zero/library/conv_call.h"
#include "backends/level_zero/library/conv_spirv.h"
#include "backends/level_zero/library/divide.h"
#include "backends/level_zero/spirv/validate.h"
#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::library {
namespace {

/// A strided view: sizes, strides and offset in elements.
struct View {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t span() const {
    int64_t last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides[d];
    return last + 1;
  }
};

View rowMajor(const std::vector<int64_t>& sizes, int64_t offset = 0) {
  View v{sizes, std::vector<int64_t>(sizes.size(), 1), offset};
  for (size_t d = sizes.size() - 1; d-- > 0;) v.strides[d] = v.strides[d + 1] * sizes[d + 1];
  return v;
}

/// The view of `sizes` stored with its dims in the order `storage` (outermost first).
View permuted(const std::vector<int64_t>& sizes, const std::vector<size_t>& storage, int64_t offset = 0) {
  View v{sizes, std::vector<int64_t>(sizes.size(), 0), offset};
  int64_t stride = 1;
  for (size_t i = storage.size(); i-- > 0;) {
    v.strides[storage[i]] = stride;
    stride *= sizes[storage[i]];
  }
  return v;
}

struct Attrs {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

/// The result's sizes for x, w and the attributes.
std::vector<int64_t> outSizes(const View& x, const View& w, const Attrs& a) {
  std::vector<int64_t> o{x.sizes[0], w.sizes[0]};
  for (size_t i = 0; i + 2 < x.sizes.size(); ++i)
    o.push_back((x.sizes[2 + i] + 2 * a.padding[i] - a.dilation[i] * (w.sizes[2 + i] - 1) - 1) / a.stride[i] + 1);
  return o;
}

/// A ConvCall whose expressions are constants.
ConvCall callOf(const View& x, const View& w, const View& y, const Attrs& a) {
  ConvCall c;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(c.pool.size()), 1};
    c.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
    return e;
  };
  auto desc = [&](const View& v) {
    OperandDesc d;
    d.dtype = PLUGSDK_DTYPE_F32;
    for (size_t i = 0; i < v.sizes.size(); ++i) {
      d.sizes.push_back(expr(v.sizes[i]));
      d.strides.push_back(expr(v.strides[i]));
    }
    d.offset = expr(v.offset);
    return d;
  };
  c.x = desc(x);
  c.w = desc(w);
  c.out = desc(y);
  c.stride = a.stride;
  c.padding = a.padding;
  c.dilation = a.dilation;
  c.groups = a.groups;
  return c;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(ImplicitGemmConv, TheModuleHasTwoTilesAndTwoBarriers) {
  sdk::StatusOr<std::vector<uint32_t>> words = implicitGemmConvModule("conv");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  EXPECT_EQ(spirv::validatorMessage(*words, spirv::TargetEnv::kOpenCL1_2), "");
  sdk::StatusOr<std::string> text = spirv::disassemble(*words);
  ASSERT_TRUE(text.isOk());
  EXPECT_NE(text->find("OpExecutionMode %conv LocalSize 16 16 1"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpExecutionMode %conv ContractionOff"), std::string::npos) << *text;
  EXPECT_EQ(count(*text, "OpControlBarrier"), 2u) << *text;
  EXPECT_EQ(count(*text, "OpVariable %_ptr_Workgroup"), 2u) << *text;
  EXPECT_EQ(count(*text, "OpUDiv"), 0u) << *text;  // multiplies and shifts (divide.h)
  EXPECT_EQ(count(*text, "OpFunctionParameter %ulong"), static_cast<size_t>(kConvScalars)) << *text;
}

TEST(ImplicitGemmConv, MagicDivisionIsExactBelow2To31) {
  // Every divisor up to 3000 against dividends near each multiple of it and at the limit, and
  // large divisors (powers of two and their neighbours, random ones) against random dividends.
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> n31(0, kMagicLimit - 1);
  auto check = [&](int64_t d, int64_t n) {
    const MagicDivisor m = magicDivisor(d);
    ASSERT_LT(static_cast<unsigned __int128>(n) * static_cast<unsigned __int128>(m.multiplier),
              static_cast<unsigned __int128>(1) << 63)
        << d;
    ASSERT_EQ(magicDivide(n, m), n / d) << n << " / " << d;
  };
  for (int64_t d = 1; d <= 3000; ++d) {
    for (int64_t q : {int64_t{0}, int64_t{1}, int64_t{7}, (kMagicLimit - 1) / d})
      for (int64_t e : {-1, 0, 1})
        if (q * d + e >= 0 && q * d + e < kMagicLimit) check(d, q * d + e);
    check(d, kMagicLimit - 1);
  }
  for (int b = 12; b < 31; ++b)
    for (int64_t d : {(int64_t{1} << b) - 1, int64_t{1} << b, (int64_t{1} << b) + 1})
      for (int i = 0; i < 200; ++i) check(d, n31(rng));
  for (int i = 0; i < 20000; ++i) check(std::uniform_int_distribution<int64_t>(1, kMagicLimit - 1)(rng), n31(rng));
}

TEST(ImplicitGemmConv, AttributesFromTheCall) {
  const View x = rowMajor({2, 4, 9, 9}), w = rowMajor({6, 2, 3, 3}), y = rowMajor({2, 6, 5, 7});
  ConvCall ref = callOf(x, w, y, {});
  std::vector<plugsdk_tensor_desc_t> in(2), out(1);
  auto desc = [&](const OperandDesc& d) {
    return plugsdk_tensor_desc_t{d.dtype, static_cast<uint32_t>(d.sizes.size()), d.sizes.data(), d.strides.data(),
                                 d.offset};
  };
  in[0] = desc(ref.x);
  in[1] = desc(ref.w);
  out[0] = desc(ref.out);
  sdk::LibraryCall lc{};
  lc.op = PLUGSDK_LIBRARY_CONVOLUTION;
  lc.inputs = {in.data(), in.size()};
  lc.outputs = {out.data(), out.size()};
  lc.indexPool = {ref.pool.data(), ref.pool.size()};
  auto from = [&](const char* attrs) {
    lc.attributes = attrs;
    return ConvCall::from(lc);
  };
  sdk::StatusOr<ConvCall> c = from(
      "stride = [2, 1], padding = [1], dilation = [1, 2], transposed = false, output_padding = [0, 0], groups = 2");
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_EQ(c->stride, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(c->padding, (std::vector<int64_t>{1, 1}));  // one entry for every spatial dim
  EXPECT_EQ(c->dilation, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c->groups, 2);
  sdk::StatusOr<std::vector<ConvLaunch>> plan = planConvLaunches(*c, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  sdk::StatusOr<ConvCall> t = from(
      "stride = [1, 1], padding = [0, 0], dilation = [1, 1], transposed = true, output_padding = [0, 0], groups = 1");
  ASSERT_FALSE(t.isOk());
  EXPECT_EQ(t.status().code(), sdk::Code::kUnimplemented);
  EXPECT_NE(t.status().message().find("transposed"), std::string::npos) << t.status().message();
  sdk::StatusOr<ConvCall> sym = from(
      "stride = [1, 1], padding = [s0, 0], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1");
  ASSERT_FALSE(sym.isOk());
  EXPECT_EQ(sym.status().code(), sdk::Code::kUnimplemented) << sym.status().message();
  in[0].dtype = PLUGSDK_DTYPE_F64;
  sdk::StatusOr<ConvCall> f64 = from(
      "stride = [1, 1], padding = [0, 0], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1");
  ASSERT_FALSE(f64.isOk());
  EXPECT_NE(f64.status().message().find("f32 only"), std::string::npos) << f64.status().message();
}

TEST(ImplicitGemmConv, PlanNormalizesToThreeSpatialDimsAndSplitsLargeGrids) {
  // 1-d: x [3, 4, 40], w [6, 2, 5], groups 2, stride 3, padding 2, dilation 2 -> y [3, 6, 12].
  const Attrs a{{3}, {2}, {2}, 2};
  const View x = rowMajor({3, 4, 40}, 5), w = rowMajor({6, 2, 5}), y = rowMajor({3, 6, 12}, 1);
  sdk::StatusOr<std::vector<ConvLaunch>> p = planConvLaunches(callOf(x, w, y, a), {});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->size(), 1u);
  const ConvLaunch& l = (*p)[0];
  EXPECT_EQ(l.groups, (std::array<uint64_t, 3>{3, 1, 2}));  // 3 images x 12 positions, 3 channels, 2 groups
  EXPECT_EQ(l.xOffset, 5);
  EXPECT_EQ(l.yOffset, 1);
  EXPECT_EQ(l.scalars[kConvOcg], 3);
  EXPECT_EQ(l.scalars[kConvCols], 36);
  EXPECT_EQ(l.scalars[kConvP], 12);
  EXPECT_EQ(l.scalars[kConvR], 10);
  EXPECT_EQ(l.scalars[kConvKs], 5);
  EXPECT_EQ(l.scalars[kConvK1], 1);
  EXPECT_EQ(l.scalars[kConvK2], 5);
  EXPECT_EQ(l.scalars[kConvO2], 12);
  EXPECT_EQ(l.scalars[kConvI0 + 2], 40);
  EXPECT_EQ(l.scalars[kConvI0], 1);
  EXPECT_EQ(l.scalars[kConvS0 + 2], 3);
  EXPECT_EQ(l.scalars[kConvPad0 + 2], 2);
  EXPECT_EQ(l.scalars[kConvPad0], 0);
  EXPECT_EQ(l.scalars[kConvD0 + 2], 2);
  EXPECT_EQ(l.scalars[kConvXN + 1], 40);
  EXPECT_EQ(l.scalars[kConvYN + 4], 1);
  // Column tiles past kMaxGroups: launches of kMaxGroups tiles at most, each with its first column.
  const View bx = rowMajor({140000, 2, 16}), bw = rowMajor({2, 1, 1}), by = rowMajor({140000, 2, 16});
  p = planConvLaunches(callOf(bx, bw, by, {{1}, {0}, {1}, 2}), {});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[1].groups, (std::array<uint64_t, 3>{kMaxGroups, 1, 2}));
  EXPECT_EQ((*p)[1].scalars[kConvColBase], static_cast<int64_t>(kMaxGroups * kTile));
  EXPECT_EQ((*p)[2].groups[0], 140000 - 2 * kMaxGroups);
  // Groups past kMaxGroups likewise, along z.
  const View gx = rowMajor({1, 70000, 3}), gw = rowMajor({70000, 1, 1});
  p = planConvLaunches(callOf(gx, gw, gx, {{1}, {0}, {1}, 70000}), {});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].groups, (std::array<uint64_t, 3>{1, 1, kMaxGroups}));
  EXPECT_EQ((*p)[1].groups[2], 70000 - kMaxGroups);
  EXPECT_EQ((*p)[1].scalars[kConvZBase], static_cast<int64_t>(kMaxGroups));
  // Sizes that disagree with the attributes are an error naming them.
  sdk::StatusOr<std::vector<ConvLaunch>> bad = planConvLaunches(callOf(x, w, rowMajor({3, 6, 13}), a), {});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("spatial dim 0 of the result is 13, the attributes give 12"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(planConvLaunches(callOf(x, rowMajor({6, 3, 5}), y, a), {}).isOk());  // 3 x 2 groups != 4
}

using namespace opencl;           // NOLINT: Device, cl_command_queue, CL_SUCCESS
using namespace opencl::testing;  // NOLINT: OPEN_OR_SKIP, SvmArray

/// Runs the kernel on x, w (random) into y (pre-filled with a sentinel) and checks every
/// element of y: the convolution where the view reaches, the sentinel elsewhere.
void runAndCheck(opencl::Device& dev, const View& x, const View& w, const Attrs& a, const View& y) {
  sdk::StatusOr<std::vector<uint32_t>> words = implicitGemmConvModule("plugsdk_conv_test");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<opencl::Program>> prog = opencl::buildProgram(dev, *words, "conv", "conv", "");
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  LaunchShape shape;
  shape.name = "conv";
  sdk::StatusOr<std::unique_ptr<opencl::Kernel>> k = opencl::createKernel(dev.api(), *prog, "plugsdk_conv_test", shape);
  ASSERT_TRUE(k.isOk()) << k.status().message();

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> hx(static_cast<size_t>(std::max<int64_t>(x.span(), 1))),
      hw(static_cast<size_t>(std::max<int64_t>(w.span(), 1)));
  for (float& v : hx) v = u(rng);
  for (float& v : hw) v = u(rng);
  const float sentinel = -12345.0f;
  std::vector<float> hy(static_cast<size_t>(y.span()) + 3, sentinel);
  SvmArray<float> dx(dev, hx.size(), hx), dw(dev, hw.size(), hw), dy(dev, hy.size(), hy);

  sdk::StatusOr<std::vector<ConvLaunch>> plan = planConvLaunches(callOf(x, w, y, a), {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  sdk::StatusOr<cl_command_queue> q = dev.createQueue();
  ASSERT_TRUE(q.isOk());
  for (const ConvLaunch& l : *plan) {
    void* const px = dx.p + l.xOffset;
    void* const pw = dw.p + l.wOffset;
    void* const py = dy.p + l.yOffset;
    std::vector<KernelParam> params{{true, sizeof(void*), &px}, {true, sizeof(void*), &pw}, {true, sizeof(void*), &py}};
    for (const int64_t& s : l.scalars) params.push_back({false, sizeof(int64_t), &s});
    sdk::Status st = opencl::launchGroups(**k, params, {kTile, kTile, 1}, l.groups, *q);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  ASSERT_EQ(dev.api().finish(*q), CL_SUCCESS);
  dev.api().releaseCommandQueue(*q);
  const std::vector<float> got = dy.read();

  // The reference: a direct convolution, every result element, in double.
  const size_t sd = x.sizes.size() - 2;
  const int64_t ocg = w.sizes[0] / a.groups, cg = w.sizes[1];
  int64_t positions = 1, taps = 1;
  for (size_t i = 0; i < sd; ++i) {
    positions *= y.sizes[2 + i];
    taps *= w.sizes[2 + i];
  }
  std::vector<bool> reached(got.size(), false);
  std::vector<int64_t> o(sd), kpos(sd);
  for (int64_t n = 0; n < y.sizes[0]; ++n)
    for (int64_t oc = 0; oc < y.sizes[1]; ++oc)
      for (int64_t p = 0; p < positions; ++p) {
        for (size_t i = sd, rest = static_cast<size_t>(p); i-- > 0;) {
          o[i] = static_cast<int64_t>(rest) % y.sizes[2 + i];
          rest /= static_cast<size_t>(y.sizes[2 + i]);
        }
        const int64_t g = oc / ocg;
        double want = 0, mag = 0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t kp = 0; kp < taps; ++kp) {
            int64_t xAt = x.offset + n * x.strides[0] + (g * cg + c) * x.strides[1];
            int64_t wAt = w.offset + oc * w.strides[0] + c * w.strides[1];
            bool inside = true;
            for (size_t i = sd, rest = static_cast<size_t>(kp); i-- > 0;) {
              const int64_t k = static_cast<int64_t>(rest) % w.sizes[2 + i];
              rest /= static_cast<size_t>(w.sizes[2 + i]);
              const int64_t at = o[i] * a.stride[i] - a.padding[i] + k * a.dilation[i];
              inside = inside && at >= 0 && at < x.sizes[2 + i];
              xAt += at * x.strides[2 + i];
              wAt += k * w.strides[2 + i];
            }
            if (!inside) continue;
            const double prod =
                static_cast<double>(hx[static_cast<size_t>(xAt)]) * static_cast<double>(hw[static_cast<size_t>(wAt)]);
            want += prod;
            mag += std::fabs(prod);
          }
        int64_t yAt = y.offset + n * y.strides[0] + oc * y.strides[1];
        for (size_t i = 0; i < sd; ++i) yAt += o[i] * y.strides[2 + i];
        reached[static_cast<size_t>(yAt)] = true;
        // f32 products summed in order: within (R + 2) ulps of the magnitudes' sum.
        ASSERT_NEAR(got[static_cast<size_t>(yAt)], want, static_cast<double>(cg * taps + 2) * 6e-8 * mag + 1e-30)
            << "image " << n << " channel " << oc << " position " << p;
      }
  for (size_t i = 0; i < got.size(); ++i) {
    if (reached[i]) continue;
    ASSERT_EQ(got[i], sentinel) << "element " << i << " lies outside the result";
  }
}

/// runAndCheck with row-major operands.
void runPacked(opencl::Device& dev, const std::vector<int64_t>& x, const std::vector<int64_t>& w, const Attrs& a) {
  const View xv = rowMajor(x), wv = rowMajor(w);
  runAndCheck(dev, xv, wv, a, rowMajor(outSizes(xv, wv, a)));
}

TEST(ImplicitGemmConvOnOpenCL, TwoDimsWithGroupsStridePaddingDilation) {
  OPEN_OR_SKIP(dev);
  runPacked(dev, {2, 6, 9, 11}, {10, 3, 3, 2}, {{2, 1}, {1, 2}, {1, 2}, 2});
  runPacked(dev, {1, 3, 32, 32}, {16, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1});  // exact tiles of output
  runPacked(dev, {1, 40, 7, 7}, {33, 40, 1, 1}, {{1, 1}, {0, 0}, {1, 1}, 1});  // 1x1, R over several stages
  runPacked(dev, {2, 8, 13, 13}, {16, 1, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, 8});  // depthwise, 2 per channel
  runPacked(dev, {1, 2, 5, 5}, {3, 2, 7, 7}, {{1, 1}, {3, 3}, {1, 1}, 1});     // kernel larger than the input
}

TEST(ImplicitGemmConvOnOpenCL, OneAndThreeDims) {
  OPEN_OR_SKIP(dev);
  runPacked(dev, {3, 5, 40}, {7, 5, 5}, {{3}, {2}, {2}, 1});
  runPacked(dev, {2, 4, 50}, {6, 2, 4}, {{1}, {0}, {3}, 2});
  runPacked(dev, {1, 4, 5, 6, 7}, {6, 2, 2, 3, 2}, {{1, 2, 1}, {1, 0, 1}, {2, 1, 1}, 2});
}

TEST(ImplicitGemmConvOnOpenCL, PermutedOffsetAndPaddedViews) {
  OPEN_OR_SKIP(dev);
  // x stored channels-last, w as [K..., C, OC], y with padded rows and an offset.
  const View x = permuted({2, 5, 8, 9}, {0, 2, 3, 1}, 3), w = permuted({7, 5, 3, 3}, {2, 3, 1, 0}, 2);
  const Attrs a{{1, 2}, {1, 0}, {1, 1}, 1};
  const std::vector<int64_t> ys = outSizes(x, w, a);  // [2, 7, 8, 4]
  const View y{ys, {7 * 8 * 6, 8 * 6, 6, 1}, 4};
  runAndCheck(dev, x, w, a, y);
}

TEST(ImplicitGemmConvOnOpenCL, AWeightGradientsShape) {
  OPEN_OR_SKIP(dev);
  // The core's weight gradient: x' = x [N, C, H, W] read as [C, N, H, W], by w' = dy [N, K, H', W']
  // read as [K, N, H', W'] (a kernel as large as the image), giving [C, K, R, S].
  const View x = permuted({3, 4, 20, 20}, {1, 0, 2, 3}), w = permuted({5, 4, 18, 18}, {1, 0, 2, 3});
  const Attrs a{{1, 1}, {0, 0}, {1, 1}, 1};
  runAndCheck(dev, x, w, a, rowMajor(outSizes(x, w, a)));
}

TEST(ImplicitGemmConvOnOpenCL, NoInputChannelsWritesZeros) {
  OPEN_OR_SKIP(dev);
  runPacked(dev, {2, 0, 5, 5}, {3, 0, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1});
}

}  // namespace
}  // namespace plugsdk::level_zero::library
