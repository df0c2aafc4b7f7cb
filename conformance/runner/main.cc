// plugsdk-conformance: runs the conformance suite against one plugin device and writes a
// certification report. See docs/conformance.md. This file is the run: select the cases,
// learn the device (from the first worker), apply the backend's expectations, run the cases
// (workers.h, or in this process with --jobs 0), print progress, summarize and report.
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "conformance/runner/expectations.h"
#include "conformance/runner/options.h"
#include "conformance/runner/report.h"
#include "conformance/runner/workers.h"
#include "core/ir/dtype.h"
#include "core/plugin/loader.h"

namespace plugsdk::conformance {
namespace {

using Clock = std::chrono::steady_clock;

/// Tier names an expectations file may claim: the documented ones and any the suite has.
std::set<std::string> knownTiers(const Suite& suite) {
  std::set<std::string> t = {"abi", "op", "fusion", "model", "autograd", "dynamic", "fuzz"};
  for (const Case& c : suite.cases()) t.insert(c.tier);
  return t;
}

/// A dtype named by a dotted part of the case's name ("model.mlp.f64" -> f64) that the run
/// does not claim: such a case is skipped without reaching the device.
std::optional<ir::DType> unclaimedNamedDtype(const std::string& name, uint32_t claimed) {
  for (size_t s = 0, e; s < name.size(); s = e + 1) {
    e = name.find('.', s);
    if (e == std::string::npos) e = name.size();
    const auto t = ir::parseDType(std::string_view(name).substr(s, e - s));
    if (t && !(claimed >> static_cast<unsigned>(*t) & 1u)) return t;
  }
  return std::nullopt;
}

/// The console side of a run. Every case that did not pass (failed, xpass, xfail; skipped
/// too when an "unsupported" entry made them; every case with --verbose) gets its line with the reason and the rerun
/// command; between them a progress line with the counts and an ETA, redrawn in place on a
/// terminal and printed at most every two seconds otherwise (suites have thousands of cases).
class Progress {
 public:
  Progress(size_t total, size_t toRun, bool verbose)
      : total_(total), toRun_(toRun), verbose_(verbose), tty_(isatty(STDOUT_FILENO)), start_(Clock::now()) {}

  void report(const CaseResult& r) {
    ++shown_;
    ++counts_[static_cast<int>(r.status)];
    ranDone_ += r.ran;
    // Skips for an unclaimed dtype can number thousands; an "unsupported" entry's are shown.
    const bool notable =
        r.status != CaseStatus::kPassed && (r.status != CaseStatus::kSkipped || !r.expectation.empty());
    if (notable || verbose_) {
      clearLine();
      std::printf("[%zu/%zu] %-44s %-7s %8.1f ms\n", shown_, total_, r.c->name.c_str(), statusName(r.status), r.ms);
      switch (r.status) {
        case CaseStatus::kFailed: std::printf("    %s\n    rerun: %s\n", r.error.c_str(), r.rerun.c_str()); break;
        case CaseStatus::kXpass:
          std::printf(
              "    passed, but listed as an expected failure (%s): remove it from the xfail list\n    rerun: %s\n",
              r.expectation.c_str(), r.rerun.c_str());
          break;
        case CaseStatus::kXfail:
          std::printf("    expected failure (%s): %s\n", r.expectation.c_str(), r.error.c_str());
          break;
        case CaseStatus::kSkipped: std::printf("    %s\n", r.error.c_str()); break;
        case CaseStatus::kPassed: break;
      }
    }
    const auto now = Clock::now();
    if (shown_ == total_ || tty_ || now - lastLine_ > std::chrono::seconds(2)) {
      lastLine_ = now;
      const double elapsed = std::chrono::duration<double>(now - start_).count();
      const double eta =
          ranDone_ ? elapsed / static_cast<double>(ranDone_) * static_cast<double>(toRun_ - ranDone_) : 0;
      const size_t width = 24, filled = total_ ? width * shown_ / total_ : width;
      clearLine();
      std::printf("[%zu/%zu] |%s%s| %d passed, %d failed, %d skipped, %d xfail, %d xpass; ETA %.0f s%s", shown_, total_,
                  std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), counts_[0], counts_[1],
                  counts_[2], counts_[3], counts_[4], eta, tty_ && shown_ < total_ ? "" : "\n");
      open_ = tty_ && shown_ < total_;
    }
    std::fflush(stdout);
  }

