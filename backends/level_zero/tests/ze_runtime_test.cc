// The Level Zero runtime (runtime/) against a stand-in loader with one fake GPU
// (ze_fake_loader.cc), so that the whole call sequence runs on machines with no Intel GPU:
// the device found and described, the compute queue group picked, in-order immediate command
// lists, USM allocated and freed, a module created from the lowering's real SPIR-V, its
// kernel created, parameters set in lower_kernel.h's order, the group size the driver
// suggests, the launch over the flattened grid, synchronization, events, and the status word
// read back (the fake writes a code into it, as a failing kernel would). The fake runs no
// kernel: these tests prove plumbing, not numbers (PoCL checks the numbers through the
// OpenCL path; a real GPU is the first run's job, docs/level-zero-backend.md). Failures the
// fake injects show that an error names the call and the result by name.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "backends/level_zero/library/conv_call.h"
#include "backends/level_zero/library/matmul_call.h"
#include "backends/level_zero/library/sdpa_call.h"
#include "backends/level_zero/runtime/ze_runtime.h"
#include "backends/level_zero/tests/spirv_test_util.h"
#include "backends/llvm_lowering/frame.h"
#include "core/plugin/device.h"
#include "core/plugin/loader.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::level_zero::ze {
namespace {

/// The fake's controls (the library the runtime loads: dlopen returns the same handle).
struct Fake {
  void* h = dlopen(PLUGSDK_ZE_FAKE_LOADER, RTLD_NOW | RTLD_LOCAL);
  template <typename F>
  F fn(const char* name) {
    EXPECT_NE(h, nullptr) << dlerror();
    return h ? reinterpret_cast<F>(dlsym(h, name)) : nullptr;
  }
  void fail(const char* call, uint32_t result) {
    fn<void (*)(const char*, uint32_t)>("plugsdk_fake_ze_fail")(call, result);
  }
  void buildLog(const char* text) { fn<void (*)(const char*)>("plugsdk_fake_ze_build_log")(text); }
  void statusOnLaunch(int param, int32_t code) {
    fn<void (*)(int, int32_t)>("plugsdk_fake_ze_status_on_launch")(param, code);
  }
  void notGpu(bool on) { fn<void (*)(int)>("plugsdk_fake_ze_not_gpu")(on); }
  void hostAtomics(bool on) { fn<void (*)(int)>("plugsdk_fake_ze_host_atomics")(on); }
  int liveAllocations() { return fn<int (*)()>("plugsdk_fake_ze_live_allocations")(); }
  /// The calls since the last take.
  std::string takeLog() {
    auto take = fn<size_t (*)(char*, size_t)>("plugsdk_fake_ze_take_log");
    std::string s(take(nullptr, 0) + 1, '\0');
    take(s.data(), s.size());
    s.resize(s.size() - 1);
    return s;
  }
};

std::unique_ptr<Runtime> openFake() {
  sdk::StatusOr<std::unique_ptr<Runtime>> rt = openRuntime(PLUGSDK_ZE_FAKE_LOADER);
  EXPECT_TRUE(rt.isOk()) << rt.status().message();
  return rt.isOk() ? std::move(*rt) : nullptr;
}

bool has(const std::string& log, const std::string& line) { return log.find(line + "\n") != std::string::npos; }

constexpr const char* kAxpy = spirv::testing::kAxpyKernel;

/// A kernel of `text` built and created on `rt`.
struct Built {
  std::unique_ptr<plugin::EncodedKernel> encoded;
  spirv::SpirvKernel spirv;
  std::unique_ptr<RuntimeKernel> kernel;
};

Built build(Runtime& rt, const std::string& text) {
  Built b;
  b.encoded = spirv::testing::encode(text);
  if (!b.encoded) return b;
  const sdk::KernelView view(b.encoded->get());
  sdk::StatusOr<spirv::SpirvKernel> sk = spirv::compileKernel(view, "k_" + std::string(view.name()));
  EXPECT_TRUE(sk.isOk()) << sk.status().message();
  if (!sk.isOk()) return b;
  b.spirv = *sk;
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt.build(sk->words, "test", "plugsdk_test", "");
  EXPECT_TRUE(m.isOk()) << m.status().message();
  if (!m.isOk()) return b;
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> k = rt.createKernel(*m, sk->entry, view, sk->checkMessages);
  EXPECT_TRUE(k.isOk()) << k.status().message();
  if (k.isOk()) b.kernel = std::move(*k);
  if (b.kernel) b.kernel->shape.groupSize = sk->groupSize;  // as the plugin does
  return b;
}

TEST(ZeApi, ResultsAreNamed) {
  EXPECT_EQ(resultName(ZE_RESULT_ERROR_UNINITIALIZED), "0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)");
  EXPECT_EQ(resultName(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE), "0x70000004 (ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)");
  EXPECT_EQ(resultName(static_cast<ze_result_t>(0x7000abcd)), "0x7000abcd (an unknown ze_result_t)");
  const Api api;
  EXPECT_TRUE(api.check(ZE_RESULT_SUCCESS, "zeInit").isOk());
  sdk::Status st = api.check(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "zeMemAllocDevice");
  EXPECT_EQ(st.code(), sdk::Code::kResourceExhausted);
  EXPECT_EQ(st.message(), "zeMemAllocDevice: 0x70000003 (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)");
  EXPECT_EQ(api.check(ZE_RESULT_ERROR_DEVICE_LOST, "x").code(), sdk::Code::kFailedPrecondition);
  EXPECT_EQ(api.check(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, "x").code(), sdk::Code::kInternal);
}

TEST(ZeApi, MissingOrWrongLibraryIsNamed) {
  sdk::StatusOr<std::shared_ptr<const Api>> api = loadApi("/nonexistent/libze_loader.so.1");
  ASSERT_FALSE(api.isOk());
  EXPECT_EQ(api.status().code(), sdk::Code::kFailedPrecondition);
  EXPECT_NE(api.status().message().find("Level Zero: cannot load /nonexistent/libze_loader.so.1"), std::string::npos);
  api = loadApi("libz.so.1");
  ASSERT_FALSE(api.isOk());
  EXPECT_NE(api.status().message().find("lacks zeInit"), std::string::npos) << api.status().message();
}

TEST(ZeApi, GroupsCoverThePointsWithinTheLimit) {
  EXPECT_EQ(suggestedFor(1), 64u);
  EXPECT_EQ(suggestedFor(1009), 1024u);  // a prime: rounded so the driver can suggest > 1
  sdk::StatusOr<Groups> g = groupsFor(1009, 256, 1u << 20, "k");
  ASSERT_TRUE(g.isOk());
  EXPECT_EQ(g->size, 256u);
  EXPECT_EQ(g->count, 4u);
  g = groupsFor(uint64_t{1} << 40, 256, 1u << 20, "k");
  ASSERT_FALSE(g.isOk());
  EXPECT_EQ(g.status().code(), sdk::Code::kInvalidArgument);
  EXPECT_NE(g.status().message().find("maxGroupCountX 1048576"), std::string::npos) << g.status().message();
}

TEST(ZeFake, DeviceIsFoundAndDescribed) {
  Fake fake;
  fake.takeLog();
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  const RuntimeDevice& d = rt->device();
  EXPECT_NE(d.description.find("plugsdk fake GPU (driver 0x1020304, Level Zero 1.6, SPIR-V 1.2, sub-groups 8/16/32)"),
            std::string::npos)
      << d.description;
  EXPECT_NE(d.description.find("runtime=level_zero"), std::string::npos);
  EXPECT_TRUE(d.fp64);
  EXPECT_EQ(d.memoryBytes, uint64_t{8} << 30);
  EXPECT_EQ(d.maxAllocBytes, uint64_t{1} << 30);
  EXPECT_EQ(d.memoryKinds, static_cast<uint32_t>(PLUGSDK_MEMORY_DEVICE));
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk()) << q.status().message();
  rt->destroyQueue(*q);
  const std::string log = fake.takeLog();
  // zeInitDrivers for GPUs; the properties asked with their stype; a context; the status
  // words in host memory; an in-order (flags 2) asynchronous (mode 2) list on group 1, the
  // one that computes.
  EXPECT_TRUE(has(log, "zeInitDrivers flags=1")) << log;
  EXPECT_TRUE(has(log, "zeDeviceGetProperties stype=3")) << log;
  EXPECT_TRUE(has(log, "zeContextCreate")) << log;
  EXPECT_TRUE(has(log, "zeMemAllocHost 16384 align=64")) << log;
  EXPECT_TRUE(has(log, "zeCommandListCreateImmediate ordinal=1 flags=2 mode=2")) << log;
  EXPECT_TRUE(has(log, "zeCommandListHostSynchronize\nzeCommandListDestroy")) << log;
  rt.reset();
  EXPECT_TRUE(has(fake.takeLog(), "zeMemFree\nzeContextDestroy"));
}

