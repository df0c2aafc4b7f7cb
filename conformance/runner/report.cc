// The statuses, the verdict rule and what the three report files share (escaping, numbers).
#include "conformance/runner/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace plugsdk::conformance {

const char* statusName(CaseStatus s) {
  switch (s) {
    case CaseStatus::kPassed: return "passed";
    case CaseStatus::kFailed: return "failed";
    case CaseStatus::kSkipped: return "skipped";
    case CaseStatus::kXfail: return "xfail";
    case CaseStatus::kXpass: return "xpass";
  }
  return "?";
}

namespace {

std::string joined(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// "3 failed, 1 xpass" for a tier that is not certified.
std::string problems(const TierSummary& t) {
  std::vector<std::string> p;
  if (t.failed) p.push_back(std::to_string(t.failed) + " failed");
  if (t.xfail) p.push_back(std::to_string(t.xfail) + " xfail");
  if (t.xpass) p.push_back(std::to_string(t.xpass) + " xpass");
  if (p.empty()) p.push_back("no case passed");
  return joined(p);
}

}  // namespace

Summary summarize(const std::vector<CaseResult>& results, const Expectations& e,
                  const std::vector<std::string>& claimedNotRun) {
  Summary s;
  for (const CaseResult& r : results) {
    auto it = std::find_if(s.tiers.begin(), s.tiers.end(), [&](const TierSummary& t) { return t.tier == r.c->tier; });
    if (it == s.tiers.end()) {
      s.tiers.push_back({});
      it = s.tiers.end() - 1;
      it->tier = r.c->tier;
      it->claimed = e.claimsTier(r.c->tier);
    }
    int* counts[] = {&it->passed, &it->failed, &it->skipped, &it->xfail, &it->xpass};
    int* totals[] = {&s.passed, &s.failed, &s.skipped, &s.xfail, &s.xpass};
    ++*counts[static_cast<int>(r.status)];
    ++*totals[static_cast<int>(r.status)];
    it->ms += r.ms;
  }
  std::vector<std::string> inScope, bad;
  for (TierSummary& t : s.tiers) {
    if (!t.claimed) continue;
    inScope.push_back(t.tier);
    t.certified = t.failed + t.xfail + t.xpass == 0 && t.passed > 0;
    if (t.certified)
      s.certifiedTiers.push_back(t.tier);
    else
      bad.push_back(t.tier + ": " + problems(t));
  }
  s.certified = !inScope.empty() && bad.empty();
  const std::string notRun = claimedNotRun.empty() ? "" : "; claimed but not in this run: " + joined(claimedNotRun);
  if (inScope.empty())
    s.verdictReason = "no tier the backend claims ran" + notRun;
  else if (s.certified)
    s.verdictReason = "every case that ran in " + joined(inScope) + " passed" + notRun;
  else
    s.verdictReason = joined(bad, "; ") + notRun;
  return s;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += std::string("\\") + ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      // Other control characters are not allowed in XML 1.0 at all.
      default: out += static_cast<unsigned char>(ch) < 0x20 ? ' ' : ch;
    }
  }
  return out;
}

std::string reportNumber(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "null" : v > 0 ? "1e308" : "-1e308";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

Status writeReports(const std::string& dir, const Report& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return internalError("cannot create the report directory " + dir + ": " + ec.message());
  RETURN_IF_ERROR(writeJson(dir + "/report.json", r));
  RETURN_IF_ERROR(writeJunit(dir + "/junit.xml", r));
  return writeHtml(dir + "/report.html", r);
}

}  // namespace plugsdk::conformance