 private:
  void clearLine() {
    if (open_) std::printf("\r\033[K");
    open_ = false;
  }
  size_t total_, toRun_, shown_ = 0, ranDone_ = 0;
  bool verbose_, tty_, open_ = false;
  int counts_[5] = {};
  Clock::time_point start_, lastLine_{};
};

/// The case's outcome under the expectations: an xfail entry turns a failure into xfail and
/// a pass into xpass.
void settle(CaseResult& r, const Outcome& o, double ms, const Expectations& e) {
  r.ran = true;
  r.ms = ms;
  r.error = o.kind == Outcome::Kind::kPass ? "" : o.detail;
  r.maxError = o.maxError;
  r.bound = o.bound;
  const ExpectationEntry* x = e.xfailEntry(r.c->name);
  if (o.kind == Outcome::Kind::kSkip) {
    r.status = CaseStatus::kSkipped;
    return;
  }
  if (x) r.expectation = x->reason;
  if (o.kind == Outcome::Kind::kPass)
    r.status = x ? CaseStatus::kXpass : CaseStatus::kPassed;
  else
    r.status = x ? CaseStatus::kXfail : CaseStatus::kFailed;
}

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "plugsdk-conformance: %s\n", message.c_str());
  return code;
}

int run(const Options& o) {
  const auto runStart = Clock::now();
  const Suite suite = makeSuite();
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
  const plugin::Loader loader(plugin::Loader::defaultSearchPath());
  auto file = loader.find(o.plugin);
  if (!file.isOk()) return fail(1, file.status().toString());

  // The device: from the first worker's hello, or opened here with --jobs 0.
  std::signal(SIGPIPE, SIG_IGN);  // a worker that dies must not take the parent with it
  std::unique_ptr<WorkerPool> pool;
  std::shared_ptr<plugin::Plugin> here;
  std::unique_ptr<plugin::Device> hereDevice;
  DeviceInfo info;
  if (o.jobs == 0) {
    auto p = loader.load(*file);
    if (!p.isOk()) return fail(1, p.status().toString());
    auto d = plugin::Device::open(*p, o.device);
    if (!d.isOk()) return fail(1, d.status().toString());
    here = *p;
    hereDevice = std::move(*d);
    info = describeDevice(*here, *hereDevice);
  } else {
    pool = std::make_unique<WorkerPool>(
        std::vector<std::string>{"--worker", "--plugin", *file, "--device", std::to_string(o.device), "--seed",
                                 std::to_string(o.seed)},
        o.timeoutS);
    auto d = pool->start();
    if (!d.isOk()) return fail(1, d.status().toString());
    info = *d;
  }

  // The backend's expectations: given, or found by the plugin's file name or its own name.
  Expectations e;
  std::optional<std::string> eFile =
      o.expectationsFile.empty() ? findExpectations({pluginStem(*file), info.pluginName}) : o.expectationsFile;
  if (eFile) {
    auto loaded = loadExpectations(*eFile, knownTiers(suite));
    if (!loaded.isOk()) return fail(2, loaded.status().message());
    e = *loaded;
  }
  if (Status s = checkClaimedDtypes(e, info.caps); !s.isOk()) return fail(2, s.message());
  for (const auto* list : {&e.unsupported, &e.xfail})
    for (const ExpectationEntry& x : *list) {
      bool any = false;
      for (const Case& c : suite.cases()) any = any || globMatch(x.pattern, c.name);
      if (!any)
        std::fprintf(stderr, "plugsdk-conformance: warning: %s:%d: '%s' matches no case\n", e.source.c_str(), x.line,
                     x.pattern.c_str());
    }
  const uint32_t dtypes = e.claimedDtypes(info.caps);
  const int jobs = o.jobs >= 0 ? o.jobs : std::max(e.jobs, 1);

  // What runs, and what is skipped before it reaches the device.
  std::vector<CaseResult> results(selected.size());
  std::vector<const Case*> toRun;
  std::vector<size_t> toRunIndex;
  for (size_t i = 0; i < selected.size(); ++i) {
    CaseResult& r = results[i];
    r.c = selected[i];
    r.rerun = rerunCommand(o, r.c->name);
    if (!e.claimsTier(r.c->tier)) {
      r.error = "the backend's expectations do not claim the " + r.c->tier + " tier";
    } else if (const ExpectationEntry* u = e.unsupportedEntry(r.c->name)) {
      r.error = "unsupported: " + u->reason;
      r.expectation = u->reason;
    } else if (const auto t = unclaimedNamedDtype(r.c->name, dtypes)) {
      r.error = (info.caps.supports(*t) ? "the backend's expectations do not claim " : "the device does not claim ") +
                std::string(ir::dtypeName(*t));
    } else {
      toRun.push_back(r.c);
      toRunIndex.push_back(i);
    }
  }

  std::printf("plugsdk-conformance: %s, device %s, ABI %u.%u, seed %llu, %zu cases\n", info.pluginPath.c_str(),
              info.describe.c_str(), info.abiMajor, info.abiMinor, static_cast<unsigned long long>(o.seed),
              selected.size());
  std::printf("  expectations %s; %zu to run on %s\n", e.source.empty() ? "none (claims every tier)" : e.source.c_str(),
              toRun.size(),
              jobs ? (std::to_string(jobs) + " worker" + (jobs > 1 ? "s" : "") + ", " + std::to_string(o.timeoutS) +
                      " s per case")
                         .c_str()
                   : "this process (--jobs 0: no time limit, no crash isolation)");
  std::fflush(stdout);

  Progress progress(selected.size(), toRun.size(), o.verbose);
  for (size_t i = 0, k = 0; i < results.size(); ++i)  // the skips first: they are known already
    if (k < toRunIndex.size() && toRunIndex[k] == i)
      ++k;
    else
      progress.report(results[i]);
  auto onResult = [&](size_t k, const Outcome& out, double ms) {
    CaseResult& r = results[toRunIndex[k]];
    settle(r, out, ms, e);
    progress.report(r);
  };
  if (pool) {
    pool->run(toRun, jobs, dtypes, onResult);
  } else {
    for (size_t k = 0; k < toRun.size(); ++k) {
      double ms = 0;
      const Outcome out = runCaseHere(*toRun[k], *hereDevice, o.seed, dtypes, &ms);
      onResult(k, out, ms);
    }
  }

  // The verdict covers the claimed tiers this run selected; the others are named.
  std::set<std::string> ran, claimedNotRun;
  for (const Case* c : selected) ran.insert(c->tier);
  for (const Case& c : suite.cases())
    if (e.claimsTier(c.tier) && !ran.count(c.tier)) claimedNotRun.insert(c.tier);
  if (e.tiers)
    for (const std::string& t : *e.tiers)
      if (!ran.count(t)) claimedNotRun.insert(t);
  Report report;
  report.device = info;
  report.expectations = &e;
  report.seed = o.seed;
  report.jobs = jobs;
  report.timeoutS = o.timeoutS;
  report.results = std::move(results);
  report.summary = summarize(report.results, e, {claimedNotRun.begin(), claimedNotRun.end()});
  report.seconds = std::chrono::duration<double>(Clock::now() - runStart).count();
  const Summary& s = report.summary;
  std::string certified;
  for (const std::string& t : s.certifiedTiers) certified += (certified.empty() ? "" : ", ") + t;
  std::printf("%d passed, %d failed, %d skipped, %d xfail, %d xpass in %.1f s: %s (%s)\n", s.passed, s.failed,
              s.skipped, s.xfail, s.xpass, report.seconds,
              s.certified ? ("certified for " + certified).c_str() : "NOT certified", s.verdictReason.c_str());
  for (const CaseResult& r : report.results)
    if (r.status == CaseStatus::kXpass)
      std::printf("xpass: %s passed but is listed as an expected failure in %s: remove it\n", r.c->name.c_str(),
                  e.source.c_str());
  if (!o.reportDir.empty()) {
    if (Status st = writeReports(o.reportDir, report); !st.isOk())
      return fail(1, "cannot write the report in " + o.reportDir + ": " + st.message());
    std::printf("report: %s/report.html\n", o.reportDir.c_str());
  }
  return s.exitCode();
}

}  // namespace
}  // namespace plugsdk::conformance

int main(int argc, char** argv) {
  using namespace plugsdk::conformance;
  auto o = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!o.isOk()) {
    std::fprintf(stderr, "plugsdk-conformance: %s\n%s", o.status().message().c_str(), kUsage);
    return 2;
  }
  if (o->worker) return workerMain(o->plugin, o->device, o->seed);
  return run(*o);
}
