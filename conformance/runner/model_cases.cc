// The model tier: the whole-model graphs of conformance/models (resnet18, an MLP, a
// transformer encoder block, a GPT-2 block; float32 and float64), compiled for the device
// with its capabilities and compared with the reference executor on the same seeded inputs
// (randomInputs: rank-1 floating inputs from [0.5, 1.5], so a running variance is positive).
// Tolerance: |device - reference| <= tol * max(1, max |reference|), tol 1e-4 for f32 graphs
// and 1e-10 for f64 ones, with NaN positions equal.
#include "conformance/runner/check.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

Outcome runModel(const CaseContext& c, const std::string& path, double tol) {
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraphFile(*ctx, path);
  if (!g.isOk()) return Outcome::of(g.status());
  return checkGraph(c, ctx, *g, randomInputs(*g, c.seed), {Tolerance::relativeToMax(tol)});
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
