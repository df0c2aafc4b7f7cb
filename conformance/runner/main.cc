// plugsdk-conformance: runs the conformance suite against one plugin device and writes a
// certification report. See docs/conformance.md.
//   plugsdk-conformance --plugin NAME|PATH.so [--device N] [--tier abi,...] [--filter TEXT]
//                       [--seed N] [--report DIR] [--list]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "conformance/runner/suite.h"
#include "core/plugin/loader.h"

namespace plugsdk::conformance {
namespace {

const char* kUsage =
    "usage: plugsdk-conformance --plugin NAME|PATH.so [--device N] [--tier T1,T2] [--filter TEXT]\n"
    "                           [--seed N] [--report DIR] [--list]\n";

struct Options {
  std::string plugin, filter, reportDir;
  std::vector<std::string> tiers;
  uint32_t device = 0;
  uint64_t seed = 20261122;
  bool list = false;
};

struct Result {
  const Case* c;
  Outcome outcome;
  double ms = 0;
};

/// A per-case seed from the run's seed and the case's name (stable across runs and filters).
uint64_t caseSeed(uint64_t seed, const std::string& name) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  return h;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + ch;
    else if (ch == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += " ";
    else
      out += ch;
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
      default: out += static_cast<unsigned char>(ch) < 0x20 && ch != '\n' ? ' ' : ch;
    }
  }
  return out;
}

/// DIR/junit.xml: one testsuite per tier, for CI systems.
bool writeJunit(const std::string& dir, const std::vector<Result>& results) {
  std::map<std::string, std::vector<const Result*>> tiers;
  for (const Result& r : results) tiers[r.c->tier].push_back(&r);
  std::ofstream f(dir + "/junit.xml");
  if (!f) return false;
  f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"plugsdk-conformance\">\n";
  for (const auto& [tier, rs] : tiers) {
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (const Result* r : rs) {
      failures += r->outcome.kind == Outcome::Kind::kFail;
      skipped += r->outcome.kind == Outcome::Kind::kSkip;
      seconds += r->ms / 1e3;
    }
    f << "  <testsuite name=\"" << xmlEscape(tier) << "\" tests=\"" << rs.size() << "\" failures=\"" << failures
      << "\" skipped=\"" << skipped << "\" time=\"" << seconds << "\">\n";
    for (const Result* r : rs) {
      f << "    <testcase classname=\"conformance." << xmlEscape(tier) << "\" name=\"" << xmlEscape(r->c->name)
        << "\" time=\"" << r->ms / 1e3 << "\"";
      if (r->outcome.kind == Outcome::Kind::kPass) {
        f << "/>\n";
        continue;
      }
      const char* tag = r->outcome.kind == Outcome::Kind::kFail ? "failure" : "skipped";
      f << ">\n      <" << tag << " message=\"" << xmlEscape(r->outcome.detail) << "\"/>\n    </testcase>\n";
    }
    f << "  </testsuite>\n";
  }
  f << "</testsuites>\n";
  return static_cast<bool>(f);
}

const char* statusName(Outcome::Kind k) {
  return k == Outcome::Kind::kPass ? "passed" : k == Outcome::Kind::kFail ? "failed" : "skipped";
}

