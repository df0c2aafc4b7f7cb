// Compiling one kernel: the compile cache (memory, then disk), else the stages
// kernel IR -> LLVM IR (codegen/) -> optimized LLVM IR -> object (jit.h), with each stage
// written to the dump directory when one is set, and the failing IR kept there when a
// stage fails. What a launch needs afterwards is copied out of the borrowed kernel.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/jit.h"
#include "backends/llvm_lowering/compile_cache.h"
#include "backends/llvm_lowering/frame.h"
#include "backends/llvm_lowering/lowering.h"

namespace plugsdk::cpu {

using lowering::DiskCache;
using lowering::hashParts;
using lowering::kernelFingerprint;

/// A compiled kernel, ready to launch.
struct CompiledKernel {
  std::string name;
  std::shared_ptr<LoadedObject> code;  ///< shared with the memory cache
  lowering::KernelEntry entry = nullptr;
  lowering::VectorMode mode = lowering::VectorMode::kScalar;
  uint32_t lanes = 1;
  std::vector<std::string> checkMessages;
  // Copies of what launch evaluates: the index pool, the grid, the top-level loops' sizes.
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_index_expr_t> grid;
  std::vector<std::vector<plugsdk_index_expr_t>> loops;
  size_t numArgs = 0, numSymbols = 0;
  std::string key;     ///< the cache key (hex SHA-256)
  std::string origin;  ///< "compiled", "memory cache", "disk cache"
  double compileMs = 0;
  std::string log;  ///< what executable_log returns
};

struct CompilerOptions {
  int optLevel = 2;     ///< the LLVM pipeline: 2 or 3
  std::string dumpDir;  ///< "" : no dumps
  /// Test hook ("fault=llvm"): the lowered IR is broken on purpose before it is verified, so
  /// the compile-failure path can be exercised end to end.
  bool breakIr = false;
};

class KernelCompiler {
 public:
  KernelCompiler(Jit& jit, DiskCache cache, CompilerOptions options)
      : jit_(jit), cache_(std::move(cache)), options_(std::move(options)) {}

  sdk::StatusOr<std::shared_ptr<const CompiledKernel>> compile(const sdk::KernelView& k);

  struct Stats {
    uint64_t compiled = 0, memoryHits = 0, diskHits = 0, diskRejected = 0;
  };
  const Stats& stats() const { return stats_; }
  const DiskCache& cache() const { return cache_; }

 private:
  /// Lowers, optimizes and emits the object for `k` (dumping each stage).
  sdk::StatusOr<std::string> build(const sdk::KernelView& k, const std::string& entry, const std::string& stem,
                                   CompiledKernel& out);
  void dump(const std::string& stem, const std::string& suffix, const std::string& text) const;

  Jit& jit_;
  DiskCache cache_;
  CompilerOptions options_;
  std::map<std::string, std::shared_ptr<LoadedObject>> memory_;
  Stats stats_;
};

/// The version of the code generator: part of every cache key (bump it when the generated
/// code changes for the same kernel).
constexpr const char* kCodegenVersion = "cpu-codegen-4";

}  // namespace plugsdk::cpu
