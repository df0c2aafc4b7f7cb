// The compile cache of the LLVM-based plugins: compiled kernels (the cpu plugin's objects,
// the cuda plugin's PTX) keyed by a SHA-256 over everything that decides their code (the
// kernel's encoding, the target, the LLVM version, the code generator's version and the
// options), on disk (one file per key in the cache directory) across processes. A disk entry
// carries its key and a checksum of the payload: a truncated, corrupt or stale file is
// detected, reported in the log and rewritten, never loaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::lowering {

/// The hex SHA-256 of `parts` joined (each part length-prefixed, so that no two different
/// lists hash alike).
std::string hashParts(const std::vector<std::string>& parts);

/// Everything in a kernel's encoding that the code generator reads, as bytes (names
/// excluded: two kernels that differ only in names share machine code).
std::string kernelFingerprint(const sdk::KernelView& k);

class DiskCache {
 public:
  /// An empty dir disables the cache. `kind` names the payload in each file's header
  /// ("CPU-OBJECT"), `suffix` ends the file names (".kobj").
  DiskCache(std::string dir, std::string kind, std::string suffix)
      : dir_(std::move(dir)), magic_("PLUGSDK-" + std::move(kind) + " 1\n"), suffix_(std::move(suffix)) {}
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  enum class Lookup { kMiss, kHit, kCorrupt };
  /// Reads the payload stored for `key`; kCorrupt (with `why`) when a file is there but is
  /// not a valid entry for this key.
  Lookup get(const std::string& key, std::string* object, std::string* why) const;
  /// Stores a payload (written to a temporary file and renamed, so that readers never see
  /// half a file). Errors are returned for the log only: a cache that cannot be written is
  /// not a compile failure.
  sdk::Status put(const std::string& key, const std::string& object) const;
  /// The file that holds `key`.
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
  std::string magic_;
  std::string suffix_;
};

/// The default cache directory of plugin `name`: $PLUGSDK_CACHE_DIR/name, else
/// $XDG_CACHE_HOME/plugsdk/name, else $HOME/.cache/plugsdk/name ("" when none is set or
/// PLUGSDK_CACHE_DIR is "off": no cache).
std::string defaultCacheDir(const std::string& name);

}  // namespace plugsdk::lowering