bool writeReport(const Options& o, const plugin::Device& d, const std::vector<Result>& results, int passed, int failed,
                 int skipped) {
  std::error_code ec;
  std::filesystem::create_directories(o.reportDir, ec);
  std::ofstream f(o.reportDir + "/report.json");
  if (!f) return false;
  const plugin::DeviceCaps& k = d.caps();
  f << "{\n  \"summary\": {\"passed\": " << passed << ", \"failed\": " << failed << ", \"skipped\": " << skipped
    << ", \"xfail\": 0, \"xpass\": 0, \"verdict\": " << jsonString(failed == 0 ? "certified" : "not certified")
    << "},\n";
  f << "  \"plugin\": " << jsonString(d.plugin().path()) << ",\n  \"abi\": \"" << d.plugin().abiMajor() << "."
    << d.plugin().abiMinor() << "\",\n";
  f << "  \"device\": {\"index\": " << d.index() << ", \"name\": " << jsonString(k.name)
    << ", \"dtypes\": " << jsonString(k.dtypeList()) << ", \"library_ops\": " << k.libraryOps
    << ", \"epilogue_ops\": " << k.epilogueOps << ", \"memory_kinds\": " << k.memoryKinds << "},\n";
  f << "  \"seed\": " << o.seed << ",\n  \"cases\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    f << "    {\"tier\": " << jsonString(r.c->tier) << ", \"name\": " << jsonString(r.c->name)
      << ", \"status\": " << jsonString(statusName(r.outcome.kind)) << ", \"error\": " << jsonString(r.outcome.detail)
      << ", \"time_ms\": " << r.ms << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  return static_cast<bool>(f);
}

int run(const Options& o) {
  Suite suite = makeSuite();
  std::vector<const Case*> selected;
  for (const Case& c : suite.cases()) {
    bool tierOk = o.tiers.empty();
    for (const std::string& t : o.tiers) tierOk = tierOk || t == c.tier;
    if (tierOk && c.name.find(o.filter) != std::string::npos) selected.push_back(&c);
  }
  if (o.list) {
    for (const Case* c : selected) std::printf("%s\n", c->name.c_str());
    return 0;
  }
  auto p = plugin::Loader(plugin::Loader::defaultSearchPath()).load(o.plugin);
  if (!p.isOk()) {
    std::fprintf(stderr, "plugsdk-conformance: %s\n", p.status().toString().c_str());
    return 1;
  }
  auto d = plugin::Device::open(*p, o.device);
  if (!d.isOk()) {
    std::fprintf(stderr, "plugsdk-conformance: %s\n", d.status().toString().c_str());
    return 1;
  }
  std::printf("plugsdk-conformance: %s, device %s, ABI %u.%u, seed %llu, %zu cases\n", (*p)->path().c_str(),
              (*d)->describe().c_str(), (*p)->abiMajor(), (*p)->abiMinor(), static_cast<unsigned long long>(o.seed),
              selected.size());
  std::vector<Result> results;
  int passed = 0, failed = 0, skipped = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < selected.size(); ++i) {
    const Case& c = *selected[i];
    const auto t0 = std::chrono::steady_clock::now();
    Outcome out = c.run(CaseContext{**d, caseSeed(o.seed, c.name)});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    results.push_back({&c, out, ms});
    (out.kind == Outcome::Kind::kPass ? passed : out.kind == Outcome::Kind::kFail ? failed : skipped)++;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = elapsed / static_cast<double>(i + 1) * static_cast<double>(selected.size() - i - 1);
    std::printf("[%zu/%zu] %-44s %-7s %8.1f ms   (%d passed, %d failed, %d skipped; ETA %.0f s)\n", i + 1,
                selected.size(), c.name.c_str(), statusName(out.kind), ms, passed, failed, skipped, eta);
    if (out.kind == Outcome::Kind::kFail)
      std::printf("    %s\n    rerun: plugsdk-conformance --plugin %s --device %u --seed %llu --filter %s\n",
                  out.detail.c_str(), o.plugin.c_str(), o.device, static_cast<unsigned long long>(o.seed),
                  c.name.c_str());
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped: %s\n", passed, failed, skipped,
              failed == 0 ? "certified for the tiers run" : "NOT certified");
  if (!o.reportDir.empty() &&
      (!writeReport(o, **d, results, passed, failed, skipped) || !writeJunit(o.reportDir, results))) {
    std::fprintf(stderr, "plugsdk-conformance: cannot write the report in %s\n", o.reportDir.c_str());
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace plugsdk::conformance

int main(int argc, char** argv) {
  using plugsdk::conformance::kUsage;
  plugsdk::conformance::Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool hasValue = i + 1 < args.size();
    try {
      if (a == "--plugin" && hasValue) {
        o.plugin = args[++i];
      } else if (a == "--device" && hasValue) {
        o.device = static_cast<uint32_t>(std::stoul(args[++i]));
      } else if (a == "--filter" && hasValue) {
        o.filter = args[++i];
      } else if (a == "--seed" && hasValue) {
        o.seed = std::stoull(args[++i]);
      } else if (a == "--report" && hasValue) {
        o.reportDir = args[++i];
      } else if (a == "--tier" && hasValue) {
        std::string t = args[++i];
        for (size_t s = 0, e; s <= t.size(); s = e + 1) {
          e = t.find(',', s);
          if (e == std::string::npos) e = t.size();
          if (e > s) o.tiers.push_back(t.substr(s, e - s));
        }
      } else if (a == "--list") {
        o.list = true;
      } else {
        std::fprintf(stderr, "plugsdk-conformance: unknown or incomplete option '%s'\n%s", a.c_str(), kUsage);
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "plugsdk-conformance: bad number after '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.plugin.empty() && !o.list) {
    std::fprintf(stderr, "plugsdk-conformance: --plugin is required\n%s", kUsage);
    return 2;
  }
  return plugsdk::conformance::run(o);
}
