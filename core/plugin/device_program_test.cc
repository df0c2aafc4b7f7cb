// The device layer against real and purpose-built plugins: programs run through the minimal
// sample and match the program interpreter; every fault (an error from a call, a NULL handle,
// a failing launch, a device without the op or dtype) is an error naming the plugin file and
// the cause, at compile time where it can be; a plugin of a newer minor works.
#include "core/plugin/device_program.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

Loader testLoader() { return Loader({PLUGSDK_TEST_PLUGIN_DIR, PLUGSDK_BUILT_PLUGIN_DIR}); }

std::unique_ptr<Device> openDevice(const std::string& name, const std::string& options = "") {
  auto p = testLoader().load(name);
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  if (!p.isOk()) return nullptr;
  auto d = Device::open(*p, 0, options);
  EXPECT_TRUE(d.isOk()) << d.status().toString();
  return d.isOk() ? std::move(*d) : nullptr;
}

Status openStatus(const std::string& name) {
  auto p = testLoader().load(name);
  if (!p.isOk()) return p.status();
  auto d = Device::open(*p);
  return d.isOk() ? Status::ok() : d.status();
}

void expectHas(const Status& s, const std::string& part) {
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
}

exec::HostTensor randomInput(const ir::TensorType& t, const std::vector<int64_t>& shape, std::mt19937_64& rng) {
  exec::HostTensor x(t.dtype, shape);
  std::normal_distribution<double> normal;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.isFloating())
      x.setDouble(i, exec::roundToFloatType(normal(rng), t.dtype));
    else
      x.setInt(i, static_cast<int64_t>(i % 3));
  }
  return x;
}

// Matmul (a library op, expanded to loops for a device without it), softmax (reductions), a
// transposed view, gather (indirect loads), a symbolic batch size.
const char* kGraph = R"(graph @g(%x: f64[s0, 8], %w: f64[6, 8], %i: i64[s0, 2]) {
  %t = aten.t(%w)
  %m = aten.mm(%x, %t)
  %r = aten.relu(%m)
  %s = aten._softmax(%r) {dim = 1, half_to_float = false}
  %g = aten.gather(%s, %i) {dim = 1}
  return %s, %g
})";

// The fault plugins claim f32 only and no library op.
const char* kF32Graph = R"(graph @f(%x: f32[4, 8], %w: f32[8, 3]) {
  %m = aten.mm(%x, %w)
  %r = aten.relu(%m)
  return %r
})";

struct Compiled {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  sched::Program program;
};

Compiled compileFor(const DeviceCaps* caps, const char* src = kGraph) {
  Compiled c;
  auto g = text::parseGraph(*c.ctx, src);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  compile::CompileOptions o;
  if (caps) o = optionsFor(*caps, o);
  auto r = compile::compileGraph(*c.ctx, *g, o);
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (r.isOk()) c.program = std::move(r->program);
  return c;
}

std::vector<exec::HostTensor> inputsFor(const sched::Program& p, int64_t s0) {
  std::mt19937_64 rng(7);
  std::vector<exec::HostTensor> ins;
  for (const sched::ProgramInput& in : p.inputs) {
    std::vector<int64_t> shape;
    for (const auto& d : in.type.shape) shape.push_back(*d.evaluate({{"s0", s0}}));
    ins.push_back(randomInput(in.type, shape, rng));
  }
  return ins;
}

struct SampleCase {
  const char* plugin;
  const char* options;
  int calls;  ///< library calls expected in the program scheduled for it
};

class DeviceProgramOn : public ::testing::TestWithParam<SampleCase> {};

// The sample with its library ops, without them (matmul as loops), and built against the
// frozen ABI 1.0 header.
INSTANTIATE_TEST_SUITE_P(Samples, DeviceProgramOn,
                         ::testing::Values(SampleCase{"minimal", "", 1}, SampleCase{"minimal", "library=none", 0},
                                           SampleCase{"frozen_v1_0", "", 1}),
                         [](const auto& info) {
                           return std::string(info.param.plugin) + (*info.param.options ? "_loops" : "");
                         });

