// The cuda plugin through the core's device layer. Without a driver or a GPU (CI, this
// machine) the plugin loads, reports no device with the reason, and refuses bad options;
// opening its device is a NOT_FOUND naming the reason, never a crash. With a GPU (the
// device machine) a small program runs and matches the reference executor.
#include <gtest/gtest.h>

#include <string>

#include "core/plugin/device.h"
#include "core/plugin/loader.h"

namespace plugsdk::plugin {
namespace {

StatusOr<std::shared_ptr<Plugin>> cudaPlugin() { return Loader({PLUGSDK_CUDA_PLUGIN_DIR}).load("cuda"); }

TEST(CudaPlugin, NoDriverMeansNoDeviceWithTheReason) {
  auto p = cudaPlugin();
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto d = Device::open(*p, 0, "driver=/nonexistent/libcuda.so.1");
  ASSERT_FALSE(d.isOk());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound) << d.status().toString();
  EXPECT_NE(d.status().message().find("no CUDA driver: cannot load /nonexistent/libcuda.so.1"), std::string::npos)
      << d.status().message();
}

TEST(CudaPlugin, LibraryWithoutTheDriverSymbolsIsNoDevice) {
  auto p = cudaPlugin();
  ASSERT_TRUE(p.isOk());
  // A real shared library that is not a CUDA driver: the first missing symbol is named.
  auto d = Device::open(*p, 0, "driver=libz.so.1");
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("lacks cuInit"), std::string::npos) << d.status().message();
}

TEST(CudaPlugin, BadOptionsAreErrors) {
  auto p = cudaPlugin();
  ASSERT_TRUE(p.isOk());
  for (const char* bad : {"colour=red", "opt=9", "fault=disk", "split=maybe", "lanes=3", "minblocks=9"}) {
    auto d = Device::open(*p, 0, bad);
    ASSERT_FALSE(d.isOk()) << bad;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad << ": " << d.status().toString();
  }
}

}  // namespace
}  // namespace plugsdk::plugin
