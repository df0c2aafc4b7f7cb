// The autograd tier: the training programs of the model tier's graphs. For each
// conformance/models graph (float32 and float64) the core builds the training pair
// (core/autograd: prim reduction, the joint graph from the VJP rules, the min-cut partition)
// with every floating input requiring grad and every floating output differentiable. Two
// cases per graph:
//   autograd.<model>.forward   the forward program (the outputs, then the values saved for
//                              the backward) on the model tier's seeded inputs;
//   autograd.<model>.backward  the backward program (one gradient per input) on the values
//                              the reference executor's forward saved and seeded tangents, so
//                              a forward error does not travel into this check.
// Each runs on the device and on the reference executor, compared as the model tier is:
// |device - reference| <= tol * max(1, max |reference|) per output, tol 1e-4 for float32
// graphs and 1e-10 for float64 ones, NaN positions equal (docs/conformance.md, "Tolerances").
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "conformance/runner/check.h"
#include "core/autograd/training.h"
#include "core/exec/reference_executor.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

struct TrainingCase {
  std::shared_ptr<const ir::Context> ctx;
  autograd::TrainingGraphs graphs;
  std::vector<exec::HostTensor> inputs;  ///< the forward's, seeded as the model tier's
};

StatusOr<TrainingCase> buildCase(const std::string& path, uint64_t seed) {
  std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
  ASSIGN_OR_RETURN(ir::Graph g, text::parseGraphFile(*ctx, path));
  autograd::JointSpec spec;
  for (const ir::Value* v : g.inputs()) spec.requiresGrad.push_back(ir::isFloating(v->type().dtype));
  ASSIGN_OR_RETURN(autograd::Training t, autograd::buildTraining(*ctx, g, spec));
  if (t.graphs.gradOf.empty()) return invalidArgument(path + ": no output depends on a floating input");
  std::vector<exec::HostTensor> inputs = randomInputs(t.graphs.forward, seed);
  // Standard normal weights blow resnet18's activations up to ~1e19 (the model tier's
  // inputs), where a tolerance relative to the largest gradient checks little else: floating
  // inputs of rank >= 2 are scaled by 1 / sqrt(fan-in) (the product of their trailing dims),
  // as initializers do, so activations and gradients stay near 1.
  for (exec::HostTensor& x : inputs) {
    if (!x.isFloating() || x.shape().size() < 2) continue;
    int64_t fanIn = 1;
    for (size_t d = 1; d < x.shape().size(); ++d) fanIn *= x.shape()[d];
    const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
    for (int64_t i = 0; i < x.numel(); ++i) x.setDouble(i, exec::roundToFloatType(x.getDouble(i) * scale, x.dtype()));
  }
  return TrainingCase{std::move(ctx), std::move(t.graphs), std::move(inputs)};
}

Outcome runForward(const CaseContext& c, const std::string& path, double tol) {
  StatusOr<TrainingCase> t = buildCase(path, c.seed);
  if (!t.isOk()) return Outcome::of(t.status());
  return checkGraph(c, t->ctx, t->graphs.forward, t->inputs, {Tolerance::relativeToMax(tol)});
}

Outcome runBackward(const CaseContext& c, const std::string& path, double tol) {
  StatusOr<TrainingCase> t = buildCase(path, c.seed);
  if (!t.isOk()) return Outcome::of(t.status());
  const autograd::TrainingGraphs& tg = t->graphs;
  if (auto skip = skipUnclaimed(c, tg.forward)) return *skip;  // the saved values come from it
  auto fw = exec::ReferenceExecutor(t->ctx).run(tg.forward, t->inputs);
  if (!fw.isOk()) return Outcome::fail("the reference executor failed on the forward: " + fw.status().toString());
  // The backward's inputs: saved forward inputs, saved values, then the tangents (seeded).
  std::vector<exec::HostTensor> in = randomInputs(tg.backward, c.seed + 1);
  size_t k = 0;
  for (int i : tg.savedInputs) in[k++] = t->inputs[static_cast<size_t>(i)];
  for (size_t s = 0; s < tg.numSavedValues; ++s) in[k++] = (*fw)[tg.numForwardOutputs + s];
  return checkGraph(c, t->ctx, tg.backward, in, {Tolerance::relativeToMax(tol)});
}

}  // namespace

void addAutogradCases(Suite& s) {
  for (const char* model : {"mlp", "resnet18", "transformer_encoder", "gpt2_block"})
    for (const char* suffix : {"", ".f64"}) {
      const std::string file = std::string(PLUGSDK_CONFORMANCE_MODELS) + "/" + model + suffix + ".pgraph";
      const double tol = *suffix ? 1e-10 : 1e-4;
      const std::string name = std::string("autograd.") + model + suffix;
      s.add("autograd", name + ".forward", [file, tol](const CaseContext& c) { return runForward(c, file, tol); });
      s.add("autograd", name + ".backward", [file, tol](const CaseContext& c) { return runBackward(c, file, tol); });
    }
}

}  // namespace plugsdk::conformance