TEST(ZeFake, StatusWordsGoWhereTheAtomicsReach) {
  Fake fake;
  fake.hostAtomics(false);
  fake.takeLog();
  std::unique_ptr<Runtime> rt = openFake();
  fake.hostAtomics(true);
  ASSERT_TRUE(rt);
  const std::string log = fake.takeLog();
  EXPECT_TRUE(has(log, "zeMemAllocShared 16384 align=64")) << log;
  EXPECT_EQ(log.find("zeMemAllocHost"), std::string::npos) << log;
}

TEST(ZeFake, NotAGpuIsNoDevice) {
  Fake fake;
  fake.notGpu(true);
  sdk::StatusOr<std::unique_ptr<Runtime>> rt = openRuntime(PLUGSDK_ZE_FAKE_LOADER);
  fake.notGpu(false);
  ASSERT_FALSE(rt.isOk());
  EXPECT_EQ(rt.status().code(), sdk::Code::kFailedPrecondition);
  EXPECT_NE(rt.status().message().find("1 driver(s) but no GPU (plugsdk fake GPU: not a GPU (type 2))"),
            std::string::npos)
      << rt.status().message();
}

TEST(ZeFake, NoDriverNamesBothInitCalls) {
  // The drivers are looked for once per loader and process (ze_device.cc): a loader of
  // another name, the same library, looks again.
  const std::string other = ::testing::TempDir() + "/libze_fake_nodriver.so";
  std::remove(other.c_str());
  ASSERT_EQ(symlink(PLUGSDK_ZE_FAKE_LOADER, other.c_str()), 0);
  Fake fake;
  fake.fail("zeInitDrivers", ZE_RESULT_ERROR_UNINITIALIZED);
  fake.fail("zeInit", ZE_RESULT_ERROR_UNINITIALIZED);
  sdk::StatusOr<std::unique_ptr<Runtime>> rt = openRuntime(other);
  fake.fail("zeInitDrivers", 0);
  fake.fail("zeInit", 0);
  fake.takeLog();
  // And once only: the answer stays (the loader is not asked again).
  sdk::StatusOr<std::unique_ptr<Runtime>> again = openRuntime(other);
  EXPECT_FALSE(again.isOk());
  EXPECT_EQ(fake.takeLog(), "");
  ASSERT_FALSE(rt.isOk());
  EXPECT_EQ(rt.status().message(),
            "Level Zero: zeInitDrivers returned 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED), zeInit/zeDriverGet "
            "returned 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED): no Level Zero driver (an Intel GPU needs Intel's "
            "compute runtime, Debian: libze-intel-gpu1)");
}

