// prims.convolution through the level_zero plugin on the OpenCL runtime (PoCL in the toolbox),
// from the core's device layer: the plugin claims f32 convolutions (ABI 1.4
// convolution_dtypes, transposed ones left to the core's rewrite into a plain convolution),
// so an f32 convolution (groups, stride, padding, dilation; a bias as the core's add) and a
// transposed one are library calls run by the implicit-GEMM kernel, and an f64 one becomes
// loop kernels; all against the core's program interpreter in double. Option conv=im2col
// (or $PLUGSDK_LEVEL_ZERO_CONV) leaves them to the core. Skips, saying why, without an
// OpenCL device.
#include <gtest/gtest.h>

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

const char* kConvolutions =
    R"(graph @c(%x: f32[2, 6, 11, 10], %w: f32[8, 3, 3, 2], %b: f32[8], %t: f32[2, 4, 5, 5], %tw: f32[4, 3, 3, 3], %d: f64[1, 2, 7], %dw: f64[3, 2, 3]) {
  %y = aten.convolution(%x, %w, %b) {dilation = [1, 2], groups = 2, output_padding = [0, 0], padding = [1, 2], stride = [2, 1], transposed = false}
  %u = aten.convolution(%t, %tw, none) {dilation = [1, 1], groups = 1, output_padding = [1, 1], padding = [1, 1], stride = [2, 2], transposed = true}
  %v = aten.convolution(%d, %dw, none) {dilation = [1], groups = 1, output_padding = [0], padding = [1], stride = [1], transposed = false}
  return %y, %u, %v
})";

/// The library calls of `c`'s program, by the dtype of their first input.
std::vector<std::string> libraryCalls(const compile::Compiled& c) {
  std::vector<std::string> calls;
  for (const sched::Step& s : c.program.steps)
    if (s.kind == sched::Step::Kind::kCall)
      calls.push_back(
          s.call.op + " " +
          std::string(ir::dtypeName(c.program.buffers[static_cast<size_t>(s.call.inputs[0]->buffer)].dtype)));
  return calls;
}

TEST(LevelZeroConv, F32IsTheImplicitGemmF64TheCoresLoops) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto opened = Device::open(*p, 0, "runtime=opencl");
  if (!opened.isOk()) GTEST_SKIP() << opened.status().toString();
  const Device& dev = **opened;
  EXPECT_TRUE(dev.caps().libraryOps & PLUGSDK_LIBRARY_CONVOLUTION);
  EXPECT_EQ(dev.caps().convolutionDtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32));
  EXPECT_TRUE(dev.caps().convolutionSkipsTransposed);

  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kConvolutions);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(dev.caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  // The plain and the transposed f32 convolutions, each one call; the f64 one loops.
  EXPECT_EQ(libraryCalls(*c), (std::vector<std::string>{"prims.convolution f32", "prims.convolution f32"}));
  EXPECT_FALSE(c->program.kernels.empty());

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

TEST(LevelZeroConv, ConvIm2colLeavesConvolutionsToTheCore) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  auto im2col = Device::open(*p, 0, "runtime=opencl;conv=im2col");
  if (!im2col.isOk()) GTEST_SKIP() << im2col.status().toString();
  const uint32_t products = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION;  // sdpa is its own option
  EXPECT_EQ((*im2col)->caps().libraryOps & products, static_cast<uint32_t>(PLUGSDK_LIBRARY_MATMUL));
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kConvolutions);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor((*im2col)->caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  for (const std::string& call : libraryCalls(*c)) EXPECT_EQ(call, "prims.matmul f32");  // im2col's
  auto bad = Device::open(*p, 0, "runtime=opencl;conv=winograd");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("option conv: 'winograd' is not implicit or im2col"), std::string::npos)
      << bad.status().toString();
  // The default comes from $PLUGSDK_LEVEL_ZERO_CONV (the conformance runner passes no options).
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_CONV", "im2col", 1), 0);
  auto fromEnv = Device::open(*p, 0, "runtime=opencl;matmul=loops");
  ASSERT_EQ(setenv("PLUGSDK_LEVEL_ZERO_CONV", "fft", 1), 0);
  auto badEnv = Device::open(*p, 0, "runtime=opencl");
  auto optionWins = Device::open(*p, 0, "runtime=opencl;matmul=loops;conv=implicit");
  unsetenv("PLUGSDK_LEVEL_ZERO_CONV");
  ASSERT_TRUE(fromEnv.isOk()) << fromEnv.status().toString();
  EXPECT_EQ((*fromEnv)->caps().libraryOps & products, 0u);
  ASSERT_FALSE(badEnv.isOk());
  EXPECT_NE(badEnv.status().message().find("(from PLUGSDK_LEVEL_ZERO_CONV)"), std::string::npos)
      << badEnv.status().toString();
  ASSERT_TRUE(optionWins.isOk()) << optionWins.status().toString();
  EXPECT_EQ((*optionWins)->caps().libraryOps & products, static_cast<uint32_t>(PLUGSDK_LIBRARY_CONVOLUTION));
}

}  // namespace
}  // namespace plugsdk::plugin
