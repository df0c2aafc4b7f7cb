// One graph against the reference, as the fuzzer and the minimizer see it: a failure has a
// class (a device-side error with its cause text, or a numeric mismatch), so the minimizer can
// keep a candidate only when it fails the same way. Tolerances are per output: exact values to
// half an ulp, others relative to the output's largest value (docs/conformance.md, "The graph
// fuzzer and the minimizer").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "conformance/runner/check.h"
#include "core/ir/context.h"
#include "core/ir/graph.h"
#include "core/plugin/device.h"

namespace plugsdk::conformance {

/// One tolerance per output of g. An output computed exactly from the inputs (data movement,
/// neg/abs/relu/max/min/clamp, scaling by powers of two in f32/f64, integer arithmetic, casts of exact
/// values: each rounds at most once, the same way on every correct device) must be within
/// half an ulp of its dtype: a cast that truncates instead of rounding fails. Any other output:
/// |device - reference| <= tol x max(1, max |reference| over the output), tol by the least
/// precise floating dtype it was computed through: f64 1e-10, f32 1e-4, f16 1e-2, bf16 8e-2.
std::vector<Tolerance> fuzzTolerances(const ir::Graph& g);

struct Failure {
  enum class Kind {
    kNone,       ///< passed
    kSkip,       ///< the device does not claim a dtype of the graph
    kError,      ///< compiling or running on the device failed
    kMismatch,   ///< outputs differ beyond the tolerance
    kReference,  ///< the reference executor failed (the graph, not the device, is wrong)
  } kind = Kind::kNone;
  std::string text;       ///< the whole message
  double worstRatio = 0;  ///< a pass: the largest error / bound over the outputs (the tolerance's margin)
  /// The part that must stay the same while minimizing: for an error, its text with value
  /// names (%x), kernel names (k3) and plain numbers replaced by '#', so they may change as
  /// the graph shrinks; empty for a mismatch (any mismatch is the same class).
  std::string cause() const;
  bool failed() const { return kind == Kind::kError || kind == Kind::kMismatch || kind == Kind::kReference; }
  /// Same class: both mismatches, or both errors of the same kind with the same cause.
  bool sameAs(const Failure& o) const { return kind == o.kind && cause() == o.cause(); }
  /// "device error: ..." / "mismatch: ..." on one line.
  std::string describe() const;
};

/// g on the device against the reference, inputs randomInputs(g, seed), fuzzTolerances(g).
/// Only what the outputs need runs (copyGraph): an unused input is dropped with its data,
/// so a device need not claim its dtype.
Failure checkFuzzGraph(const plugin::Device& device, const std::shared_ptr<const ir::Context>& ctx, const ir::Graph& g,
                       uint64_t seed);

/// The command line that checks (or minimizes) a graph on this device, for messages:
/// "plugsdk-fuzz VERB --plugin PATH --device N --seed S".
std::string fuzzCommand(const std::string& verb, const plugin::Device& device, uint64_t seed);

}  // namespace plugsdk::conformance
