// The Level Zero runtime through the real loader (libze_loader.so.1) and its null driver
// (libze_null.so.1, enabled by ZE_ENABLE_NULL_DRIVER=1): the loader's own dispatch under the
// same call sequence as ze_runtime_test.cc. The null driver answers every call and runs
// nothing, so this proves plumbing only: device found, context, buffers allocated and freed,
// a module created from the lowering's real SPIR-V, its kernel created, parameters set, a
// launch appended, synchronization, and the plugin opening the device through the core.
// (The null driver answers every call with success, so error paths are ze_runtime_test.cc's:
// its stand-in loader injects failures.) Debian ships no null driver: it is built from the level-zero source package
// (docs/level-zero-backend.md says how) and passed to CMake as PLUGSDK_ZE_NULL_DRIVER_DIR;
// ctest then passes its path in PLUGSDK_ZE_NULL_DRIVER, and the test sets
// ZE_ENABLE_NULL_DRIVER=1 and loads the library by its path before the loader, so that the
// loader's dlopen("libze_null.so.1") finds it loaded. Without it each test skips, saying what
// is missing. The same tests run (prefix FakeDriver.) with the stand-in driver
// (ze_fake_driver.cc) posing as the null driver: the real loader's dispatch, here. A separate
// program: the loader reads ZE_ENABLE_NULL_DRIVER once, when it initializes.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/level_zero/runtime/ze_runtime.h"
#include "backends/level_zero/tests/spirv_test_util.h"
#include "core/plugin/device.h"
#include "core/plugin/loader.h"

namespace plugsdk::level_zero::ze {
namespace {

/// Why the null driver cannot be used here ("" when it can).
void* gDriver = nullptr;  ///< the driver library, loaded by missing()

std::string missing() {
  // The driver's path: ctest passes it (PLUGSDK_ZE_NULL_DRIVER), set by CMake from
  // PLUGSDK_ZE_NULL_DRIVER_DIR, or the stand-in driver for the FakeDriver. tests.
  static const std::string why = [] {
    const char* library = std::getenv("PLUGSDK_ZE_NULL_DRIVER");
    if (!library || !*library)
      return std::string(
          "no null driver: build libze_null.so.1 from Debian's level-zero source package "
          "(docs/level-zero-backend.md) and configure with -DPLUGSDK_ZE_NULL_DRIVER_DIR=DIR");
    // Before the loader is loaded: it reads the variable when it initializes.
    setenv("ZE_ENABLE_NULL_DRIVER", "1", 1);
    // Loaded by path first, the loader's dlopen("libze_null.so.1") finds it by its soname.
    gDriver = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!gDriver) return std::string("cannot load the null driver ") + library + " (" + dlerror() + ")";
    return std::string();
  }();
  return why;
}

#define NULL_DRIVER_OR_SKIP()              \
  do {                                     \
    const std::string why = missing();     \
    if (!why.empty()) GTEST_SKIP() << why; \
  } while (0)

TEST(ZeNullDriver, WholeCallSequenceRuns) {
  NULL_DRIVER_OR_SKIP();
  sdk::StatusOr<std::unique_ptr<Runtime>> opened = openRuntime("");
  ASSERT_TRUE(opened.isOk()) << opened.status().message();
  Runtime& rt = **opened;
  EXPECT_NE(rt.device().description.find("runtime=level_zero"), std::string::npos) << rt.device().description;
  sdk::StatusOr<Queue> q = rt.createQueue();
  ASSERT_TRUE(q.isOk()) << q.status().message();
  sdk::StatusOr<void*> buf = rt.allocate(PLUGSDK_MEMORY_DEVICE, 4096);
  ASSERT_TRUE(buf.isOk()) << buf.status().message();

  std::unique_ptr<plugin::EncodedKernel> e =
      spirv::testing::encode(R"(kernel @scale(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = const 2 : f32
  %2 = mul %0, %1 : f32
  store %y[i0], %2
}
)");
  ASSERT_TRUE(e);
  const sdk::KernelView view(e->get());
  sdk::StatusOr<spirv::SpirvKernel> sk = spirv::compileKernel(view, "k_scale");
  ASSERT_TRUE(sk.isOk()) << sk.status().message();
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt.build(sk->words, "kernel @scale", "plugsdk_null", "");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> k = rt.createKernel(*m, sk->entry, view, sk->checkMessages);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  sdk::Status st = rt.launch(**k, {*buf, *buf}, {1000}, *q);
  ASSERT_TRUE(st.isOk()) << st.message();
  st = rt.finish(*q, "synchronizing");
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(rt.collectStatus().isOk());  // nothing ran: the words stay 0

  // The stand-in driver logs what reached it through the loader (the null driver does not).
  if (auto take = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(gDriver, "plugsdk_fake_ze_take_log"))) {
    std::string log(take(nullptr, 0) + 1, '\0');
    take(log.data(), log.size());
    EXPECT_NE(rt.device().description.find("plugsdk fake GPU"), std::string::npos) << rt.device().description;
    for (const std::string& line : std::vector<std::string>{
             "zeInitDrivers flags=1", "zeContextCreate", "zeCommandListCreateImmediate ordinal=1 flags=2 mode=2",
             "zeMemAllocDevice 4096 align=64",
             "zeModuleCreate format=0 bytes=" + std::to_string(sk->words.size() * 4) + " magic=0x07230203",
             "zeKernelCreate k_scale", "zeKernelSetArgumentValue 3 8", "zeKernelSetGroupSize 256 1 1",
             "zeCommandListAppendLaunchKernel 4 1 1", "zeCommandListHostSynchronize"})
      EXPECT_NE(log.find(line), std::string::npos) << line << " did not reach the driver:\n" << log;
  }
  sdk::StatusOr<std::unique_ptr<RuntimeEvent>> ev = rt.createEvent();
  ASSERT_TRUE(ev.isOk()) << ev.status().message();
  EXPECT_TRUE(rt.record(**ev, *q).isOk());
  EXPECT_TRUE(rt.synchronize(**ev).isOk());
  k->reset();
  rt.free(*buf);
  rt.destroyQueue(*q);
}

TEST(ZeNullDriver, PluginOpensTheDevice) {
  NULL_DRIVER_OR_SKIP();
  auto p = plugin::Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto d = plugin::Device::open(*p, 0, "runtime=level_zero");
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_NE((*d)->caps().name.find("runtime=level_zero"), std::string::npos) << (*d)->caps().name;
}

}  // namespace
}  // namespace plugsdk::level_zero::ze
