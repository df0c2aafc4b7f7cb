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
using BackendDesc = void*;  ///< cudnnBackendDescriptor_t (the graph API)

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

// The graph API (cudnn_graph.h): descriptor types, attribute names and attribute types.
enum BackendType : int {
  kPointwiseDesc = 0,
  kConvolutionDesc = 1,
  kEngineDesc = 2,
  kEngineCfgDesc = 3,
  kEngineHeurDesc = 4,
  kExecutionPlanDesc = 5,
  kConvForwardOpDesc = 10,
  kConvBackwardFilterOpDesc = 11,
  kPointwiseOpDesc = 13,
  kOperationGraphDesc = 15,
  kVariantPackDesc = 16,
  kTensorDesc = 17,
  kMatmulDesc = 18,
  kMatmulOpDesc = 19,
  kReductionDesc = 21,
  kReductionOpDesc = 22,
  kReshapeOpDesc = 31,
};
enum BackendAttr : int {
  kPointwiseMode = 0,
  kPointwiseMathPrec = 1,
  kPointwiseAxis = 9,
  kConvCompType = 100,
  kConvMode = 101,
  kConvDilations = 102,
  kConvFilterStrides = 103,
  kConvPostPaddings = 104,
  kConvPrePaddings = 105,
  kConvSpatialDims = 106,
  kHeurMode = 200,
  kHeurOperationGraph = 201,
  kHeurResults = 202,
  kCfgEngine = 300,
  kPlanHandle = 400,
  kPlanEngineConfig = 401,
  kPlanWorkspaceSize = 402,
  kConvFwdAlpha = 700,
  kConvFwdBeta = 701,
  kConvFwdConvDesc = 702,
  kConvFwdW = 703,
  kConvFwdX = 704,
  kConvFwdY = 705,
  kConvBwdFilterAlpha = 712,
  kConvBwdFilterBeta = 713,
  kConvBwdFilterConvDesc = 714,
  kConvBwdFilterDw = 715,
  kConvBwdFilterX = 716,
  kConvBwdFilterDy = 717,
  kPointwiseOpPwDesc = 750,
  kPointwiseOpX = 751,
  kPointwiseOpB = 752,
  kPointwiseOpY = 753,
  kPointwiseOpT = 758,
  kGraphHandle = 800,
  kGraphOps = 801,
  kGraphEngineGlobalCount = 802,
  kTensorByteAlignment = 900,
  kTensorDataType = 901,
  kTensorDimensions = 902,
  kTensorStrides = 903,
  kTensorUniqueId = 906,
  kTensorIsVirtual = 907,
  kTensorIsByValue = 908,
  kTensorReorderingMode = 909,
  kVariantUniqueIds = 1000,
  kVariantDataPointers = 1001,
  kVariantWorkspace = 1003,
  kEngineOperationGraph = 1300,
  kEngineGlobalIndex = 1301,
  kEngineNumericalNote = 1303,
  kMatmulCompType = 1500,
  kMatmulOpA = 1520,
  kMatmulOpB = 1521,
  kMatmulOpC = 1522,
  kMatmulOpOperator = 1523,
  kReductionOperator = 1600,
  kReductionCompType = 1601,
  kReductionOpX = 1610,
  kReductionOpY = 1611,
  kReductionOpOperator = 1612,
  kReshapeOpX = 2200,
  kReshapeOpY = 2201,
};
enum BackendAttrType : int {
  kTypeHandle = 0,
  kTypeDataType = 1,
  kTypeBoolean = 2,
  kTypeInt64 = 3,
  kTypeFloat = 4,
  kTypeDouble = 5,
  kTypeVoidPtr = 6,
  kTypeConvolutionMode = 7,
  kTypeHeurMode = 8,
  kTypeNumericalNote = 11,
  kTypePointwiseMode = 14,
  kTypeBackendDescriptor = 15,
  kTypeReductionOperator = 18,
  kTypeTensorReorderingMode = 20,
};
// cudnnPointwiseMode_t, cudnnReduceTensorOp_t (the attention graph's, sdpa_graph.h; the
// convolution epilogue's, cudnn_graph.h)
constexpr int kPwAdd = 0, kPwMul = 1, kPwDiv = 6, kPwSub = 9, kPwExp = 13, kPwLog = 15, kPwIdentity = 21,
              kPwReluFwd = 100, kPwGeluTanhFwd = 107, kPwCmpGe = 303, kPwGenIndex = 501, kPwBinarySelect = 601;
constexpr int kReduceAdd = 0, kReduceMax = 3;
// cudnnDataType_t beyond the float types
constexpr int kInt32 = 4, kBoolean = 11;
// cudnnBackendTensorReordering_t: F16x16 marks the attention backward's f32 dQ accumulator
constexpr int kReorderF16x16 = 2;
// cudnnBackendHeurMode_t, cudnnBackendNumericalNote_t
constexpr int kHeurModeB = 1, kHeurModeFallback = 2, kHeurModeA = 3;
constexpr int kNoteTensorCore = 0, kNoteDownConvertInputs = 1, kNoteReducedPrecisionReduction = 2;

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
    Status(Handle, const void*, TensorDesc, const void*, const void*, TensorDesc, void*))                              \
  X(backendCreate, "cudnnBackendCreateDescriptor", Status(int, BackendDesc*))                                          \
  X(backendDestroy, "cudnnBackendDestroyDescriptor", Status(BackendDesc))                                              \
  X(backendFinalize, "cudnnBackendFinalize", Status(BackendDesc))                                                      \
  X(backendSet, "cudnnBackendSetAttribute", Status(BackendDesc, int, int, int64_t, const void*))                       \
  X(backendGet, "cudnnBackendGetAttribute", Status(BackendDesc, int, int, int64_t, int64_t*, void*))                   \
  X(backendExecute, "cudnnBackendExecute", Status(Handle, BackendDesc, BackendDesc))

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
