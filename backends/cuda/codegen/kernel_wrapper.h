// The kernel function the driver launches, around the lowering's entry (frame.h): its
// parameters are the kernel's argument pointers, its symbols' values, the grid's extents
// (evaluated at launch) and the status word; each thread builds the CallFrame in registers
// and runs its grid points through the entry, which is inlined.
//
// Thread mappings (ThreadMapping, chosen from the lowering's vector mode):
//  - kPointPerThread (scalar kernels): one grid point per thread.
//  - kLanesPerThread (grid mode: pointwise, column reductions): `lanes` consecutive inner
//    points per thread, contiguous ones as one vector access (128 bits for f32), threads
//    numbered over outer x ceil(inner / lanes) so that a warp's accesses coalesce.
//  - kBlockPerPoint (loop mode: row reductions): one block per grid point, the block's
//    threads sharing each loop (block_group.h).
// The entry is lowered twice: once assuming what the launch usually has (argument pointers
// 16-byte aligned, symbols multiples of 4, so contiguous vector accesses are aligned and
// become ld/st.v4), once assuming nothing; the kernel tests which holds (a uniform branch)
// and runs that copy. A kernel heavy with math (nvptx.cc) is lowered once, one lane a thread:
// it is bound by arithmetic, and 4 lanes x 2 copies of it would only cost compile time.
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cuda {

constexpr unsigned kBlockThreads = 256;
/// What the aligned copy of the entry assumes.
constexpr uint32_t kAssumedArgAlign = 16;
constexpr int64_t kAssumedSymbolDivisor = 4;

struct ThreadMapping {
  enum class Kind { kPointPerThread, kLanesPerThread, kBlockPerPoint } kind = Kind::kPointPerThread;
  uint32_t lanes = 1;  ///< kLanesPerThread: inner points per thread
  uint32_t blockThreads = kBlockThreads;
  /// kBlockPerPoint: points per block, one per warp when > 1 (short loops: a warp's
  /// shuffles combine them, several rows share a block).
  uint32_t pointsPerBlock = 1;
  /// Blocks that should fit on one multiprocessor at once (0: ptxas decides): bounds the
  /// registers per thread (8 blocks of 256 threads: 32), for occupancy.
  uint32_t minBlocksPerSm = 0;
  /// kBlockPerPoint: the launch may split each point's loop over several blocks (grid y;
  /// block_group.h); the loop's last dim, whose chunks of `lanes` are split.
  bool splittable = false;
  plugsdk_index_expr_t splitDim{};
};
const char* mappingName(ThreadMapping::Kind k);

/// Adds kernel `name` to `m`, calling `alignedEntry` when the launch meets its assumptions and
/// `entry` otherwise (both become internal and always inlined); `alignedEntry` "": only `entry`.
/// The entries walk the last `innerDims` grid dims as their inner range (the lowering's
/// LoweredKernel::innerGridDims); grid extents that are constants are used as constants.
void addKernelWrapper(llvm::Module& m, const sdk::KernelView& k, const std::string& entry,
                      const std::string& alignedEntry, const std::string& name, const ThreadMapping& mapping,
                      size_t innerDims = 1);

}  // namespace plugsdk::cuda