TEST_P(DeviceProgramOn, MatchesTheProgramInterpreter) {
  auto dev = openDevice(GetParam().plugin, GetParam().options);
  ASSERT_TRUE(dev);
  Compiled c = compileFor(&dev->caps());
  EXPECT_EQ(c.program.numCalls(), GetParam().calls);
  auto dp = DeviceProgram::compile(*dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  sched::ProgramInterpreter interp(c.ctx);
  for (int64_t s0 : {3, 5}) {  // one compiled program, two sizes
    auto ins = inputsFor(c.program, s0);
    auto want = interp.run(c.program, ins);
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    auto got = (*dp)->run(ins);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      ASSERT_EQ((*got)[o].shape(), (*want)[o].shape());
      for (int64_t i = 0; i < (*got)[o].numel(); ++i)
        EXPECT_NEAR((*got)[o].getDouble(i), (*want)[o].getDouble(i), 1e-12) << "output " << o << " element " << i;
    }
  }
  EXPECT_EQ((*dp)->log(), "") << "the sample's compilers have nothing to say";
  // Wrong inputs are an error naming the input, not a launch on bad memory.
  auto bad = (*dp)->run({});
  expectHas(bad.status(), "takes 3 inputs");
}

TEST(DeviceProgram, TwoThreadsRunningOneProgramTakeTurns) {
  // The plugin fails any call that overlaps another on its client (the ABI promises one
  // thread per client at a time); the device's lock must serialize the two runs.
  auto dev = openDevice("one_thread");
  ASSERT_TRUE(dev);
  Compiled c = compileFor(&dev->caps(), kF32Graph);
  auto dp = DeviceProgram::compile(*dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  auto work = [&] {
    for (int r = 0; r < 25; ++r) {
      auto got = (*dp)->run(inputsFor(c.program, 0));
      if (!got.isOk()) ADD_FAILURE() << got.status().toString();
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
}

TEST(DeviceProgram, NullBackendHasNoDeviceAndSaysWhy) {
  expectHas(openStatus("null"), "the null backend has no devices");
}

TEST(DeviceProgram, AnErrorFromAnyCallNamesThePluginAndTheCall) {
  Status s = openStatus("fault_errors");
  expectHas(s, "libplugsdk_fault_errors.so");
  expectHas(s, "device_count: the device fell over (on purpose)");
}

TEST(DeviceProgram, NullHandlesAreErrors) {
  Status s = openStatus("fault_null_handles");
  expectHas(s, "libplugsdk_fault_null_handles.so");
  expectHas(s, "client_create succeeded but returned a NULL client");
  auto dev = openDevice("fault_null_buffer");
  ASSERT_TRUE(dev);
  auto b = dev->allocate(64);
  expectHas(b.status(), "libplugsdk_fault_null_buffer.so");
  expectHas(b.status(), "buffer_allocate succeeded but returned a NULL buffer");
}

TEST(DeviceProgram, AFailingLaunchNamesTheStepAndThePlugin) {
  auto dev = openDevice("fault_launch");
  ASSERT_TRUE(dev);
  Compiled c = compileFor(&dev->caps(), kF32Graph);
  auto dp = DeviceProgram::compile(*dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  // The compiler log of every executable, each under its name, ending in a newline.
  const std::string log = (*dp)->log();
  EXPECT_NE(log.find(":\ncompiled to nothing (a test plugin)\n"), std::string::npos) << log;
  auto r = (*dp)->run(inputsFor(c.program, 0));
  expectHas(r.status(), "libplugsdk_fault_launch.so");
  expectHas(r.status(), "the kernel hit a hardware fault (on purpose)");
  expectHas(r.status(), "step 0");
  expectHas(r.status(), "program @f");
}

TEST(DeviceProgram, UnsupportedOpOrDTypeIsACompileTimeErrorNamingIt) {
  auto dev = openDevice("fault_launch");
  ASSERT_TRUE(dev);
  // Scheduled without the device's capabilities: the matmul stays a library call.
  Compiled lib = compileFor(nullptr, kF32Graph);
  ASSERT_EQ(lib.program.numCalls(), 1);
  auto dp = DeviceProgram::compile(*dev, lib.program);
  expectHas(dp.status(), "prims.matmul is not implemented by device fault:0 (fault0)");
  // f64 on a device that claims f32 only: named before anything is compiled.
  Compiled f64 = compileFor(&dev->caps());
  auto dp64 = DeviceProgram::compile(*dev, f64.program);
  expectHas(dp64.status(), "uses dtype f64, which device fault:0 (fault0) does not support (it supports: f32)");
}

TEST(DeviceProgram, NewerMinorPluginLoadsAndWorksWithWhatTheCoreKnows) {
  auto p = testLoader().load("newer_minor");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ((*p)->abiMajor(), static_cast<uint32_t>(PLUGSDK_ABI_VERSION_MAJOR));
  EXPECT_EQ((*p)->abiMinor(), static_cast<uint32_t>(PLUGSDK_ABI_VERSION_MINOR + 1));
  EXPECT_GT((*p)->api().struct_size, sizeof(plugsdk_api_t));
  auto d = Device::open(*p);
  ASSERT_TRUE(d.isOk()) << d.status().toString();
  EXPECT_EQ((*d)->caps().name, "fault0");
  // It fills device_info only up to the struct_size the core gave: a canary after it survives.
  struct {
    plugsdk_device_info_t info;
    uint64_t canary;
  } probe{};
  probe.info.struct_size = sizeof(probe.info);
  probe.canary = 0x1234;
  plugsdk_device_info_args_t a{};
  a.struct_size = sizeof(a);
  a.client = (*d)->client();
  a.info = &probe.info;
  ASSERT_TRUE((*d)->check((*p)->api().device_info(&a), "device_info").isOk());
  EXPECT_EQ(probe.canary, 0x1234u);
  // Memory works through the 1.0 functions.
  auto b = (*d)->allocate(16);
  ASSERT_TRUE(b.isOk()) << b.status().toString();
  const char in[16] = "newer minor ok.";
  char out[16] = {};
  ASSERT_TRUE((*d)->upload(*b, 0, in, 16).isOk());
  ASSERT_TRUE((*d)->download(*b, 0, out, 16).isOk());
  EXPECT_STREQ(out, in);
}

// ABI 1.5's split reductions: read only from a device_info whose struct_size covers both
// fields (an older plugin's, whatever lies past its size, never splits), and handed by
// optionsFor() to the scheduler's FusionCaps.
TEST(DeviceProgram, SplitReductionsReachTheScheduleOnlyFromA15Info) {
  plugsdk_device_info_t info{};
  info.split_row_reductions = 1024;
  info.split_column_reductions = 65536;
  info.struct_size = sizeof(info);
  const DeviceCaps k = capsFrom(info);
  EXPECT_EQ(k.splitRowReductions, 1024u);
  EXPECT_EQ(k.splitColumnReductions, 65536u);
  const compile::CompileOptions o = optionsFor(k);
  EXPECT_EQ(o.schedule.caps.splitRowReductions, 1024);
  EXPECT_EQ(o.schedule.caps.splitColumnReductions, 65536);
  info.struct_size = PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, split_column_reductions);  // exactly 1.5's fields
  EXPECT_EQ(optionsFor(capsFrom(info)).schedule.caps.splitColumnReductions, 65536);

  // A 1.4 plugin's struct (its sizeof, tail padding included), one that stops inside the
  // 1.5 fields, and 1.0's: 0, never split.
  const size_t align = alignof(plugsdk_device_info_t);
  const size_t v14 =
      (PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, convolution_skips_transposed) + align - 1) / align * align;
  for (size_t older : {v14, PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, split_column_reductions) - 1,
                       PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, takes_subgraphs)}) {
    info.struct_size = older;
    const DeviceCaps old = capsFrom(info);
    EXPECT_EQ(old.splitRowReductions, 0u) << older;
    EXPECT_EQ(old.splitColumnReductions, 0u) << older;
    const compile::CompileOptions oo = optionsFor(old);
    EXPECT_EQ(oo.schedule.caps.splitRowReductions, 0) << older;
    EXPECT_EQ(oo.schedule.caps.splitColumnReductions, 0) << older;
  }
  // The caps decide, whatever the base options held.
  compile::CompileOptions base;
  base.schedule.caps.splitRowReductions = 7;
  EXPECT_EQ(optionsFor(DeviceCaps{}, base).schedule.caps.splitRowReductions, 0);
}

