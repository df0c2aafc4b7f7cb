// The conformance suite's vocabulary: a case is a named check in a tier that runs against
// one plugin device and passes, fails (with the reason) or is skipped (with the reason: the
// device does not claim what it needs). Tiers register their cases into a Suite explicitly
// (no static registration, no globals); the runner (main.cc) filters, runs and reports them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/plugin/device.h"
#include "core/support/status.h"

namespace plugsdk::conformance {

/// What a case may use: the device under test and a deterministic seed for its data.
struct CaseContext {
  const plugin::Device& device;
  uint64_t seed = 0;
  /// The dtypes the run claims (PLUGSDK_DTYPE_BIT set): the device's, narrowed by the
  /// backend's expectations file. A case that needs another one skips.
  uint32_t dtypes = ~0u;
};

/// A skip is not a failure: the device does not claim what the case needs.
struct Outcome {
  enum class Kind { kPass, kFail, kSkip } kind = Kind::kPass;
  std::string detail;   ///< the failure or the reason for the skip
  double maxError = 0;  ///< numeric cases: the worst error seen ...
  double bound = 0;     ///< ... and the tolerance it was held to (0 and 0 for exact or non-numeric cases)
  static Outcome pass() { return {}; }
  static Outcome fail(std::string why) { return {Kind::kFail, std::move(why)}; }
  static Outcome skip(std::string why) { return {Kind::kSkip, std::move(why)}; }
  /// A Status as an outcome: ok passes, an error fails with its text.
  static Outcome of(const Status& s) { return s.isOk() ? pass() : fail(s.toString()); }
};

struct Case {
  std::string tier;  ///< "abi", "op", "fusion", "model", "autograd", "dynamic", "fuzz"
  std::string name;  ///< unique within the suite: "abi.memory.roundtrip.4096"
  std::function<Outcome(const CaseContext&)> run;
};

class Suite {
 public:
  void add(std::string tier, std::string name, std::function<Outcome(const CaseContext&)> run) {
    cases_.push_back({std::move(tier), std::move(name), std::move(run)});
  }
  const std::vector<Case>& cases() const { return cases_; }

 private:
  std::vector<Case> cases_;
};

/// The ABI tier (abi_cases.cc): capabilities, memory, streams and events, error paths.
void addAbiCases(Suite& suite);

/// The op tier (op_*.cc): every prim and library op, every dtype, edge values, views and
/// sizes across tile boundaries, against the reference under the documented tolerances.
void addOpCases(Suite& suite);

/// The model tier (model_cases.cc): the conformance/models graphs vs the reference executor.
void addModelCases(Suite& suite);

/// The fusion tier (fusion_cases.cc): programs exercising each fusion rule.
void addFusionCases(Suite& suite);

/// The autograd tier (autograd_cases.cc): the model graphs' training programs (the forward
/// that saves, the backward that reads) vs the reference executor.
void addAutogradCases(Suite& suite);

/// The dynamic tier (dynamic_cases.cc): kernels with symbolic sizes at several concrete sizes.
void addDynamicCases(Suite& suite);

/// The fuzz tier (fuzz_cases.cc): seeded random graphs vs the reference executor.
void addFuzzCases(Suite& suite);

/// Every tier.
inline Suite makeSuite() {
  Suite s;
  addAbiCases(s);
  addOpCases(s);
  addFusionCases(s);
  addModelCases(s);
  addAutogradCases(s);
  addDynamicCases(s);
  addFuzzCases(s);
  return s;
}

}  // namespace plugsdk::conformance
