// The tiled matmul (library/): its module (validated, Workgroup tiles, two barriers, a fixed
// 16 x 16 work-group), its launch plan from strided descriptors, and its numbers on the
// OpenCL device (PoCL in the toolbox) against a double-precision product over the same
// strided views: odd sizes, transposed and batched operands with offsets and a broadcast
// batch, a zero K, and what lies between the result's rows left untouched. The device tests
// skip, saying why, without an OpenCL device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/level_zero/library/matmul_call.h"
#include "backends/level_zero/library/matmul_spirv.h"
#include "backends/level_zero/spirv/validate.h"
#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::library {
namespace {

/// A strided view: sizes, strides and offset in elements.
struct View {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  int64_t span() const {  // elements the view reaches, from the buffer's start
    int64_t last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides[d];
    return last + 1;
  }
};

/// A MatmulCall whose expressions are constants.
MatmulCall callOf(const View& a, const View& b, const View& c) {
  MatmulCall m;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(m.pool.size()), 1};
    m.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
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
  m.a = desc(a);
  m.b = desc(b);
  m.out = desc(c);
  return m;
}

TEST(TiledMatmul, TheModuleHasWorkgroupTilesAndTwoBarriers) {
  sdk::StatusOr<std::vector<uint32_t>> words = tiledMatmulModule("mm");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  EXPECT_EQ(spirv::validatorMessage(*words, spirv::TargetEnv::kOpenCL1_2), "");
  sdk::StatusOr<std::string> text = spirv::disassemble(*words);
  ASSERT_TRUE(text.isOk());
  EXPECT_NE(text->find("OpExecutionMode %mm LocalSize 16 16 1"), std::string::npos) << *text;
  EXPECT_NE(text->find("OpExecutionMode %mm ContractionOff"), std::string::npos) << *text;
  size_t barriers = 0, workgroupVars = 0;
  for (size_t p = text->find("OpControlBarrier"); p != std::string::npos; p = text->find("OpControlBarrier", p + 1))
    ++barriers;
  for (size_t p = text->find("OpVariable %_ptr_Workgroup"); p != std::string::npos;
       p = text->find("OpVariable %_ptr_Workgroup", p + 1))
    ++workgroupVars;
  EXPECT_EQ(barriers, 2u) << *text;
  EXPECT_EQ(workgroupVars, 2u) << *text;
}

TEST(TiledMatmul, PlanLoopsOuterBatchDimsAndGroupsTheInnermost) {
  // [2, 3, 20, 7] x [2, 3, 7, 33]: dim 0 looped (2 launches), dim 1 the third group id.
  const View a{{2, 3, 20, 7}, {500, 140, 7, 1}, 4}, b{{2, 3, 7, 33}, {0, 231, 33, 1}, 0},
      c{{2, 3, 20, 33}, {1980, 660, 33, 1}, 10};
  sdk::StatusOr<std::vector<MatmulLaunch>> p = planLaunches(callOf(a, b, c), {});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].groups, (std::array<uint64_t, 3>{3, 2, 3}));
  EXPECT_EQ((*p)[1].aOffset, 504);
  EXPECT_EQ((*p)[1].bOffset, 0);
  EXPECT_EQ((*p)[1].cOffset, 1990);
  EXPECT_EQ((*p)[0].scalars, (std::array<int64_t, kMatmulScalars>{20, 33, 7, 7, 1, 33, 1, 33, 1, 140, 231, 660}));
  // An empty result launches nothing; sizes that disagree are an error naming them.
  EXPECT_TRUE(planLaunches(callOf({{0, 7}, {7, 1}}, {{7, 5}, {5, 1}}, {{0, 5}, {5, 1}}), {})->empty());
  sdk::StatusOr<std::vector<MatmulLaunch>> bad =
      planLaunches(callOf({{4, 7}, {7, 1}}, {{6, 5}, {5, 1}}, {{4, 5}, {5, 1}}), {});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("does not give the result's"), std::string::npos) << bad.status().message();
}

using namespace opencl;           // NOLINT: Device, cl_command_queue, CL_SUCCESS for the macro and the runs
using namespace opencl::testing;  // NOLINT: OPEN_OR_SKIP, SvmArray

