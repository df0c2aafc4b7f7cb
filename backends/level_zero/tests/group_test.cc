// Row reductions in work-groups (spirv/mapping.h, lower_group.cc) run on the OpenCL device
// (PoCL): the numbers of each kind of reduce against the same kernel with one work-item per
// point and against values computed here; argmax's first position when the equal values and
// NaNs lie on different work-items; a failed CHECK inside a spread loop reported without a
// hang (the work-item skips the rest of its iteration instead of returning before the group's
// barriers); a loop of two dims and a masked load; stores outside loops done once.
#include <cmath>
#include <limits>

#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::opencl {
namespace {

using namespace testing;  // NOLINT: the helpers of opencl_test_util.h

constexpr spirv::CompileOptions kPointPerWorkItem{spirv::TargetEnv::kOpenCL2_0, true, 0};
/// build()'s default deals a spread loop strided (what Level Zero gets); this, in contiguous
/// chunks (what the plugin gives PoCL).
constexpr spirv::CompileOptions kChunks{spirv::TargetEnv::kOpenCL2_0, true, spirv::kDefaultGroupSize, true};

TEST(OpenCLGroups, RowSumsMaxAndProductMatchOneWorkItemPerPoint) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // Three rows of s1 values: sum, max, sum of i32 (exact), and a product.
  const std::string text =
      R"(kernel @rows(%x: f32 in, %n: i32 in, %y: f32 out, %m: f32 out, %k: i32 out, %p: f32 out) grid [3] {
  loop [s1] {
    %0 = load %x[s1*i0+r0] : f32
    %1 = reduce sum %0 : f32
    %2 = reduce max %0 : f32
    %3 = load %n[s1*i0+r0] : i32
    %4 = reduce sum %3 : i32
    %5 = const 1.001 : f32
    %6 = reduce prod %5 : f32
  }
  store %y[i0], %1
  store %m[i0], %2
  store %k[i0], %4
  store %p[i0], %6
}
)";
  Built group = build(d, **status, text);
  Built chunks = build(d, **status, text, kChunks);
  Built point = build(d, **status, text, kPointPerWorkItem);
  ASSERT_TRUE(group.kernel && chunks.kernel && point.kernel);
  EXPECT_EQ(group.kernel->shape.groupSize, spirv::kDefaultGroupSize);
  EXPECT_EQ(point.kernel->shape.groupSize, 0u);
  for (int64_t n : {1, 63, 64, 1000, 4099}) {
    SCOPED_TRACE(n);
    std::vector<float> x(3 * n);
    std::vector<int32_t> ints(3 * n);
    for (int64_t i = 0; i < 3 * n; ++i) {
      x[i] = static_cast<float>(std::sin(0.37 * i) * 10);
      ints[i] = static_cast<int32_t>((i * 7919) % 1000) - 500;
    }
    SvmArray<float> ax(d, x.size(), x);
    SvmArray<int32_t> an(d, ints.size(), ints);
    for (Built* b : {&group, &chunks, &point}) {
      SvmArray<float> ay(d, 3), am(d, 3), ap(d, 3);
      SvmArray<int32_t> ak(d, 3);
      sdk::Status st = run(d, **status, *b->kernel, {ax.p, an.p, ay.p, am.p, ak.p, ap.p}, {n});
      ASSERT_TRUE(st.isOk()) << st.message();
      const std::vector<float> y = ay.read(), m = am.read(), p = ap.read();
      const std::vector<int32_t> k = ak.read();
      for (int64_t r = 0; r < 3; ++r) {
        double sum = 0, sumAbs = 0;
        float max = -std::numeric_limits<float>::infinity();
        int64_t isum = 0;
        for (int64_t i = 0; i < n; ++i) {
          sum += x[r * n + i];
          sumAbs += std::fabs(x[r * n + i]);
          max = std::max(max, x[r * n + i]);
          isum += ints[r * n + i];
        }
        EXPECT_NEAR(y[r], sum, 1e-6 * sumAbs + 1e-6) << "row " << r;
        EXPECT_EQ(m[r], max) << "row " << r;
        EXPECT_EQ(k[r], isum) << "row " << r;
        // 1.001f to the n-th, each product rounded: within n half-ulps.
        const double prod = std::pow(static_cast<double>(1.001f), static_cast<double>(n));
        EXPECT_NEAR(p[r], prod, static_cast<double>(n) * 6e-8 * prod) << "row " << r;
      }
    }
  }
}

constexpr const char* kArgmaxKernel = R"(kernel @am(%x: f32 in, %y: i64 out, %z: i64 out) grid [4] {
  loop [300] {
    %0 = load %x[300*i0+r0] : f32
    %1 = reduce argmax %0 : i64
    %2 = reduce argmin %0 : i64
  }
  store %y[i0], %1
  store %z[i0], %2
}
)";

