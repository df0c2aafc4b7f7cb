// The OpenCL execution path (opencl/): SPIR-V from the lowering built and run on the OpenCL
// device (PoCL's CPU device in the toolbox), numbers checked; CHECK failures and integer
// division by zero read back from the status word; a module the consumer rejects surfaces
// its build log and the command that reproduces it. Each test that needs a device skips,
// saying why, where libOpenCL.so.1 or a platform is absent.
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "backends/level_zero/tests/opencl_test_util.h"

namespace plugsdk::level_zero::opencl {
namespace {

using namespace testing;  // NOLINT: the helpers of opencl_test_util.h

TEST(OpenCL, MissingLibraryIsNoDeviceWithTheReason) {
  sdk::StatusOr<std::shared_ptr<const Api>> api = loadApi("/nonexistent/libOpenCL.so.1");
  ASSERT_FALSE(api.isOk());
  EXPECT_EQ(api.status().code(), sdk::Code::kFailedPrecondition);
  EXPECT_NE(api.status().message().find("no OpenCL: cannot load /nonexistent/libOpenCL.so.1"), std::string::npos)
      << api.status().message();
  // A real library that is not an ICD loader: the first missing entry point is named.
  api = loadApi("libz.so.1");
  ASSERT_FALSE(api.isOk());
  EXPECT_NE(api.status().message().find("lacks clGetPlatformIDs"), std::string::npos) << api.status().message();
}

TEST(OpenCL, DeviceTakesSpirvAndSvm) {
  OPEN_OR_SKIP(d);
  EXPECT_FALSE(d.props().name.empty());
  EXPECT_NE(d.props().ilVersion.find("SPIR-V_1.0"), std::string::npos) << d.props().ilVersion;
  EXPECT_NE(d.props().svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER, 0u);
  EXPECT_GT(d.props().maxAllocBytes, 0u);
  EXPECT_TRUE(d.props().hasExtension("cl_khr_il_program") || d.props().version.find("OpenCL 3") != std::string::npos);
  EXPECT_FALSE(d.props().hasExtension("cl_khr_il"));  // whole names only
}

TEST(OpenCL, PointwiseKernelComputesItsNumbers) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk()) << status.status().message();
  Built b = build(d, **status, spirv::testing::kAxpyKernel);
  ASSERT_TRUE(b.kernel);
  const size_t n = 1000;
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f, y[i] = 1.0f - static_cast<float>(i);
  SvmArray<float> ax(d, n, x), ay(d, n, y), az(d, n + 8, std::vector<float>(n + 8, -7.0f));
  sdk::Status st = run(d, **status, *b.kernel, {ax.p, ay.p, az.p}, {static_cast<int64_t>(n)});
  ASSERT_TRUE(st.isOk()) << st.message();
  const std::vector<float> z = az.read();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] * 3.0f + y[i]) << i;
  for (size_t i = n; i < n + 8; ++i) EXPECT_EQ(z[i], -7.0f) << "written past the grid at " << i;
}

TEST(OpenCL, ReductionWithOffsetArgumentsAndF16) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  // Rows of 8 halfs summed in f32 and rounded to f16; the input passed 16 bytes in.
  Built b = build(d, **status, R"(kernel @rowsum(%x: f16 in, %y: f16 out) grid [3] {
  loop [8] {
    %0 = load %x[8*i0+r0] : f16
    %1 = reduce sum %0 : f16
  }
  store %y[i0], %1
}
)");
  ASSERT_TRUE(b.kernel);
  // f16 bit patterns: 1.0 = 0x3c00, 0.5 = 0x3800, 2.0 = 0x4000.
  std::vector<uint16_t> x(8 + 24, 0x7c00);  // +inf before the offset: must not be read
  for (size_t i = 0; i < 24; ++i) x[8 + i] = i < 8 ? 0x3c00 : i < 16 ? 0x3800 : 0x4000;
  SvmArray<uint16_t> ax(d, x.size(), x), ay(d, 3);
  sdk::Status st = run(d, **status, *b.kernel, {ax.p + 8, ay.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(ay.read(), (std::vector<uint16_t>{0x4800, 0x4400, 0x4c00}));  // 8, 4, 16
}

TEST(OpenCL, FailedCheckIsReportedWithItsMessage) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  Built b = build(d, **status, spirv::testing::kGatherKernel);
  ASSERT_TRUE(b.kernel);
  SvmArray<int64_t> ai(d, 4, {3, 2, 1, 0});
  SvmArray<float> ax(d, 4, {10, 20, 30, 40}), ay(d, 4);
  sdk::Status st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(ay.read(), (std::vector<float>{40, 30, 20, 10}));
  ai.write({0, 1, 7, 2});
  st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), sdk::Code::kOutOfRange) << st.message();
  EXPECT_NE(st.message().find("kernel @gather: index out of bounds for dimension 0 with size 4"), std::string::npos)
      << st.message();
  // Collected once: the word is cleared, and the next good launch is OK.
  ai.write({1, 1, 1, 1});
  st = run(d, **status, *b.kernel, {ai.p, ax.p, ay.p}, {});
  EXPECT_TRUE(st.isOk()) << st.message();
}