TEST(ZeFake, BuffersAreAllocatedCopiedFilledAndFreed) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  const int before = fake.liveAllocations();
  fake.takeLog();
  sdk::StatusOr<void*> d = rt->allocate(PLUGSDK_MEMORY_DEVICE, 100);
  sdk::StatusOr<void*> h = rt->allocate(PLUGSDK_MEMORY_HOST, 0);
  sdk::StatusOr<void*> s = rt->allocate(PLUGSDK_MEMORY_SHARED, 64);
  ASSERT_TRUE(d.isOk() && h.isOk() && s.isOk());
  EXPECT_EQ(fake.liveAllocations(), before + 3);
  const std::vector<float> in{1, 2, 3};
  std::vector<float> out(3);
  ASSERT_TRUE(rt->copy(*q, *d, in.data(), 12, false).isOk());
  ASSERT_TRUE(rt->copy(*q, out.data(), *d, 12, true).isOk());
  EXPECT_EQ(out, in);  // the fake copies at once
  const uint32_t pattern = 0x3f800000;
  ASSERT_TRUE(rt->fill(*q, *d, &pattern, 4, 12).isOk());
  ASSERT_TRUE(rt->copy(*q, out.data(), *d, 12, true).isOk());
  EXPECT_EQ(out, (std::vector<float>{1, 1, 1}));
  const std::string log = fake.takeLog();
  EXPECT_TRUE(has(log, "zeMemAllocDevice 128 align=64\nzeMemAllocHost 64 align=64\nzeMemAllocShared 64 align=64"))
      << log;
  EXPECT_TRUE(has(log,
                  "zeCommandListAppendMemoryCopy 12\nzeCommandListAppendMemoryCopy 12\n"
                  "zeCommandListHostSynchronize"))
      << log;
  EXPECT_TRUE(has(log, "zeCommandListAppendMemoryFill 4 12")) << log;
  // Past maxMemAllocSize: no call, RESOURCE_EXHAUSTED naming the limit.
  sdk::StatusOr<void*> big = rt->allocate(PLUGSDK_MEMORY_DEVICE, uint64_t{2} << 30);
  ASSERT_FALSE(big.isOk());
  EXPECT_EQ(big.status().code(), sdk::Code::kResourceExhausted);
  EXPECT_NE(big.status().message().find("(maxMemAllocSize)"), std::string::npos) << big.status().message();
  rt->free(*d);
  rt->free(*h);
  rt->free(*s);
  EXPECT_EQ(fake.liveAllocations(), before);
  rt->destroyQueue(*q);
}

