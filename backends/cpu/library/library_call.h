// The CPU backend's library calls (prims.matmul, prims.convolution, prims.sdpa): what
// compile_library keeps (the descriptors over a copy of the index pool, the parsed
// attributes, the compiled epilogue kernel) and how a launch runs them: operands evaluated
// for the launch's symbols, the op computed (library_ops.h), then the fused epilogue over
// the result, which lives in a temporary of the accumulator's dtype.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "backends/cpu/kernel_compiler.h"
#include "backends/cpu/library/elements.h"
#include "backends/cpu/library/gemm.h"
#include "plugsdk/library_attributes.hpp"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::cpu {

/// The call's attributes, parsed by the SDK (plugsdk/library_attributes.hpp).
using Attributes = sdk::LibraryAttributes;

/// A descriptor copied out of the borrowed call.
struct Descriptor {
  std::optional<uint32_t> dtype;  ///< nullopt: an absent optional input
  std::vector<plugsdk_index_expr_t> sizes, strides;
  plugsdk_index_expr_t offset{};
};

/// Buffers a library call reuses from launch to launch (an executable runs on one thread at
/// a time: the ABI's rule for a client), so large temporaries are not allocated and faulted
/// in on every launch.
class Scratch {
 public:
  /// At least `bytes` bytes, 64-byte aligned, for `slot`; nullptr when memory runs out.
  void* get(size_t slot, size_t bytes);

 private:
  std::vector<std::unique_ptr<uint8_t, void (*)(void*)>> buffers_;
  std::vector<size_t> sizes_;
};

struct LibraryPlan {
  uint32_t op = 0;  ///< one plugsdk_library_op_t bit
  std::string opName;
  Attributes attrs;
  std::vector<Descriptor> inputs, outputs;
  std::vector<plugsdk_index_insn_t> pool;
  size_t numSymbols = 0;
  std::shared_ptr<const CompiledKernel> epilogue;  ///< null: none
  size_t accumulator = 0;                          ///< the epilogue's ACCUMULATOR argument
  uint32_t accDtype = 0;
  mutable Scratch scratch;
};

class PreparedLaunch;

/// What library calls run with: the client's GEMM kernels and threads, the call's scratch
/// buffers, and its epilogue when the op may fuse it: a launch whose grid is the result's
/// shape, which the op runs on each block of the result as soon as it is final (then it
/// sets *epilogueDone; otherwise runLibrary runs it over the whole result afterwards).
struct LibraryContext {
  const GemmKernels* gemm = nullptr;
  tbb::task_arena* arena = nullptr;
  bool shiftedConv = true;  ///< convolutions may take the shifted-rows path (client option conv=auto)
  Scratch* scratch = nullptr;
  const PreparedLaunch* epilogue = nullptr;
  bool* epilogueDone = nullptr;
};

/// Checks and copies a compile_library call; compiles its epilogue with `compiler`.
sdk::StatusOr<LibraryPlan> planLibrary(const sdk::LibraryCall& call, KernelCompiler& compiler);

/// Runs a planned call: buffers in launch order (inputs, outputs, then the epilogue's
/// non-accumulator arguments; NULL for an absent input and, under an epilogue, output 0).
sdk::Status runLibrary(const LibraryPlan& plan, const std::vector<uint8_t*>& buffers,
                       const std::vector<int64_t>& symbols, const LibraryContext& ctx);

}  // namespace plugsdk::cpu