TEST(OpenCL, IntegerDivisionByZeroIsReported) {
  OPEN_OR_SKIP(d);
  auto status = createKernelStatus(d);
  ASSERT_TRUE(status.isOk());
  Built b = build(d, **status, R"(kernel @idiv(%x: i32 in, %y: i32 in, %z: i32 out) grid [3] {
  %0 = load %x[i0] : i32
  %1 = load %y[i0] : i32
  %2 = remainder %0, %1 : i32
  store %z[i0], %2
}
)");
  ASSERT_TRUE(b.kernel);
  SvmArray<int32_t> ax(d, 3, {7, -7, 9}), ay(d, 3, {2, 2, 3}), az(d, 3);
  sdk::Status st = run(d, **status, *b.kernel, {ax.p, ay.p, az.p}, {});
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(az.read(), (std::vector<int32_t>{1, 1, 0}));  // Python's remainder: -7 % 2 == 1
  ay.write({2, 0, 3});
  st = run(d, **status, *b.kernel, {ax.p, ay.p, az.p}, {});
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("kernel @idiv: integer division by zero"), std::string::npos) << st.message();
}

TEST(OpenCL, RejectedModuleSurfacesItsBuildLog) {
  OPEN_OR_SKIP(d);
  // Valid SPIR-V (SPIRV-Tools accepts it) that no consumer can link: the kernel calls an
  // imported function nothing defines. Assembled by spirv-as --target-env spv1.0 from:
  //   OpCapability Addresses / Kernel / Linkage / Int64; OpMemoryModel Physical64 OpenCL
  //   OpEntryPoint Kernel %k "k"
  //   OpDecorate %ext LinkageAttributes "plugsdk_no_such_function" Import
  //   %ext = OpFunction %float None (float) -> float, no body
  //   %k(%p: CrossWorkgroup float*) { %v = OpFunctionCall %float %ext 2.0; OpStore %p %v }
  const std::vector<uint32_t> words = {
      0x07230203, 0x00010000, 0x00070000, 0x0000000d, 0x00000000, 0x00020011, 0x00000004, 0x00020011, 0x00000006,
      0x00020011, 0x00000005, 0x00020011, 0x0000000b, 0x0003000e, 0x00000002, 0x00000002, 0x0004000f, 0x00000006,
      0x00000001, 0x0000006b, 0x000b0047, 0x00000002, 0x00000029, 0x67756c70, 0x5f6b6473, 0x735f6f6e, 0x5f686375,
      0x636e7566, 0x6e6f6974, 0x00000000, 0x00000001, 0x00020013, 0x00000003, 0x00030016, 0x00000004, 0x00000020,
      0x00040020, 0x00000005, 0x00000005, 0x00000004, 0x00040021, 0x00000006, 0x00000003, 0x00000005, 0x00040021,
      0x00000007, 0x00000004, 0x00000004, 0x0004002b, 0x00000004, 0x00000008, 0x40000000, 0x00050036, 0x00000004,
      0x00000002, 0x00000000, 0x00000007, 0x00030037, 0x00000004, 0x00000009, 0x00010038, 0x00050036, 0x00000003,
      0x00000001, 0x00000000, 0x00000006, 0x00030037, 0x00000005, 0x0000000a, 0x000200f8, 0x0000000b, 0x00050039,
      0x00000004, 0x0000000c, 0x00000002, 0x00000008, 0x0003003e, 0x0000000a, 0x0000000c, 0x000100fd, 0x00010038};
  const sdk::Status valid = spirv::validate(words, "the unlinkable module");
  ASSERT_TRUE(valid.isOk()) << valid.message();
  const std::string dir = ::testing::TempDir();
  sdk::StatusOr<std::shared_ptr<Program>> p = buildProgram(d, words, "kernel @unlinkable", "plugsdk_unlinkable", dir);
  ASSERT_FALSE(p.isOk());
  const std::string& m = p.status().message();
  EXPECT_EQ(p.status().code(), sdk::Code::kInternal) << m;
  EXPECT_NE(m.find("kernel @unlinkable: " + d.props().name +
                   " rejected its SPIR-V: clBuildProgram returned "
                   "CL_BUILD_PROGRAM_FAILURE (-11); build log:\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("plugsdk_no_such_function"), std::string::npos) << "the log names the missing symbol: " << m;
  const std::string file = dir + (dir.empty() || dir.back() == '/' ? "" : "/") + "plugsdk_unlinkable.spv";
  EXPECT_NE(m.find("reproduce: plugsdk-opencl-build "), std::string::npos) << m;
  std::ifstream kept(file, std::ios::binary);
  ASSERT_TRUE(kept.good()) << "the module is kept for the reproducer: " << file << "\n" << m;
  std::vector<char> bytes((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), words.size() * 4);
}

}  // namespace
}  // namespace plugsdk::level_zero::opencl
