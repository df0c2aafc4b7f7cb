// prims.matmul as a library executable: cuBLASLt where it takes the call (f16, bf16, f32
// with f32 accumulation and no TF32, f64; layouts with a unit stride per matrix), the
// generated kernel (matmul_kernel.h) for everything else. The choice is made per launch from
// the descriptors' values; each distinct cuBLASLt setup (layouts, alignment) is prepared once
// (descriptors and the heuristic's algorithm) and kept. A fused epilogue runs inside
// cuBLASLt's GEMM when it has that form (bias, relu / tanh GELU, a residual as C:
// epilogue_match.h), else as its own kernel over a row-major temporary (epilogue_kernel.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/cublaslt_api.h"
#include "backends/cuda/library/epilogue_kernel.h"
#include "backends/cuda/library/epilogue_match.h"
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
  bool padResults = true;    ///< unaligned results through a padded temporary (option pad_results)
  GrownBuffer scratch;       ///< padded results (paddedResultLd) before their copy into place
  GrownBuffer accumulators;  ///< results an epilogue kernel reads (epilogue_kernel.h)
  sdk::Status ready();       ///< creates the handle and workspace once
  sdk::StatusOr<CUdeviceptr> scratchOf(size_t bytes);
  ~LtDevice();
};

class MatmulExecutable {
 public:
  /// `compile` builds the generated kernel when a launch needs it (at once when the call's
  /// values are known now and cuBLASLt cannot take them), and the epilogue kernel. With
  /// `nativeEpilogues` false every epilogue runs as its own kernel.
  static sdk::StatusOr<std::unique_ptr<MatmulExecutable>> create(const sdk::LibraryCall& c, LtDevice* lt,
                                                                 CompileKernel compile, bool nativeEpilogues = true);
  ~MatmulExecutable();
  /// a, b, result addresses (offsets applied; the result 0 under an epilogue), then the
  /// epilogue's buffers; the call's symbol values, then the epilogue's.
  sdk::Status launch(const CUdeviceptr* args, size_t numArgs, const std::vector<int64_t>& symbols, CUstream stream);
  std::string log() const { return log_; }

 private:
  struct Prepared;
  /// What a launch with these symbols and pointers runs (kept for the next launch).
  struct Setup {
    std::vector<int64_t> symbols;
    std::vector<CUdeviceptr> args;      ///< the launch's
    CUdeviceptr a = 0, b = 0, out = 0;  ///< the operands' first elements (out: D's)
    bool native = false;                ///< the epilogue inside cuBLASLt (bias, residual below)
    CUdeviceptr bias = 0, residual = 0;
    CUdeviceptr biasSource = 0;  ///< the f32 bias biasCast_ converts into `bias`
    int64_t biasLength = 0;
    uint32_t dDtype = 0;  ///< D's dtype (the epilogue's store under `native`)
    size_t accBytes = 0;  ///< the accumulator temporary an epilogue kernel reads
    LtPlan plan;          ///< D's ld padded when paddedLd > 0
    LtPlan copy;          ///< the plan as the result is laid out (the padded copy's target)
    int64_t paddedLd = 0;
    size_t scratchBytes = 0;
    std::vector<RowPart> parts;
    std::vector<const Prepared*> prepared;  ///< one per part; empty: the generated kernel runs it
  };
  sdk::StatusOr<const Setup*> setupFor(const std::vector<CUdeviceptr>& args, const std::vector<int64_t>& symbols);
  /// Plans s's cuBLASLt parts (s.native, s.dDtype set): false when cuBLASLt takes it not.
  sdk::StatusOr<bool> planLt(Setup& s, const MatmulShape& shape);
  sdk::Status runKernel(CUdeviceptr a, CUdeviceptr b, CUdeviceptr out, const std::vector<int64_t>& symbols,
                        CUstream stream);
  sdk::Status runLt(const Setup& s, CUdeviceptr out, CUstream stream);  ///< `out`: D (or the padded copy's target)
  size_t nativeArg(int epilogueArg) const;  ///< an epilogue argument's place among the launch's extra buffers
  sdk::StatusOr<const Prepared*> prepare(const LtPlan& p, const CUdeviceptr ptrs[3], const Setup& s);
  bool ltDtype(uint32_t outDtype) const;
  uint32_t ltEpilogue() const;  ///< cublasLtEpilogue_t of native_

  MatmulCall call_;
  LtDevice* lt_ = nullptr;
  CompileKernel compile_;
  std::unique_ptr<BuiltKernel> built_;
  std::unique_ptr<LoadedKernel> kernel_;
  std::unique_ptr<EpilogueKernel> epilogue_;  ///< null: no epilogue
  std::optional<NativeEpilogue> native_;      ///< its cuBLASLt form, when it has one
  int accArg_ = -1;                           ///< the epilogue's ACCUMULATOR argument
  std::unique_ptr<LoadedKernel> biasCast_;
  GrownBuffer biasCopy_;
  std::map<std::string, std::unique_ptr<Prepared>> prepared_;
  std::optional<Setup> last_;
  std::string log_;
};

}  // namespace plugsdk::cuda