// runInto: the caller's tensors are used in place where the plugin imports memory (the cpu
// plugin, ABI 1.1) and their layout is the program's; a strided input or output, or a 1.0
// plugin (minimal), is copied; the numbers are the same either way.
TEST(DeviceProgram, RunIntoUsesTensorsInPlaceOrCopies) {
  const char* src = R"(graph @g(%x: f32[s0, 3], %y: f32[3]) {
  %m = aten.mul.Tensor(%x, %y)
  %a = aten.add.Scalar(%m) {other = 1.0}
  return %a
})";
  for (const char* plugin : {"cpu", "minimal"}) {
    SCOPED_TRACE(plugin);
    auto dev = openDevice(plugin, std::string(plugin) == "cpu" ? "cache_dir=off" : "");
    ASSERT_NE(dev, nullptr);
    auto ctx = ir::makeDefaultContext();
    auto g = text::parseGraph(*ctx, src);
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    auto c = compile::compileGraph(*ctx, *g, optionsFor(dev->caps()));
    ASSERT_TRUE(c.isOk()) << c.status().toString();
    auto dp = DeviceProgram::compile(*dev, c->program);
    ASSERT_TRUE(dp.isOk()) << dp.status().toString();
    // x is 4 x 3; xt holds the same values column-major (strides [1, 4]).
    std::vector<float> x(12), xt(12), y = {0.5f, -2.0f, 3.0f}, want(12);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) {
        x[i * 3 + j] = xt[j * 4 + i] = 0.25f * static_cast<float>(i * 3 + j) - 1.0f;
        want[i * 3 + j] = x[i * 3 + j] * y[j] + 1.0f;
      }
    auto shapes = (*dp)->outputShapes({{ir::DType::kF32, {4, 3}}, {ir::DType::kF32, {3}}});
    ASSERT_TRUE(shapes.isOk()) << shapes.status().toString();
    EXPECT_EQ(*shapes, (std::vector<std::vector<int64_t>>{{4, 3}}));
    const bool imports = std::string(plugin) == "cpu";
    for (bool strided : {false, true}) {
      std::vector<float> out(12, -7.0f);
      TensorArg in0{strided ? xt.data() : x.data(),
                    ir::DType::kF32,
                    {4, 3},
                    strided ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{}};
      TensorArg in1{y.data(), ir::DType::kF32, {3}, {}};
      TensorArg o{out.data(), ir::DType::kF32, {4, 3}, strided ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{}};
      TransferStats st;
      Status s = (*dp)->runInto({in0, in1}, {o}, &st);
      ASSERT_TRUE(s.isOk()) << s.toString();
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          EXPECT_FLOAT_EQ(out[strided ? j * 4 + i : i * 3 + j], want[i * 3 + j]) << "strided " << strided;
      EXPECT_EQ(st.imported, !imports ? 0 : strided ? 1 : 3) << "strided " << strided;
      EXPECT_EQ(st.copied, 3 - st.imported);
    }
    // Bad output tensors are errors naming the output.
    std::vector<float> small(4);
    TensorArg in0{x.data(), ir::DType::kF32, {4, 3}, {}}, in1{y.data(), ir::DType::kF32, {3}, {}};
    expectHas((*dp)->runInto({in0, in1}, {TensorArg{small.data(), ir::DType::kF32, {2, 2}, {}}}), "output %a");
    expectHas((*dp)->runInto({in0, in1}, {}), "has 1 outputs, got 0");
  }
}

