// Programs through the level_zero plugin on the OpenCL runtime (PoCL in the toolbox), from the
// core's device layer: the numbers against the core's program interpreter with SPIRV-Tools'
// optimizer on and off, and the dumps (dump=DIR: each kernel's .kir, .spv and .spvasm, named
// <kernel>.<entry> as the cuda plugin names its own). Skips, saying why, without an OpenCL
// device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/validate.h"
#include "core/plugin/device_program.h"
#include "core/plugin/loader.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

namespace fs = std::filesystem;

/// Its outputs' absolute tolerances: softmax, 1000 squares summed, argmax, 1000 x rows summed.
const std::vector<double> kReductionsAtol = {1e-8, 1e-3, 0, 1e-2};

/// Row reductions of several kinds (softmax's max and sum, a row sum of squares, argmax) and a
/// sum over every element (a loop of two dims), on rows long enough to be spread.
const char* kReductions = R"(graph @r(%x: f32[s0, 1000]) {
  %s = aten._softmax(%x) {dim = 1, half_to_float = false}
  %q = aten.mul.Tensor(%x, %x)
  %n = aten.sum.dim_IntList(%q) {dim = [1]}
  %a = aten.argmax(%x) {dim = 1}
  %t = aten.sum.dim_IntList(%x) {dim = [0, 1]}
  return %s, %n, %a, %t
})";

struct Opened {
  std::unique_ptr<Device> device;
  std::string why;
};

Opened open(const std::string& options) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  if (!p.isOk()) return {nullptr, p.status().toString()};
  auto d = Device::open(*p, 0, "runtime=opencl" + (options.empty() ? "" : ";" + options));
  if (!d.isOk()) return {nullptr, d.status().toString()};
  return {std::move(*d), ""};
}

struct ProgramRun {
  std::vector<exec::HostTensor> got, want;
  std::vector<std::string> kernelNames, kernelTexts;
};

/// Compiles `src` for the device, runs it with s0 = `rows` on random inputs, and the
/// interpreter on the same.
ProgramRun runProgram(const Device& dev, const char* src, int64_t rows) {
  ProgramRun r;
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, src);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  if (!g.isOk()) return r;
  auto c = compile::compileGraph(*ctx, *g, optionsFor(dev.caps()));
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  if (!c.isOk()) return r;
  for (const kernel::Kernel& k : c->program.kernels) r.kernelNames.push_back(k.name);
  auto dp = DeviceProgram::compile(dev, c->program);
  EXPECT_TRUE(dp.isOk()) << dp.status().toString();
  if (!dp.isOk()) return r;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<exec::HostTensor> ins;
  for (const sched::ProgramInput& in : c->program.inputs) {
    std::vector<int64_t> shape;
    for (const auto& d : in.type.shape) shape.push_back(*d.evaluate({{"s0", rows}}));
    exec::HostTensor x(in.type.dtype, shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, exec::roundToFloatType(normal(rng), in.type.dtype));
    ins.push_back(std::move(x));
  }
  auto want = sched::ProgramInterpreter(ctx).run(c->program, ins);
  EXPECT_TRUE(want.isOk()) << want.status().toString();
  auto got = (*dp)->run(ins);
  EXPECT_TRUE(got.isOk()) << got.status().toString();
  if (want.isOk()) r.want = std::move(*want);
  if (got.isOk()) r.got = std::move(*got);
  return r;
}

/// Relative 1e-5 plus an absolute `atol` per output (f32 sums of many terms: the order of the
/// additions differs from the interpreter's).
void expectClose(const ProgramRun& r, const std::vector<double>& atol) {
  ASSERT_EQ(r.got.size(), r.want.size());
  for (size_t o = 0; o < r.got.size(); ++o) {
    ASSERT_EQ(r.got[o].shape(), r.want[o].shape()) << "output " << o;
    for (int64_t i = 0; i < r.got[o].numel(); ++i) {
      const double g = r.got[o].getDouble(i), w = r.want[o].getDouble(i);
      ASSERT_NEAR(g, w, 1e-5 * std::fabs(w) + atol.at(o)) << "output " << o << " element " << i;
    }
  }
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

#define OPEN_OR_SKIP(var, options)                          \
  Opened var##Opened = open(options);                       \
  if (!var##Opened.device) GTEST_SKIP() << var##Opened.why; \
  const Device& var = *var##Opened.device

TEST(LevelZeroProgram, ReductionsMatchTheInterpreterWithAndWithoutTheOptimizer) {
  for (const char* opt : {"spirv_opt=on", "spirv_opt=off"}) {
    SCOPED_TRACE(opt);
    OPEN_OR_SKIP(dev, opt);
    for (int64_t rows : {1, 7}) expectClose(runProgram(dev, kReductions, rows), kReductionsAtol);
  }
}

TEST(LevelZeroProgram, BadSpirvOptIsAnError) {
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk());
  auto d = Device::open(*p, 0, "runtime=opencl;spirv_opt=maybe");
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("option spirv_opt: 'maybe' is not on or off"), std::string::npos)
      << d.status().toString();
}