TEST(OpenCLGroups, ArgmaxKeepsTheFirstPositionAcrossWorkItems) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  Built b = build(d, **status, kArgmaxKernel);
  ASSERT_TRUE(b.kernel);
  ASSERT_EQ(b.kernel->shape.groupSize, 256u);
  Built c = build(d, **status, kArgmaxKernel, kChunks);
  ASSERT_TRUE(c.kernel);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(1200, 0.0f);
  // Row 0: the max 5 at 10, 70 and 200, the min -3 at 130 and 250: with 256 work-items in
  // contiguous chunks (PoCL) or strided, and a row of 300, they lie on different work-items.
  x[70] = 5, x[10] = 5, x[200] = 5, x[250] = -3, x[130] = -3;
  // Row 1: NaNs at 150 and 100 (the first NaN wins both), a larger value before them.
  x[300 + 150] = nan, x[300 + 100] = nan, x[300 + 5] = 9;
  // Row 2: every value -inf: position 0 for both.
  for (int i = 0; i < 300; ++i) x[600 + i] = -inf;
  // Row 3: increasing: max at 299, min at 0.
  for (int i = 0; i < 300; ++i) x[900 + i] = static_cast<float>(i);
  SvmArray<float> ax(d, x.size(), x);
  for (Built* k : {&b, &c}) {
    SvmArray<int64_t> ay(d, 4), az(d, 4);
    sdk::Status st = run(d, **status, *k->kernel, {ax.p, ay.p, az.p}, {});
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(ay.read(), (std::vector<int64_t>{10, 100, 0, 299}));
    EXPECT_EQ(az.read(), (std::vector<int64_t>{130, 100, 0, 0}));
  }
}

TEST(OpenCLGroups, FailedCheckInsideASpreadLoopIsReportedWithoutAHang) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // A gather summed over a row: the index is checked inside the loop, on one work-item.
  Built b = build(d, **status, R"(kernel @gsum(%i: i64 in, %x: f32 in, %y: f32 out) grid [2] {
  loop [200] {
    %0 = load %i[200*i0+r0] : i64
    %1 = const 0 : i64
    %2 = ge %0, %1 : bool
    %3 = const 8 : i64
    %4 = lt %0, %3 : bool
    %5 = bitwise_and %2, %4 : bool
    check %5, "index out of bounds for dimension 0 with size 8"
    %6 = load %x[%0] : f32
    %7 = reduce sum %6 : f32
  }
  store %y[i0], %7
}
)");
  ASSERT_TRUE(b.kernel);
  ASSERT_EQ(b.kernel->shape.groupSize, 128u);  // the largest power of two in a row of 200
  std::vector<int64_t> idx(400);
  for (int i = 0; i < 400; ++i) idx[i] = i % 8;
  SvmArray<int64_t> ai(d, idx.size(), idx);
  SvmArray<float> ax(d, 8, {1, 2, 3, 4, 5, 6, 7, 8}), ay(d, 2);
  sdk::Status st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(ay.read(), (std::vector<float>{900, 900}));  // 25 rounds of 1..8
  idx[333] = 1000000;                                    // row 1, one work-item
  ai.write(idx);
  st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), sdk::Code::kOutOfRange) << st.message();
  EXPECT_NE(st.message().find("index out of bounds for dimension 0 with size 8"), std::string::npos) << st.message();
}

