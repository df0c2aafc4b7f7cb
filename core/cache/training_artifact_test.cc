// Training artifacts on the minimal sample plugin: a call whose inputs require grad compiles
// a forward that saves and a backward that reads, whose gradients match ones computed here
// by hand; the same function without requires_grad compiles an inference artifact; a new
// batch size runs the symbolic pair without compiling again.
#include "core/cache/training_artifact.h"

#include <gtest/gtest.h>

#include <random>

#include "core/exec/reference_executor.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"

namespace plugsdk::cache {
namespace {

using exec::HostTensor;
using ir::DType;

const char* kLayer = R"(graph @layer(%x: f32[s0, 8], %w: f32[8, 4], %b: f32[4]) {
  %m = aten.mm(%x, %w)
  %a = aten.add.Tensor(%m, %b)
  %y = aten.relu(%a)
  return %y
})";

HostTensor random(std::vector<int64_t> shape, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  HostTensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.setDouble(i, exec::roundToFloatType(normal(rng), DType::kF32));
  return t;
}

std::vector<guard::TensorSignature> signatures(const std::vector<HostTensor>& ins, std::vector<bool> grad) {
  std::vector<guard::TensorSignature> s;
  for (size_t i = 0; i < ins.size(); ++i) s.push_back({ins[i].dtype(), ins[i].shape(), {}, "cpu", grad[i]});
  return s;
}

struct Device {
  std::shared_ptr<const plugin::Plugin> plugin;
  std::unique_ptr<plugin::Device> device;
  Device() {
    auto p = plugin::Loader({PLUGSDK_TEST_PLUGIN_DIR, PLUGSDK_BUILT_PLUGIN_DIR}).load("minimal");
    EXPECT_TRUE(p.isOk()) << p.status().toString();
    if (!p.isOk()) return;
    plugin = *p;
    auto d = plugin::Device::open(plugin, 0, "");
    EXPECT_TRUE(d.isOk()) << d.status().toString();
    if (d.isOk()) device = std::move(*d);
  }
};

/// One training step through the artifact: forward, then backward with tangent `t`; checks
/// y = relu(x w + b), dw = x^T (t * [y > 0]) and db = sum_rows(t * [y > 0]).
void checkStep(const Artifact& a, int64_t batch, uint64_t seed) {
  std::vector<HostTensor> ins = {random({batch, 8}, seed), random({8, 4}, seed + 1), random({4}, seed + 2)};
  auto fw = a.program->run(ins);
  ASSERT_TRUE(fw.isOk()) << fw.status().toString();
  const BackwardProgram& b = *a.backward;
  ASSERT_EQ(fw->size(), 1 + b.numSavedValues);
  const HostTensor& y = (*fw)[0];
  HostTensor t = random({batch, 4}, seed + 3);
  std::vector<HostTensor> bwIn;
  for (int i : b.savedInputs) bwIn.push_back(ins[static_cast<size_t>(i)]);
  bwIn.insert(bwIn.end(), fw->begin() + 1, fw->end());
  ASSERT_EQ(b.tangentOf, std::vector<int>{0});
  bwIn.push_back(t);
  ASSERT_TRUE(b.program);
  auto grads = b.program->run(bwIn);
  ASSERT_TRUE(grads.isOk()) << grads.status().toString();
  ASSERT_EQ(b.gradOf, (std::vector<int>{1, 2}));
  const HostTensor &x = ins[0], &w = ins[1], &bias = ins[2], &dw = (*grads)[0], &db = (*grads)[1];
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < 4; ++o) {
      double acc = bias.getDouble(o);
      for (int64_t k = 0; k < 8; ++k) acc += x.getDouble(n * 8 + k) * w.getDouble(k * 4 + o);
      ASSERT_NEAR(y.getDouble(n * 4 + o), std::max(acc, 0.0), 1e-5) << n << "," << o;
    }
  for (int64_t o = 0; o < 4; ++o) {
    double sb = 0;
    for (int64_t n = 0; n < batch; ++n) sb += y.getDouble(n * 4 + o) > 0 ? t.getDouble(n * 4 + o) : 0;
    EXPECT_NEAR(db.getDouble(o), sb, 1e-5);
    for (int64_t k = 0; k < 8; ++k) {
      double sw = 0;
      for (int64_t n = 0; n < batch; ++n)
        sw += y.getDouble(n * 4 + o) > 0 ? x.getDouble(n * 8 + k) * t.getDouble(n * 4 + o) : 0;
      EXPECT_NEAR(dw.getDouble(k * 4 + o), sw, 1e-5);
    }
  }
}

TEST(TrainingArtifact, ForwardSavesBackwardReadsGradientsMatch) {
  Device d;
  ASSERT_TRUE(d.device);
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, kLayer);
  ASSERT_TRUE(g.isOk());
  FunctionOptions o;
  o.training = true;
  o.dynamic = DynamicPolicy::kSymbolic;
  CompiledFunction fn(ctx, *d.device, std::move(*g), o);
  std::vector<HostTensor> five = {random({5, 8}, 1), random({8, 4}, 2), random({4}, 3)};
  auto s = fn.select(signatures(five, {false, true, true}));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  ASSERT_TRUE(s->artifact);
  ASSERT_TRUE(s->artifact->backward);
  EXPECT_GT(s->artifact->backward->stats.savedBytesNoRecompute, 0);
  checkStep(*s->artifact, 5, 10);

  // Another batch: the symbolic pair again, no compile.
  std::vector<HostTensor> nine = {random({9, 8}, 1), random({8, 4}, 2), random({4}, 3)};
  auto s9 = fn.select(signatures(nine, {false, true, true}));
  ASSERT_TRUE(s9.isOk());
  EXPECT_FALSE(s9->compiled);
  EXPECT_EQ(s9->artifact, s->artifact);
  checkStep(*s9->artifact, 9, 20);

  // Nothing requires grad (torch.no_grad inference): an inference artifact, no backward.
  auto inf = fn.select(signatures(five, {false, false, false}));
  ASSERT_TRUE(inf.isOk());
  EXPECT_TRUE(inf->compiled);
  ASSERT_TRUE(inf->artifact);
  EXPECT_FALSE(inf->artifact->backward);
  EXPECT_EQ(fn.stats().compiles, 2u);
}

TEST(TrainingArtifact, NoGradientFlowsMeansNoBackwardProgram) {
  Device d;
  ASSERT_TRUE(d.device);
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, R"(graph @g(%x: f32[4], %w: f32[4]) {
  %c = aten.ceil(%w)
  %y = aten.mul.Tensor(%x, %c)
  return %y
})");
  ASSERT_TRUE(g.isOk());
  FunctionOptions o;
  o.training = true;
  CompiledFunction fn(ctx, *d.device, std::move(*g), o);
  std::vector<HostTensor> ins = {random({4}, 1), random({4}, 2)};
  auto s = fn.select(signatures(ins, {false, true}));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  ASSERT_TRUE(s->artifact->backward);
  EXPECT_TRUE(s->artifact->backward->gradOf.empty());  // ceil's gradient is zero
  EXPECT_FALSE(s->artifact->backward->program);
}

}  // namespace
}  // namespace plugsdk::cache
