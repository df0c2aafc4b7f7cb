// The fuzz tier: fuzz.0 .. fuzz.N-1, each a random graph (fuzz_graph.h) generated from the
// case's seed for the device's dtypes and checked against the reference on inputs from the
// same seed, under fuzzTolerances. A failure writes nothing; its message is the plugsdk-fuzz
// command that regenerates the graph and minimizes it.
#include "conformance/runner/fuzz_check.h"
#include "conformance/runner/fuzz_graph.h"
#include "core/text/parser.h"

namespace plugsdk::conformance {
namespace {

constexpr int kFuzzCases = 40;

Outcome runFuzzCase(const CaseContext& c, int k) {
  auto ctx = ir::makeDefaultContext();
  const std::string text = randomGraph(c.seed, c.device.caps());
  const std::string minimize = "\n    minimize: " + fuzzCommand("minimize", c.device, c.seed) +
                               " --generated --out fuzz." + std::to_string(k) + ".pgraph";
  auto g = text::parseGraph(*ctx, text);
  if (!g.isOk())
    return Outcome::fail("the core rejects the generated graph (a generator or core bug): " + g.status().toString() +
                         "\n    see it: " + fuzzCommand("check", c.device, c.seed) + " --generated --print");
  Outcome o = checkGraph(c, ctx, *g, randomInputs(*g, c.seed), fuzzTolerances(*g));
  if (o.kind == Outcome::Kind::kFail) o.detail += minimize;
  return o;
}

}  // namespace

void addFuzzCases(Suite& s) {
  for (int k = 0; k < kFuzzCases; ++k)
    s.add("fuzz", "fuzz." + std::to_string(k), [k](const CaseContext& c) { return runFuzzCase(c, k); });
}

}  // namespace plugsdk::conformance
