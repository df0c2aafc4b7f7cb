// plugsdk-conformance's command line: see options.h.
#include "conformance/runner/options.h"

namespace plugsdk::conformance {

const char* const kUsage =
    "usage: plugsdk-conformance --plugin NAME|PATH.so [--device N] [--tier T1,T2] [--filter TEXT]\n"
    "                           [--seed N] [--jobs N] [--timeout SECONDS] [--expectations FILE]\n"
    "                           [--report DIR] [--list] [--verbose]\n";

namespace {

/// A whole non-negative number, or an error naming the option.
StatusOr<uint64_t> number(const std::string& option, const std::string& text) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || text[0] == '-')
    return invalidArgument("bad number '" + text + "' after '" + option + "'");
  return v;
}

}  // namespace

StatusOr<Options> parseOptions(const std::vector<std::string>& args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--list") {
      o.list = true;
      continue;
    }
    if (a == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (a == "--worker") {
      o.worker = true;
      continue;
    }
    const bool takesValue = a == "--plugin" || a == "--device" || a == "--filter" || a == "--seed" || a == "--report" ||
                            a == "--tier" || a == "--jobs" || a == "--timeout" || a == "--expectations";
    if (!takesValue || i + 1 >= args.size()) return invalidArgument("unknown or incomplete option '" + a + "'");
    const std::string& v = args[++i];
    if (a == "--plugin") {
      o.plugin = v;
    } else if (a == "--filter") {
      o.filter = v;
    } else if (a == "--report") {
      o.reportDir = v;
    } else if (a == "--expectations") {
      o.expectationsFile = v;
    } else if (a == "--tier") {
      for (size_t s = 0, e; s <= v.size(); s = e + 1) {
        e = v.find(',', s);
        if (e == std::string::npos) e = v.size();
        if (e > s) o.tiers.push_back(v.substr(s, e - s));
      }
    } else {
      ASSIGN_OR_RETURN(uint64_t n, number(a, v));
      if (a == "--seed") {
        o.seed = n;
      } else if (a == "--device") {
        if (n > UINT32_MAX) return invalidArgument("--device " + v + " is out of range");
        o.device = static_cast<uint32_t>(n);
      } else if (a == "--jobs") {
        if (n > 256) return invalidArgument("--jobs " + v + ": at most 256 workers");
        o.jobs = static_cast<int>(n);
      } else {  // --timeout
        if (n < 1 || n > 86400) return invalidArgument("--timeout " + v + ": between 1 and 86400 seconds");
        o.timeoutS = static_cast<int>(n);
      }
    }
  }
  if (o.plugin.empty() && !o.list) return invalidArgument("--plugin is required");
  return o;
}

std::string shellWord(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_-+=./,:@%") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string rerunCommand(const Options& o, const std::string& caseName) {
  std::string cmd = "plugsdk-conformance --plugin " + shellWord(o.plugin) + " --device " + std::to_string(o.device) +
                    " --seed " + std::to_string(o.seed) + " --filter " + shellWord(caseName);
  if (!o.expectationsFile.empty()) cmd += " --expectations " + shellWord(o.expectationsFile);
  if (o.timeoutS != Options().timeoutS) cmd += " --timeout " + std::to_string(o.timeoutS);
  return cmd;
}

}  // namespace plugsdk::conformance