/// The dumps of one run: stem -> {extension -> contents}.
std::map<std::string, std::map<std::string, std::string>> dumpsOf(const fs::path& dir);

TEST(LevelZeroProgram, SubgroupSumsMatchTheInterpreterWhenAskedFor) {
  // subgroup_sums=on: PoCL (a CPU device with cl_khr_subgroups, a sub-group the whole
  // work-group) gets row sums through OpGroupFAdd; the default (off) does not.
  for (const char* sg : {"on", "off"}) {
    SCOPED_TRACE(sg);
    const fs::path dir = fs::path(::testing::TempDir()) / ("plugsdk_lz_subgroups_" + std::string(sg));
    fs::remove_all(dir);
    OPEN_OR_SKIP(dev, "dump=" + dir.string() + (std::string(sg) == "on" ? ";subgroup_sums=on" : ""));
    for (int64_t rows : {1, 7}) expectClose(runProgram(dev, kReductions, rows), kReductionsAtol);
    size_t withGroupAdd = 0;
    for (const auto& [stem, files] : dumpsOf(dir))
      withGroupAdd += files.count(".spvasm") && files.at(".spvasm").find("OpGroupFAdd") != std::string::npos;
    if (std::string(sg) == "on") {
      EXPECT_GT(withGroupAdd, 0u);
    } else {
      EXPECT_EQ(withGroupAdd, 0u);
    }
  }
  auto p = Loader({PLUGSDK_LEVEL_ZERO_PLUGIN_DIR}).load("level_zero");
  ASSERT_TRUE(p.isOk());
  auto bad = Device::open(*p, 0, "runtime=opencl;subgroup_sums=maybe");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("option subgroup_sums: 'maybe' is not on or off"), std::string::npos)
      << bad.status().toString();
}

/// The dumps of one run: stem -> {extension -> contents}.
std::map<std::string, std::map<std::string, std::string>> dumpsOf(const fs::path& dir) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    out[e.path().stem().string()][e.path().extension().string()] = readFile(e.path());
  return out;
}

TEST(LevelZeroProgram, DumpsEachKernelsIrSpirvAndDisassembly) {
  std::map<std::string, std::map<std::string, std::string>> byOpt;  // option -> kernel -> .spvasm
  for (const char* opt : {"on", "off"}) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("plugsdk_lz_dump_" + std::string(opt));
    fs::remove_all(dir);
    OPEN_OR_SKIP(dev, "dump=" + dir.string() + ";spirv_opt=" + opt);
    ProgramRun r = runProgram(dev, kReductions, 3);
    expectClose(r, kReductionsAtol);
    const auto dumps = dumpsOf(dir);
    ASSERT_EQ(dumps.size(), r.kernelNames.size()) << "one stem per kernel";
    for (const std::string& name : r.kernelNames) {
      auto it = dumps.lower_bound(name + ".plugsdk_");
      ASSERT_TRUE(it != dumps.end() && it->first.rfind(name + ".plugsdk_", 0) == 0) << "no dump for " << name;
      const auto& files = it->second;
      ASSERT_EQ(files.size(), 3u) << it->first;
      EXPECT_EQ(files.at(".kir").rfind("kernel @" + name + "(", 0), 0u) << files.at(".kir");
      const std::string& spv = files.at(".spv");
      ASSERT_EQ(spv.size() % 4, 0u);
      std::vector<uint32_t> words(spv.size() / 4);
      std::memcpy(words.data(), spv.data(), spv.size());
      ASSERT_GT(words.size(), 5u);
      EXPECT_EQ(words[0], 0x07230203u);
      // The .spv is the module that ran (valid), and the .spvasm is its disassembly.
      EXPECT_TRUE(level_zero::spirv::validate(words, it->first).isOk());
      sdk::StatusOr<std::string> text = level_zero::spirv::disassemble(words);
      ASSERT_TRUE(text.isOk());
      EXPECT_EQ(files.at(".spvasm"), *text);
      EXPECT_NE(text->find("OpEntryPoint Kernel %" + it->first.substr(name.size() + 1)), std::string::npos) << *text;
      byOpt[opt][name] = files.at(".spvasm");
    }
  }
  // The optimizer ran where it was on: the reductions' accumulators became phis.
  size_t phisOn = 0, phisOff = 0;
  for (const auto& [name, text] : byOpt["on"])
    for (size_t p = text.find("OpPhi"); p != std::string::npos; p = text.find("OpPhi", p + 1)) ++phisOn;
  for (const auto& [name, text] : byOpt["off"])
    for (size_t p = text.find("OpPhi"); p != std::string::npos; p = text.find("OpPhi", p + 1)) ++phisOff;
  EXPECT_GT(phisOn, phisOff);
}

}  // namespace
}  // namespace plugsdk::plugin
