// PTX on disk across processes: a kernel's PTX and launch facts (thread mapping, check
// messages) stored under a key over everything that decides them -- the kernel's encoding
// (names excluded), the GPU architecture, the LLVM version, this code generator's version
// and build, the options, the libdevice linked -- in the LLVM plugins' compile cache
// (backends/llvm_lowering/compile_cache.h: key and checksum in every file; a corrupt,
// truncated or stale entry is logged, recompiled and rewritten). A hit skips the lowering,
// LLVM's O3 pipeline and the NVPTX backend; the driver's JIT keeps its own cache of the
// PTX -> SASS step. The entry is named from the key ("plugsdk_" + 16 hex digits), so a
// kernel has one name in every process (profiles and dumps compare across runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "backends/cuda/codegen/nvptx.h"
#include "backends/llvm_lowering/compile_cache.h"

namespace plugsdk::cuda {

struct PtxCacheStats {
  uint64_t hits = 0, compiled = 0, rejected = 0;
};

class PtxCache {
 public:
  /// `dir` "": no disk cache (every kernel compiled).
  explicit PtxCache(std::string dir) : disk_(std::move(dir), "CUDA-PTX", ".ptxk") {}

  /// The key of `k` compiled for `arch` with `options`.
  static std::string keyOf(const sdk::KernelView& k, const GpuArch& arch, const PtxOptions& options);

  /// `k` as PTX for `arch`: read back when a valid entry for its key is on disk, else
  /// compiled (compileToPtx) and stored. `log` gets one line: where the PTX came from, and a
  /// rejected entry's reason or a failed write when there was one.
  sdk::StatusOr<PtxKernel> get(const sdk::KernelView& k, const GpuArch& arch, const PtxOptions& options,
                               std::string* log);

  const lowering::DiskCache& disk() const { return disk_; }
  PtxCacheStats stats() const { return PtxCacheStats{hits_.load(), compiled_.load(), rejected_.load()}; }

 private:
  lowering::DiskCache disk_;
  std::atomic<uint64_t> hits_{0}, compiled_{0}, rejected_{0};
};

/// The entry serialized and read back (the cache's payload; exposed for tests). parse
/// checks every field against `k` and fails with a reason on anything malformed.
std::string serializePtx(const PtxKernel& p);
sdk::StatusOr<PtxKernel> parsePtx(const std::string& payload, const sdk::KernelView& k);

}  // namespace plugsdk::cuda
