// The in-memory artifact cache on the minimal sample plugin: automatic dynamic (a size that
// changes compiles once more, symbolically, then never again), the static policy's
// recompile limit, misses on dtype and stride class that recompile, falls back with a
// reason where the graph cannot be specialized or the inputs live elsewhere, and two
// threads sharing one function. Every result is checked against the float64 reference
// executor on the captured graph.
#include "core/cache/compiled_function.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/cache/autotune.h"
#include "core/cache/disk_cache.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::cache {
namespace {

using exec::HostTensor;
using guard::TensorSignature;
using ir::DType;

// mm + relu + a view whose size list holds the batch symbol (specialization rewrites it).
const char* kBatchGraph = R"(graph @f(%x: f32[s0, 8], %w: f32[8, 4]) {
  %m = aten.mm(%x, %w)
  %r = aten.relu(%m)
  %v = aten.view(%r) {size = [s0, 2, 2]}
  return %v
})";

struct Fixture {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  std::shared_ptr<const plugin::Plugin> plugin;
  std::unique_ptr<plugin::Device> device;

  Fixture() {
    auto p = plugin::Loader({PLUGSDK_TEST_PLUGIN_DIR, PLUGSDK_BUILT_PLUGIN_DIR}).load("minimal");
    EXPECT_TRUE(p.isOk()) << p.status().toString();
    if (!p.isOk()) return;
    plugin = *p;
    auto d = plugin::Device::open(plugin, 0, "");
    EXPECT_TRUE(d.isOk()) << d.status().toString();
    if (d.isOk()) device = std::move(*d);
  }

  ir::Graph parse(const char* src) const {
    auto g = text::parseGraph(*ctx, src);
    EXPECT_TRUE(g.isOk()) << g.status().toString();
    return std::move(*g);
  }
};

HostTensor random(DType dt, std::vector<int64_t> shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  HostTensor t(dt, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, exec::roundToFloatType(normal(rng), dt));
  return t;
}

std::vector<TensorSignature> signatures(const std::vector<HostTensor>& ins) {
  std::vector<TensorSignature> s;
  for (const HostTensor& t : ins) s.push_back({t.dtype(), t.shape(), {}, "cpu", false});
  return s;
}

/// Runs the selected artifact and compares with the reference executor on `graph`.
void expectMatchesReference(const Fixture& f, const ir::Graph& graph, const Artifact& a,
                            const std::vector<HostTensor>& ins, double tol) {
  auto got = a.program->run(ins);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  auto want = exec::ReferenceExecutor(f.ctx).run(graph, ins);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < got->size(); ++o) {
    ASSERT_EQ((*got)[o].shape(), (*want)[o].shape());
    for (int64_t i = 0; i < (*got)[o].numel(); ++i)
      ASSERT_NEAR((*got)[o].getDouble(i), (*want)[o].getDouble(i), tol * (1 + std::abs((*want)[o].getDouble(i))))
          << "output " << o << " element " << i;
  }
}

Selection selectOk(CompiledFunction& fn, const std::vector<HostTensor>& ins) {
  auto s = fn.select(signatures(ins));
  EXPECT_TRUE(s.isOk()) << s.status().toString();
  return s.isOk() ? *s : Selection{};
}

TEST(CompiledFunction, BatchEightFourSixteenCompilesTwiceThenRunsSymbolically) {
  Fixture f;
  ASSERT_TRUE(f.device);
  ir::Graph g = f.parse(kBatchGraph);
  CompiledFunction fn(f.ctx, *f.device, f.parse(kBatchGraph));
  HostTensor w = random(DType::kF32, {8, 4}, 1);

  Selection s8 = selectOk(fn, {random(DType::kF32, {8, 8}, 2), w});
  ASSERT_TRUE(s8.artifact);
  EXPECT_TRUE(s8.compiled);
  EXPECT_EQ(s8.artifact->specialized, (std::map<std::string, int64_t>{{"s0", 8}})) << "first: a constant";
  EXPECT_TRUE(s8.artifact->program->program().symbols.empty());

  Selection s4 = selectOk(fn, {random(DType::kF32, {4, 8}, 3), w});
  ASSERT_TRUE(s4.artifact);
  EXPECT_TRUE(s4.compiled);
  EXPECT_TRUE(s4.artifact->specialized.empty()) << "second value: s0 became symbolic";
  EXPECT_EQ(s4.artifact->program->program().symbols, std::vector<std::string>{"s0"});

  for (int64_t batch : {16, 3, 8, 1}) {
    std::vector<HostTensor> ins = {random(DType::kF32, {batch, 8}, 10 + batch), w};
    Selection s = selectOk(fn, ins);
    ASSERT_TRUE(s.artifact);
    EXPECT_FALSE(s.compiled) << "batch " << batch;
    EXPECT_EQ(s.artifact, batch == 8 ? s8.artifact : s4.artifact) << "batch " << batch;
    expectMatchesReference(f, g, *s.artifact, ins, 1e-5);
  }
  FunctionStats st = fn.stats();
  EXPECT_EQ(st.compiles, 2u);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.hits, 4u);
  EXPECT_EQ(st.entries, 2u);
  EXPECT_EQ(st.fallbacks, 0u);
  ASSERT_EQ(st.missReasons.size(), 2u);
  EXPECT_EQ(st.missReasons[0], "cold: no artifact yet");
  EXPECT_EQ(st.missReasons[1], "size: input %x dim 0: size 4, guard wants 8");
}

