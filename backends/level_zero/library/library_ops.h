// The library ops a level_zero client runs, as the plugin sees them: f32 prims.matmul
// (matmul_spirv.h, the tiled kernel), f32 prims.convolution (conv_spirv.h, the implicit
// GEMM) and f32 prims.sdpa (sdpa_spirv.h, flash attention). Each op's module is built once
// per client, at its first call; a compiled call keeps its descriptors (matmul_call.h,
// conv_call.h, sdpa_call.h), evaluated at each launch into the
// kernel's launches on the runtime (common/runtime.h), either OpenCL or Level Zero.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/level_zero/common/runtime.h"
#include "backends/level_zero/library/conv_call.h"
#include "backends/level_zero/library/matmul_call.h"
#include "backends/level_zero/library/sdpa_call.h"
#include "plugsdk/plugsdk.hpp"

namespace plugsdk::level_zero::library {

/// A compiled library call: its kernel and the copy of the call it launches (one of the three).
struct LibraryOp {
  std::unique_ptr<RuntimeKernel> kernel;
  std::unique_ptr<MatmulCall> matmul;
  std::unique_ptr<ConvCall> conv;
  std::unique_ptr<SdpaCall> sdpa;
  std::string name;  ///< "prims.matmul (entry)", for messages
  std::string log;   ///< the executable's log
};

/// One client's library modules.
class LibraryOps {
 public:
  /// `dumpDir`: where each module's disassembly is written when built ("" for none).
  LibraryOps(Runtime& runtime, std::string dumpDir) : runtime_(runtime), dumpDir_(std::move(dumpDir)) {}
  /// The call compiled: UNIMPLEMENTED for an op, a form or a dtype the kernels do not take, or
  /// an epilogue (none is fused yet).
  sdk::StatusOr<std::unique_ptr<LibraryOp>> compile(const sdk::LibraryCall& c);
  /// Queues `op`'s launches for these buffers (its inputs, then its outputs; the launch's
  /// offsets applied; an absent optional input NULL) and symbol values on `q`.
  sdk::Status launch(const LibraryOp& op, const std::vector<void*>& args, const std::vector<int64_t>& symbols, Queue q);

 private:
  /// The module of `entry` (`write` makes its words), built at the first call.
  sdk::StatusOr<std::shared_ptr<RuntimeModule>> module(
      const std::string& entry, const std::string& what,
      sdk::StatusOr<std::vector<uint32_t>> (*write)(const std::string&), std::shared_ptr<RuntimeModule>* kept);

  Runtime& runtime_;
  std::string dumpDir_;
  std::mutex mu_;
  std::shared_ptr<RuntimeModule> matmul_, conv_;  ///< each op's module, once built
  std::shared_ptr<RuntimeModule> sdpa_[3];        ///< attention's, by SdpaMask
};

}  // namespace plugsdk::level_zero::library
