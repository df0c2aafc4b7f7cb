// DIR/junit.xml for CI systems: one testsuite per tier. JUnit has no expected failures, so
// an xfail is written as skipped (with the list's reason) and an xpass as a failure (the
// list is stale, which the run reports as a failure too).
#include <fstream>

#include "conformance/runner/report.h"

namespace plugsdk::conformance {

Status writeJunit(const std::string& file, const Report& r) {
  std::ofstream f(file);
  if (!f) return internalError("cannot write " + file);
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"plugsdk-conformance\">\n";
  for (const TierSummary& t : r.summary.tiers) {
    f << "  <testsuite name=\"" << xmlEscape(t.tier) << "\" tests=\""
      << t.passed + t.failed + t.skipped + t.xfail + t.xpass << "\" failures=\"" << t.failed + t.xpass
      << "\" skipped=\"" << t.skipped + t.xfail << "\" time=\"" << reportNumber(t.ms / 1e3) << "\">\n";
    for (const CaseResult& c : r.results) {
      if (c.c->tier != t.tier) continue;
      f << "    <testcase classname=\"conformance." << xmlEscape(t.tier) << "\" name=\"" << xmlEscape(c.c->name)
        << "\" time=\"" << reportNumber(c.ms / 1e3) << "\"";
      std::string tag, message;
      switch (c.status) {
        case CaseStatus::kPassed: break;
        case CaseStatus::kFailed:
          tag = "failure";
          message = c.error + (c.expectation.empty() ? "" : " (" + c.expectation + ")");
          break;
        case CaseStatus::kSkipped:
          tag = "skipped";
          message = c.error;
          break;
        case CaseStatus::kXfail:
          tag = "skipped";
          message = "expected failure: " + c.expectation + " (it failed: " + c.error + ")";
          break;
        case CaseStatus::kXpass:
          tag = "failure";
          message = "passed, but listed as an expected failure (" + c.expectation + "): remove it from the list";
          break;
      }
      if (tag.empty()) {
        f << "/>\n";
        continue;
      }
      f << ">\n      <" << tag << " message=\"" << xmlEscape(message) << "\"/>\n";
      if (c.status != CaseStatus::kPassed && !c.rerun.empty())
        f << "      <system-out>" << xmlEscape("rerun: " + c.rerun) << "</system-out>\n";
      f << "    </testcase>\n";
    }
    f << "  </testsuite>\n";
  }
  f << "</testsuites>\n";
  return f ? Status::ok() : internalError("cannot write " + file);
}

}  // namespace plugsdk::conformance
