// cuBLASLt, reached through dlopen like the driver (driver/cuda_api.h): no toolkit at build
// time, and a machine without the library still runs matmuls (the generated kernel,
// matmul_kernel.h). The types and constants are cublasLt.h's ABI (stable within a major
// release; the enum values below were checked against CUDA 13's header on the GPU machine);
// only what the backend calls is declared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/driver/cuda_api.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cuda::lt {

using Status = int;  ///< cublasStatus_t
using Handle = struct cublasLtContext*;
using MatmulDesc = struct cublasLtMatmulDescOpaque_t*;
using Layout = struct cublasLtMatrixLayoutOpaque_t*;
using Preference = struct cublasLtMatmulPreferenceOpaque_t*;

struct Algo {
  uint64_t data[8];
};
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};

constexpr Status kSuccess = 0;
// cudaDataType_t
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
// cublasComputeType_t
constexpr int kCompute32F = 68, kCompute64F = 70;
// cublasOperation_t
constexpr int32_t kOpN = 0, kOpT = 1;
// cublasLtMatmulDescAttributes_t
constexpr int kDescTransA = 3, kDescTransB = 4;
// cublasLtMatrixLayoutAttribute_t
constexpr int kLayoutBatchCount = 5, kLayoutBatchStride = 6;
// cublasLtMatmulPreferenceAttributes_t
constexpr int kPrefMaxWorkspaceBytes = 1;

#define PLUGSDK_CUBLASLT_FUNCTIONS(X)                                                                           \
  X(create, "cublasLtCreate", Status(Handle*))                                                                  \
  X(destroy, "cublasLtDestroy", Status(Handle))                                                                 \
  X(getVersion, "cublasLtGetVersion", size_t())                                                                 \
  X(descCreate, "cublasLtMatmulDescCreate", Status(MatmulDesc*, int, int))                                      \
  X(descDestroy, "cublasLtMatmulDescDestroy", Status(MatmulDesc))                                               \
  X(descSet, "cublasLtMatmulDescSetAttribute", Status(MatmulDesc, int, const void*, size_t))                    \
  X(layoutCreate, "cublasLtMatrixLayoutCreate", Status(Layout*, int, uint64_t, uint64_t, int64_t))              \
  X(layoutDestroy, "cublasLtMatrixLayoutDestroy", Status(Layout))                                               \
  X(layoutSet, "cublasLtMatrixLayoutSetAttribute", Status(Layout, int, const void*, size_t))                    \
  X(prefCreate, "cublasLtMatmulPreferenceCreate", Status(Preference*))                                          \
  X(prefDestroy, "cublasLtMatmulPreferenceDestroy", Status(Preference))                                         \
  X(prefSet, "cublasLtMatmulPreferenceSetAttribute", Status(Preference, int, const void*, size_t))              \
  X(heuristic, "cublasLtMatmulAlgoGetHeuristic",                                                                \
    Status(Handle, MatmulDesc, Layout, Layout, Layout, Layout, Preference, int, HeuristicResult*, int*))        \
  X(matmul, "cublasLtMatmul",                                                                                   \
    Status(Handle, MatmulDesc, const void*, const void*, Layout, const void*, Layout, const void*, const void*, \
           Layout, void*, Layout, const Algo*, void*, size_t, CUstream))

/// cuBLASLt's functions, resolved once per library name and process.
struct Api {
#define PLUGSDK_CUBLASLT_MEMBER(name, symbol, type) std::add_pointer_t<type> name = nullptr;
  PLUGSDK_CUBLASLT_FUNCTIONS(PLUGSDK_CUBLASLT_MEMBER)
#undef PLUGSDK_CUBLASLT_MEMBER
  std::string path;  ///< the library loaded
  /// OK, or INTERNAL "<what>: cuBLASLt status N (NAME)".
  sdk::Status check(Status s, const std::string& what) const;
};

/// Loads cuBLASLt: `library` when given, else libcublasLt.so.13 / .12 / .11 by the loader's
/// search, then under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda (lib64). NOT_FOUND naming
/// every place tried when none loads.
sdk::StatusOr<std::shared_ptr<const Api>> load(const std::string& library);

}  // namespace plugsdk::cuda::lt
