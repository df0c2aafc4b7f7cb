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
  for (const char* bad : {"colour=red", "opt=9", "fault=disk", "split=maybe", "lanes=3", "minblocks=9", "record=yes",
                          "pad_results=1", "conv_epilogue=maybe", "epilogue=fused"}) {
    auto d = Device::open(*p, 0, bad);
    ASSERT_FALSE(d.isOk()) << bad;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad << ": " << d.status().toString();
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(d.status().message().find(key), std::string::npos) << bad << ": " << d.status().message();
  }
  // An on|off option read from the environment names its variable too.
  auto d = Device::open(*p, 0, "pad_results=sometimes");
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(
      d.status().message().find("option pad_results (or $PLUGSDK_CUDA_PAD_RESULTS): 'sometimes' is not on or off"),
      std::string::npos)
      << d.status().message();
}

}  // namespace
}  // namespace plugsdk::plugin
