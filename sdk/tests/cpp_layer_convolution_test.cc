// ABI 1.4's forms of prims.convolution, through the C++ layer and the core: a plugin that
// takes only some input dtypes and no transposed convolutions says so in device_info; the
// core reads it into the device's caps, optionsFor() keeps those calls whole and expands the
// rest into loop kernels, and DeviceProgram::compile refuses a form the device does not take.
// A plugin of an older minor (a smaller device_info) takes every form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

using ir::DType;

/// An f32 convolution and an f32 transposed one (the test plugin's dtypes are f32 and i64).
const char* kConvs = R"(graph @g(%x: f32[1, 3, 8, 8], %w: f32[4, 3, 3, 3], %xt: f32[1, 4, 5, 5], %wt: f32[4, 3, 3, 3]) {
  %a = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [1, 1], transposed = false}
  %b = prims.convolution(%xt, %wt) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  return %a, %b
})";

std::unique_ptr<Device> openWith(const char* dir, const char* name, const char* options) {
  auto p = Loader({dir}).load(name);
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, options);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

/// The library calls of `text` compiled for `caps`, as "prims.convolution" or
/// "prims.convolution transposed".
std::vector<std::string> callsFor(const char* text, const DeviceCaps& caps) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, text);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return {"(no graph)"};
  auto c = compile::compileGraph(*ctx, *g, optionsFor(caps));
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  if (!c.isOk()) return {"(no program)"};
  std::vector<std::string> out;
  for (const sched::Step& s : c->program.steps) {
    if (s.kind != sched::Step::Kind::kCall) continue;
    auto t = s.call.attrs.find("transposed");
    const bool transposed = t != s.call.attrs.end() && t->second.asBool().value_or(false);
    out.push_back(s.call.op + (transposed ? " transposed" : ""));
  }
  return out;
}

TEST(ConvolutionForms, ThePluginsFormsReachTheCaps) {
  auto some = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=f32,bf16");
  ASSERT_TRUE(some);
  const DeviceCaps& k = some->caps();
  EXPECT_TRUE(k.libraryOps & PLUGSDK_LIBRARY_CONVOLUTION);
  EXPECT_EQ(k.convolutionDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32) | PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_BF16));
  EXPECT_TRUE(k.convolutionSkipsTransposed);
  EXPECT_TRUE(k.takesConvolution(DType::kF32, false));
  EXPECT_TRUE(k.takesConvolution(DType::kBF16, false));
  EXPECT_FALSE(k.takesConvolution(DType::kF64, false));
  EXPECT_FALSE(k.takesConvolution(DType::kF16, false));
  EXPECT_FALSE(k.takesConvolution(DType::kF32, true));
  const compile::CompileOptions o = optionsFor(k);
  EXPECT_EQ(o.decomp.convolutionDtypes, (std::vector<DType>{DType::kBF16, DType::kF32}));
  EXPECT_FALSE(o.decomp.convolutionTransposed);
  EXPECT_FALSE(o.decomp.expand.count("prims.convolution"));

  auto every = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=all");
  ASSERT_TRUE(every);
  EXPECT_TRUE(every->caps().libraryOps & PLUGSDK_LIBRARY_CONVOLUTION);
  EXPECT_EQ(every->caps().convolutionDtypes, 0u);
  EXPECT_FALSE(every->caps().convolutionSkipsTransposed);
  EXPECT_TRUE(every->caps().takesConvolution(DType::kF64, true));
  EXPECT_TRUE(optionsFor(every->caps()).decomp.convolutionDtypes.empty());
  EXPECT_TRUE(optionsFor(every->caps()).decomp.convolutionTransposed);

  auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
  ASSERT_TRUE(p.isOk());
  auto bad = Device::open(*p, 0, "conv_dtypes=f32,f128");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("conv_dtypes: unknown dtype 'f128'"), std::string::npos)
      << bad.status().toString();
}

// The core reads the 1.4 fields only from a struct that has them: an older plugin's
// device_info, with whatever lies past its struct_size, takes every form.
TEST(ConvolutionForms, AnOlderPluginsInfoTakesEveryForm) {
  plugsdk_device_info_t info;
  std::memset(&info, 0, sizeof(info));
  info.library_ops = PLUGSDK_LIBRARY_CONVOLUTION;
  info.convolution_dtypes = PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32);
  info.convolution_skips_transposed = true;
  info.struct_size = sizeof(info);
  EXPECT_EQ(capsFrom(info).convolutionDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_TRUE(capsFrom(info).convolutionSkipsTransposed);
  for (size_t older : {PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, takes_subgraphs),           // 1.0
                       PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, async_stream_failures)}) {  // 1.3
    info.struct_size = older;
    const DeviceCaps k = capsFrom(info);
    EXPECT_EQ(k.convolutionDtypes, 0u) << older;
    EXPECT_FALSE(k.convolutionSkipsTransposed) << older;
    EXPECT_TRUE(k.takesConvolution(DType::kF64, true)) << older;
  }
}