/// Runs the tiled kernel on a, b (random) into c (pre-filled with a sentinel) and checks every
/// element of c: the product where the view reaches, the sentinel elsewhere.
void runAndCheck(opencl::Device& dev, const View& a, const View& b, const View& c) {
  sdk::StatusOr<std::vector<uint32_t>> words = tiledMatmulModule("plugsdk_matmul_test");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<opencl::Program>> prog = opencl::buildProgram(dev, *words, "matmul", "mm", "");
  ASSERT_TRUE(prog.isOk()) << prog.status().message();
  LaunchShape shape;
  shape.name = "matmul";
  sdk::StatusOr<std::unique_ptr<opencl::Kernel>> k =
      opencl::createKernel(dev.api(), *prog, "plugsdk_matmul_test", shape);
  ASSERT_TRUE(k.isOk()) << k.status().message();

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  // At least one element each (an empty operand still has an address; SVM copies of 0 bytes fail).
  std::vector<float> ha(static_cast<size_t>(std::max<int64_t>(a.span(), 1))),
      hb(static_cast<size_t>(std::max<int64_t>(b.span(), 1)));
  for (float& x : ha) x = u(rng);
  for (float& x : hb) x = u(rng);
  const float sentinel = -12345.0f;
  std::vector<float> hc(static_cast<size_t>(c.span()) + 3, sentinel);
  SvmArray<float> da(dev, ha.size(), ha), db(dev, hb.size(), hb), dc(dev, hc.size(), hc);

  const MatmulCall call = callOf(a, b, c);
  sdk::StatusOr<std::vector<MatmulLaunch>> plan = planLaunches(call, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  sdk::StatusOr<cl_command_queue> q = dev.createQueue();
  ASSERT_TRUE(q.isOk());
  for (const MatmulLaunch& l : *plan) {
    void* const pa = da.p + l.aOffset;
    void* const pb = db.p + l.bOffset;
    void* const pc = dc.p + l.cOffset;
    std::vector<KernelParam> params{{true, sizeof(void*), &pa}, {true, sizeof(void*), &pb}, {true, sizeof(void*), &pc}};
    for (const int64_t& s : l.scalars) params.push_back({false, sizeof(int64_t), &s});
    sdk::Status st = opencl::launchGroups(**k, params, {kTile, kTile, 1}, l.groups, *q);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  ASSERT_EQ(dev.api().finish(*q), CL_SUCCESS);
  dev.api().releaseCommandQueue(*q);
  const std::vector<float> got = dc.read();

  // The reference: every result element by its batch index, in double.
  const size_t r = c.sizes.size();
  const int64_t m = c.sizes[r - 2], n = c.sizes[r - 1], kk = a.sizes[r - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) batch *= c.sizes[d];
  std::vector<bool> reached(got.size(), false);
  for (int64_t z = 0; z < batch; ++z) {
    int64_t oa = a.offset, ob = b.offset, oc = c.offset, rest = z;
    for (size_t d = r - 2; d-- > 0;) {
      const int64_t i = rest % c.sizes[d];
      rest /= c.sizes[d];
      oa += i * a.strides[d];
      ob += i * b.strides[d];
      oc += i * c.strides[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, mag = 0;
        for (int64_t t = 0; t < kk; ++t) {
          const double x = ha[static_cast<size_t>(oa + i * a.strides[r - 2] + t * a.strides[r - 1])];
          const double y = hb[static_cast<size_t>(ob + t * b.strides[r - 2] + j * b.strides[r - 1])];
          want += x * y;
          mag += std::fabs(x * y);
        }
        const size_t at = static_cast<size_t>(oc + i * c.strides[r - 2] + j * c.strides[r - 1]);
        reached[at] = true;
        // f32 products summed in order: within (K + 2) ulps of the magnitudes' sum.
        ASSERT_NEAR(got[at], want, static_cast<double>(kk + 2) * 6e-8 * mag + 1e-30)
            << "batch " << z << " (" << i << ", " << j << ")";
      }
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (reached[i]) continue;
    ASSERT_EQ(got[i], sentinel) << "element " << i << " lies outside the result";
  }
}

TEST(TiledMatmulOnOpenCL, OddSizesRowMajor) {
  OPEN_OR_SKIP(dev);
  runAndCheck(dev, {{37, 19}, {19, 1}}, {{19, 23}, {23, 1}}, {{37, 23}, {23, 1}});
  runAndCheck(dev, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}}, {{1, 1}, {1, 1}});
  runAndCheck(dev, {{16, 48}, {48, 1}}, {{48, 32}, {32, 1}}, {{16, 32}, {32, 1}});  // exact tiles
}

TEST(TiledMatmulOnOpenCL, TransposedOperandsOffsetsAndPaddedRows) {
  OPEN_OR_SKIP(dev);
  // a = A^T's storage ([K, M] row-major read as [M, K]), b likewise, c with rows of 40 for 33.
  runAndCheck(dev, {{17, 50}, {1, 17}, 5}, {{50, 33}, {1, 50}, 3}, {{17, 33}, {40, 1}, 7});
  // c written transposed (column-major).
  runAndCheck(dev, {{29, 31}, {31, 1}}, {{31, 18}, {18, 1}}, {{29, 18}, {1, 29}});
}

TEST(TiledMatmulOnOpenCL, BatchedWithNonNestingAndBroadcastStrides) {
  OPEN_OR_SKIP(dev);
  // [2, 3, 5, 33] x [2, 3, 33, 18]: a's batch dims swapped in memory, b broadcast over dim 0.
  runAndCheck(dev, {{2, 3, 5, 33}, {165, 330, 33, 1}, 2}, {{2, 3, 33, 18}, {0, 594, 18, 1}, 0},
              {{2, 3, 5, 18}, {270, 90, 18, 1}, 1});
  // One batch dim, the result's batch stride padded.
  runAndCheck(dev, {{4, 21, 9}, {189, 9, 1}}, {{4, 9, 17}, {153, 17, 1}}, {{4, 21, 17}, {400, 17, 1}});
}

TEST(TiledMatmulOnOpenCL, AZeroKWritesZeros) {
  OPEN_OR_SKIP(dev);
  runAndCheck(dev, {{5, 0}, {1, 1}}, {{0, 7}, {7, 1}}, {{5, 7}, {7, 1}});
}

}  // namespace
}  // namespace plugsdk::level_zero::library
