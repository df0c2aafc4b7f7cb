// One graph against the reference, with a failure class: see fuzz_check.h.
#include "conformance/runner/fuzz_check.h"

#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "conformance/runner/minimize.h"
#include "core/exec/reference_executor.h"

namespace plugsdk::conformance {

namespace {

/// Ops whose result is exact when their operands are: data movement, selection, sign and
/// clamping, and casts (a cast rounds once, the same way on every correct device).
bool exactOp(const ir::Node& n) {
  static const std::set<std::string, std::less<>> ops = {
      "aten.permute",      "aten.transpose.int", "aten.slice.Tensor", "aten.expand",      "aten.reshape",  "aten.view",
      "aten._unsafe_view", "aten.select.int",    "aten.unsqueeze",    "aten.squeeze.dim", "aten.squeeze",  "aten.flip",
      "aten.cat",          "aten.clone",         "aten.alias",        "aten.t",           "aten.neg",      "aten.abs",
      "aten.relu",         "aten.maximum",       "aten.minimum",      "aten.clamp",       "aten.hardtanh", "aten.amax",
      "aten.amin",         "aten.where.self",    "aten._to_copy"};
  if (ops.count(n.op())) return true;
  if (n.op() == "aten.mul.Scalar" || n.op() == "aten.leaky_relu") {
    // scaling by a power of two; not in f16/bf16, where results among the subnormals round
    // on a correct device and not in the float64 reference
    const ir::DType t = n.output()->type().dtype;
    if (t != ir::DType::kF32 && t != ir::DType::kF64) return false;
    const ir::Attribute* a = n.attr(n.op() == "aten.mul.Scalar" ? "other" : "negative_slope");
    auto f = a ? a->asDouble() : std::nullopt;
    int e = 0;
    return f && *f != 0 && std::fabs(std::frexp(*f, &e)) == 0.5;
  }
  // integer and bool arithmetic (the generator keeps it far from overflow)
  for (const ir::Value* v : n.inputs())
    if (v && ir::isFloating(v->type().dtype)) return false;
  for (const ir::Value* v : n.outputs())
    if (ir::isFloating(v->type().dtype)) return false;
  return true;
}

double relativeTolerance(ir::DType t) {
  switch (t) {
    case ir::DType::kBF16: return 8e-2;
    case ir::DType::kF16: return 1e-2;
    case ir::DType::kF64: return 1e-10;
    default: return 1e-4;
  }
}

/// Lower is less precise.
int precisionRank(ir::DType t) {
  return t == ir::DType::kBF16 ? 0 : t == ir::DType::kF16 ? 1 : t == ir::DType::kF32 ? 2 : 3;
}

struct ValueFacts {
  bool exact = true;
  std::optional<ir::DType> leastPrecise;  ///< the least precise floating dtype it was computed through
};

const ValueFacts& factsOf(const ir::Value* v, std::map<const ir::Value*, ValueFacts>& memo) {
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  ValueFacts f;
  auto note = [&](ir::DType t) {
    if (ir::isFloating(t) && (!f.leastPrecise || precisionRank(t) < precisionRank(*f.leastPrecise))) f.leastPrecise = t;
  };
  note(v->type().dtype);
  if (const ir::Node* n = v->producer()) {
    f.exact = exactOp(*n);
    for (const ir::Value* in : n->inputs()) {
      if (!in) continue;
      const ValueFacts& g = factsOf(in, memo);
      f.exact = f.exact && g.exact;
      if (g.leastPrecise) note(*g.leastPrecise);
    }
  }
  return memo[v] = f;
}

}  // namespace

std::vector<Tolerance> fuzzTolerances(const ir::Graph& g) {
  std::map<const ir::Value*, ValueFacts> memo;
  std::vector<Tolerance> out;
  for (const ir::Value* v : g.outputs()) {
    const ValueFacts& f = factsOf(v, memo);
    if (f.exact)
      out.push_back(Tolerance::inUlps(0.5));
    else
      out.push_back(Tolerance::relativeToMax(relativeTolerance(f.leastPrecise.value_or(ir::DType::kF32))));
  }
  return out;
}

std::string Failure::cause() const {
  if (kind != Kind::kError && kind != Kind::kReference) return "";
  // names of values (%relu_3), kernels (k12) and plain numbers (step 4, device index) change
  // as the graph shrinks; the words around them say what went wrong
  // (by hand, not std::regex: GCC 14 warns inside <regex> under the sanitizers, and -Werror)
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    if (text[i] == '%') {  // %name.with.dots
      size_t j = i + 1;
      while (j < n && (word(text[j]) || text[j] == '.')) ++j;
      if (j > i + 1) {
        out += '#';
        i = j;
        continue;
      }
    }
    if (i == 0 || !word(text[i - 1])) {  // a whole word: 12 or k12
      const size_t from = i + (text[i] == 'k' ? 1 : 0);
      size_t d = from;
      while (d < n && std::isdigit(static_cast<unsigned char>(text[d]))) ++d;
      if (d > from && (d == n || !word(text[d]))) {
        out += '#';
        i = d;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
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

Failure checkFuzzGraph(const plugin::Device& device, const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& g,
                       uint64_t seed) {
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
        return {Failure::Kind::kSkip,
                "the device does not claim " + std::string(ir::dtypeName(v->type().dtype)) + " (" + v->ref() + ")"};
  auto got = runOnDevice(device, *ctx, *live, inputs);
  if (!got.isOk()) return {Failure::Kind::kError, got.status().toString()};
  auto want = exec::ReferenceExecutor(ctx).run(*live, inputs);
  if (!want.isOk()) return {Failure::Kind::kReference, want.status().toString()};
  Outcome o = compareOutputs(*got, *want, fuzzTolerances(*live));
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
