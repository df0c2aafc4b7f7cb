// The cpu plugin through the core's device layer: programs match the program interpreter on
// every ISA path; and each fault the issue lists is an error that names its cause, never a
// crash or wrong numbers: an LLVM compile failure (with the failing IR in the dump
// directory), an op the backend does not know, an allocation that fails, corrupt and stale
// cache entries (detected, reported, recompiled), an ISA the CPU cannot run, bad options.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/compile/pipeline.h"
#include "core/plugin/device.h"
#include "core/plugin/device_program.h"
#include "core/plugin/kernel_encoding.h"
#include "core/plugin/loader.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

std::string tempDir(const std::string& tag) {
  std::string t = "/tmp/plugsdk_cpu_test_" + tag + "_XXXXXX";
  EXPECT_NE(mkdtemp(t.data()), nullptr);
  return t;
}

std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    closedir(d);
  }
  return out;
}

StatusOr<std::unique_ptr<Device>> open(const std::string& options) {
  auto p = Loader({PLUGSDK_CPU_PLUGIN_DIR}).load("cpu");
  if (!p.isOk()) return p.status();
  return Device::open(*p, 0, options);
}

// Softmax (loop-mode reductions), a transposed matmul expanded into loops, relu, a gather
// (indirect loads with checks), a symbolic batch.
const char* kGraph = R"(graph @g(%x: f32[s0, 40], %w: f32[24, 40], %i: i64[s0, 2]) {
  %t = aten.t(%w)
  %m = aten.mm(%x, %t)
  %r = aten.relu(%m)
  %s = aten._softmax(%r) {dim = 1, half_to_float = false}
  %g = aten.gather(%s, %i) {dim = 1}
  %e = aten.exp(%x)
  return %s, %g, %e
})";

struct Compiled {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  sched::Program program;
};

Compiled compileFor(const Device& d, const char* src = kGraph) {
  Compiled c;
  auto g = text::parseGraph(*c.ctx, src);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  auto r = compile::compileGraph(*c.ctx, *g, optionsFor(d.caps()));
  EXPECT_TRUE(r.isOk()) << r.status().toString();
  if (r.isOk()) c.program = std::move(r->program);
  return c;
}

std::vector<exec::HostTensor> inputsFor(const sched::Program& p, int64_t s0, int64_t badIndex = -1) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::vector<exec::HostTensor> ins;
  for (const sched::ProgramInput& in : p.inputs) {
    std::vector<int64_t> shape;
    for (const auto& d : in.type.shape) shape.push_back(*d.evaluate({{"s0", s0}}));
    exec::HostTensor x(in.type.dtype, shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (x.isFloating())
        x.setDouble(i, exec::roundToFloatType(normal(rng), in.type.dtype));
      else
        x.setInt(i, badIndex >= 0 && i == 1 ? badIndex : (i * 7) % 24);
    }
    ins.push_back(std::move(x));
  }
  return ins;
}

void expectMatches(const Device& dev, const Compiled& c, const DeviceProgram& dp) {
  sched::ProgramInterpreter interp(c.ctx);
  for (int64_t s0 : {1, 5, 37}) {
    auto ins = inputsFor(c.program, s0);
    auto want = interp.run(c.program, ins);
    ASSERT_TRUE(want.isOk()) << want.status().toString();
    auto got = dp.run(ins, {.poison = true});
    ASSERT_TRUE(got.isOk()) << dev.describe() << ": " << got.status().toString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o)
      for (int64_t i = 0; i < (*want)[o].numel(); ++i) {
        const double w = (*want)[o].getDouble(i), g = (*got)[o].getDouble(i);
        EXPECT_NEAR(g, w, 1e-5 * (1 + std::fabs(w))) << dev.describe() << " output " << o << " element " << i;
      }
  }
}

class OnIsa : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(Isas, OnIsa, ::testing::Values("avx512", "avx2", "scalar"));

TEST_P(OnIsa, MatchesTheProgramInterpreter) {
  const std::string isa = GetParam();
  auto dev = open("cache_dir=off;isa=" + isa);
  if (!dev.isOk() && dev.status().code() == StatusCode::kFailedPrecondition)
    GTEST_SKIP() << "this CPU cannot run " << isa << ": " << dev.status().message();
  ASSERT_TRUE(dev.isOk()) << dev.status().toString();
  EXPECT_NE((*dev)->describe().find(isa), std::string::npos) << (*dev)->describe();
  Compiled c = compileFor(**dev);
  auto dp = DeviceProgram::compile(**dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  expectMatches(**dev, c, **dp);
}

// A 3x3 convolution over 7 x 7 images with a fused ReLU: 49 positions per image fill the
// micro-kernel's column panels badly, so batches of 5 and 37 fold the images into the GEMM's
// columns (conv.cc); a batch of 1 does not.
const char* kSmallImageConv = R"(graph @conv(%x: f32[s0, 8, 7, 7], %w: f32[16, 8, 3, 3]) {
  %c = aten.convolution(%x, %w, none) {stride = [1, 1], padding = [1, 1], dilation = [1, 1], transposed = false, output_padding = [0, 0], groups = 1}
  %r = aten.relu(%c)
  return %r
})";

