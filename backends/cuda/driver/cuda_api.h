// The CUDA driver API, reached through dlopen("libcuda.so.1"): no link-time dependency on a
// CUDA toolkit, so the plugin builds anywhere LLVM does and loads on machines without a GPU
// (where it reports no device, with the reason). The types and constants below are the
// driver's ABI (cuda.h, stable across releases); only what the backend calls is declared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "plugsdk/status.hpp"

namespace plugsdk::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;

// CUdevice_attribute values.
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxGridDimX = 5;
constexpr int kAttrClockRateKHz = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRateKHz = 36;
constexpr int kAttrGlobalMemoryBusWidth = 37;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;

// CUjit_option values (cuModuleLoadDataEx).
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitLogVerbose = 12;

/// CUDA_MEMCPY2D (cuda.h): a copy of Height rows of WidthInBytes between pitched buffers.
struct Memcpy2D {
  size_t srcXInBytes = 0, srcY = 0;
  int srcMemoryType = 0;  ///< CUmemorytype: kMemoryTypeDevice
  const void* srcHost = nullptr;
  CUdeviceptr srcDevice = 0;
  void* srcArray = nullptr;
  size_t srcPitch = 0;
  size_t dstXInBytes = 0, dstY = 0;
  int dstMemoryType = 0;
  void* dstHost = nullptr;
  CUdeviceptr dstDevice = 0;
  void* dstArray = nullptr;
  size_t dstPitch = 0;
  size_t WidthInBytes = 0, Height = 0;
};
constexpr int kMemoryTypeDevice = 2;  ///< CU_MEMORYTYPE_DEVICE

constexpr unsigned kStreamNonBlocking = 1;   ///< CU_STREAM_NON_BLOCKING
constexpr int kCaptureModeThreadLocal = 1;   ///< CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
constexpr unsigned kEventDisableTiming = 2;  ///< CU_EVENT_DISABLE_TIMING

