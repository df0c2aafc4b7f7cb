// cuDNN, reached through dlopen like the driver and cuBLASLt (driver/cuda_api.h,
// cublaslt_api.h): no toolkit or cuDNN at build time, and a machine without the library
// still runs every convolution (the plugin then does not claim prims.convolution, and the
// core expands it). Only the legacy convolution API the backend calls is declared; it is
// present in cuDNN 8 and 9. The types and constants are cudnn_*.h's ABI (the enum values
// below were checked against cuDNN 9's headers on the GPU machine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/driver/cuda_api.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cuda::dnn {

using Status = int;  ///< cudnnStatus_t
using Handle = struct cudnnContext*;
using TensorDesc = struct cudnnTensorStruct*;
using FilterDesc = struct cudnnFilterStruct*;
using ConvDesc = struct cudnnConvolutionStruct*;

/// cudnnConvolutionFwdAlgoPerf_t
struct FwdAlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

constexpr Status kSuccess = 0;
// cudnnDataType_t
constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBfloat16 = 9;
// cudnnTensorFormat_t
constexpr int kNchw = 0;
// cudnnConvolutionMode_t (torch's convolution is cuDNN's cross-correlation)
constexpr int kCrossCorrelation = 1;
// cudnnMathType_t
constexpr int kDefaultMath = 0, kTensorOpMath = 1, kFmaMath = 3;

#define PLUGSDK_CUDNN_FUNCTIONS(X)                                                                                     \
  X(create, "cudnnCreate", Status(Handle*))                                                                            \
  X(destroy, "cudnnDestroy", Status(Handle))                                                                           \
  X(getVersion, "cudnnGetVersion", size_t())                                                                           \
  X(errorString, "cudnnGetErrorString", const char*(Status))                                                           \
  X(setStream, "cudnnSetStream", Status(Handle, CUstream))                                                             \
  X(createTensor, "cudnnCreateTensorDescriptor", Status(TensorDesc*))                                                  \
  X(destroyTensor, "cudnnDestroyTensorDescriptor", Status(TensorDesc))                                                 \
  X(setTensorNd, "cudnnSetTensorNdDescriptor", Status(TensorDesc, int, int, const int*, const int*))                   \
  X(createFilter, "cudnnCreateFilterDescriptor", Status(FilterDesc*))                                                  \
  X(destroyFilter, "cudnnDestroyFilterDescriptor", Status(FilterDesc))                                                 \
  X(setFilterNd, "cudnnSetFilterNdDescriptor", Status(FilterDesc, int, int, int, const int*))                          \
  X(createConv, "cudnnCreateConvolutionDescriptor", Status(ConvDesc*))                                                 \
  X(destroyConv, "cudnnDestroyConvolutionDescriptor", Status(ConvDesc))                                                \
  X(setConvNd, "cudnnSetConvolutionNdDescriptor", Status(ConvDesc, int, const int*, const int*, const int*, int, int)) \
  X(setConvGroups, "cudnnSetConvolutionGroupCount", Status(ConvDesc, int))                                             \
  X(setConvMath, "cudnnSetConvolutionMathType", Status(ConvDesc, int))                                                 \
  X(forwardAlgorithms, "cudnnGetConvolutionForwardAlgorithm_v7",                                                       \
    Status(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int, int*, FwdAlgoPerf*))                             \
  X(forwardWorkspace, "cudnnGetConvolutionForwardWorkspaceSize",                                                       \
    Status(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int, size_t*))                                        \
  X(forward, "cudnnConvolutionForward",                                                                                \
    Status(Handle, const void*, TensorDesc, const void*, FilterDesc, const void*, ConvDesc, int, void*, size_t,        \
           const void*, TensorDesc, void*))                                                                            \
  X(transform, "cudnnTransformTensor",                                                                                 \
    Status(Handle, const void*, TensorDesc, const void*, const void*, TensorDesc, void*))

/// cuDNN's functions, resolved once per library name and process.
struct Api {
#define PLUGSDK_CUDNN_MEMBER(name, symbol, type) std::add_pointer_t<type> name = nullptr;
  PLUGSDK_CUDNN_FUNCTIONS(PLUGSDK_CUDNN_MEMBER)
#undef PLUGSDK_CUDNN_MEMBER
  std::string path;  ///< the library loaded
  /// OK, or INTERNAL "<what>: cuDNN status N (its message)".
  sdk::Status check(Status s, const std::string& what) const;
};

/// Loads cuDNN: `library` when given, else libcudnn.so.9 / .8 by the loader's search (a
/// process that imported torch has it loaded already), then under $CUDNN_HOME, $CUDA_HOME,
/// $CUDA_PATH and /usr/local/cuda (lib64). NOT_FOUND naming every place tried when none loads.
sdk::StatusOr<std::shared_ptr<const Api>> load(const std::string& library);

}  // namespace plugsdk::cuda::dnn
