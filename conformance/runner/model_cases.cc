// The model tier: the whole-model graphs of conformance/models (resnet18, an MLP, a
// transformer encoder block, a GPT-2 block; float32 and float64), compiled for the device
// with its capabilities and compared with the reference executor on the same seeded inputs.
// Rank-1 floating inputs (biases, norm scales, running statistics) are drawn from
// [0.5, 1.5] so that a running variance is positive; the others are standard normal.
// Tolerance: max |device - reference| <= tol * max(1, max |reference|), tol 1e-4 for f32
// graphs and 1e-10 for f64 ones, with NaN positions equal.
#include <cmath>
#include <filesystem>
#include <random>

#include "conformance/runner/suite.h"
#include "core/exec/reference_executor.h"
#include "core/plugin/device_program.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

std::vector<exec::HostTensor> modelInputs(const ir::Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> positive(0.5, 1.5);
  std::vector<exec::HostTensor> out;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) shape.push_back(d.evaluate({}).value_or(1));
    exec::HostTensor t(v->type().dtype, shape);
    const bool param = shape.size() == 1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.isFloating())
        t.setDouble(i, exec::roundToFloatType(param ? positive(rng) : normal(rng), v->type().dtype));
      else
        t.setInt(i, static_cast<int64_t>(rng() % 3));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Outcome runModel(const CaseContext& c, const std::string& path, double tol) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraphFile(*ctx, path);
  if (!g.isOk()) return Outcome::of(g.status());
  for (const ir::Value* v : g->inputs())
    if (!c.device.caps().supports(v->type().dtype))
      return Outcome::skip("the device does not claim " + std::string(ir::dtypeName(v->type().dtype)));
  auto compiled = compile::compileGraph(*ctx, *g, plugin::optionsFor(c.device.caps()));
  if (!compiled.isOk()) return Outcome::of(compiled.status());
  auto program = plugin::DeviceProgram::compile(c.device, compiled->program);
  if (!program.isOk()) return Outcome::of(program.status());
  const std::vector<exec::HostTensor> inputs = modelInputs(*g, c.seed);
  auto got = (*program)->run(inputs);
  if (!got.isOk()) return Outcome::of(got.status());
  auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
  if (!want.isOk()) return Outcome::fail("the reference executor failed: " + want.status().toString());
  for (size_t o = 0; o < want->size(); ++o) {
    const exec::HostTensor &x = (*got)[o], &y = (*want)[o];
    if (x.shape() != y.shape()) return Outcome::fail("output " + std::to_string(o) + " has another shape");
    double scale = 1, err = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      if (!std::isnan(y.getDouble(i))) scale = std::max(scale, std::fabs(y.getDouble(i)));
    for (int64_t i = 0; i < y.numel(); ++i) {
      const double a = x.getDouble(i), b = y.getDouble(i);
      if (std::isnan(a) != std::isnan(b))
        return Outcome::fail("output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
                             std::to_string(a) + " vs reference " + std::to_string(b) + " (NaN differs)");
      if (!std::isnan(a)) err = std::max(err, std::fabs(a - b));
    }
    if (err > tol * scale)
      return Outcome::fail("output " + std::to_string(o) + ": max error " + std::to_string(err) + " > " +
                           std::to_string(tol) + " x " + std::to_string(scale));
  }
  return Outcome::pass();
}

}  // namespace

void addModelCases(Suite& s) {
  for (const char* model : {"mlp", "resnet18", "transformer_encoder", "gpt2_block"})
    for (const char* suffix : {"", ".f64"}) {
      const std::string file = std::string(PLUGSDK_CONFORMANCE_MODELS) + "/" + model + suffix + ".pgraph";
      const double tol = *suffix ? 1e-10 : 1e-4;
      s.add("model", std::string("model.") + model + suffix,
            [file, tol](const CaseContext& c) { return runModel(c, file, tol); });
    }
}

}  // namespace plugsdk::conformance