// Each entry: member name, the driver's exported symbol (versioned where cuda.h maps the
// name to a _v2 symbol), the function type.
#define PLUGSDK_CUDA_DRIVER_FUNCTIONS(X)                                                                         \
  X(init, "cuInit", CUresult(unsigned))                                                                          \
  X(driverGetVersion, "cuDriverGetVersion", CUresult(int*))                                                      \
  X(deviceGetCount, "cuDeviceGetCount", CUresult(int*))                                                          \
  X(deviceGet, "cuDeviceGet", CUresult(CUdevice*, int))                                                          \
  X(deviceGetName, "cuDeviceGetName", CUresult(char*, int, CUdevice))                                            \
  X(deviceGetAttribute, "cuDeviceGetAttribute", CUresult(int*, int, CUdevice))                                   \
  X(deviceTotalMem, "cuDeviceTotalMem_v2", CUresult(size_t*, CUdevice))                                          \
  X(primaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult(CUcontext*, CUdevice))                                \
  X(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult(CUdevice))                                       \
  X(ctxPushCurrent, "cuCtxPushCurrent_v2", CUresult(CUcontext))                                                  \
  X(ctxPopCurrent, "cuCtxPopCurrent_v2", CUresult(CUcontext*))                                                   \
  X(ctxGetCurrent, "cuCtxGetCurrent", CUresult(CUcontext*))                                                      \
  X(ctxSynchronize, "cuCtxSynchronize", CUresult())                                                              \
  X(memGetInfo, "cuMemGetInfo_v2", CUresult(size_t*, size_t*))                                                   \
  X(memAlloc, "cuMemAlloc_v2", CUresult(CUdeviceptr*, size_t))                                                   \
  X(memFree, "cuMemFree_v2", CUresult(CUdeviceptr))                                                              \
  X(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult(CUdeviceptr, const void*, size_t, CUstream))               \
  X(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult(void*, CUdeviceptr, size_t, CUstream))                     \
  X(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult(CUdeviceptr, CUdeviceptr, size_t, CUstream))               \
  X(memcpy2DAsync, "cuMemcpy2DAsync_v2", CUresult(const Memcpy2D*, CUstream))                                    \
  X(memsetD8Async, "cuMemsetD8Async", CUresult(CUdeviceptr, unsigned char, size_t, CUstream))                    \
  X(memsetD16Async, "cuMemsetD16Async", CUresult(CUdeviceptr, unsigned short, size_t, CUstream))                 \
  X(memsetD32Async, "cuMemsetD32Async", CUresult(CUdeviceptr, unsigned, size_t, CUstream))                       \
  X(streamCreate, "cuStreamCreate", CUresult(CUstream*, unsigned))                                               \
  X(streamDestroy, "cuStreamDestroy_v2", CUresult(CUstream))                                                     \
  X(streamSynchronize, "cuStreamSynchronize", CUresult(CUstream))                                                \
  X(streamWaitEvent, "cuStreamWaitEvent", CUresult(CUstream, CUevent, unsigned))                                 \
  X(streamBeginCapture, "cuStreamBeginCapture_v2", CUresult(CUstream, int))                                      \
  X(streamEndCapture, "cuStreamEndCapture", CUresult(CUstream, CUgraph*))                                        \
  X(streamIsCapturing, "cuStreamIsCapturing", CUresult(CUstream, int*))                                          \
  X(graphInstantiate, "cuGraphInstantiateWithFlags", CUresult(CUgraphExec*, CUgraph, unsigned long long))        \
  X(graphGetNodes, "cuGraphGetNodes", CUresult(CUgraph, CUgraphNode*, size_t*))                                  \
  X(graphLaunch, "cuGraphLaunch", CUresult(CUgraphExec, CUstream))                                               \
  X(graphExecDestroy, "cuGraphExecDestroy", CUresult(CUgraphExec))                                               \
  X(graphDestroy, "cuGraphDestroy", CUresult(CUgraph))                                                           \
  X(eventCreate, "cuEventCreate", CUresult(CUevent*, unsigned))                                                  \
  X(eventDestroy, "cuEventDestroy_v2", CUresult(CUevent))                                                        \
  X(eventRecord, "cuEventRecord", CUresult(CUevent, CUstream))                                                   \
  X(eventSynchronize, "cuEventSynchronize", CUresult(CUevent))                                                   \
  X(eventElapsedTime, "cuEventElapsedTime", CUresult(float*, CUevent, CUevent))                                  \
  X(moduleLoadDataEx, "cuModuleLoadDataEx", CUresult(CUmodule*, const void*, unsigned, int*, void**))            \
  X(moduleUnload, "cuModuleUnload", CUresult(CUmodule))                                                          \
  X(moduleGetFunction, "cuModuleGetFunction", CUresult(CUfunction*, CUmodule, const char*))                      \
  X(moduleGetGlobal, "cuModuleGetGlobal_v2", CUresult(CUdeviceptr*, size_t*, CUmodule, const char*))             \
  X(launchKernel, "cuLaunchKernel",                                                                              \
    CUresult(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, \
             void**))                                                                                            \
  X(getErrorName, "cuGetErrorName", CUresult(CUresult, const char**))                                            \
  X(getErrorString, "cuGetErrorString", CUresult(CUresult, const char**))

/// The driver's functions, resolved once. Not copyable: one per process (libcuda is never
/// unloaded: the driver does not support it while contexts live).
struct DriverApi {
#define PLUGSDK_CUDA_MEMBER(name, symbol, type) std::add_pointer_t<type> name = nullptr;
  PLUGSDK_CUDA_DRIVER_FUNCTIONS(PLUGSDK_CUDA_MEMBER)
#undef PLUGSDK_CUDA_MEMBER
  int version = 0;  ///< cuDriverGetVersion: 12040 for 12.4

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
  std::string errorText(CUresult r) const;
  /// OK, or an error of the matching code: "<what>: CUDA_ERROR_... (...)".
  sdk::Status check(CUresult r, const std::string& what) const;
};

/// Loads libcuda (`library`: a file name or path; "" for "libcuda.so.1") and calls cuInit.
/// FAILED_PRECONDITION with the reason when there is no driver, a symbol is missing or
/// cuInit fails (no GPU, a driver/kernel-module mismatch): the plugin reports it as "no device".
sdk::StatusOr<std::shared_ptr<const DriverApi>> loadDriver(const std::string& library);

}  // namespace plugsdk::cuda
