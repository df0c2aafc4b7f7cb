// One graph against the reference, with a failure class: see fuzz_check.h.
#include "conformance/runner/fuzz_check.h"

#include <regex>

#include "conformance/runner/minimize.h"
#include "core/exec/reference_executor.h"

namespace plugsdk::conformance {

Tolerance fuzzTolerance(const ir::Graph& g) {
  // ordered from the least precise: the first dtype seen in this order wins
  const std::pair<ir::DType, double> byPrecision[] = {
      {ir::DType::kBF16, 8e-2}, {ir::DType::kF16, 1e-2}, {ir::DType::kF32, 1e-4}, {ir::DType::kF64, 1e-10}};
  auto has = [&](ir::DType t) {
    for (const ir::Value* v : g.inputs())
      if (v->type().dtype == t) return true;
    for (const auto& n : g.nodes())
      for (const ir::Value* v : n->outputs())
        if (v->type().dtype == t) return true;
    return false;
  };
  for (const auto& [t, tol] : byPrecision)
    if (has(t)) return Tolerance::relativeToMax(tol);
  return Tolerance::relativeToMax(1e-4);  // no floating value at all: outputs are exact anyway
}

std::string Failure::cause() const {
  if (kind != Kind::kError && kind != Kind::kReference) return "";
  // names of values (%relu_3), kernels (k12) and plain numbers (step 4, device index) change
  // as the graph shrinks; the words around them say what went wrong
  static const std::regex names(R"(%[\w.]+|\bk\d+\b|\b\d+\b)");
  return std::regex_replace(text, names, "#");
}

std::string Failure::describe() const {
  std::string oneLine = text;
  for (char& ch : oneLine)
    if (ch == '\n') ch = ' ';
  switch (kind) {
    case Kind::kNone: return "passed";
    case Kind::kSkip: return "skipped: " + oneLine;
    case Kind::kError: return "device error: " + oneLine;
    case Kind::kMismatch: return "mismatch: " + oneLine;
    case Kind::kReference: return "reference error: " + oneLine;
  }
  return oneLine;
}

Failure checkFuzzGraph(const plugin::Device& device, const std::shared_ptr<const ir::Context>& ctx,
                       const ir::Graph& g, uint64_t seed) {
  // inputs drawn for the graph as written (what the model tier would run), then only what
  // the outputs need is run: an unused input's dtype need not be claimed
  const std::vector<exec::HostTensor> all = randomInputs(g, seed);
  auto live = copyGraph(*ctx, g);
  if (!live.isOk()) return {Failure::Kind::kReference, live.status().toString()};
  std::vector<exec::HostTensor> inputs;
  for (const ir::Value* v : live->inputs())
    for (size_t i = 0; i < g.inputs().size(); ++i)
      if (g.inputs()[i]->name() == v->name()) inputs.push_back(all[i]);
  // the device must take the inputs and make the outputs; values in between (max_pool's
  // unused indices) may not reach it once decomposed, and the core must not hand it any
  // dtype it does not claim: that is for the run to show
  for (const auto* vs : {&live->inputs(), &live->outputs()})
    for (const ir::Value* v : *vs)
      if (!device.caps().supports(v->type().dtype))
        return {Failure::Kind::kSkip, "the device does not claim " + std::string(ir::dtypeName(v->type().dtype)) +
                                          " (" + v->ref() + ")"};
  auto got = runOnDevice(device, *ctx, *live, inputs);
  if (!got.isOk()) return {Failure::Kind::kError, got.status().toString()};
  auto want = exec::ReferenceExecutor(ctx).run(*live, inputs);
  if (!want.isOk()) return {Failure::Kind::kReference, want.status().toString()};
  Outcome o = compareOutputs(*got, *want, {fuzzTolerance(*live)});
  if (o.kind == Outcome::Kind::kFail) return {Failure::Kind::kMismatch, o.detail};
  Failure pass;
  pass.worstRatio = o.bound > 0 ? o.maxError / o.bound : 0;
  return pass;
}

std::string fuzzCommand(const std::string& verb, const plugin::Device& device, uint64_t seed) {
  return "plugsdk-fuzz " + verb + " --plugin " + device.plugin().path() + " --device " +
         std::to_string(device.index()) + " --seed " + std::to_string(seed);
}

}  // namespace plugsdk::conformance
