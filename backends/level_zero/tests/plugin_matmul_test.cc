// prims.matmul through the level_zero plugin on the OpenCL runtime (PoCL in the toolbox), from
// the core's device layer: the plugin claims f32 alone (ABI 1.6 matmul_dtypes), so an f32
// product (plain, batched, of a transposed view) is one library call run by the tiled kernel
// and an f64 one becomes loop kernels; both against the core's program interpreter in double.
// Skips, saying why, without an OpenCL device.
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

const char* kMatmuls =
    R"(graph @m(%a: f32[37, 19], %b: f32[19, 23], %x: f32[3, 21, 40], %y: f32[3, 17, 40], %c: f64[9, 13], %d: f64[13, 6]) {
  %p = aten.mm(%a, %b)
  %yt = aten.transpose.int(%y) {dim0 = 1, dim1 = 2}
  %q = aten.bmm(%x, %yt)
  %r = aten.mm(%c, %d)
  return %p, %q, %r
})";

TEST(LevelZeroMatmul, F32IsTheTiledKernelF64TheCoresLoops) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto opened = Device::open(*p, 0, "runtime=opencl");
  if (!opened.isOk()) GTEST_SKIP() << opened.status().toString();
  const Device& dev = **opened;
  EXPECT_TRUE(dev.caps().libraryOps & PLUGSDK_LIBRARY_MATMUL);
  EXPECT_EQ(dev.caps().matmulDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));

  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kMatmuls);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(dev.caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  std::vector<std::string> calls;
  for (const sched::Step& s : c->program.steps)
    if (s.kind == sched::Step::Kind::kCall)
      calls.push_back(
          std::string(ir::dtypeName(c->program.buffers[static_cast<size_t>(s.call.inputs[0]->buffer)].dtype)));
  EXPECT_EQ(calls, (std::vector<std::string>{"f32", "f32"}));
  EXPECT_FALSE(c->program.kernels.empty());  // the f64 product's loops

  auto dp = DeviceProgram::compile(dev, c->program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<exec::HostTensor> ins;
  for (const sched::ProgramInput& in : c->program.inputs) {
    std::vector<int64_t> shape;
    for (const auto& d : in.type.shape) shape.push_back(*d.constant());
    exec::HostTensor x(in.type.dtype, shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, exec::roundToFloatType(normal(rng), in.type.dtype));
    ins.push_back(std::move(x));
  }
  auto want = sched::ProgramInterpreter(ctx).run(c->program, ins);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  auto got = (*dp)->run(ins);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_EQ(got->size(), 3u);
  for (size_t o = 0; o < 3; ++o) {
    ASSERT_EQ((*got)[o].shape(), (*want)[o].shape()) << "output " << o;
    for (int64_t i = 0; i < (*got)[o].numel(); ++i)
      ASSERT_NEAR((*got)[o].getDouble(i), (*want)[o].getDouble(i), 1e-4) << "output " << o << " element " << i;
  }
}

TEST(LevelZeroMatmul, MatmulLoopsLeavesEveryMatmulToTheCore) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto loops = Device::open(*p, 0, "runtime=opencl;matmul=loops");
  if (!loops.isOk()) GTEST_SKIP() << loops.status().toString();
  EXPECT_EQ((*loops)->caps().libraryOps & PLUGSDK_LIBRARY_MATMUL, 0u);
  auto bad = Device::open(*p, 0, "runtime=opencl;matmul=cublas");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("option matmul: 'cublas' is not tiled or loops"), std::string::npos)
      << bad.status().toString();
  // The default comes from $PLUGSDK_LEVEL_ZERO_MATMUL (the conformance runner passes no options).
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_MATMUL", "loops", 1), 0);
  auto fromEnv = Device::open(*p, 0, "runtime=opencl");
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_MATMUL", "gemm", 1), 0);
  auto badEnv = Device::open(*p, 0, "runtime=opencl");
  auto optionWins = Device::open(*p, 0, "runtime=opencl;matmul=tiled");
  unsetenv("PLUGSDK_LEVEL_ZERO_MATMUL");
  ASSERT_TRUE(fromEnv.isOk()) << fromEnv.status().toString();
  EXPECT_EQ((*fromEnv)->caps().libraryOps & PLUGSDK_LIBRARY_MATMUL, 0u);
  ASSERT_FALSE(badEnv.isOk());
  EXPECT_NE(badEnv.status().message().find("(from PLUGSDK_LEVEL_ZERO_MATMUL)"), std::string::npos)
      << badEnv.status().toString();
  ASSERT_TRUE(optionWins.isOk()) << optionWins.status().toString();
  EXPECT_TRUE((*optionWins)->caps().libraryOps & PLUGSDK_LIBRARY_MATMUL);
}

}  // namespace
}  // namespace plugsdk::plugin
