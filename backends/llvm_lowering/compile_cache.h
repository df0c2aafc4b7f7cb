// The compile cache: compiled kernels keyed by a SHA-256 over everything that decides their
// machine code (the kernel's encoding, the ISA and its LLVM features, the LLVM version, the
// code generator's version and the options). In memory per client; on disk (one file per
// key in the cache directory) across processes. A disk entry carries its key and a
// checksum of the object: a truncated, corrupt or stale file is detected, reported in the
// log and rewritten, never loaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cpu {

/// The hex SHA-256 of `parts` joined (each part length-prefixed, so that no two different
/// lists hash alike).
std::string hashParts(const std::vector<std::string>& parts);

/// Everything in a kernel's encoding that the code generator reads, as bytes (names
/// excluded: two kernels that differ only in names share machine code).
std::string kernelFingerprint(const sdk::KernelView& k);

class DiskCache {
 public:
  /// An empty dir disables the cache.
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  enum class Lookup { kMiss, kHit, kCorrupt };
  /// Reads the object stored for `key`; kCorrupt (with `why`) when a file is there but is
  /// not a valid entry for this key.
  Lookup get(const std::string& key, std::string* object, std::string* why) const;
  /// Stores an object (written to a temporary file and renamed, so that readers never see
  /// half a file). Errors are returned for the log only: a cache that cannot be written is
  /// not a compile failure.
  sdk::Status put(const std::string& key, const std::string& object) const;
  /// The file that holds `key`.
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
};

/// The default cache directory: $PLUGSDK_CACHE_DIR, else $XDG_CACHE_HOME/plugsdk/cpu, else
/// $HOME/.cache/plugsdk/cpu ("" when none of them is set).
std::string defaultCacheDir();

}  // namespace plugsdk::cpu
