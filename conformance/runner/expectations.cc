// Reading a backend's expectations file: see expectations.h and docs/conformance.md.
#include "conformance/runner/expectations.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/ir/dtype.h"

namespace plugsdk::conformance {
namespace fs = std::filesystem;
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// `#` starts a comment at the start of a line or after a blank; a `#` inside a word
/// (`c#`) or a reason (`see #12` -- reasons run to the end of the line) is text.
std::string stripComment(const std::string& line) {
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  return line;
}

const ExpectationEntry* firstMatch(const std::vector<ExpectationEntry>& entries, const std::string& name) {
  for (const ExpectationEntry& e : entries)
    if (globMatch(e.pattern, name)) return &e;
  return nullptr;
}

}  // namespace

bool globMatch(const std::string& pattern, const std::string& text) {
  // Iterative with one backtrack point: the last `*` seen absorbs one more character on a
  // mismatch (linear in practice, no recursion on hostile patterns).
  size_t p = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p, ++t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

const ExpectationEntry* Expectations::unsupportedEntry(const std::string& name) const {
  return firstMatch(unsupported, name);
}
const ExpectationEntry* Expectations::xfailEntry(const std::string& name) const { return firstMatch(xfail, name); }

StatusOr<Expectations> parseExpectations(const std::string& text, const std::string& source,
                                         const std::set<std::string>& knownTiers) {
  Expectations e;
  e.source = source;
  std::istringstream in(text);
  int lineNo = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++lineNo;
    const std::string where = source + ":" + std::to_string(lineNo) + ": ";
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      return invalidArgument(where + "expected 'KEY: VALUE' (keys: tiers, dtypes, jobs, unsupported, xfail), got '" +
                             line + "'");
    const std::string key = trim(line.substr(0, colon));
    const std::string value = line.substr(colon + 1);
    if (key == "unsupported" || key == "xfail") {
      // The reason runs to the end of the line (a `#` in it is text).
      const size_t dashes = value.find(" -- ");
      const std::string pattern = trim(value.substr(0, dashes));
      const std::string reason = dashes == std::string::npos ? "" : trim(value.substr(dashes + 4));
      if (pattern.empty() || words(pattern).size() != 1)
        return invalidArgument(where + key + ": expected one case-name pattern before ' -- ', got '" + pattern + "'");
      if (reason.empty())
        return invalidArgument(where + key + " entry '" + pattern + "' has no reason (write 'PATTERN -- reason')");
      (key == "xfail" ? e.xfail : e.unsupported).push_back({pattern, reason, lineNo});
      continue;
    }
    const std::vector<std::string> items = words(stripComment(value));
    if (key == "tiers") {
      if (!e.tiers) e.tiers.emplace();
      for (const std::string& t : items) {
        if (!knownTiers.count(t)) {
          std::string known;
          for (const std::string& k : knownTiers) known += (known.empty() ? "" : " ") + k;
          return invalidArgument(where + "unknown tier '" + t + "' (known: " + known + ")");
        }
        e.tiers->insert(t);
      }
    } else if (key == "dtypes") {
      if (!e.dtypes) e.dtypes = 0;
      for (const std::string& d : items) {
        const auto t = ir::parseDType(d);
        if (!t) return invalidArgument(where + "unknown dtype '" + d + "' (bool u8 i8 i16 i32 i64 f16 bf16 f32 f64)");
        *e.dtypes |= 1u << static_cast<unsigned>(*t);
      }
    } else if (key == "jobs") {
      int n = 0;
      try {
        size_t used = 0;
        n = items.size() == 1 ? std::stoi(items[0], &used) : 0;
        if (used != items[0].size()) n = 0;
      } catch (const std::exception&) {
        n = 0;
      }
      if (n < 1) return invalidArgument(where + "jobs: expected one positive whole number");
      e.jobs = n;
    } else {
      return invalidArgument(where + "unknown key '" + key + "' (keys: tiers, dtypes, jobs, unsupported, xfail)");
    }
  }
  return e;
}

StatusOr<Expectations> loadExpectations(const std::string& file, const std::set<std::string>& knownTiers) {
  std::ifstream f(file);
  if (!f) return notFound("cannot read the expectations file " + file);
  std::ostringstream text;
  text << f.rdbuf();
  return parseExpectations(text.str(), file, knownTiers);
}

std::string pluginStem(const std::string& path) {
  std::string s = fs::path(path).filename().string();
  if (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0) s.resize(s.size() - 3);
  if (s.rfind("lib", 0) == 0) s = s.substr(3);
  if (s.rfind("plugsdk_", 0) == 0) s = s.substr(8);
  return s;
}

std::optional<std::string> findExpectations(const std::vector<std::string>& names) {
  std::vector<fs::path> dirs = {PLUGSDK_CONFORMANCE_EXPECTATIONS};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path() / "../share/plugsdk/conformance/expectations");
  dirs.emplace_back(PLUGSDK_INSTALL_EXPECTATIONS);
  for (const std::string& name : names) {
    if (name.empty() || name.find('/') != std::string::npos) continue;
    for (const fs::path& d : dirs) {
      const fs::path f = d / (name + ".txt");
      if (fs::is_regular_file(f, ec)) return f.lexically_normal().string();
    }
  }
  return std::nullopt;
}

Status checkClaimedDtypes(const Expectations& e, const plugin::DeviceCaps& caps) {
  if (!e.dtypes) return Status::ok();
  for (int t = 0; t < ir::kNumDTypes; ++t)
    if ((*e.dtypes >> t & 1u) && !caps.supports(static_cast<ir::DType>(t)))
      return invalidArgument(e.source + ": dtypes claims " + std::string(ir::dtypeName(static_cast<ir::DType>(t))) +
                             ", which device " + caps.name + " does not report (it reports " + caps.dtypeList() + ")");
  return Status::ok();
}

}  // namespace plugsdk::conformance
