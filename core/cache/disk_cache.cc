#include "core/cache/disk_cache.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace plugsdk::cache {
namespace {

constexpr const char* kMagic = "plugsdk-core-cache 1\n";

bool makeDirs(const std::string& dir) {
  std::string cur;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    if (i < dir.size()) cur += dir[i];
  }
  return true;
}

std::string lengthPrefixed(const std::string& s) { return std::to_string(s.size()) + ":" + s; }

/// Reads "<n>:<bytes>" at `pos`; false when malformed or truncated.
bool readField(const std::string& in, size_t& pos, std::string* out) {
  size_t colon = in.find(':', pos);
  if (colon == std::string::npos || colon == pos || colon - pos > 12) return false;
  size_t n = 0;
  for (size_t i = pos; i < colon; ++i) {
    if (in[i] < '0' || in[i] > '9') return false;
    n = n * 10 + static_cast<size_t>(in[i] - '0');
  }
  if (colon + 1 + n > in.size()) return false;
  *out = in.substr(colon + 1, n);
  pos = colon + 1 + n;
  return true;
}

}  // namespace

std::string joinKey(const std::vector<std::string>& parts) {
  std::string k;
  for (const std::string& p : parts) k += lengthPrefixed(p);
  return k;
}

std::string hash64(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string coreBuildId() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&coreBuildId), &info) == 0 || info.dli_fname == nullptr)
    return std::string("unknown build ") + __DATE__ + " " + __TIME__;
  struct stat st{};
  std::string file = info.dli_fname;
  if (::stat(file.c_str(), &st) != 0) return file;
  return file + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string DiskCache::defaultDir() {
  if (const char* d = std::getenv("PLUGSDK_CACHE_DIR"); d && *d)
    return std::string(d) == "off" ? "" : std::string(d) + "/core";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/plugsdk/core";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/plugsdk/core";
  return "";
}

std::string DiskCache::path(const std::string& key) const { return dir_ + "/" + hash64(key) + ".program"; }

DiskCache::Lookup DiskCache::get(const std::string& key, std::string* payload, std::string* why) const {
  if (!enabled()) return Lookup::kMiss;
  std::ifstream f(path(key), std::ios::binary);
  if (!f) return Lookup::kMiss;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string in = ss.str();
  auto corrupt = [&](const std::string& w) {
    if (why) *why = path(key) + ": " + w;
    return Lookup::kCorrupt;
  };
  if (in.compare(0, std::string(kMagic).size(), kMagic) != 0) return corrupt("not a plugsdk cache entry");
  size_t pos = std::string(kMagic).size();
  std::string storedKey, checksum, body;
  if (!readField(in, pos, &storedKey) || !readField(in, pos, &checksum) || !readField(in, pos, &body) ||
      pos != in.size())
    return corrupt("truncated or malformed entry");
  if (storedKey != key) return corrupt("written for another key (a hash collision or a stale file)");
  if (checksum != hash64(body)) return corrupt("the payload's checksum does not match");
  *payload = std::move(body);
  return Lookup::kHit;
}

Status DiskCache::put(const std::string& key, const std::string& payload) const {
  if (!enabled()) return Status::ok();
  if (!makeDirs(dir_)) return internalError("cannot create the cache directory " + dir_);
  const std::string final = path(key);
  const std::string tmp = final + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return internalError("cannot write " + tmp);
    f << kMagic << lengthPrefixed(key) << lengthPrefixed(hash64(payload)) << lengthPrefixed(payload);
    if (!f) return internalError("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), final.c_str()) != 0) {
    std::remove(tmp.c_str());
    return internalError("cannot rename " + tmp + " to " + final);
  }
  return Status::ok();
}

}  // namespace plugsdk::cache
