// The worker processes: see workers.h for the model and the protocol.
#include "conformance/runner/workers.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

namespace plugsdk::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kResultFd = 3;                          // the worker's end of the result pipe
constexpr int kMaxStartFailures = 3;                  // workers in a row that may fail to start before the run gives up
constexpr auto kExitGrace = std::chrono::seconds(5);  // a worker told to stop gets this long

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> out;
  for (size_t s = 0;;) {
    const size_t e = line.find('\t', s);
    out.push_back(unescapeField(line.substr(s, e == std::string::npos ? std::string::npos : e - s)));
    if (e == std::string::npos) return out;
    s = e + 1;
  }
}

std::string join(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "\t" : "") + escapeField(fields[i]);
  return out + "\n";
}

bool writeAll(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string encodeHello(const DeviceInfo& d) {
  const plugin::DeviceCaps& k = d.caps;
  const unsigned flags = (k.fusesHorizontal ? 1u : 0u) | (k.fusesReductionEpilogue ? 2u : 0u) |
                         (k.fusesMultiReduction ? 4u : 0u) | (k.takesSubgraphs ? 8u : 0u);
  return join({"hello", d.pluginPath, d.pluginName, std::to_string(d.abiMajor), std::to_string(d.abiMinor),
               std::to_string(d.index), d.describe, k.name, std::to_string(k.dtypes), std::to_string(k.vectorBits),
               std::to_string(k.memoryKinds), std::to_string(k.memoryBytes), std::to_string(k.maxBufferBytes),
               std::to_string(k.libraryOps), std::to_string(k.epilogueOps), std::to_string(k.maxKernelStmts),
               std::to_string(flags)});
}

StatusOr<DeviceInfo> decodeHello(const std::vector<std::string>& f) {
  if (f.size() != 17) return internalError("a worker sent a malformed hello (" + std::to_string(f.size()) + " fields)");
  try {
    DeviceInfo d;
    auto u32 = [&](size_t i) { return static_cast<uint32_t>(std::stoul(f[i])); };
    d.pluginPath = f[1];
    d.pluginName = f[2];
    d.abiMajor = u32(3);
    d.abiMinor = u32(4);
    d.index = u32(5);
    d.describe = f[6];
    plugin::DeviceCaps& k = d.caps;
    k.name = f[7];
    k.dtypes = u32(8);
    k.vectorBits = u32(9);
    k.memoryKinds = u32(10);
    k.memoryBytes = std::stoull(f[11]);
    k.maxBufferBytes = std::stoull(f[12]);
    k.libraryOps = u32(13);
    k.epilogueOps = u32(14);
    k.maxKernelStmts = u32(15);
    const uint32_t flags = u32(16);
    k.fusesHorizontal = flags & 1u;
    k.fusesReductionEpilogue = flags & 2u;
    k.fusesMultiReduction = flags & 4u;
    k.takesSubgraphs = flags & 8u;
    return d;
  } catch (const std::exception&) {
    return internalError("a worker sent a malformed hello");
  }
}

/// "SIGSEGV (signal 11)" or "exited with status 3", from a waitpid status.
std::string deathCause(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return std::string(abbrev ? "SIG" + std::string(abbrev) : "signal") + " (signal " + std::to_string(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped (wait status " + std::to_string(status) + ")";
}

Outcome decodeResult(const std::vector<std::string>& f) {
  if (f.size() != 6 || f[1].size() != 1) return Outcome::fail("the worker sent a malformed result");
  Outcome o = f[1] == "p" ? Outcome::pass() : f[1] == "s" ? Outcome::skip(f[5]) : Outcome::fail(f[5]);
  // strtod, not stod: stod throws on a denormal (ERANGE), and an error bound may be one.
  char *end2 = nullptr, *end3 = nullptr;
  o.maxError = std::strtod(f[2].c_str(), &end2);
  o.bound = std::strtod(f[3].c_str(), &end3);
  if (f[2].empty() || f[3].empty() || *end2 || *end3) return Outcome::fail("the worker sent a malformed result");
  if (o.kind == Outcome::Kind::kPass) o.detail = f[5];
  return o;
}

}  // namespace

uint64_t caseSeed(uint64_t seed, const std::string& name) {
  uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ull;
  return h;
}

std::string escapeField(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string unescapeField(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char n = s[++i];
    out += n == 't' ? '\t' : n == 'n' ? '\n' : n == 'r' ? '\r' : n;
  }
  return out;
}

Outcome runCaseHere(const Case& c, const plugin::Device& device, uint64_t runSeed, uint32_t dtypes, double* ms) {
  const auto t0 = Clock::now();
  Outcome out;
  try {
    out = c.run(CaseContext{device, caseSeed(runSeed, c.name), dtypes});
  } catch (const std::exception& e) {
    out = Outcome::fail(std::string("the case threw: ") + e.what());
  }
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out;
}

DeviceInfo describeDevice(const plugin::Plugin& p, const plugin::Device& d) {
  return {p.path(), p.name(), p.abiMajor(), p.abiMinor(), d.index(), d.describe(), d.caps()};
}

int workerMain(const std::string& pluginName, uint32_t device, uint64_t seed) {
  auto send = [](const std::string& line) {
    if (!writeAll(kResultFd, line)) std::_Exit(0);  // the parent is gone: nothing left to do
  };
  auto p = plugin::Loader(plugin::Loader::defaultSearchPath()).load(pluginName);
  if (!p.isOk()) return send(join({"error", p.status().message()})), 1;
  auto d = plugin::Device::open(*p, device);
  if (!d.isOk()) return send(join({"error", d.status().message()})), 1;
  send(encodeHello(describeDevice(**p, **d)));
  const Suite suite = makeSuite();
  std::map<std::string, const Case*> byName;
  for (const Case& c : suite.cases()) byName[c.name] = &c;
  for (std::string line; std::getline(std::cin, line);) {
    const std::vector<std::string> f = splitTabs(line);
    if (f.size() != 3 || f[0] != "run") return send(join({"error", "unknown command: " + line})), 1;
    const auto it = byName.find(f[2]);
    double ms = 0;
    const Outcome o = it == byName.end()
                          ? Outcome::fail("this runner has no case named " + f[2])
                          : runCaseHere(*it->second, **d, seed, static_cast<uint32_t>(std::stoul(f[1])), &ms);
    const char* kind = o.kind == Outcome::Kind::kPass ? "p" : o.kind == Outcome::Kind::kSkip ? "s" : "f";
    send(join({"result", kind, number(o.maxError), number(o.bound), number(ms), o.detail}));
  }
  return 0;
}

struct WorkerPool::Worker {
  pid_t pid = -1;
  int in = -1;   ///< commands to the worker (its stdin)
  int out = -1;  ///< results from the worker (its fd 3)
  std::string buffer;
  bool ready = false;  ///< its hello arrived
  bool eof = false;
  long task = -1;           ///< index of the case it runs, -1 when idle
  Clock::time_point since;  ///< when it was started, or given its case
  std::string error;        ///< an error it sent while starting

  /// Reads what is there; false at end of file.
  bool pump() {
    char buf[4096];
    const ssize_t n = ::read(out, buf, sizeof buf);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return !(eof = true);
    buffer.append(buf, static_cast<size_t>(n));
    return true;
  }
  std::optional<std::vector<std::string>> nextMessage() {
    const size_t nl = buffer.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::vector<std::string> f = splitTabs(buffer.substr(0, nl));
    buffer.erase(0, nl + 1);
    return f;
  }
  /// Kills it (when `kill`) and waits for it: how it ended.
  std::string reap(bool kill) {
    if (kill) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close();
    pid = -1;
    return deathCause(status);
  }
  void close() {
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    in = out = -1;
  }
};

WorkerPool::WorkerPool(std::vector<std::string> workerArgs, int timeoutS)
    : args_(std::move(workerArgs)), timeoutS_(timeoutS) {}

WorkerPool::~WorkerPool() { stopAll(); }

std::unique_ptr<WorkerPool::Worker> WorkerPool::spawn() {
  int cmd[2], res[2];
  if (::pipe2(cmd, O_CLOEXEC) != 0) return nullptr;
  if (::pipe2(res, O_CLOEXEC) != 0) {
    ::close(cmd[0]), ::close(cmd[1]);
    return nullptr;
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = args_;
  args.insert(args.begin(), "plugsdk-conformance");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent that dies takes its workers along
    ::signal(SIGPIPE, SIG_DFL);          // the parent ignores it; exec would keep that
    ::dup2(cmd[0], 0);
    if (res[1] == kResultFd)
      ::fcntl(kResultFd, F_SETFD, 0);  // dup2 onto itself would leave close-on-exec set
    else
      ::dup2(res[1], kResultFd);
    ::dup2(2, 1);  // what the plugin prints goes to stderr, never into the parent's stdout
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(cmd[0]);
  ::close(res[1]);
  if (pid < 0) {
    ::close(cmd[1]), ::close(res[0]);
    return nullptr;
  }
  auto w = std::make_unique<Worker>();
  w->pid = pid;
  w->in = cmd[1];
  w->out = res[0];
  w->since = Clock::now();
  return w;
}

StatusOr<DeviceInfo> WorkerPool::start() {
  std::unique_ptr<Worker> w = spawn();
  if (!w) return internalError(std::string("cannot start a worker process: ") + std::strerror(errno));
  const auto deadline = w->since + std::chrono::seconds(timeoutS_);
  for (;;) {
    while (auto m = w->nextMessage()) {
      if ((*m)[0] == "hello") {
        ASSIGN_OR_RETURN(DeviceInfo d, decodeHello(*m));
        w->ready = true;
        workers_.push_back(std::move(w));
        return d;
      }
      if ((*m)[0] == "error" && m->size() == 2) {
        w->reap(true);
        return failedPrecondition((*m)[1]);
      }
    }
    if (w->eof) return internalError("the worker exited before it opened the device: " + w->reap(false));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      w->reap(true);
      return unavailable("the worker did not open the device within " + std::to_string(timeoutS_) + " s");
    }
    pollfd p{w->out, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) > 0) w->pump();
  }
}

