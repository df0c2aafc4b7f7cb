// plugsdk-conformance's command line (usage in kUsage and docs/conformance.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/support/status.h"

namespace plugsdk::conformance {

extern const char* const kUsage;

struct Options {
  std::string plugin, filter, reportDir, expectationsFile;
  std::vector<std::string> tiers;
  uint32_t device = 0;
  uint64_t seed = 20261122;
  int jobs = -1;  ///< -1: from the expectations file (else 1); 0: every case in this process
  int timeoutS = 120;
  bool list = false;
  bool verbose = false;  ///< a line for every case, not only those that did not pass
  bool worker = false;   ///< hidden: this process is a worker of a parent run (workers.h)
};

/// The options in argv[1..]; an error (the caller prints it with kUsage and exits 2) for an
/// unknown option, a missing or bad value, or no --plugin.
StatusOr<Options> parseOptions(const std::vector<std::string>& args);

/// The command that reruns `caseName` alone with the same seed, device and expectations.
std::string rerunCommand(const Options& o, const std::string& caseName);

/// `s` as one shell word (quoted only when it has to be).
std::string shellWord(const std::string& s);

}  // namespace plugsdk::conformance