TEST(ZeFake, KernelFromRealSpirvIsCreatedAndLaunched) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  fake.takeLog();
  Built b = build(*rt, kAxpy);
  ASSERT_TRUE(b.kernel);
  std::string log = fake.takeLog();
  // The lowering's module, as IL (format 0), whole, starting with SPIR-V's magic number, with
  // correctly rounded f32 division and sqrt asked for (the fake device offers them).
  EXPECT_TRUE(has(log, "zeModuleCreate format=0 bytes=" + std::to_string(b.spirv.words.size() * 4) +
                           " magic=0x07230203 flags='-cl-fp32-correctly-rounded-divide-sqrt'"))
      << log;
  EXPECT_TRUE(has(log, "zeModuleBuildLogDestroy\nzeKernelCreate k_axpy")) << log;

  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 4000);
  ASSERT_TRUE(x.isOk());
  void* const p = *x;
  ASSERT_TRUE(rt->launch(*b.kernel, {p, p, p}, {1000}, *q).isOk());
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  EXPECT_TRUE(rt->collectStatus().isOk());
  log = fake.takeLog();
  // Three pointers, the status word, the symbol: 8 bytes each; groups of the size the driver
  // suggests for 1000 points rounded up to 1024 (256), 4 of them.
  EXPECT_TRUE(has(log,
                  "zeKernelSetArgumentValue 0 8\nzeKernelSetArgumentValue 1 8\nzeKernelSetArgumentValue 2 8\n"
                  "zeKernelSetArgumentValue 3 8\nzeKernelSetArgumentValue 4 8\n"
                  "zeKernelSuggestGroupSize 1024\nzeKernelSetGroupSize 256 1 1\n"
                  "zeCommandListAppendLaunchKernel 4 1 1\nzeCommandListHostSynchronize"))
      << log;
  // An empty grid launches nothing.
  ASSERT_TRUE(rt->launch(*b.kernel, {p, p, p}, {0}, *q).isOk());
  EXPECT_EQ(fake.takeLog(), "");
  b.kernel.reset();
  EXPECT_TRUE(has(fake.takeLog(), "zeKernelDestroy\nzeModuleDestroy"));
  rt->free(p);
  rt->destroyQueue(*q);
}

TEST(ZeFake, RowReductionLaunchesAWorkGroupPerPoint) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  Built b = build(*rt, R"(kernel @rowsum(%x: f32 in, %y: f32 out) grid [s0] {
  loop [s1] {
    %0 = load %x[s1*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
}
)");
  ASSERT_TRUE(b.kernel);
  ASSERT_EQ(b.spirv.groupSize, spirv::kDefaultGroupSize);
  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 4000);
  ASSERT_TRUE(x.isOk());
  fake.takeLog();
  ASSERT_TRUE(rt->launch(*b.kernel, {*x, *x}, {5, 100}, *q).isOk());
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  const std::string log = fake.takeLog();
  // The module's LocalSize, not the driver's suggestion, and one group per point.
  EXPECT_EQ(log.find("zeKernelSuggestGroupSize"), std::string::npos) << log;
  EXPECT_TRUE(has(log, "zeKernelSetGroupSize " + std::to_string(spirv::kDefaultGroupSize) +
                           " 1 1\nzeCommandListAppendLaunchKernel 5 1 1"))
      << log;
  rt->free(*x);
  rt->destroyQueue(*q);
}

