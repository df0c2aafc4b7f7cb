// DIR/report.html: the certification report for a person. One self-contained page (inline
// CSS, no scripts): who was tested and the verdict, a table per tier, the failures first with
// the command that reruns each, then every case by tier. Everything from the plugin or a case
// is escaped: plugin names, device names and error messages are untrusted text.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "conformance/runner/report.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::conformance {
namespace {

const char* kStyle =
    R"(body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:75em;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}
.verdict{padding:.6em 1em;border-radius:4px;font-weight:600}.ok{background:#e3f6e3;color:#135f13}.bad{background:#fbe3e3;color:#8a1111}
.passed{color:#135f13}.failed,.xpass{color:#8a1111;font-weight:600}.skipped{color:#666}.xfail{color:#8a5a00}
.failure{border-left:4px solid #c33;padding:.3em .8em;margin:.8em 0;background:#fdf6f6}
code,pre{font-family:ui-monospace,monospace;font-size:.92em}pre{white-space:pre-wrap;margin:.3em 0}
code.cmd{display:block;background:#f5f5f5;padding:.3em .5em;user-select:all;overflow-wrap:anywhere}
)";

std::string e(const std::string& s) { return xmlEscape(s); }

std::string bitNames(uint32_t bits, std::initializer_list<std::pair<uint32_t, const char*>> names) {
  std::string out;
  for (const auto& [bit, name] : names)
    if (bits & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "none" : out;
}

std::string capabilities(const plugin::DeviceCaps& k) {
  std::ostringstream s;
  s << "dtypes " << k.dtypeList() << "; library ops "
    << bitNames(k.libraryOps, {{PLUGSDK_LIBRARY_MATMUL, "matmul"},
                               {PLUGSDK_LIBRARY_CONVOLUTION, "convolution"},
                               {PLUGSDK_LIBRARY_SDPA, "sdpa"},
                               {PLUGSDK_LIBRARY_SDPA_BACKWARD, "sdpa_backward"}})
    << "; epilogues on "
    << bitNames(k.epilogueOps, {{PLUGSDK_LIBRARY_MATMUL, "matmul"},
                                {PLUGSDK_LIBRARY_CONVOLUTION, "convolution"},
                                {PLUGSDK_LIBRARY_SDPA, "sdpa"}})
    << "; memory "
    << bitNames(k.memoryKinds,
                {{PLUGSDK_MEMORY_DEVICE, "device"}, {PLUGSDK_MEMORY_HOST, "host"}, {PLUGSDK_MEMORY_SHARED, "shared"}})
    << "; fusion:" << (k.fusesHorizontal ? " horizontal" : "")
    << (k.fusesReductionEpilogue ? " reduction-epilogue" : "") << (k.fusesMultiReduction ? " multi-reduction" : "")
    << (!k.fusesHorizontal && !k.fusesReductionEpilogue && !k.fusesMultiReduction ? " vertical only" : "");
  if (k.vectorBits) s << "; vector " << k.vectorBits << " bits";
  if (k.memoryBytes) s << "; " << k.memoryBytes / (1 << 20) << " MiB";
  return s.str();
}

std::string errorVsBound(const CaseResult& c) {
  if (c.maxError == 0 && c.bound == 0) return "";
  return reportNumber(c.maxError) + " / " + reportNumber(c.bound);
}

/// What the case said, and why an xfail entry applied (an unsupported one is in the error).
std::string detail(const CaseResult& c) {
  if (c.expectation.empty() || c.status == CaseStatus::kSkipped) return c.error;
  return c.error + (c.error.empty() ? "" : "\n") + "expected to fail: " + c.expectation;
}

/// Times for a person: "12.3".
std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void failure(std::ostream& f, const CaseResult& c) {
  f << "<div class=\"failure\" id=\"" << e(c.c->name) << "\"><strong>" << e(c.c->name) << "</strong> <span class=\""
    << statusName(c.status) << "\">" << statusName(c.status) << "</span> (" << e(c.c->tier) << ", " << fixed(c.ms)
    << " ms)\n";
  if (c.status == CaseStatus::kXpass)
    f << "<pre>passed, but listed as an expected failure: " << e(c.expectation)
      << "\nremove it from the xfail list</pre>\n";
  else
    f << "<pre>" << e(detail(c)) << "</pre>\n";
  if (!errorVsBound(c).empty()) f << "<div>max error " << e(errorVsBound(c)) << " (error / bound)</div>\n";
  f << "<div>rerun:</div><code class=\"cmd\">" << e(c.rerun) << "</code></div>\n";
}

}  // namespace

Status writeHtml(const std::string& file, const Report& r) {
  std::ofstream f(file);
  if (!f) return internalError("cannot write " + file);
  const Summary& s = r.summary;
  const std::string verdict = s.certified ? "certified" : "not certified";
  f << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>plugsdk conformance: "
    << e(r.device.pluginName) << " " << verdict << "</title>\n<style>" << kStyle << "</style></head><body>\n";
  f << "<h1>plugsdk conformance: " << e(r.device.describe) << "</h1>\n";
  std::string tiers;
  for (const std::string& t : s.certifiedTiers)
    tiers += (!tiers.empty() ? ", " : s.certified ? " for " : " (certified tiers: ") + t;
  if (!s.certified && !tiers.empty()) tiers += ")";
  f << "<p class=\"verdict " << (s.certified ? "ok" : "bad") << "\">" << verdict << e(tiers) << ": "
    << e(s.verdictReason) << "</p>\n";
  f << "<p>" << s.passed << " passed, " << s.failed << " failed, " << s.skipped << " skipped, " << s.xfail << " xfail, "
    << s.xpass << " xpass in " << fixed(r.seconds) << " s</p>\n<dl>\n";
  f << "<dt>plugin</dt><dd>" << e(r.device.pluginName) << " (<code>" << e(r.device.pluginPath) << "</code>)</dd>\n";
  f << "<dt>ABI</dt><dd>" << r.device.abiMajor << "." << r.device.abiMinor << "</dd>\n";
  f << "<dt>device</dt><dd>" << r.device.index << ": " << e(r.device.caps.name) << "</dd>\n";
  f << "<dt>capabilities</dt><dd>" << e(capabilities(r.device.caps)) << "</dd>\n";
  f << "<dt>expectations</dt><dd>"
    << (r.expectations->source.empty() ? "none (claims every tier)" : "<code>" + e(r.expectations->source) + "</code>")
    << "</dd>\n";
  f << "<dt>seed</dt><dd>" << r.seed << "</dd>\n<dt>workers</dt><dd>"
    << (r.jobs ? std::to_string(r.jobs) + ", " + std::to_string(r.timeoutS) + " s per case" : "in-process")
    << "</dd>\n</dl>\n";

  f << "<h2>Tiers</h2>\n<table><tr><th>tier</th><th>claimed</th><th>verdict</th><th>passed</th><th>failed</th>"
       "<th>skipped</th><th>xfail</th><th>xpass</th><th>time (s)</th></tr>\n";
  for (const TierSummary& t : s.tiers)
    f << "<tr><td>" << e(t.tier) << "</td><td>" << (t.claimed ? "yes" : "no") << "</td><td class=\""
      << (t.certified ? "passed\">certified"
          : t.claimed ? "failed\">not certified"
                      : "skipped\">-")
      << "</td><td class=n>" << t.passed << "</td><td class=n>" << t.failed << "</td><td class=n>" << t.skipped
      << "</td><td class=n>" << t.xfail << "</td><td class=n>" << t.xpass << "</td><td class=n>" << fixed(t.ms / 1e3)
      << "</td></tr>\n";
  f << "</table>\n";

  // Failures (and stale expectations) first: what a reader has to act on.
  int shown = 0;
  f << "<h2>Failures</h2>\n";
  for (const CaseResult& c : r.results)
    if (c.status == CaseStatus::kFailed || c.status == CaseStatus::kXpass) {
      failure(f, c);
      ++shown;
    }
  if (!shown) f << "<p>none</p>\n";
  if (s.xfail) {
    f << "<h2>Expected failures</h2>\n";
    for (const CaseResult& c : r.results)
      if (c.status == CaseStatus::kXfail) failure(f, c);
  }

  f << "<h2>Every case</h2>\n";
  for (const TierSummary& t : s.tiers) {
    f << "<h3>" << e(t.tier)
      << "</h3>\n<table><tr><th>case</th><th>status</th><th>time (ms)</th>"
         "<th>max error / bound</th><th>detail</th></tr>\n";
    for (const CaseResult& c : r.results) {
      if (c.c->tier != t.tier) continue;
      f << "<tr><td>" << e(c.c->name) << "</td><td class=\"" << statusName(c.status) << "\">" << statusName(c.status)
        << "</td><td class=n>" << fixed(c.ms) << "</td><td class=n>" << e(errorVsBound(c)) << "</td><td>"
        << (detail(c).empty() ? "" : "<pre>" + e(detail(c)) + "</pre>") << "</td></tr>\n";
    }
    f << "</table>\n";
  }
  f << "</body></html>\n";
  return f ? Status::ok() : internalError("cannot write " + file);
}

}  // namespace plugsdk::conformance
