// ABI 1.5's split reductions, through the C++ layer and the core: a plugin's
// DeviceInfo::splitRowReductions / splitColumnReductions reach device_info, the core reads
// them into the device's caps, and optionsFor() hands them to the scheduler. An older core's
// smaller device_info gets neither field (nothing written past its struct_size).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"

namespace plugsdk::plugin {
namespace {

std::unique_ptr<Device> openCpptest(const char* options) {
  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, options);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

TEST(SplitReductions, ThePluginsNumbersReachTheSchedule) {
  auto d = openCpptest("split_rows=1024;split_columns=65536");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->caps().splitRowReductions, 1024u);
  EXPECT_EQ(d->caps().splitColumnReductions, 65536u);
  const compile::CompileOptions o = optionsFor(d->caps());
  EXPECT_EQ(o.schedule.caps.splitRowReductions, 1024);
  EXPECT_EQ(o.schedule.caps.splitColumnReductions, 65536);

  // One without the other, and the largest count.
  auto rows = openCpptest("split_rows=4294967295");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->caps().splitRowReductions, 4294967295u);
  EXPECT_EQ(rows->caps().splitColumnReductions, 0u);
  EXPECT_EQ(optionsFor(rows->caps()).schedule.caps.splitRowReductions, int64_t{4294967295});

  // Not given: the DeviceInfo defaults, 0 (never split).
  auto none = openCpptest("");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->caps().splitRowReductions, 0u);
  EXPECT_EQ(none->caps().splitColumnReductions, 0u);
  EXPECT_EQ(optionsFor(none->caps()).schedule.caps.splitRowReductions, 0);
  EXPECT_EQ(optionsFor(none->caps()).schedule.caps.splitColumnReductions, 0);
}

TEST(SplitReductions, TheTestPluginRefusesABadCountNamingTheOption) {
  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  for (const char* options : {"split_rows=", "split_rows=-1", "split_rows=12k", "split_rows=4294967296",
                              "split_columns=0x10", "split_columns=99999999999", "split_columns= 8"}) {
    auto d = Device::open(*p, 0, options);
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << options;
    const std::string key = std::string(options).substr(0, std::string(options).find('='));
    EXPECT_NE(d.status().message().find(key + ": '"), std::string::npos) << d.status().toString();
    EXPECT_NE(d.status().message().find("is not a count"), std::string::npos) << d.status().toString();
  }
}

// A core of ABI 1.4 asks with its smaller device_info: the C++ layer fills it up to that
// size (a canary after it survives), says so in struct_size, and the fields read as 0.
TEST(SplitReductions, AnOlderCoresInfoGetsNeitherField) {
  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto d = Device::open(*p, 0, "split_rows=1024;split_columns=65536");
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  struct {
    plugsdk_device_info_t info;
    uint64_t canary;
  } probe{};
  const size_t v14 = PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, convolution_skips_transposed);
  ASSERT_LT(v14, PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, split_row_reductions));
  probe.info.struct_size = v14;
  std::memset(reinterpret_cast<char*>(&probe.info) + v14, 0x5a, sizeof(probe) - v14);
  plugsdk_device_info_args_t a{};
  a.struct_size = sizeof(a);
  a.client = (*d)->client();
  a.info = &probe.info;
  ASSERT_TRUE((*d)->check((*p)->api().device_info(&a), "device_info").isOk());
  for (size_t i = v14; i < sizeof(probe); ++i)
    ASSERT_EQ(reinterpret_cast<const unsigned char*>(&probe)[i], 0x5a) << "byte " << i << " written";
  EXPECT_EQ(probe.info.struct_size, v14);
  EXPECT_EQ(capsFrom(probe.info).splitRowReductions, 0u);
  EXPECT_EQ(capsFrom(probe.info).splitColumnReductions, 0u);

  // The full struct carries both.
  std::memset(&probe, 0, sizeof(probe));
  probe.info.struct_size = sizeof(probe.info);
  ASSERT_TRUE((*d)->check((*p)->api().device_info(&a), "device_info").isOk());
  EXPECT_EQ(probe.info.struct_size, sizeof(probe.info));
  EXPECT_EQ(probe.info.split_row_reductions, 1024u);
  EXPECT_EQ(probe.info.split_column_reductions, 65536u);
}

}  // namespace
}  // namespace plugsdk::plugin