TEST(CompiledFunction, StaticPolicyRecompilesUpToTheLimitThenFallsBack) {
  Fixture f;
  ASSERT_TRUE(f.device);
  FunctionOptions o;
  o.dynamic = DynamicPolicy::kStatic;
  o.recompileLimit = 2;
  CompiledFunction fn(f.ctx, *f.device, f.parse(kBatchGraph), o);
  HostTensor w = random(DType::kF32, {8, 4}, 1);
  EXPECT_TRUE(selectOk(fn, {random(DType::kF32, {2, 8}, 2), w}).compiled);
  EXPECT_TRUE(selectOk(fn, {random(DType::kF32, {3, 8}, 2), w}).compiled);
  Selection s = selectOk(fn, {random(DType::kF32, {5, 8}, 2), w});
  EXPECT_FALSE(s.artifact);
  EXPECT_NE(s.fallbackReason.find("recompile limit (2) reached for graph 'f'"), std::string::npos) << s.fallbackReason;
  EXPECT_NE(s.fallbackReason.find("input %x dim 0: size 5"), std::string::npos) << s.fallbackReason;
  EXPECT_TRUE(selectOk(fn, {random(DType::kF32, {3, 8}, 2), w}).artifact) << "known sizes still hit";
  FunctionStats st = fn.stats();
  EXPECT_EQ(st.compiles, 2u);
  EXPECT_EQ(st.fallbacks, 1u);
  EXPECT_EQ(st.hits, 1u);
}

TEST(CompiledFunction, SymbolicPolicyCompilesOnceForEveryBatch) {
  Fixture f;
  ASSERT_TRUE(f.device);
  FunctionOptions o;
  o.dynamic = DynamicPolicy::kSymbolic;
  CompiledFunction fn(f.ctx, *f.device, f.parse(kBatchGraph), o);
  HostTensor w = random(DType::kF32, {8, 4}, 1);
  for (int64_t batch : {8, 4, 16}) selectOk(fn, {random(DType::kF32, {batch, 8}, 2), w});
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().hits, 2u);
}

TEST(CompiledFunction, AnotherDtypeRecompilesTheRetypedGraph) {
  Fixture f;
  ASSERT_TRUE(f.device);
  const char* src = R"(graph @e(%x: f32[3, 4]) {
  %y = aten.exp(%x)
  %z = aten.mul.Tensor(%y, %x)
  return %z
})";
  ir::Graph g = f.parse(src);
  CompiledFunction fn(f.ctx, *f.device, f.parse(src));
  std::vector<HostTensor> f32 = {random(DType::kF32, {3, 4}, 5)};
  std::vector<HostTensor> f64 = {random(DType::kF64, {3, 4}, 6)};
  EXPECT_TRUE(selectOk(fn, f32).compiled);
  Selection s = selectOk(fn, f64);
  ASSERT_TRUE(s.artifact);
  EXPECT_TRUE(s.compiled);
  EXPECT_EQ(fn.stats().missReasons.back(), "dtype: input %x: dtype f64, guard wants f32");
  // The reference runs the f64 graph: the f64 artifact must agree to f64 precision.
  ir::Graph g64 = f.parse(R"(graph @e(%x: f64[3, 4]) {
  %y = aten.exp(%x)
  %z = aten.mul.Tensor(%y, %x)
  return %z
})");
  expectMatchesReference(f, g64, *s.artifact, f64, 1e-12);
  EXPECT_EQ(s.artifact->guards.inputs()[0].dtype, DType::kF64);
}