TEST(ZeFake, TiledMatmulLaunchesSixteenBySixteenGroupsPerTile) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  sdk::StatusOr<std::vector<uint32_t>> words = library::tiledMatmulModule("plugsdk_matmul_f32_tiled");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt->build(*words, "matmul", "plugsdk_matmul", "");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> k =
      rt->createLibraryKernel(*m, "plugsdk_matmul_f32_tiled", "prims.matmul (test)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  EXPECT_TRUE(has(fake.takeLog(), "zeKernelCreate plugsdk_matmul_f32_tiled")) << "no kernel";
  // A [50, 20] x [20, 70] product: 5 x 4 tiles, one launch, the 15 parameters.
  library::MatmulCall call;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(call.pool.size()), 1};
    call.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
    return e;
  };
  for (auto [d, r, c] : {std::tuple{&call.a, 50, 20}, std::tuple{&call.b, 20, 70}, std::tuple{&call.out, 50, 70}}) {
    d->dtype = PLUGSDK_DTYPE_F32;
    d->sizes = {expr(r), expr(c)};
    d->strides = {expr(c), expr(1)};
    d->offset = expr(0);
  }
  sdk::StatusOr<std::vector<library::MatmulLaunch>> plan = library::planLaunches(call, {});
  ASSERT_TRUE(plan.isOk() && plan->size() == 1u);
  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 4 * 50 * 70);
  ASSERT_TRUE(x.isOk());
  void* const p = *x;
  std::vector<KernelParam> params{{true, 8, &p}, {true, 8, &p}, {true, 8, &p}};
  for (const int64_t& v : (*plan)[0].scalars) params.push_back({false, 8, &v});
  ASSERT_TRUE(rt->launchGroups(**k, params, {16, 16, 1}, (*plan)[0].groups, *q).isOk());
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  const std::string log = fake.takeLog();
  EXPECT_TRUE(has(log,
                  "zeKernelSetArgumentValue 14 8\nzeKernelSetGroupSize 16 16 1\n"
                  "zeCommandListAppendLaunchKernel 5 4 1\nzeCommandListHostSynchronize"))
      << log;
  EXPECT_EQ(log.find("zeKernelSuggestGroupSize"), std::string::npos) << log;
  k->reset();
  rt->free(p);
  rt->destroyQueue(*q);
}

TEST(ZeFake, ImplicitGemmConvLaunchesTilesOfColumnsAndChannelsPerGroup) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  sdk::StatusOr<std::vector<uint32_t>> words = library::implicitGemmConvModule("plugsdk_conv_f32_implicit_gemm");
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt->build(*words, "conv", "plugsdk_conv", "");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> k =
      rt->createLibraryKernel(*m, "plugsdk_conv_f32_implicit_gemm", "prims.convolution (test)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  // x [3, 6, 20, 20], w [40, 3, 3, 3], groups 2, padding 1: 3 images x 400 positions (75
  // tiles), 20 channels a group (2 tiles), 2 groups; the 3 pointers and 51 scalars.
  library::ConvCall call;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(call.pool.size()), 1};
    call.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
    return e;
  };
  for (auto [d, n, c, h] :
       {std::tuple{&call.x, 3, 6, 20}, std::tuple{&call.w, 40, 3, 3}, std::tuple{&call.out, 3, 40, 20}}) {
    d->dtype = PLUGSDK_DTYPE_F32;
    d->sizes = {expr(n), expr(c), expr(h), expr(h)};
    d->strides = {expr(c * h * h), expr(h * h), expr(h), expr(1)};
    d->offset = expr(0);
  }
  call.stride = {1, 1};
  call.padding = {1, 1};
  call.dilation = {1, 1};
  call.groups = 2;
  sdk::StatusOr<std::vector<library::ConvLaunch>> plan = library::planConvLaunches(call, {});
  ASSERT_TRUE(plan.isOk() && plan->size() == 1u) << plan.status().message();
  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 4 * 3 * 40 * 400);
  ASSERT_TRUE(x.isOk());
  void* const p = *x;
  std::vector<KernelParam> params{{true, 8, &p}, {true, 8, &p}, {true, 8, &p}};
  for (const int64_t& v : (*plan)[0].scalars) params.push_back({false, 8, &v});
  ASSERT_TRUE(rt->launchGroups(**k, params, {16, 16, 1}, (*plan)[0].groups, *q).isOk());
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  const std::string log = fake.takeLog();
  EXPECT_TRUE(has(log,
                  "zeKernelSetArgumentValue 53 8\nzeKernelSetGroupSize 16 16 1\n"
                  "zeCommandListAppendLaunchKernel 75 2 2\nzeCommandListHostSynchronize"))
      << log;
  k->reset();
  rt->free(p);
  rt->destroyQueue(*q);
}

