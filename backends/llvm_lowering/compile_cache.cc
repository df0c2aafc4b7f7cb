// The LLVM-based plugins' compile cache (see compile_cache.h).
#include "backends/llvm_lowering/compile_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

namespace plugsdk::lowering {

namespace {

std::string hex(llvm::ArrayRef<uint8_t> bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

std::string sha256(std::string_view data) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(data.data(), data.size()));
  std::array<uint8_t, 32> out = h.final();
  return hex(out);
}

template <typename T>
void put(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

void putExpr(std::string& s, const sdk::KernelView& k, plugsdk_index_expr_t e) {
  put(s, e.count);
  for (const plugsdk_index_insn_t& in : k.program(e)) {
    put(s, in.op);
    put(s, in.operand);
  }
}

sdk::Status mkdirs(const std::string& dir) {
  std::string cur;
  std::stringstream ss(dir);
  std::string part;
  if (!dir.empty() && dir[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return sdk::unavailable("cannot create cache directory " + cur + ": " + std::strerror(errno));
  }
  return sdk::Status::ok();
}

}  // namespace

std::string hashParts(const std::vector<std::string>& parts) {
  std::string all;
  for (const std::string& p : parts) {
    put(all, static_cast<uint64_t>(p.size()));
    all += p;
  }
  return sha256(all);
}

std::string kernelFingerprint(const sdk::KernelView& k) {
  std::string s;
  put(s, static_cast<uint64_t>(k.numArgs()));
  for (size_t i = 0; i < k.numArgs(); ++i) {
    put(s, k.arg(i).dtype);
    put(s, k.arg(i).access);
  }
  put(s, static_cast<uint64_t>(k.numGrid()));
  for (size_t d = 0; d < k.numGrid(); ++d) putExpr(s, k, k.grid(d));
  put(s, static_cast<uint64_t>(k.numSymbols()));
  put(s, k.numValues());
  put(s, static_cast<uint64_t>(k.numStmts()));
  for (size_t i = 0; i < k.numStmts(); ++i) {
    const plugsdk_stmt_t& t = k.stmt(i);
    put(s, t.kind);
    put(s, t.dtype);
    put(s, t.result);
    put(s, t.arg);
    put(s, t.op);
    put(s, t.num_operands);
    for (uint32_t o = 0; o < t.num_operands && o < 3; ++o) put(s, t.operands[o]);
    put(s, t.body_count);
    if (t.kind == PLUGSDK_STMT_LOAD || t.kind == PLUGSDK_STMT_STORE || t.kind == PLUGSDK_STMT_INDEX ||
        t.kind == PLUGSDK_STMT_RAND)
      putExpr(s, k, t.index);
    put(s, t.num_loop_sizes);
    for (uint32_t d = 0; d < t.num_loop_sizes; ++d) putExpr(s, k, t.loop_sizes[d]);
    put(s, t.fvalue);
    put(s, t.ivalue);
  }
  return s;
}

std::string DiskCache::path(const std::string& key) const { return dir_ + "/" + key + suffix_; }

DiskCache::Lookup DiskCache::get(const std::string& key, std::string* object, std::string* why) const {
  std::ifstream f(path(key), std::ios::binary);
  if (!f) return Lookup::kMiss;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  // Layout: magic, key (64 hex) '\n', checksum (64 hex) '\n', size (decimal) '\n', object.
  const size_t m = magic_.size();
  if (data.compare(0, m, magic_) != 0) {
    *why = "not a plugsdk cache entry (bad header)";
    return Lookup::kCorrupt;
  }
  std::istringstream in(data.substr(m, 64 + 1 + 64 + 1 + 24));
  std::string fileKey, sum, sizeText;
  std::getline(in, fileKey);
  std::getline(in, sum);
  std::getline(in, sizeText);
  if (fileKey != key) {
    *why = "stale: written for key " + fileKey.substr(0, 16) + "...";
    return Lookup::kCorrupt;
  }
  const size_t headerLen = m + fileKey.size() + 1 + sum.size() + 1 + sizeText.size() + 1;
  char* end = nullptr;
  const unsigned long long size = std::strtoull(sizeText.c_str(), &end, 10);
  if (sizeText.empty() || *end != '\0' || data.size() < headerLen || data.size() - headerLen != size) {
    *why = "truncated: the object is " + std::to_string(data.size() >= headerLen ? data.size() - headerLen : 0) +
           " bytes, the header says " + sizeText;
    return Lookup::kCorrupt;
  }
  std::string obj = data.substr(headerLen);
  if (sha256(obj) != sum) {
    *why = "corrupt: the object's checksum does not match";
    return Lookup::kCorrupt;
  }
  *object = std::move(obj);
  return Lookup::kHit;
}

sdk::Status DiskCache::put(const std::string& key, const std::string& object) const {
  sdk::Status st = mkdirs(dir_);
  if (!st.isOk()) return st;
  const std::string final = path(key);
  // Unique per writer (processes and threads may store one key at once; the last rename wins).
  const std::string tmp = final + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return sdk::unavailable("cannot write cache file " + tmp + ": " + std::strerror(errno));
    f << magic_ << key << '\n' << sha256(object) << '\n' << object.size() << '\n';
    f.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!f) return sdk::unavailable("cannot write cache file " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), final.c_str()) != 0) {
    std::remove(tmp.c_str());
    return sdk::unavailable("cannot rename " + tmp + " to " + final + ": " + std::strerror(errno));
  }
  return sdk::Status::ok();
}

std::string defaultCacheDir(const std::string& name) {
  if (const char* d = std::getenv("PLUGSDK_CACHE_DIR"); d && *d)
    return std::string(d) == "off" ? "" : std::string(d) + "/" + name;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/plugsdk/" + name;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/plugsdk/" + name;
  return "";
}

}  // namespace plugsdk::lowering