// Two outputs of one value share a program buffer: the first tensor is that buffer, the second
// is copied from it (on a device with device memory: a device-to-device copy).
TEST(DeviceProgram, OutputsSharingABufferAreBothWritten) {
  const char* src = R"(graph @g(%x: f32[4]) {
  %a = aten.add.Scalar(%x) {other = 1.0}
  return %a, %a
})";
  auto dev = openDevice("cpu", "cache_dir=off");
  ASSERT_NE(dev, nullptr);
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, src);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, optionsFor(dev->caps()));
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  ASSERT_EQ(c->program.outputs[0].buffer, c->program.outputs[1].buffer);
  auto dp = DeviceProgram::compile(*dev, c->program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  std::vector<float> x = {1, 2, 3, 4}, a(4, -7.0f), b(4, -7.0f);
  TransferStats st;
  Status s = (*dp)->runInto(
      {TensorArg{x.data(), ir::DType::kF32, {4}, {}}},
      {TensorArg{a.data(), ir::DType::kF32, {4}, {}}, TensorArg{b.data(), ir::DType::kF32, {4}, {}}}, &st);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(a, (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(b, a);
  EXPECT_EQ(st.imported, 2);  // x and the first output
  EXPECT_EQ(st.copied, 1);
}

}  // namespace
}  // namespace plugsdk::plugin
