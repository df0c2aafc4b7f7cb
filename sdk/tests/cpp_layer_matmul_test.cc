// ABI 1.6's matmul_dtypes, through the C++ layer and the core: a plugin that takes prims.matmul
// for some operand dtypes only says so in device_info; the core reads it into the device's
// caps, optionsFor() keeps those calls whole and expands the rest into loop kernels (as on a
// device without the op), and DeviceProgram::compile refuses a dtype the device does not take.
// A plugin of an older minor (a smaller device_info) takes every dtype.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

using ir::DType;

/// An f32 matmul, an f64 one and a batched f32 one.
const char* kMatmuls =
    R"(graph @g(%a: f32[4, 8], %b: f32[8, 3], %c: f64[4, 8], %d: f64[8, 3], %e: f32[2, 5, 7], %f: f32[2, 7, 6]) {
  %x = prims.matmul(%a, %b)
  %y = prims.matmul(%c, %d)
  %z = prims.matmul(%e, %f)
  return %x, %y, %z
})";

std::unique_ptr<Device> openWith(const char* options) {
  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, options);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

/// The compiled program's library calls, as "prims.matmul f32", and its kernel count.
std::vector<std::string> callsFor(const DeviceCaps& caps, int* kernels) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kMatmuls);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return {"(no graph)"};
  auto c = compile::compileGraph(*ctx, *g, optionsFor(caps));
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  if (!c.isOk()) return {"(no program)"};
  std::vector<std::string> out;
  *kernels = 0;
  for (const sched::Step& s : c->program.steps) {
    if (s.kind != sched::Step::Kind::kCall) {
      ++*kernels;
      continue;
    }
    const DType t = c->program.buffers[static_cast<size_t>(s.call.inputs[0]->buffer)].dtype;
    out.push_back(s.call.op + " " + std::string(ir::dtypeName(t)));
  }
  return out;
}

TEST(MatmulDtypes, ThePluginsDtypesReachTheCaps) {
  auto f32 = openWith("matmul_dtypes=f32");
  ASSERT_TRUE(f32);
  const DeviceCaps& k = f32->caps();
  EXPECT_TRUE(k.libraryOps & PLUGSDK_LIBRARY_MATMUL);
  EXPECT_EQ(k.matmulDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_TRUE(k.takesMatmul(DType::kF32));
  EXPECT_FALSE(k.takesMatmul(DType::kF64));
  EXPECT_FALSE(k.takesMatmul(DType::kBF16));
  const compile::CompileOptions o = optionsFor(k);
  EXPECT_EQ(o.decomp.matmulDtypes, (std::vector<DType>{DType::kF32}));
  EXPECT_FALSE(o.decomp.expand.count("prims.matmul"));
  EXPECT_FALSE(o.decomp.mixedMatmul);  // no f16/bf16 operands taken: attention converts to f32
  // The fingerprint (the persistent cache's key) tells the two apart.
  auto every = openWith("matmul_dtypes=all");
  ASSERT_TRUE(every);
  EXPECT_TRUE(every->caps().libraryOps & PLUGSDK_LIBRARY_MATMUL);
  EXPECT_EQ(every->caps().matmulDtypes, 0u);
  EXPECT_TRUE(every->caps().takesMatmul(DType::kF64));
  EXPECT_TRUE(optionsFor(every->caps()).decomp.matmulDtypes.empty());
  EXPECT_TRUE(optionsFor(every->caps()).decomp.mixedMatmul);
  auto halves = openWith("matmul_dtypes=f32,bf16");
  ASSERT_TRUE(halves);
  EXPECT_TRUE(optionsFor(halves->caps()).decomp.mixedMatmul);
  EXPECT_EQ(optionsFor(halves->caps()).decomp.matmulDtypes, (std::vector<DType>{DType::kBF16, DType::kF32}));
  EXPECT_NE(compile::optionsFingerprint(o), compile::optionsFingerprint(optionsFor(every->caps())));

  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  ASSERT_TRUE(p.isOk());
  auto bad = Device::open(*p, 0, "matmul_dtypes=f32,i7");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("matmul_dtypes: unknown dtype 'i7'"), std::string::npos)
      << bad.status().toString();
}

