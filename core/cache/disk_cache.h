// The persistent program cache: scheduled programs on disk, one file per key, so that a
// second process skips prim reduction and scheduling (the plugins keep their own caches of
// compiled kernels, e.g. the CPU backend's). An entry holds its full key and a checksum of
// its payload: a truncated, corrupt or stale file is reported and rewritten, never used.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/support/status.h"

namespace plugsdk::cache {

/// The cache key of `parts` (each length-prefixed, so no two different lists collide).
std::string joinKey(const std::vector<std::string>& parts);
/// 64-bit FNV-1a, as 16 hex digits: file names and payload checksums.
std::string hash64(const std::string& bytes);
/// What identifies this build of the core in a key: the file holding it (the CLI, the Python
/// extension), with its size and modification time, so that entries written by another
/// build are never read.
std::string coreBuildId();

class DiskCache {
 public:
  /// An empty dir disables the cache.
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
  /// $PLUGSDK_CACHE_DIR/core, else $XDG_CACHE_HOME/plugsdk/core, else ~/.cache/plugsdk/core;
  /// "" (disabled) when PLUGSDK_CACHE_DIR is "off" or no directory is known.
  static std::string defaultDir();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  enum class Lookup { kMiss, kHit, kCorrupt };
  /// The payload stored for `key`; kCorrupt (with `why`) when a file is there but is not a
  /// valid entry for this key.
  Lookup get(const std::string& key, std::string* payload, std::string* why) const;
  /// Stores a payload (a temporary file renamed into place: readers never see half a file).
  Status put(const std::string& key, const std::string& payload) const;
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
};

}  // namespace plugsdk::cache