// What optionsFor() makes of the caps: the program calls the library for the forms taken.
TEST(ConvolutionForms, TheProgramCallsTheLibraryOnlyForTheFormsTaken) {
  const std::vector<std::string> both{"prims.convolution", "prims.convolution transposed"};
  auto f32 = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=f32");
  ASSERT_TRUE(f32);
  // The transposed one comes back as a plain convolution of its dilated input by the flipped
  // weight, which this device takes (core/decomp/rules_library.cc).
  EXPECT_EQ(callsFor(kConvs, f32->caps()), (std::vector<std::string>{"prims.convolution", "prims.convolution"}));
  auto bf16 = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=bf16");
  ASSERT_TRUE(bf16);
  EXPECT_TRUE(callsFor(kConvs, bf16->caps()).empty());
  auto every = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=all");
  ASSERT_TRUE(every);
  EXPECT_EQ(callsFor(kConvs, every->caps()), both);
  auto none = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "");
  ASSERT_TRUE(none);
  EXPECT_TRUE(callsFor(kConvs, none->caps()).empty());
}

// A program compiled without the device's options (every form kept) is refused at compile
// time, naming the form, before the plugin sees the call.
TEST(ConvolutionForms, CompilingAFormTheDeviceDoesNotTakeIsAnError) {
  const char* transposed = R"(graph @g(%xt: f32[1, 4, 5, 5], %wt: f32[4, 3, 3, 3]) {
  %b = prims.convolution(%xt, %wt) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  return %b
})";
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, transposed);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ASSERT_EQ(c->program.numCalls(), 1);
  auto f32 = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=f32");
  ASSERT_TRUE(f32);
  auto refused = DeviceProgram::compile(*f32, c->program);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("takes no transposed prims.convolution on dtype f32"), std::string::npos)
      << refused.status().toString();
  // Every form: the call reaches the plugin (whose compile_library is not implemented).
  auto every = openWith(PLUGSDK_SDK_TEST_PLUGIN_DIR, "cpptest", "conv_dtypes=all");
  ASSERT_TRUE(every);
  auto passed = DeviceProgram::compile(*every, c->program);
  ASSERT_FALSE(passed.isOk());
  EXPECT_NE(passed.status().message().find("compile_library is not implemented"), std::string::npos)
      << passed.status().toString();
}

// A 1.0 plugin that implements convolution runs every form, f64 and transposed included.
TEST(ConvolutionForms, AOneZeroPluginRunsEveryForm) {
  const char* convs =
      R"(graph @g(%x: f64[1, 3, 8, 8], %w: f64[4, 3, 3, 3], %xt: f32[1, 4, 5, 5], %wt: f32[4, 3, 3, 3]) {
  %a = prims.convolution(%x, %w) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [1, 1], transposed = false}
  %b = prims.convolution(%xt, %wt) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  return %a, %b
})";
  auto old = openWith(PLUGSDK_TEST_PLUGIN_DIR, "frozen_v1_0", "");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->plugin().abiMinor(), 0u);
  EXPECT_TRUE(old->caps().libraryOps & PLUGSDK_LIBRARY_CONVOLUTION);
  EXPECT_EQ(old->caps().convolutionDtypes, 0u);
  EXPECT_FALSE(old->caps().convolutionSkipsTransposed);
  EXPECT_EQ(callsFor(convs, old->caps()),
            (std::vector<std::string>{"prims.convolution", "prims.convolution transposed"}));

  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, convs);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(old->caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  auto dp = DeviceProgram::compile(*old, c->program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  std::vector<exec::HostTensor> inputs;
  int seed = 0;
  for (const ir::Value* v : g->inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) shape.push_back(*d.constant());
    inputs.emplace_back(v->type().dtype, shape);
    for (double& x : inputs.back().doubles()) x = static_cast<double>((seed++ * 7) % 11) / 4 - 1;
  }
  auto got = (*dp)->run(inputs);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ((*got)[i].shape(), (*want)[i].shape());
    for (int64_t j = 0; j < (*want)[i].numel(); ++j)
      ASSERT_NEAR((*got)[i].getDouble(j), (*want)[i].getDouble(j), 1e-5) << "output " << i << " element " << j;
  }
}

}  // namespace
}  // namespace plugsdk::plugin