TEST_P(OnIsa, SmallImageConvolutionMatchesTheProgramInterpreter) {
  auto dev = open(std::string("cache_dir=off;isa=") + GetParam());
  if (!dev.isOk() && dev.status().code() == StatusCode::kFailedPrecondition)
    GTEST_SKIP() << "this CPU cannot run " << GetParam() << ": " << dev.status().message();
  ASSERT_TRUE(dev.isOk()) << dev.status().toString();
  Compiled c = compileFor(**dev, kSmallImageConv);
  auto dp = DeviceProgram::compile(**dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  expectMatches(**dev, c, **dp);
}

TEST(CpuPlugin, AFailedCheckIsAnErrorNotAnOutOfBoundsRead) {
  auto dev = open("cache_dir=off");
  ASSERT_TRUE(dev.isOk());
  Compiled c = compileFor(**dev);
  auto dp = DeviceProgram::compile(**dev, c.program);
  ASSERT_TRUE(dp.isOk());
  auto got = (*dp)->run(inputsFor(c.program, 5, /*badIndex=*/1 << 30));
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), StatusCode::kOutOfRange) << got.status().toString();
  EXPECT_NE(got.status().message().find("kernel @"), std::string::npos) << got.status().toString();
}

TEST(CpuPlugin, IntegerDivisionByZeroIsAnError) {
  auto dev = open("cache_dir=off");
  ASSERT_TRUE(dev.isOk());
  Compiled c = compileFor(**dev, R"(graph @d(%a: i32[100], %b: i32[100]) {
  %q = prims.div(%a, %b)
  return %q
})");
  auto dp = DeviceProgram::compile(**dev, c.program);
  ASSERT_TRUE(dp.isOk()) << dp.status().toString();
  exec::HostTensor a(ir::DType::kI32, {100}), b(ir::DType::kI32, {100});
  for (int i = 0; i < 100; ++i) {
    a.setInt(i, i - 50);
    b.setInt(i, i == 77 ? 0 : (i % 5) - 2 == 0 ? 3 : (i % 5) - 2);
  }
  auto got = (*dp)->run({a, b});
  ASSERT_FALSE(got.isOk());
  EXPECT_NE(got.status().message().find("division by zero"), std::string::npos) << got.status().toString();
  b.setInt(77, 1);
  auto ok = (*dp)->run({a, b});
  ASSERT_TRUE(ok.isOk()) << ok.status().toString();
  for (int i = 0; i < 100; ++i) EXPECT_EQ((*ok)[0].getInt(i), (i - 50) / b.getInt(i)) << i;  // C truncation
}

TEST(CpuPlugin, LlvmFailureNamesTheKernelAndKeepsTheFailingIr) {
  const std::string dir = tempDir("fault");
  auto dev = open("cache_dir=off;fault=llvm;dump=" + dir);
  ASSERT_TRUE(dev.isOk()) << dev.status().toString();
  Compiled c = compileFor(**dev);
  auto dp = DeviceProgram::compile(**dev, c.program);
  ASSERT_FALSE(dp.isOk());
  const std::string m = dp.status().message();
  EXPECT_NE(m.find("kernel @"), std::string::npos) << m;
  EXPECT_NE(m.find("LLVM optimization failed"), std::string::npos) << m;
  EXPECT_NE(m.find("malformed"), std::string::npos) << m;
  EXPECT_NE(m.find(".failed.ll"), std::string::npos) << m;
  bool found = false;
  for (const std::string& f : filesIn(dir))
    if (f.size() > 10 && f.substr(f.size() - 10) == ".failed.ll") {
      std::ifstream in(dir + "/" + f);
      std::stringstream ss;
      ss << in.rdbuf();
      EXPECT_NE(ss.str().find("broken_on_purpose"), std::string::npos);
      found = true;
    }
  EXPECT_TRUE(found) << "no .failed.ll in " << dir;
}

TEST(CpuPlugin, StageDumps) {
  const std::string dir = tempDir("dump");
  auto dev = open("cache_dir=off;isa=avx2;dump=" + dir);
  ASSERT_TRUE(dev.isOk());
  Compiled c = compileFor(**dev);
  ASSERT_TRUE(DeviceProgram::compile(**dev, c.program).isOk());
  int kir = 0, ll = 0, opt = 0, s = 0;
  for (const std::string& f : filesIn(dir)) {
    auto ends = [&](const std::string& x) { return f.size() > x.size() && f.substr(f.size() - x.size()) == x; };
    std::ifstream in(dir + "/" + f);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ends(".kir")) kir += ss.str().find("kernel @") != std::string::npos;
    if (ends(".opt.ll"))
      opt += ss.str().find("define") != std::string::npos;
    else if (ends(".ll"))
      ll += ss.str().find("define") != std::string::npos;
    if (ends(".s")) s += ss.str().find("ymm") != std::string::npos && ss.str().find("zmm") == std::string::npos;
  }
  EXPECT_GT(kir, 0);
  EXPECT_EQ(kir, ll);
  EXPECT_EQ(kir, opt);
  EXPECT_EQ(kir, s) << "every AVX2 kernel's assembly uses ymm and never zmm";
}

