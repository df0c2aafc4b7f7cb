// What a conformance run found, and the three files it writes in --report DIR: report.json
// (machine-readable), junit.xml (for CI systems) and report.html (for a person). The statuses
// and the verdict rule live here (report.cc) so that every file and the console agree.
#pragma once

#include <string>
#include <vector>

#include "conformance/runner/expectations.h"
#include "conformance/runner/suite.h"
#include "core/plugin/device.h"
#include "core/support/status.h"

namespace plugsdk::conformance {

/// A case's status after the expectations are applied: an expected failure that fails is
/// `xfail`, one that passes is `xpass` (the list is stale: a failure of the run).
enum class CaseStatus { kPassed, kFailed, kSkipped, kXfail, kXpass };

/// "passed", "failed", "skipped", "xfail", "xpass".
const char* statusName(CaseStatus s);

struct CaseResult {
  const Case* c = nullptr;
  CaseStatus status = CaseStatus::kSkipped;
  std::string error;               ///< the failure, or why it was skipped
  std::string expectation;         ///< the reason of the unsupported / xfail entry that applied ("" when none)
  double maxError = 0, bound = 0;  ///< numeric cases: the worst error and the bound it was held to
  double ms = 0;
  bool ran = false;   ///< false: skipped by the runner before it reached the device
  std::string rerun;  ///< the command that reruns this case alone
};

/// What the report says about the plugin and its device; a worker sends it to the parent, so
/// the parent never loads the plugin itself.
struct DeviceInfo {
  std::string pluginPath, pluginName;
  uint32_t abiMajor = 0, abiMinor = 0;
  uint32_t index = 0;
  std::string describe;  ///< "minimal:0 (host0)"
  plugin::DeviceCaps caps;
};

struct TierSummary {
  std::string tier;
  int passed = 0, failed = 0, skipped = 0, xfail = 0, xpass = 0;
  double ms = 0;
  bool claimed = false;
  bool certified = false;
};

struct Summary {
  int passed = 0, failed = 0, skipped = 0, xfail = 0, xpass = 0;
  std::vector<TierSummary> tiers;  ///< in suite order
  std::vector<std::string> certifiedTiers;
  bool certified = false;
  std::string verdictReason;  ///< one line
  /// The run's exit code: 0 when nothing failed and nothing xpassed (xfail is fine).
  int exitCode() const { return failed == 0 && xpass == 0 ? 0 : 1; }
};

/// The verdict: a claimed tier with cases in this run is certified when every case in it
/// that ran passed and at least one did (skips for unclaimed dtypes or unsupported entries
/// are fine; failed, xfail and xpass are not); the run is certified when every such tier is.
/// `claimedNotRun` are claimed tiers this run did not select (--tier / --filter).
Summary summarize(const std::vector<CaseResult>& results, const Expectations& e,
                  const std::vector<std::string>& claimedNotRun);

struct Report {
  DeviceInfo device;
  const Expectations* expectations = nullptr;
  uint64_t seed = 0;
  int jobs = 0;
  int timeoutS = 0;
  double seconds = 0;               ///< wall time of the whole run
  std::vector<CaseResult> results;  ///< suite order
  Summary summary;
};

/// Writes DIR/report.json, DIR/junit.xml and DIR/report.html (creating DIR).
Status writeReports(const std::string& dir, const Report& r);

Status writeJson(const std::string& file, const Report& r);   ///< report_json.cc
Status writeJunit(const std::string& file, const Report& r);  ///< report_junit.cc
Status writeHtml(const std::string& file, const Report& r);   ///< report_html.cc

/// Text as a JSON string literal (quotes included).
std::string jsonString(const std::string& s);
/// Text safe inside XML/HTML text and attribute values.
std::string xmlEscape(const std::string& s);
/// A number for a report: shortest round-trip-ish form ("%.6g"), never "nan" in JSON.
std::string reportNumber(double v);

}  // namespace plugsdk::conformance