TEST(ZeFake, FlashAttentionLaunchesABlockOfRowsPerGroupAndBatchDimsAsYAndZ) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  sdk::StatusOr<std::vector<uint32_t>> words =
      library::flashAttentionModule("plugsdk_sdpa_f32_flash", library::SdpaMask::kNone);
  ASSERT_TRUE(words.isOk()) << words.status().message();
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt->build(*words, "sdpa", "plugsdk_sdpa", "");
  ASSERT_TRUE(m.isOk()) << m.status().message();
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> k =
      rt->createLibraryKernel(*m, "plugsdk_sdpa_f32_flash", "prims.sdpa (test)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  // q, k, v [2, 3, 40, 64], no mask: 3 blocks of 16 rows x 3 heads x 2; 5 pointers and 30 scalars.
  library::SdpaCall call;
  auto expr = [&](int64_t v) {
    plugsdk_index_expr_t e{static_cast<uint32_t>(call.pool.size()), 1};
    call.pool.push_back({PLUGSDK_INDEX_CONST, 0, v});
    return e;
  };
  for (library::OperandDesc* d : {&call.q, &call.k, &call.v, &call.out}) {
    d->dtype = PLUGSDK_DTYPE_F32;
    d->sizes = {expr(2), expr(3), expr(40), expr(64)};
    d->strides = {expr(3 * 40 * 64), expr(40 * 64), expr(64), expr(1)};
    d->offset = expr(0);
  }
  call.lse.dtype = PLUGSDK_DTYPE_F32;
  call.lse.sizes = {expr(2), expr(3), expr(40)};
  call.lse.strides = {expr(3 * 40), expr(40), expr(1)};
  call.lse.offset = expr(0);
  sdk::StatusOr<std::vector<library::SdpaLaunch>> plan = library::planSdpaLaunches(call, {});
  ASSERT_TRUE(plan.isOk() && plan->size() == 1u) << plan.status().message();
  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 4 * 2 * 3 * 40 * 64);
  ASSERT_TRUE(x.isOk());
  void* const p = *x;
  std::vector<KernelParam> params(5, {true, 8, &p});
  for (const int64_t& v : (*plan)[0].scalars) params.push_back({false, 8, &v});
  ASSERT_TRUE(rt->launchGroups(**k, params, {16, 16, 1}, (*plan)[0].groups, *q).isOk());
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  const std::string log = fake.takeLog();
  EXPECT_TRUE(has(log,
                  "zeKernelSetArgumentValue 34 8\nzeKernelSetGroupSize 16 16 1\n"
                  "zeCommandListAppendLaunchKernel 3 3 2\nzeCommandListHostSynchronize"))
      << log;
  k->reset();
  rt->free(p);
  rt->destroyQueue(*q);
}

