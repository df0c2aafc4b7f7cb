// One graph against the reference, with a failure class: see fuzz_check.h.
#include "conformance/runner/fuzz_check.h"

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
  const size_t at = text.rfind(": ");
  return at == std::string::npos ? text : text.substr(at + 2);
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
  if (auto t = unclaimedDtype(device.caps(), g))
    return {Failure::Kind::kSkip, "the device does not claim " + std::string(ir::dtypeName(*t))};
  const std::vector<exec::HostTensor> inputs = randomInputs(g, seed);
  auto got = runOnDevice(device, *ctx, g, inputs);
  if (!got.isOk()) return {Failure::Kind::kError, got.status().toString()};
  auto want = exec::ReferenceExecutor(ctx).run(g, inputs);
  if (!want.isOk()) return {Failure::Kind::kReference, want.status().toString()};
  Outcome o = compareOutputs(*got, *want, {fuzzTolerance(g)});
  if (o.kind == Outcome::Kind::kFail) return {Failure::Kind::kMismatch, o.detail};
  return {};
}

std::string fuzzCommand(const std::string& verb, const plugin::Device& device, uint64_t seed) {
  return "plugsdk-fuzz " + verb + " --plugin " + device.plugin().path() + " --device " +
         std::to_string(device.index()) + " --seed " + std::to_string(seed);
}

}  // namespace plugsdk::conformance