TEST(OpenCLGroups, TwoDimLoopMaskedLoadAndStoresInsideAndAfterLoops) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // Per point: the mean over a 10 x 13 window with the last column masked off (0), then the
  // window minus its mean written out, and the mean itself (a store after the loops). The
  // second loop reads what no one wrote; the mean's store is done once.
  const std::string text = R"(kernel @win(%x: f32 in, %y: f32 out, %s: f32 out) grid [2] {
  loop [10, 13] {
    %0 = index r1 : i64
    %1 = const 12 : i64
    %2 = lt %0, %1 : bool
    %3 = load %x[130*i0+13*r0+r1] if %2 : f32
    %4 = reduce sum %3 : f32
  }
  %5 = const 120 : f32
  %6 = div %4, %5 : f32
  loop [10, 13] {
    %7 = load %x[130*i0+13*r0+r1] : f32
    %8 = sub %7, %6 : f32
    store %y[130*i0+13*r0+r1], %8
  }
  store %s[i0], %6
}
)";
  Built group = build(d, **status, text);
  Built point = build(d, **status, text, kPointPerWorkItem);
  ASSERT_TRUE(group.kernel && point.kernel);
  EXPECT_EQ(group.kernel->shape.groupSize, 128u);
  std::vector<float> x(260);
  for (int i = 0; i < 260; ++i) x[i] = static_cast<float>((i * 37) % 17);
  SvmArray<float> ax(d, x.size(), x);
  std::vector<std::vector<float>> ys, ss;
  for (Built* b : {&group, &point}) {
    SvmArray<float> ay(d, 260), as(d, 2);
    sdk::Status st = run(d, **status, *b->kernel, {ax.p, ay.p, as.p}, {});
    ASSERT_TRUE(st.isOk()) << st.message();
    ys.push_back(ay.read());
    ss.push_back(as.read());
  }
  for (int p = 0; p < 2; ++p) {
    double sum = 0;
    for (int r = 0; r < 10; ++r)
      for (int c = 0; c < 12; ++c) sum += x[130 * p + 13 * r + c];
    EXPECT_FLOAT_EQ(ss[0][p], static_cast<float>(sum / 120)) << p;
    for (int i = 0; i < 130; ++i) EXPECT_FLOAT_EQ(ys[0][130 * p + i], x[130 * p + i] - ss[0][p]) << p << " " << i;
  }
  EXPECT_EQ(ys[0], ys[1]);  // sums of small integers: exact in any order
  EXPECT_EQ(ss[0], ss[1]);
}

TEST(OpenCLGroups, ManyGroupsWithALoopAfterTheCombine) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // The conformance suite's mean subtraction (37 rows of 129): with a grid guard before the
  // barriers (an early return no work-item takes) PoCL 6.0 crashed on this from 8 groups up.
  Built b = build(d, **status, R"(kernel @center(%x: f32 in, %y: f32 out) grid [37] {
  %0 = const 129.0 : f32
  loop [129] {
    %1 = load %x[129*i0+r0] : f32
    %2 = reduce sum %1 : f32
  }
  %3 = div %2, %0 : f32
  loop [129] {
    %4 = load %x[129*i0+r0] : f32
    %5 = sub %4, %3 : f32
    store %y[129*i0+r0], %5
  }
}
)");
  ASSERT_TRUE(b.kernel);
  ASSERT_EQ(b.kernel->shape.groupSize, 128u);
  std::vector<float> x(37 * 129);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 31) % 23);
  SvmArray<float> ax(d, x.size(), x), ay(d, x.size());
  sdk::Status st = run(d, **status, *b.kernel, {ax.p, ay.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  const std::vector<float> y = ay.read();
  for (int r = 0; r < 37; ++r) {
    double sum = 0;
    for (int c = 0; c < 129; ++c) sum += x[129 * r + c];
    const float mean = static_cast<float>(sum) / 129.0f;  // small integers: the sum is exact
    for (int c = 0; c < 129; ++c) ASSERT_EQ(y[129 * r + c], x[129 * r + c] - mean) << r << " " << c;
  }
}

TEST(OpenCLGroups, FailedCheckOutsideTheLoopsSkipsThemAndIsReported) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // A row gathered by index: the index is checked before the loop (every work-item alike);
  // the group then runs the loop with no iteration and stores nothing it computed from it.
  Built b = build(d, **status, R"(kernel @rowpick(%i: i64 in, %x: f32 in, %y: f32 out) grid [16] {
  %0 = load %i[i0] : i64
  %1 = const 0 : i64
  %2 = ge %0, %1 : bool
  %3 = const 4 : i64
  %4 = lt %0, %3 : bool
  %5 = bitwise_and %2, %4 : bool
  check %5, "index out of bounds for dimension 0 with size 4"
  loop [300] {
    %6 = load %x[300*%0+r0] : f32
    %7 = reduce max %6 : f32
  }
  store %y[i0], %7
}
)");
  ASSERT_TRUE(b.kernel);
  ASSERT_EQ(b.kernel->shape.groupSize, 256u);
  std::vector<float> x(1200);
  for (int i = 0; i < 1200; ++i) x[i] = static_cast<float>(i % 300 == 17 ? 1000 + i / 300 : i % 7);
  std::vector<int64_t> idx(16);
  for (int i = 0; i < 16; ++i) idx[i] = (i * 3) % 4;
  SvmArray<int64_t> ai(d, idx.size(), idx);
  SvmArray<float> ax(d, x.size(), x), ay(d, 16);
  sdk::Status st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  const std::vector<float> y = ay.read();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(y[i], 1000.0f + static_cast<float>(idx[i])) << i;
  idx[9] = 1 << 30;
  ai.write(idx);
  st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), sdk::Code::kOutOfRange) << st.message();
  EXPECT_NE(st.message().find("kernel @rowpick: index out of bounds"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace plugsdk::level_zero::opencl
