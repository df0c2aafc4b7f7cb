// The level_zero plugin through the core's device layer: runtime=level_zero (the default)
// has no device and says why (no Level Zero driver on these machines; ze_runtime_test.cc
// runs the runtime against a stand-in loader), runtime=opencl without OpenCL says why too,
// bad options are errors, and with OpenCL (PoCL in the toolbox) the device is described.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/plugin/device.h"
#include "core/plugin/loader.h"

namespace plugsdk::plugin {
namespace {

StatusOr<std::shared_ptr<Plugin>> levelZeroPlugin() {
  return Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
}

TEST(LevelZeroPlugin, LevelZeroRuntimeHasNoDeviceWithTheReason) {
  auto p = levelZeroPlugin();
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto d = Device::open(*p, 0, "runtime=level_zero");
  if (d.isOk()) GTEST_SKIP() << "a Level Zero GPU is here: " << (*d)->caps().name;
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound) << d.status().toString();
  EXPECT_NE(d.status().message().find("Level Zero: "), std::string::npos) << d.status().message();
  // A loader that is not there is named.
  d = Device::open(*p, 0, "runtime=level_zero;ze_loader=/nonexistent/libze_loader.so.1");
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("Level Zero: cannot load /nonexistent/libze_loader.so.1"), std::string::npos)
      << d.status().message();
}

TEST(LevelZeroPlugin, WithoutAnyDriverZeInitSaysSo) {
  // The toolbox has the loader (libze1) and no driver: zeInit answers 0x78000001.
  auto p = levelZeroPlugin();
  ASSERT_TRUE(p.isOk());
  auto d = Device::open(*p, 0, "runtime=level_zero");
  if (d.isOk()) GTEST_SKIP() << "a Level Zero GPU is here: " << (*d)->caps().name;
  const std::string& m = d.status().message();
  if (m.find("cannot load") != std::string::npos) GTEST_SKIP() << "no Level Zero loader here: " << m;
  if (m.find("driver(s) but no GPU") != std::string::npos) GTEST_SKIP() << "a Level Zero driver is here: " << m;
  EXPECT_NE(m.find("zeInitDrivers returned 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED), zeInit/zeDriverGet returned "
                   "0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED): no Level Zero driver"),
            std::string::npos)
      << m;
}

TEST(LevelZeroPlugin, MissingOpenCLIsNoDeviceWithTheReason) {
  auto p = levelZeroPlugin();
  ASSERT_TRUE(p.isOk());
  auto d = Device::open(*p, 0, "runtime=opencl;opencl=/nonexistent/libOpenCL.so.1");
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound) << d.status().toString();
  EXPECT_NE(d.status().message().find("no OpenCL: cannot load /nonexistent/libOpenCL.so.1"), std::string::npos)
      << d.status().message();
}

TEST(LevelZeroPlugin, BadOptionsAreErrors) {
  auto p = levelZeroPlugin();
  ASSERT_TRUE(p.isOk());
  for (const char* bad : {"colour=red", "runtime=cuda", "dump=/proc/no/such/dir"}) {
    auto d = Device::open(*p, 0, bad);
    ASSERT_FALSE(d.isOk()) << bad;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad << ": " << d.status().toString();
  }
}

TEST(LevelZeroPlugin, OpenCLRuntimeDescribesItsDevice) {
  auto p = levelZeroPlugin();
  ASSERT_TRUE(p.isOk());
  auto d = Device::open(*p, 0, "runtime=opencl");
  if (!d.isOk() && d.status().code() == StatusCode::kNotFound) GTEST_SKIP() << d.status().message();
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  const DeviceCaps& caps = (*d)->caps();
  EXPECT_NE(caps.name.find("runtime=opencl"), std::string::npos) << caps.name;
  // f32 prims.matmul, prims.convolution and prims.sdpa alone, as the tiled kernel (ABI 1.6),
  // the implicit GEMM (ABI 1.4; transposed ones the core's) and flash attention (ABI 1.7; no
  // dropout, head dims up to 128); no epilogue on any, and not the attention backward.
  EXPECT_EQ(caps.libraryOps,
            static_cast<uint32_t>(PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA));
  EXPECT_EQ(caps.sdpaDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_EQ(caps.sdpaSkips, static_cast<uint32_t>(PLUGSDK_SDPA_SKIPS_DROPOUT));
  EXPECT_EQ(caps.sdpaHeadDimMax, 128u);
  EXPECT_EQ(caps.convolutionDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_TRUE(caps.convolutionSkipsTransposed);
  EXPECT_EQ(caps.matmulDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_EQ(caps.epilogueOps, 0u);
  EXPECT_TRUE(caps.fusesHorizontal);
  // Rows are reduced by work-groups: a reduction of few rows is split so that every compute
  // unit gets work-groups (8 rows each); with group_size=0 (a work-item per point) none is.
  EXPECT_GE(caps.splitRowReductions, 8u);
  EXPECT_EQ(caps.splitRowReductions % 8, 0u);
  auto pointwise = Device::open(*p, 0, "runtime=opencl;group_size=0");
  ASSERT_TRUE(pointwise.isOk()) << pointwise.status().toString();
  EXPECT_EQ((*pointwise)->caps().splitRowReductions, 0u);
  for (const char* bad :
       {"runtime=opencl;group_size=3", "runtime=opencl;group_size=2048", "runtime=opencl;group_size=x"})
    EXPECT_EQ(Device::open(*p, 0, bad).status().code(), StatusCode::kInvalidArgument) << bad;
}

}  // namespace
}  // namespace plugsdk::plugin
