// The runner's process model. Cases run in worker processes, so that a kernel that hangs or
// crashes fails its case, not the run. The parent starts each worker by re-executing itself
// (fork + exec of /proc/self/exe --worker): a device runtime initialised before a bare fork
// does not survive it, so every worker loads the plugin and opens the device itself, once.
// The parent never loads the plugin: the first worker's hello tells it what the device is.
//
// Protocol (one line per message, fields separated by tabs, `\`, tab and newline escaped):
//   parent -> worker, on the worker's stdin:  run <TAB> DTYPE-BITS <TAB> CASE-NAME
//   worker -> parent, on the worker's fd 3:   hello <TAB> device fields (see encodeHello)
//                                             error <TAB> message        (could not start)
//                                             result <TAB> p|f|s <TAB> max-error <TAB> bound <TAB> ms <TAB> detail
// The worker's stdout goes to the parent's stderr, so nothing a plugin prints can corrupt
// either the protocol or the parent's progress lines. A worker exits when its stdin closes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conformance/runner/report.h"
#include "conformance/runner/suite.h"
#include "core/plugin/loader.h"

namespace plugsdk::conformance {

/// A per-case seed from the run's seed and the case's name (stable across runs, filters and
/// worker counts, so a case reruns identically alone).
uint64_t caseSeed(uint64_t seed, const std::string& name);

/// Runs one case in this process: its seed, its time, an exception turned into a failure.
Outcome runCaseHere(const Case& c, const plugin::Device& device, uint64_t runSeed, uint32_t dtypes, double* ms);

/// What the report needs to know about a loaded plugin's device.
DeviceInfo describeDevice(const plugin::Plugin& p, const plugin::Device& d);

/// The process body of `plugsdk-conformance --worker --plugin P --device N --seed S`.
int workerMain(const std::string& plugin, uint32_t device, uint64_t seed);

/// Backslash, tab, newline and carriage return escaped, so a field is one tab-free line.
std::string escapeField(const std::string& s);
std::string unescapeField(const std::string& s);

/// The worker processes of one run.
class WorkerPool {
 public:
  /// `workerArgs`: the arguments after the executable (--worker --plugin ...).
  WorkerPool(std::vector<std::string> workerArgs, int timeoutS);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Starts the first worker and waits for its hello: the device it opened, or why it could not.
  StatusOr<DeviceInfo> start();

  /// Called as each case finishes, with its index in `cases`, in completion order.
  using OnResult = std::function<void(size_t index, const Outcome& outcome, double ms)>;

  /// Runs `cases` on up to `jobs` workers (the one from start() among them), starting more as
  /// needed. A case past the timeout has its worker killed and fails "timed out after N s";
  /// a worker that dies fails its case with the cause ("crashed: SIGSEGV (signal 11)"); either
  /// way the worker is replaced and the run goes on. Returns when every case has a result.
  void run(const std::vector<const Case*>& cases, int jobs, uint32_t dtypes, const OnResult& onResult);

 private:
  struct Worker;
  std::unique_ptr<Worker> spawn();
  void stopAll();

  std::vector<std::string> args_;
  int timeoutS_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace plugsdk::conformance