void WorkerPool::run(const std::vector<const Case*>& cases, int jobs, uint32_t dtypes, const OnResult& onResult) {
  const size_t n = cases.size();
  const size_t maxWorkers = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(jobs, 1)), n));
  const auto timeout = std::chrono::seconds(timeoutS_);
  size_t next = 0, done = 0;
  int startFailures = 0;
  std::string startError;
  auto finish = [&](Worker& w, const Outcome& o, double ms) {
    const auto index = static_cast<size_t>(w.task);
    w.task = -1;
    ++done;
    onResult(index, o, ms);
  };
  while (done < n) {
    // As many workers as there are jobs, but no more than there is unassigned work for.
    size_t free = 0;
    for (const auto& w : workers_) free += w->task < 0;
    while (workers_.size() < maxWorkers && free < n - next && startFailures < kMaxStartFailures) {
      std::unique_ptr<Worker> w = spawn();
      if (!w) {
        ++startFailures, startError = std::string("cannot start a worker process: ") + std::strerror(errno);
        continue;
      }
      workers_.push_back(std::move(w));
      ++free;
    }
    if (workers_.empty()) {  // none can start: the rest fail with the reason, the run still ends
      for (; next < n; ++next, ++done) onResult(next, Outcome::fail("no worker could start: " + startError), 0);
      break;
    }
    for (auto& w : workers_)
      if (w->ready && w->task < 0 && next < n) {
        w->task = static_cast<long>(next);
        w->since = Clock::now();
        if (!writeAll(w->in, join({"run", std::to_string(dtypes), cases[next]->name}))) w->eof = true;
        ++next;
      }
    // Wait for a message, an exit, or the nearest deadline.
    std::vector<pollfd> fds;
    auto wait = std::chrono::milliseconds(60000);
    for (const auto& w : workers_) {
      fds.push_back({w->out, POLLIN, 0});
      if (w->task >= 0 || !w->ready)
        wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(w->since + timeout - Clock::now()));
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0) + 1)) > 0)
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents) workers_[i]->pump();
    for (auto it = workers_.begin(); it != workers_.end();) {
      Worker& w = **it;
      while (auto m = w.nextMessage()) {
        const std::string& kind = (*m)[0];
        if (kind == "hello") {
          w.ready = true;
          startFailures = 0;  // the limit is on failures in a row
        } else if (kind == "error" && m->size() == 2) {
          w.error = (*m)[1];
        } else if (kind == "result" && w.task >= 0) {
          const double ms = m->size() == 6 ? std::strtod((*m)[4].c_str(), nullptr) : 0;
          finish(w, decodeResult(*m), ms);
        }
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - w.since).count();
      const bool late = (w.task >= 0 || !w.ready) && elapsed >= timeoutS_;
      if (!w.eof && !late) {
        ++it;
        continue;
      }
      // The worker is gone (it died, or it is killed now for taking too long): its case
      // fails with the cause; one that never started counts towards giving up. Killed in
      // both cases: a worker whose pipe closed but that lives on must not block the wait
      // (a dead one keeps the status it died with).
      const std::string cause = w.reap(true);
      const std::string why = late ? "timed out after " + std::to_string(timeoutS_) + " s" : "crashed: " + cause;
      if (w.task >= 0) {
        finish(w, Outcome::fail(why), elapsed * 1e3);
      } else if (!w.ready) {
        ++startFailures;
        startError = !w.error.empty() ? w.error
                     : late           ? "the worker did not open the device within " + std::to_string(timeoutS_) + " s"
                                      : "the worker exited before it opened the device: " + cause;
      }
      it = workers_.erase(it);  // replaced at the top of the loop while work is left
    }
  }
  stopAll();
}

void WorkerPool::stopAll() {
  for (auto& w : workers_)
    if (w->in >= 0) ::close(w->in), w->in = -1;  // end of input: the worker exits by itself
  const auto deadline = Clock::now() + kExitGrace;
  for (auto& w : workers_) {
    int status = 0;
    while (::waitpid(w->pid, &status, WNOHANG) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (::waitpid(w->pid, &status, WNOHANG) == 0) w->reap(true);
    w->close();
  }
  workers_.clear();
}

}  // namespace plugsdk::conformance