TEST(CpuPlugin, FailedAllocationIsResourceExhausted) {
  auto dev = open("cache_dir=off;fault=alloc");
  ASSERT_TRUE(dev.isOk());
  auto b = (*dev)->allocate(4096);
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("4096 bytes"), std::string::npos) << b.status().toString();
  auto real = open("cache_dir=off");
  ASSERT_TRUE(real.isOk());
  auto huge = (*real)->allocate(uint64_t{1} << 62);
  ASSERT_FALSE(huge.isOk());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted) << huge.status().toString();
}

TEST(CpuPlugin, CorruptAndStaleCacheEntriesAreRecompiled) {
  const std::string dir = tempDir("cache");
  {
    auto dev = open("cache_dir=" + dir);
    ASSERT_TRUE(dev.isOk());
    Compiled c = compileFor(**dev);
    auto dp = DeviceProgram::compile(**dev, c.program);
    ASSERT_TRUE(dp.isOk());
    EXPECT_NE((*dp)->log().find("compiled,"), std::string::npos) << (*dp)->log();
  }
  std::vector<std::string> files = filesIn(dir);
  ASSERT_GE(files.size(), 3u) << "a cache file per kernel";
  auto read = [&](const std::string& f) {
    std::ifstream in(dir + "/" + f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  auto write = [&](const std::string& f, const std::string& data) {
    std::ofstream out(dir + "/" + f, std::ios::binary | std::ios::trunc);
    out << data;
  };
  // One truncated, one with a flipped byte in its object, one holding another kernel's entry.
  const std::string a = read(files[0]), b = read(files[1]);
  write(files[0], a.substr(0, a.size() / 2));
  std::string flipped = b;
  flipped[flipped.size() - 100] ^= 0x5a;
  write(files[1], flipped);
  write(files[2], a);
  {
    auto dev = open("cache_dir=" + dir);
    ASSERT_TRUE(dev.isOk());
    Compiled c = compileFor(**dev);
    auto dp = DeviceProgram::compile(**dev, c.program);
    ASSERT_TRUE(dp.isOk()) << dp.status().toString();
    const std::string log = (*dp)->log();
    EXPECT_NE(log.find("truncated"), std::string::npos) << log;
    EXPECT_NE(log.find("checksum"), std::string::npos) << log;
    EXPECT_NE(log.find("stale"), std::string::npos) << log;
    expectMatches(**dev, c, **dp);
  }
  {
    auto dev = open("cache_dir=" + dir);
    ASSERT_TRUE(dev.isOk());
    Compiled c = compileFor(**dev);
    auto dp = DeviceProgram::compile(**dev, c.program);
    ASSERT_TRUE(dp.isOk());
    const std::string log = (*dp)->log();
    EXPECT_EQ(log.find("compiled,"), std::string::npos) << "everything came from the rewritten cache:\n" << log;
    EXPECT_NE(log.find("disk cache"), std::string::npos) << log;
    expectMatches(**dev, c, **dp);
  }
}

TEST(CpuPlugin, BadOptionsAreErrors) {
  auto bad = [](const std::string& options, const std::string& part) {
    auto d = open(options);
    ASSERT_FALSE(d.isOk()) << options;
    EXPECT_NE(d.status().message().find(part), std::string::npos) << d.status().toString();
  };
  bad("isa=sse9", "sse9");
  bad("threads=0", "threads");
  bad("opt=7", "opt");
  bad("colour=blue", "unknown option 'colour'");
  bad("fault=everything", "fault");
}

TEST(CpuPlugin, AnUnknownElementwiseOpIsUnimplemented) {
  auto dev = open("cache_dir=off");
  ASSERT_TRUE(dev.isOk());
  Compiled c = compileFor(**dev, R"(graph @u(%a: f32[8]) {
  %n = prims.neg(%a)
  return %n
})");
  ASSERT_EQ(c.program.kernels.size(), 1u);
  auto enc = encodeKernel(c.program.kernels[0]);
  ASSERT_TRUE(enc.isOk());
  // An op number past ABI 1.0's table, as a newer core might send.
  plugsdk_kernel_t k = (*enc)->get();
  std::vector<plugsdk_stmt_t> stmts(k.stmts, k.stmts + k.num_stmts);
  bool patched = false;
  for (plugsdk_stmt_t& s : stmts)
    if (s.kind == PLUGSDK_STMT_SCALAR) {
      s.op = 200;
      patched = true;
    }
  ASSERT_TRUE(patched);
  k.stmts = stmts.data();
  const Device& d = **dev;
  plugsdk_compile_kernel_args_t args{};
  args.struct_size = sizeof(args);
  args.client = d.client();
  args.kernel = &k;
  Status st = d.check(d.api().compile_kernel(&args), "compile_kernel");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented) << st.toString();
  EXPECT_NE(st.message().find("op 200"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("kernel @"), std::string::npos) << st.toString();
}

}  // namespace
}  // namespace plugsdk::plugin
