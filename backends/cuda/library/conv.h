// prims.convolution as a library executable: cuDNN's forward convolution (cudnn_api.h) on
// the geometry of conv_plan.h, the algorithm from cuDNN's heuristics (as torch takes it
// without cudnn.benchmark), f16 / bf16 on tensor cores with f32 accumulation, f32 without
// TF32, f64 in double. Operands cuDNN cannot read as they lie (strided, not 16-byte
// aligned) are copied into packed temporaries first, and a result that is not packed is
// written through one. Each distinct setup (sizes, strides, alignment) is prepared once.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/conv_plan.h"
#include "backends/cuda/library/cudnn_api.h"
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
  sdk::Status ready();  ///< creates the handle once
  sdk::StatusOr<CUdeviceptr> scratchOf(size_t bytes);
  ~DnnDevice();
};

class ConvExecutable {
 public:
  static sdk::StatusOr<std::unique_ptr<ConvExecutable>> create(const sdk::LibraryCall& c, DnnDevice* dnn);
  ~ConvExecutable();
  /// x, w, result addresses (buffer offsets applied); the call's symbol values.
  sdk::Status launch(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream);
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
  sdk::StatusOr<const Setup*> setupFor(const CUdeviceptr args[3], const std::vector<int64_t>& symbols);
  sdk::StatusOr<const Prepared*> prepare(const DnnGeometry& g, bool xCopy, bool wCopy, bool yCopy);

  ConvCall call_;
  DnnDevice* dnn_ = nullptr;
  std::map<std::string, std::unique_ptr<Prepared>> prepared_;
  std::optional<Setup> last_;
  std::string log_;
  std::string graphFailure_;  ///< why the last setup fell back to the legacy call (reported if that fails too)
};

}  // namespace plugsdk::cuda
