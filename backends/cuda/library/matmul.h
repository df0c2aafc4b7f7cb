// prims.matmul as a library executable: cuBLASLt where it takes the call (f16, bf16, f32
// with f32 accumulation and no TF32, f64; layouts with a unit stride per matrix), the
// generated kernel (matmul_kernel.h) for everything else. The choice is made per launch from
// the descriptors' values; each distinct cuBLASLt setup (layouts, alignment) is prepared once
// (descriptors and the heuristic's algorithm) and kept.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/cublaslt_api.h"
#include "backends/cuda/library/matmul_kernel.h"
#include "backends/cuda/library/matmul_plan.h"
#include "backends/cuda/runtime/grown_buffer.h"
#include "backends/cuda/runtime/module.h"

namespace plugsdk::cuda {

/// cuBLASLt state of one device: the handle and its workspace (made on first use).
struct LtDevice {
  const DriverApi* api = nullptr;
  std::shared_ptr<const lt::Api> lt;  ///< null: no cuBLASLt on this machine
  CUcontext context = nullptr;
  lt::Handle handle = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  GrownBuffer scratch;  ///< padded results (paddedResultLd) before their copy into place
  sdk::Status ready();  ///< creates the handle and workspace once
  sdk::StatusOr<CUdeviceptr> scratchOf(size_t bytes);
  ~LtDevice();
};

class MatmulExecutable {
 public:
  using CompileKernel = std::function<sdk::StatusOr<std::unique_ptr<LoadedKernel>>(const sdk::KernelView&)>;
  /// `compile` builds the generated kernel when a launch needs it (at once when the call's
  /// values are known now and cuBLASLt cannot take them).
  static sdk::StatusOr<std::unique_ptr<MatmulExecutable>> create(const sdk::LibraryCall& c, LtDevice* lt,
                                                                 CompileKernel compile);
  ~MatmulExecutable();
  /// a, b, result addresses (offsets applied); the call's symbol values.
  sdk::Status launch(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream);
  std::string log() const { return log_; }

 private:
  struct Prepared;
  /// What a launch with these symbols and pointers runs (kept for the next launch).
  struct Setup {
    std::vector<int64_t> symbols;
    CUdeviceptr args[3] = {0, 0, 0};
    CUdeviceptr a = 0, b = 0, out = 0;  ///< the operands' first elements
    LtPlan plan;                        ///< D's ld padded when paddedLd > 0
    LtPlan copy;                        ///< the plan as the result is laid out (the padded copy's target)
    int64_t paddedLd = 0;
    size_t scratchBytes = 0;
    std::vector<RowPart> parts;
    std::vector<const Prepared*> prepared;  ///< one per part; empty: the generated kernel runs it
  };
  sdk::StatusOr<const Setup*> setupFor(const CUdeviceptr args[3], const std::vector<int64_t>& symbols);
  sdk::Status runKernel(const CUdeviceptr args[3], const std::vector<int64_t>& symbols, CUstream stream);
  sdk::StatusOr<const Prepared*> prepare(const LtPlan& p, const CUdeviceptr ptrs[3]);
  bool ltDtype() const;

  MatmulCall call_;
  LtDevice* lt_ = nullptr;
  CompileKernel compile_;
  std::unique_ptr<BuiltKernel> built_;
  std::unique_ptr<LoadedKernel> kernel_;
  std::map<std::string, std::unique_ptr<Prepared>> prepared_;
  std::optional<Setup> last_;
  std::string log_;
};

}  // namespace plugsdk::cuda
