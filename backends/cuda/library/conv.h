// prims.convolution as a library executable: cuDNN's forward convolution (cudnn_api.h) on
// the geometry of conv_plan.h, the algorithm from cuDNN's heuristics (as torch takes it
// without cudnn.benchmark), f16 / bf16 on tensor cores with f32 accumulation, f32 without
// TF32, f64 in double. Operands cuDNN cannot read as they lie (strided, not 16-byte
// aligned) are copied into packed temporaries first, and a result that is not packed is
// written through one. Each distinct setup (sizes, strides, alignment) is prepared once.
// A fused epilogue of the form act(conv + bias[channel] + residual) (epilogue_match.h, act
// none, relu or the tanh GELU) runs inside cuDNN's kernel as one operation graph where an
// engine takes it; any other (or where none does) runs as its own kernel over the result
// computed into a row-major accumulator temporary (epilogue_kernel.h), as a matmul's does
// when cuBLASLt cannot take it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/conv_plan.h"
#include "backends/cuda/library/cudnn_api.h"
#include "backends/cuda/library/cudnn_graph.h"
#include "backends/cuda/library/epilogue_kernel.h"
#include "backends/cuda/library/epilogue_match.h"
#include "backends/cuda/runtime/grown_buffer.h"

namespace plugsdk::cuda {

/// cuDNN state of one device: the handle (made on first use) and one scratch buffer for
/// workspaces and packed temporaries.
struct DnnDevice {
  const DriverApi* api = nullptr;
  std::shared_ptr<const dnn::Api> dnn;  ///< null: no cuDNN on this machine
  CUcontext context = nullptr;
  dnn::Handle handle = nullptr;
  GrownBuffer scratch;
  GrownBuffer accumulators;  ///< results an epilogue kernel reads (epilogue_kernel.h)
  sdk::Status ready();       ///< creates the handle once
  sdk::StatusOr<CUdeviceptr> scratchOf(size_t bytes);
  ~DnnDevice();
};

class ConvExecutable {
 public:
  /// `compile` builds the call's epilogue kernel, when it has one. With `nativeEpilogues`
  /// false it always runs as that kernel.
  static sdk::StatusOr<std::unique_ptr<ConvExecutable>> create(const sdk::LibraryCall& c, DnnDevice* dnn,
                                                               const CompileKernel& compile,
                                                               bool nativeEpilogues = true);
  ~ConvExecutable();
  /// x, w, result addresses (buffer offsets applied; the result 0 under an epilogue), then
  /// the epilogue's buffers; the call's symbol values, then the epilogue's.
  sdk::Status launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols, CUstream stream);
  std::string log() const { return log_; }

 private:
  struct Prepared;
  struct Setup {
    std::vector<int64_t> symbols;
    CUdeviceptr args[3] = {0, 0, 0};
    CUdeviceptr x = 0, w = 0, y = 0;     ///< the operands' first elements
    int64_t n = 0;                       ///< images
    const Prepared* prepared = nullptr;  ///< null: nothing to compute (an empty result)
    size_t zeroBytes = 0;                ///< an empty reduction: the packed result is zero-filled
  };
  /// A launch with its epilogue inside cuDNN's kernel: the operands' first elements.
  struct Fused {
    std::vector<int64_t> symbols;
    std::vector<CUdeviceptr> args;
    const Prepared* prepared = nullptr;  ///< null: not for this launch (the epilogue kernel runs)
    CUdeviceptr x = 0, w = 0, y = 0, bias = 0, residual = 0;
  };
  sdk::StatusOr<const Setup*> setupFor(const CUdeviceptr args[3], const std::vector<int64_t>& symbols);
  /// `epilogue`: the plan computes it too (forward, packed operands, one call for the batch).
  sdk::StatusOr<const Prepared*> prepare(const DnnGeometry& g, bool xCopy, bool wCopy, bool yCopy,
                                         const dnn::ConvEpilogueSpec* epilogue = nullptr);
  /// Whether this launch runs its epilogue inside cuDNN (the last answer kept).
  sdk::StatusOr<const Fused*> fusedFor(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols);
  sdk::Status runFused(const Fused& f, CUstream stream);
  /// The convolution alone, into args[2].
  sdk::Status run(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream);
  /// Bytes of the accumulator temporary for `symbols` (the last answer kept).
  sdk::StatusOr<size_t> accumulatorBytes(const std::vector<int64_t>& symbols);

  ConvCall call_;
  DnnDevice* dnn_ = nullptr;
  std::map<std::string, std::unique_ptr<Prepared>> prepared_;
  std::optional<Setup> last_;
  std::unique_ptr<EpilogueKernel> epilogue_;  ///< null: none
  std::optional<NativeEpilogue> native_;      ///< the epilogue in cuDNN's form, when it has one
  std::optional<Fused> lastFused_;
  std::vector<int64_t> accSymbols_;  ///< the symbols accBytes_ is for
  size_t accBytes_ = 0;
  bool accKnown_ = false;
  std::string log_;
  std::string graphFailure_;  ///< why the last setup fell back to the legacy call (reported if that fails too)
};

}  // namespace plugsdk::cuda
