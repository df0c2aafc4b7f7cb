// PTX on disk across processes (see ptx_cache.h).
#include "backends/cuda/codegen/ptx_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>

namespace plugsdk::cuda {

namespace {

/// Bump when the PTX for an unchanged kernel changes in a way the build identity below would
/// not show (it does show every rebuild of the plugin).
constexpr char kCodegenVersion[] = "cuda-ptx 1";

/// The file this code was loaded from, by size and modification time: every rebuild of the
/// plugin (a changed lowering or wrapper) makes new keys, so a developer's cache never
/// serves PTX of an older build.
const std::string& buildIdentity() {
  static const std::string id = [] {
    Dl_info info{};
    struct stat st{};
    if (dladdr(reinterpret_cast<const void*>(&buildIdentity), &info) == 0 || !info.dli_fname ||
        stat(info.dli_fname, &st) != 0)
      return std::string("unknown build");
    return std::string(info.dli_fname) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtime);
  }();
  return id;
}

/// libdevice by path and size ("" when none is linked).
std::string libdeviceIdentity(const std::string& path) {
  struct stat st{};
  if (path.empty() || stat(path.c_str(), &st) != 0) return path;
  return path + " " + std::to_string(st.st_size);
}

void putString(std::string& s, const std::string& v) {
  s += std::to_string(v.size());
  s += '\n';
  s += v;
  s += '\n';
}

}  // namespace

std::string PtxCache::keyOf(const sdk::KernelView& k, const GpuArch& arch, const PtxOptions& options) {
  return lowering::hashParts({kCodegenVersion, buildIdentity(), llvmVersionString(), arch.name(),
                              std::to_string(options.optLevel), std::to_string(options.lanes),
                              std::to_string(options.minBlocksPerSm), options.fastExp ? "ex2" : "poly",
                              libdeviceIdentity(options.libdevice), lowering::kernelFingerprint(k)});
}

std::string serializePtx(const PtxKernel& p) {
  std::string s;
  const ThreadMapping& m = p.mapping;
  s += "mapping " + std::to_string(static_cast<int>(m.kind)) + " " + std::to_string(m.lanes) + " " +
       std::to_string(m.blockThreads) + " " + std::to_string(m.pointsPerBlock) + " " +
       std::to_string(m.minBlocksPerSm) + " " + std::to_string(m.splittable ? 1 : 0) + " " +
       std::to_string(p.splitStmt) + "\n";
  s += "checks " + std::to_string(p.checkMessages.size()) + "\n";
  for (const std::string& c : p.checkMessages) putString(s, c);
  s += "entry ";
  putString(s, p.entry);
  s += "ptx ";
  putString(s, p.ptx);
  return s;
}

sdk::StatusOr<PtxKernel> parsePtx(const std::string& payload, const sdk::KernelView& k) {
  std::istringstream in(payload);
  auto bad = [](const std::string& why) { return sdk::invalidArgument("malformed PTX cache entry: " + why); };
  auto readString = [&](std::string* out) {
    size_t n = 0;
    if (!(in >> n) || in.get() != '\n' || n > payload.size()) return false;
    out->resize(n);
    if (!in.read(out->data(), static_cast<std::streamsize>(n)) || in.get() != '\n') return false;
    return true;
  };
  PtxKernel p;
  std::string word;
  int kind = 0, splittable = 0;
  ThreadMapping& m = p.mapping;
  if (!(in >> word) || word != "mapping" ||
      !(in >> kind >> m.lanes >> m.blockThreads >> m.pointsPerBlock >> m.minBlocksPerSm >> splittable >> p.splitStmt))
    return bad("the thread mapping");
  if (kind < 0 || kind > static_cast<int>(ThreadMapping::Kind::kBlockPerPoint)) return bad("mapping kind");
  m.kind = static_cast<ThreadMapping::Kind>(kind);
  m.splittable = splittable != 0;
  if (m.splittable) {
    if (p.splitStmt < 0 || static_cast<size_t>(p.splitStmt) >= k.numStmts()) return bad("the split loop");
    const plugsdk_stmt_t& loop = k.stmt(static_cast<size_t>(p.splitStmt));
    if (loop.kind != PLUGSDK_STMT_LOOP || loop.num_loop_sizes == 0) return bad("the split loop is not a loop");
    m.splitDim = loop.loop_sizes[loop.num_loop_sizes - 1];
  }
  size_t checks = 0;
  if (!(in >> word) || word != "checks" || !(in >> checks) || in.get() != '\n' || checks > k.numStmts())
    return bad("the check messages");
  p.checkMessages.resize(checks);
  for (std::string& c : p.checkMessages)
    if (!readString(&c)) return bad("a check message");
  if (!(in >> word) || word != "entry" || in.get() != ' ' || !readString(&p.entry) || p.entry.empty())
    return bad("the entry name");
  if (!(in >> word) || word != "ptx" || in.get() != ' ' || !readString(&p.ptx) ||
      p.ptx.find(".entry " + p.entry) == std::string::npos)
    return bad("the PTX (no .entry " + p.entry + ")");
  return p;
}

sdk::StatusOr<PtxKernel> PtxCache::get(const sdk::KernelView& k, const GpuArch& arch, const PtxOptions& options,
                                       std::string* log) {
  const std::string key = keyOf(k, arch, options);
  const std::string entry = "plugsdk_" + key.substr(0, 16);
  const bool cached = disk_.enabled() && !options.breakIr;
  std::string note;
  if (cached) {
    std::string payload, why;
    const lowering::DiskCache::Lookup l = disk_.get(key, &payload, &why);
    if (l == lowering::DiskCache::Lookup::kHit) {
      sdk::StatusOr<PtxKernel> p = parsePtx(payload, k);
      if (p.isOk() && p->entry == entry) {
        ++hits_;
        if (log) *log = "PTX from the disk cache (" + disk_.path(key) + ")";
        return p;
      }
      why = p.isOk() ? "its entry is named " + p->entry + ", not " + entry : p.status().message();
    }
    if (l != lowering::DiskCache::Lookup::kMiss || !why.empty()) {
      ++rejected_;
      note = "; cache entry " + disk_.path(key) + " rejected (" + why + "), rewritten";
    }
  }
  sdk::StatusOr<PtxKernel> p = compileToPtx(k, arch, entry, options);
  if (!p.isOk()) return p.status();
  ++compiled_;
  if (cached) {
    sdk::Status st = disk_.put(key, serializePtx(*p));
    if (!st.isOk()) note += "; not cached: " + st.message();
  }
  if (log) *log = "PTX compiled" + note;
  return p;
}

}  // namespace plugsdk::cuda