TEST(CompiledFunction, AStrideClassChangeRecompilesForThatLayout) {
  Fixture f;
  ASSERT_TRUE(f.device);
  const char* src = R"(graph @c(%x: f32[2, 3, 4, 5]) {
  %y = aten.sigmoid(%x)
  return %y
})";
  CompiledFunction fn(f.ctx, *f.device, f.parse(src));
  HostTensor x = random(DType::kF32, {2, 3, 4, 5}, 7);
  EXPECT_TRUE(selectOk(fn, {x}).compiled);
  TensorSignature cl{DType::kF32, {2, 3, 4, 5}, {60, 1, 15, 3}, "cpu", false};
  auto s = fn.select({cl});
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  ASSERT_TRUE(s->artifact);
  EXPECT_TRUE(s->compiled);
  EXPECT_EQ(fn.stats().missReasons.back(), "strides: input %x: strides are channels_last, guard wants contiguous");
  // The program reads the channels-last memory as it lies: x's values stored NHWC.
  std::vector<float> nhwc(120), out(120);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 5; ++w)
          nhwc[static_cast<size_t>(n * 60 + h * 15 + w * 3 + c)] =
              static_cast<float>(x.getDouble(((n * 3 + c) * 4 + h) * 5 + w));
  plugin::TensorArg in{nhwc.data(), DType::kF32, {2, 3, 4, 5}, {60, 1, 15, 3}, PLUGSDK_MEMORY_HOST};
  plugin::TensorArg o{out.data(), DType::kF32, {2, 3, 4, 5}, {}, PLUGSDK_MEMORY_HOST};
  Status r = s->artifact->program->runInto({in}, {o});
  ASSERT_TRUE(r.isOk()) << r.toString();
  for (int64_t i = 0; i < 120; ++i)
    EXPECT_NEAR(out[static_cast<size_t>(i)], 1 / (1 + std::exp(-x.getDouble(i))), 1e-6) << "element " << i;
}

TEST(CompiledFunction, FallsBackWithTheReasonWhereItCannotCompile) {
  Fixture f;
  ASSERT_TRUE(f.device);
  // A view captured with constant sizes cannot take another batch.
  CompiledFunction fn(f.ctx, *f.device, f.parse(R"(graph @v(%x: f32[4, 8]) {
  %v = aten.view(%x) {size = [32]}
  %n = aten.neg(%v)
  return %n
})"));
  EXPECT_TRUE(selectOk(fn, {random(DType::kF32, {4, 8}, 1)}).compiled);
  Selection s = selectOk(fn, {random(DType::kF32, {2, 8}, 1)});
  EXPECT_FALSE(s.artifact);
  EXPECT_NE(s.fallbackReason.find("cannot be specialized"), std::string::npos) << s.fallbackReason;
  EXPECT_NE(s.fallbackReason.find("aten.view"), std::string::npos) << s.fallbackReason;
  // Inputs on another device are not compiled for.
  auto other = fn.select({TensorSignature{DType::kF32, {4, 8}, {}, "accel:0", false}});
  ASSERT_TRUE(other.isOk());
  EXPECT_FALSE(other->artifact);
  EXPECT_EQ(other->fallbackReason, "input 0 is on accel:0; graph 'v' runs on cpu tensors");
  // Sizes that disagree on a symbol.
  CompiledFunction two(f.ctx, *f.device, f.parse(R"(graph @t(%x: f32[s0], %y: f32[s0]) {
  %z = aten.add.Tensor(%x, %y)
  return %z
})"));
  Selection d = selectOk(two, {random(DType::kF32, {3}, 1), random(DType::kF32, {4}, 1)});
  EXPECT_FALSE(d.artifact);
  EXPECT_EQ(d.fallbackReason, "input %y dim 0 is 4 but another input gives s0 = 3");
  EXPECT_EQ(fn.stats().fallbacks, 2u);
  EXPECT_EQ(fn.stats().compiles, 1u);
}