// The core reads the 1.6 field only from a struct that has it: an older plugin's device_info,
// with whatever lies past its struct_size, takes every dtype.
TEST(MatmulDtypes, AnOlderPluginsInfoTakesEveryDtype) {
  plugsdk_device_info_t info;
  std::memset(&info, 0, sizeof(info));
  info.library_ops = PLUGSDK_LIBRARY_MATMUL;
  info.matmul_dtypes = PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32);
  info.struct_size = sizeof(info);
  EXPECT_EQ(capsFrom(info).matmulDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  const size_t align = alignof(plugsdk_device_info_t);
  const size_t v15 = (PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, split_column_reductions) + align - 1) / align * align;
  for (size_t older : {PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, takes_subgraphs),  // 1.0
                       PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, matmul_dtypes) - 1, v15}) {
    if (older >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, matmul_dtypes)) continue;  // no tail padding
    info.struct_size = older;
    const DeviceCaps k = capsFrom(info);
    EXPECT_EQ(k.matmulDtypes, 0u) << older;
    EXPECT_TRUE(k.takesMatmul(DType::kF64)) << older;
    EXPECT_TRUE(optionsFor(k).decomp.matmulDtypes.empty()) << older;
  }
}

// What optionsFor() makes of the caps: the program calls the library for the dtypes taken and
// has loop kernels for the rest.
TEST(MatmulDtypes, AnUnclaimedDtypeIsExpandedAClaimedOneKept) {
  int kernels = 0;
  auto f32 = openWith("matmul_dtypes=f32");
  ASSERT_TRUE(f32);
  EXPECT_EQ(callsFor(f32->caps(), &kernels), (std::vector<std::string>{"prims.matmul f32", "prims.matmul f32"}));
  EXPECT_GE(kernels, 1);  // the f64 product's loops
  auto f64 = openWith("matmul_dtypes=f64");
  ASSERT_TRUE(f64);
  EXPECT_EQ(callsFor(f64->caps(), &kernels), (std::vector<std::string>{"prims.matmul f64"}));
  EXPECT_GE(kernels, 2);
  auto every = openWith("matmul_dtypes=all");
  ASSERT_TRUE(every);
  EXPECT_EQ(callsFor(every->caps(), &kernels),
            (std::vector<std::string>{"prims.matmul f32", "prims.matmul f64", "prims.matmul f32"}));
  EXPECT_EQ(kernels, 0);
  auto none = openWith("");
  ASSERT_TRUE(none);
  EXPECT_TRUE(callsFor(none->caps(), &kernels).empty());
  EXPECT_GE(kernels, 3);
}

// A program compiled without the device's options (every dtype kept) is refused at compile
// time, naming the dtype, before the plugin sees the call.
TEST(MatmulDtypes, CompilingADtypeTheDeviceDoesNotTakeIsAnError) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, R"(graph @g(%c: f64[4, 8], %d: f64[8, 3]) {
  %y = prims.matmul(%c, %d)
  return %y
})");
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ASSERT_EQ(c->program.numCalls(), 1);
  auto f32 = openWith("matmul_dtypes=f32");
  ASSERT_TRUE(f32);
  auto refused = DeviceProgram::compile(*f32, c->program);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("takes no prims.matmul on dtype f64"), std::string::npos)
      << refused.status().toString();
  // Every dtype: the call gets past the form check (and stops at the test device's dtypes).
  auto every = openWith("matmul_dtypes=all");
  ASSERT_TRUE(every);
  auto passed = DeviceProgram::compile(*every, c->program);
  ASSERT_FALSE(passed.isOk());
  EXPECT_EQ(passed.status().message().find("takes no prims.matmul"), std::string::npos) << passed.status().toString();
}

}  // namespace
}  // namespace plugsdk::plugin
