// prims.sdpa through the level_zero plugin on the OpenCL runtime (PoCL in the toolbox), from
// the core's device layer: the plugin claims f32 attention (ABI 1.7 sdpa_dtypes) without
// dropout (sdpa_skips) and head dims up to 128 (sdpa_head_dim_max), so plain, causal, masked
// and Ev != E calls are library calls run by the flash-attention kernel, and f64, dropout and
// a head dim of 129 are the core's expansion; all against the core's program interpreter in
// double. The sdpa option and its variable. Skips, saying why, without an OpenCL device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

const char* kAttention =
    R"(graph @a(%q: f32[2, 3, 37, 16], %k: f32[2, 3, 45, 16], %v: f32[2, 3, 45, 24], %bm: bool[2, 3, 37, 45], %fm: f32[2, 3, 37, 45], %q8: f64[2, 9, 8], %w: f32[1, 5, 129]) {
  %o1, %l1 = prims.sdpa(%q, %k, %v, none)
  %o2, %l2 = prims.sdpa(%q, %k, %v, none) {is_causal = true, scale = 0.3}
  %o3, %l3 = prims.sdpa(%q, %k, %v, %bm)
  %o4, %l4 = prims.sdpa(%q, %k, %v, %fm)
  %o5, %l5 = prims.sdpa(%q8, %q8, %q8, none) {is_causal = true}
  %o6, %l6 = prims.sdpa(%w, %w, %w, none)
  return %o1, %l1, %o2, %l2, %o3, %l3, %o4, %l4, %o5, %l5, %o6, %l6
})";

TEST(LevelZeroSdpa, F32IsTheFlashKernelOtherFormsTheCoresExpansion) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto opened = Device::open(*p, 0, "runtime=opencl");
  if (!opened.isOk()) GTEST_SKIP() << opened.status().toString();
  const Device& dev = **opened;
  EXPECT_TRUE(dev.caps().libraryOps & PLUGSDK_LIBRARY_SDPA);
  EXPECT_EQ(dev.caps().sdpaDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_EQ(dev.caps().sdpaSkips, static_cast<uint32_t>(PLUGSDK_SDPA_SKIPS_DROPOUT));
  EXPECT_EQ(dev.caps().sdpaHeadDimMax, 128u);

  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kAttention);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(dev.caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  size_t calls = 0;
  for (const sched::Step& s : c->program.steps)
    if (s.kind == sched::Step::Kind::kCall && s.call.op == "prims.sdpa") ++calls;
  EXPECT_EQ(calls, 4u);  // the f32 ones of head dims 16 / 24; f64 and 129 expanded

  auto dp = DeviceProgram::compile(dev, c->program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<exec::HostTensor> ins;
  for (const sched::ProgramInput& in : c->program.inputs) {
    std::vector<int64_t> shape;
    for (const auto& d : in.type.shape) shape.push_back(*d.constant());
    exec::HostTensor x(in.type.dtype, shape);
    for (int64_t i = 0; i < x.numel(); ++i)
      x.setDouble(i, in.type.dtype == ir::DType::kBool ? (normal(rng) > -0.5 ? 1 : 0)
                                                       : exec::roundToFloatType(normal(rng), in.type.dtype));
    ins.push_back(std::move(x));
  }
  auto want = sched::ProgramInterpreter(ctx).run(c->program, ins);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  auto got = (*dp)->run(ins);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_EQ(got->size(), 12u);
  for (size_t o = 0; o < 12; ++o) {
    ASSERT_EQ((*got)[o].shape(), (*want)[o].shape()) << "output " << o;
    for (int64_t i = 0; i < (*got)[o].numel(); ++i)
      ASSERT_NEAR((*got)[o].getDouble(i), (*want)[o].getDouble(i),
                  2e-5 * std::max(1.0, std::fabs((*want)[o].getDouble(i))))
          << "output " << o << " element " << i;
  }
}

TEST(LevelZeroSdpa, SdpaLoopsLeavesAttentionToTheCore) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto loops = Device::open(*p, 0, "runtime=opencl;sdpa=loops");
  if (!loops.isOk()) GTEST_SKIP() << loops.status().toString();
  EXPECT_EQ((*loops)->caps().libraryOps & PLUGSDK_LIBRARY_SDPA, 0u);
  EXPECT_TRUE((*loops)->caps().libraryOps & PLUGSDK_LIBRARY_MATMUL);  // the expansion's products
  auto bad = Device::open(*p, 0, "runtime=opencl;sdpa=cudnn");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("option sdpa: 'cudnn' is not flash or loops"), std::string::npos)
      << bad.status().toString();
  // The default comes from $PLUGSDK_LEVEL_ZERO_SDPA (the conformance runner passes no options).
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_SDPA", "loops", 1), 0);
  auto fromEnv = Device::open(*p, 0, "runtime=opencl");
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_SDPA", "fused", 1), 0);
  auto badEnv = Device::open(*p, 0, "runtime=opencl");
  auto optionWins = Device::open(*p, 0, "runtime=opencl;sdpa=flash");
  unsetenv("PLUGSDK_LEVEL_ZERO_SDPA");
  ASSERT_TRUE(fromEnv.isOk()) << fromEnv.status().toString();
  EXPECT_EQ((*fromEnv)->caps().libraryOps & PLUGSDK_LIBRARY_SDPA, 0u);
  ASSERT_FALSE(badEnv.isOk());
  EXPECT_NE(badEnv.status().message().find("(from PLUGSDK_LEVEL_ZERO_SDPA)"), std::string::npos)
      << badEnv.status().toString();
  ASSERT_TRUE(optionWins.isOk()) << optionWins.status().toString();
  EXPECT_TRUE((*optionWins)->caps().libraryOps & PLUGSDK_LIBRARY_SDPA);
}

}  // namespace
}  // namespace plugsdk::plugin