TEST(ZeFake, StatusWordIsReadBack) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  Built b = build(*rt, spirv::testing::kGatherKernel);
  ASSERT_TRUE(b.kernel);
  sdk::StatusOr<void*> x = rt->allocate(PLUGSDK_MEMORY_DEVICE, 64);
  ASSERT_TRUE(x.isOk());
  // The status word is parameter 3 (after the three arguments): the fake writes the first
  // CHECK's code there, as a failing work-item would.
  fake.statusOnLaunch(3, lowering::kStatusCheckBase);
  ASSERT_TRUE(rt->launch(*b.kernel, {*x, *x, *x}, {}, *q).isOk());
  fake.statusOnLaunch(-1, 0);
  ASSERT_TRUE(rt->finish(*q, "test").isOk());
  sdk::Status st = rt->collectStatus();
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), sdk::Code::kOutOfRange);
  EXPECT_NE(st.message().find("kernel @gather: index out of bounds for dimension 0 with size 4"), std::string::npos)
      << st.message();
  EXPECT_TRUE(rt->collectStatus().isOk()) << "the word is cleared once read";
  fake.statusOnLaunch(3, lowering::kStatusDivisionByZero);
  ASSERT_TRUE(rt->launch(*b.kernel, {*x, *x, *x}, {}, *q).isOk());
  fake.statusOnLaunch(-1, 0);
  st = rt->collectStatus();
  EXPECT_EQ(st.code(), sdk::Code::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("integer division by zero"), std::string::npos) << st.message();
  rt->free(*x);
  rt->destroyQueue(*q);
}

TEST(ZeFake, RejectedModuleSurfacesTheBuildLog) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<spirv::SpirvKernel> sk = spirv::testing::spirvOf(kAxpy);
  ASSERT_TRUE(sk.isOk());
  fake.fail("zeModuleCreate", ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
  fake.buildLog("error: fake IGC rejects k_axpy");
  const std::string dir = ::testing::TempDir();
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> m = rt->build(sk->words, "kernel @axpy", "plugsdk_rejected", dir);
  fake.fail("zeModuleCreate", 0);
  fake.buildLog("");
  ASSERT_FALSE(m.isOk());
  const std::string& msg = m.status().message();
  EXPECT_EQ(m.status().code(), sdk::Code::kInternal);
  EXPECT_NE(msg.find("kernel @axpy: plugsdk fake GPU rejected its SPIR-V: zeModuleCreate: 0x70000004 "
                     "(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE); build log:\nerror: fake IGC rejects k_axpy"),
            std::string::npos)
      << msg;
  const std::string file = dir + "/plugsdk_rejected.spv";
  EXPECT_NE(msg.find("reproduce: ocloc compile -spirv_input -file " + file), std::string::npos) << msg;
  std::ifstream kept(file, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<size_t>(kept.tellg()), sk->words.size() * 4) << "the module is kept for the reproducer";
}

