// The plugin loader against the null backend and purpose-built bad plugins: every fault is
// an error naming the plugin file and the cause, and the core keeps working afterwards.
#include "core/plugin/loader.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace plugsdk::plugin {
namespace {

Loader testLoader() { return Loader({PLUGSDK_TEST_PLUGIN_DIR, PLUGSDK_BUILT_PLUGIN_DIR}); }

const std::string kCoreAbi =
    std::to_string(PLUGSDK_ABI_VERSION_MAJOR) + "." + std::to_string(PLUGSDK_ABI_VERSION_MINOR);

void expectError(const std::string& plugin, const std::string& part) {
  auto p = testLoader().load(plugin);
  ASSERT_FALSE(p.isOk()) << plugin << " loaded";
  EXPECT_NE(p.status().message().find("libplugsdk_" + plugin + ".so"), std::string::npos) << p.status().toString();
  EXPECT_NE(p.status().message().find(part), std::string::npos) << p.status().toString();
}

TEST(Loader, NullBackendLoadsAndHasNoDevices) {
  auto p = testLoader().load("null");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  const plugsdk_api_t& api = (*p)->api();
  EXPECT_EQ((*p)->name(), "null");
  EXPECT_EQ((*p)->abiMajor(), 1u);
  plugsdk_client_create_args_t c{};
  c.struct_size = sizeof(c);
  ASSERT_TRUE((*p)->check(api.client_create(&c), "client_create").isOk());
  plugsdk_device_count_args_t d{};
  d.struct_size = sizeof(d);
  d.client = c.out_client;
  ASSERT_TRUE((*p)->check(api.device_count(&d), "device_count").isOk());
  EXPECT_EQ(d.out_count, 0u);
  EXPECT_STREQ(d.out_reason, "the null backend has no devices");
  plugsdk_buffer_allocate_args_t b{};
  b.struct_size = sizeof(b);
  b.client = c.out_client;
  Status s = (*p)->check(api.buffer_allocate(&b), "buffer_allocate");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("plugin null"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("buffer_allocate: the null backend implements nothing"), std::string::npos);
  plugsdk_client_destroy_args_t x{};
  x.struct_size = sizeof(x);
  x.client = c.out_client;
  EXPECT_TRUE((*p)->check(api.client_destroy(&x), "client_destroy").isOk());
}

TEST(Loader, UnknownNameSaysWhereItLooked) {
  auto p = testLoader().load("nonexistent");
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("no plugin named 'nonexistent'"), std::string::npos);
  EXPECT_NE(p.status().message().find("PLUGSDK_PLUGIN_PATH"), std::string::npos);
}

TEST(Loader, MissingEntrySymbol) { expectError("bad_no_symbol", "does not export plugsdk_plugin_init"); }
TEST(Loader, PluginRefusesTheCore) {
  expectError("bad_refuses", "refused this core (ABI " + kCoreAbi + "): this plugin needs core ABI 1.7");
}
TEST(Loader, NewerMajorIsRefused) {
  expectError("bad_major2", "implements ABI 2." + std::to_string(PLUGSDK_ABI_VERSION_MINOR) +
                                "; this core implements ABI " + kCoreAbi);
}
TEST(Loader, TableTooSmall) { expectError("bad_small_table", "ABI 1.0 needs at least"); }
TEST(Loader, NullFunctionsAreNamed) { expectError("bad_null_functions", "has no error_destroy (NULL)"); }
TEST(Loader, CrashDuringLoadIsReportedAndTheCoreSurvives) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer catches the SEGV in the probe and ends it with exit status 1.
  expectError("bad_crashes", "ended the process while loading (exit status 1)");
#else
  expectError("bad_crashes", "crashed while loading (signal 11");
#endif
  // The core still loads other plugins afterwards.
  EXPECT_TRUE(testLoader().load("null").isOk());
}

TEST(Loader, ExitDuringLoadIsReportedAndTheCoreSurvives) {
  // exit() in the plugin's init would end the core: the probe sees it first
  expectError("bad_exits", "ended the process while loading (exit status 5)");
  EXPECT_TRUE(testLoader().load("null").isOk());
}

TEST(Loader, AvailableListsPluginsOnThePath) {
  auto names = testLoader().available();
  EXPECT_NE(std::find(names.begin(), names.end(), "null"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "bad_major2"), names.end());
}

}  // namespace
}  // namespace plugsdk::plugin