TEST(CompiledFunction, TwoThreadsShareOneFunction) {
  Fixture f;
  ASSERT_TRUE(f.device);
  ir::Graph g = f.parse(kBatchGraph);
  CompiledFunction fn(f.ctx, *f.device, f.parse(kBatchGraph));
  HostTensor w = random(DType::kF32, {8, 4}, 1);
  std::atomic<int> failures{0};
  auto worker = [&](int id) {
    for (int i = 0; i < 12; ++i) {
      int64_t batch = 2 + (i + id) % 5;
      std::vector<HostTensor> ins = {random(DType::kF32, {batch, 8}, static_cast<uint64_t>(id * 100 + i)), w};
      auto s = fn.select(signatures(ins));
      if (!s.isOk() || !s->artifact) {
        ++failures;
        continue;
      }
      auto got = s->artifact->program->run(ins);
      auto want = exec::ReferenceExecutor(f.ctx).run(g, ins);
      if (!got.isOk() || !want.isOk()) {
        ++failures;
        continue;
      }
      for (int64_t k = 0; k < (*want)[0].numel(); ++k)
        if (std::abs((*got)[0].getDouble(k) - (*want)[0].getDouble(k)) > 1e-5 * (1 + std::abs((*want)[0].getDouble(k))))
          ++failures;
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  FunctionStats st = fn.stats();
  EXPECT_EQ(st.compiles, 2u) << "one specialized, one symbolic, whichever thread compiled them";
  EXPECT_EQ(st.hits + st.misses, 24u);
}

TEST(CompiledFunction, AutotuneTimesTheVariantsAndKeepsTheFastest) {
  Fixture f;
  ASSERT_TRUE(f.device);
  FunctionOptions o;
  o.autotune = true;
  ir::Graph g = f.parse(kBatchGraph);
  CompiledFunction fn(f.ctx, *f.device, f.parse(kBatchGraph), o);
  std::vector<HostTensor> ins = {random(DType::kF32, {6, 8}, 2), random(DType::kF32, {8, 4}, 1)};
  Selection s = selectOk(fn, ins);
  ASSERT_TRUE(s.artifact);
  const auto& ms = s.artifact->autotuneMillis;
  ASSERT_EQ(ms.size(), scheduleVariants({}).size());
  auto best = std::min_element(ms.begin(), ms.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  for (const auto& [name, t] : ms) EXPECT_GT(t, 0) << name;
  EXPECT_EQ(s.artifact->autotuneWinner, best->first);
  expectMatchesReference(f, g, *s.artifact, ins, 1e-5);
}

TEST(CompiledFunction, ASecondProcessStartsWarmFromDiskAndRewritesCorruptEntries) {
  Fixture f;
  ASSERT_TRUE(f.device);
  const std::string dir = ::testing::TempDir() + "plugsdk_program_cache_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  DiskCache disk(dir);
  FunctionOptions o;
  o.disk = &disk;
  ir::Graph g = f.parse(kBatchGraph);
  std::vector<HostTensor> ins = {random(DType::kF32, {8, 8}, 2), random(DType::kF32, {8, 4}, 1)};
  auto fresh = [&] {  // a new function, as a new process would make
    auto fn = std::make_unique<CompiledFunction>(f.ctx, *f.device, f.parse(kBatchGraph), o);
    Selection s = selectOk(*fn, ins);
    EXPECT_TRUE(s.artifact);
    if (s.artifact) expectMatchesReference(f, g, *s.artifact, ins, 1e-5);
    return std::make_pair(fn->stats(), s.artifact ? s.artifact->fromDisk : false);
  };
  auto [cold, coldFromDisk] = fresh();
  EXPECT_FALSE(coldFromDisk);
  EXPECT_EQ(cold.diskHits, 0u);
  auto [warm, warmFromDisk] = fresh();
  EXPECT_TRUE(warmFromDisk);
  EXPECT_EQ(warm.diskHits, 1u);
  EXPECT_EQ(warm.compiles, 1u);

  // Corrupt the one entry: ignored (the program is compiled again), reported, and rewritten.
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  {
    std::fstream file(entries[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-20, std::ios::end);
    file.write("garbage", 7);
  }
  auto [bad, badFromDisk] = fresh();
  EXPECT_FALSE(badFromDisk);
  EXPECT_EQ(bad.diskRejected, 1u);
  EXPECT_NE(bad.lastDiskProblem.find("checksum does not match"), std::string::npos) << bad.lastDiskProblem;
  auto [again, againFromDisk] = fresh();
  EXPECT_TRUE(againFromDisk) << "the corrupt entry was rewritten";
  EXPECT_EQ(again.diskRejected, 0u);

  // A truncated entry is rejected the same way.
  std::filesystem::resize_file(entries[0], std::filesystem::file_size(entries[0]) / 2);
  auto [cut, cutFromDisk] = fresh();
  EXPECT_FALSE(cutFromDisk);
  EXPECT_NE(cut.lastDiskProblem.find("truncated"), std::string::npos) << cut.lastDiskProblem;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace plugsdk::cache