TEST(ZeFake, FailedCallsNameTheCallAndTheResult) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> q = rt->createQueue();
  ASSERT_TRUE(q.isOk());
  fake.fail("zeMemAllocDevice", ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
  sdk::StatusOr<void*> p = rt->allocate(PLUGSDK_MEMORY_DEVICE, 1 << 20);
  fake.fail("zeMemAllocDevice", 0);
  ASSERT_FALSE(p.isOk());
  EXPECT_EQ(p.status().code(), sdk::Code::kResourceExhausted);
  EXPECT_EQ(p.status().message(),
            "allocating 1048576 bytes on plugsdk fake GPU: zeMemAllocDevice: 0x70000003 "
            "(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)");

  Built b = build(*rt, kAxpy);
  ASSERT_TRUE(b.kernel);
  fake.fail("zeCommandListAppendLaunchKernel", ZE_RESULT_ERROR_INVALID_ARGUMENT);
  sdk::Status st = rt->launch(*b.kernel, {nullptr, nullptr, nullptr}, {10}, *q);
  fake.fail("zeCommandListAppendLaunchKernel", 0);
  EXPECT_EQ(st.message(),
            "kernel @axpy: zeCommandListAppendLaunchKernel(1 groups of 64): 0x78000004 "
            "(ZE_RESULT_ERROR_INVALID_ARGUMENT)");
  fake.fail("zeKernelSetArgumentValue", ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
  st = rt->launch(*b.kernel, {nullptr, nullptr, nullptr}, {10}, *q);
  fake.fail("zeKernelSetArgumentValue", 0);
  EXPECT_EQ(st.message(),
            "kernel @axpy: zeKernelSetArgumentValue(parameter 0): 0x78000016 "
            "(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)");
  fake.fail("zeCommandListHostSynchronize", ZE_RESULT_ERROR_DEVICE_LOST);
  st = rt->finish(*q, "synchronizing a stream");
  fake.fail("zeCommandListHostSynchronize", 0);
  EXPECT_EQ(st.code(), sdk::Code::kFailedPrecondition);
  EXPECT_EQ(st.message(),
            "synchronizing a stream: zeCommandListHostSynchronize: 0x70000001 (ZE_RESULT_ERROR_DEVICE_LOST)");
  rt->destroyQueue(*q);
}

TEST(ZeFake, EventsAreSignalledWaitedAndSynchronized) {
  Fake fake;
  std::unique_ptr<Runtime> rt = openFake();
  ASSERT_TRUE(rt);
  sdk::StatusOr<Queue> a = rt->createQueue(), b = rt->createQueue();
  ASSERT_TRUE(a.isOk() && b.isOk());
  fake.takeLog();
  sdk::StatusOr<std::unique_ptr<RuntimeEvent>> e = rt->createEvent();
  ASSERT_TRUE(e.isOk()) << e.status().message();
  // Never recorded: waiting is nothing.
  ASSERT_TRUE(rt->wait(*b, **e).isOk());
  ASSERT_TRUE(rt->synchronize(**e).isOk());
  ASSERT_TRUE(rt->record(**e, *a).isOk());
  ASSERT_TRUE(rt->wait(*b, **e).isOk());
  ASSERT_TRUE(rt->synchronize(**e).isOk());
  e->reset();
  EXPECT_EQ(fake.takeLog(),
            "zeEventPoolCreate flags=1 count=1\nzeEventCreate\nzeCommandListAppendEventReset\n"
            "zeCommandListAppendSignalEvent\nzeCommandListAppendWaitOnEvents 1\nzeEventHostSynchronize\n"
            "zeEventDestroy\nzeEventPoolDestroy\n");
  rt->destroyQueue(*a);
  rt->destroyQueue(*b);
}

TEST(ZeFake, PluginUsesTheLevelZeroRuntime) {
  auto p = plugin::Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto d = plugin::Device::open(*p, 0, std::string("runtime=level_zero;ze_loader=") + PLUGSDK_ZE_FAKE_LOADER);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  const plugin::DeviceCaps& caps = (*d)->caps();
  EXPECT_NE(caps.name.find("plugsdk fake GPU"), std::string::npos) << caps.name;
  EXPECT_NE(caps.name.find("runtime=level_zero"), std::string::npos) << caps.name;
  EXPECT_NE(caps.dtypes & PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F64), 0u);
  EXPECT_EQ(caps.memoryBytes, uint64_t{8} << 30);
  // prims.matmul, prims.convolution and prims.sdpa on f32 alone (the tiled kernel, ABI 1.6
  // matmul_dtypes; the implicit GEMM, ABI 1.4 convolution_dtypes, transposed ones rewritten by
  // the core; flash attention, ABI 1.7 sdpa_dtypes).
  EXPECT_EQ(caps.libraryOps,
            static_cast<uint32_t>(PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA));
  EXPECT_EQ(caps.sdpaDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_EQ(caps.matmulDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_EQ(caps.convolutionDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_TRUE(caps.convolutionSkipsTransposed);
  // Buffers through the plugin's copies and fills (plugin.cc: the same for both runtimes;
  // the fake copies and fills at once, so the bytes are checked).
  const plugin::Device& dev = **d;
  auto a = dev.allocate(64), b = dev.allocate(64);
  ASSERT_TRUE(a.isOk() && b.isOk()) << a.status().toString();
  std::vector<uint8_t> in(64), out(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(dev.upload(*a, 0, in.data(), 64).isOk());
  ASSERT_TRUE(dev.fill(*a, 3, 5, 0xee).isOk());
  ASSERT_TRUE(dev.copyOnDevice(*a, 0, *b, 0, 64, nullptr).isOk());
  ASSERT_TRUE(dev.copyOnDevice(*b, 0, *b, 8, 32, nullptr).isOk());  // overlapping: through the host
  ASSERT_TRUE(dev.synchronize().isOk());
  ASSERT_TRUE(dev.download(*b, 0, out.data(), 64).isOk());
  std::vector<uint8_t> want = in;
  for (size_t i = 3; i < 8; ++i) want[i] = 0xee;
  std::vector<uint8_t> moved(want.begin(), want.begin() + 32);
  std::copy(moved.begin(), moved.end(), want.begin() + 8);
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace plugsdk::level_zero::ze
