// OpenCL, reached through dlopen("libOpenCL.so.1") (the ICD loader): the execution path that
// runs the backend's SPIR-V on a CPU through PoCL (docs/level-zero-backend.md, step 2), with
// no link-time dependency, so the plugin loads where no OpenCL is installed and says why it
// has no device. The types and constants below are OpenCL's ABI (CL/cl.h, stable across
// versions); only what the backend calls is declared. Memory is shared virtual memory
// (OpenCL 2.0: clSVMAlloc, pointers as kernel arguments), which takes a launch's byte offsets
// as plain pointer arithmetic, as Level Zero's USM will.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::opencl {

using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bitfield = uint64_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
constexpr cl_int CL_MEM_OBJECT_ALLOCATION_FAILURE = -4;
constexpr cl_int CL_OUT_OF_RESOURCES = -5;
constexpr cl_int CL_OUT_OF_HOST_MEMORY = -6;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;  ///< the ICD loader found no platform

// clGetPlatformInfo / clGetDeviceInfo / clGetProgramBuildInfo parameters.
constexpr cl_uint CL_PLATFORM_VERSION = 0x0901;
constexpr cl_uint CL_PLATFORM_NAME = 0x0902;
constexpr cl_uint CL_DEVICE_TYPE = 0x1000;
constexpr cl_uint CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002;
constexpr cl_uint CL_DEVICE_MAX_NUM_SUB_GROUPS = 0x105C;
constexpr cl_uint CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010;
constexpr cl_uint CL_DEVICE_SINGLE_FP_CONFIG = 0x101B;
constexpr cl_uint CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F;
constexpr cl_uint CL_DEVICE_NAME = 0x102B;
constexpr cl_uint CL_DRIVER_VERSION = 0x102D;
constexpr cl_uint CL_DEVICE_VERSION = 0x102F;
constexpr cl_uint CL_DEVICE_EXTENSIONS = 0x1030;
constexpr cl_uint CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032;
constexpr cl_uint CL_DEVICE_SVM_CAPABILITIES = 0x1053;
constexpr cl_uint CL_DEVICE_IL_VERSION = 0x105B;
constexpr cl_uint CL_PROGRAM_BUILD_LOG = 0x1183;

constexpr cl_bitfield CL_DEVICE_TYPE_CPU = 1u << 1;
constexpr cl_bitfield CL_DEVICE_TYPE_ALL = 0xFFFFFFFFu;
constexpr cl_bitfield CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1u << 7;
constexpr cl_bitfield CL_DEVICE_SVM_COARSE_GRAIN_BUFFER = 1u << 0;
constexpr cl_bitfield CL_MEM_READ_WRITE = 1u << 0;
constexpr cl_uint CL_TRUE = 1;
constexpr cl_uint CL_FALSE = 0;

using ContextNotify = void (*)(const char*, const void*, size_t, void*);
using BuildNotify = void (*)(cl_program, void*);

// Each entry: member name, the ICD loader's exported symbol, the function type.
#define PLUGSDK_OPENCL_FUNCTIONS(X)                                                                                    \
  X(getPlatformIDs, "clGetPlatformIDs", cl_int(cl_uint, cl_platform_id*, cl_uint*))                                    \
  X(getPlatformInfo, "clGetPlatformInfo", cl_int(cl_platform_id, cl_uint, size_t, void*, size_t*))                     \
  X(getDeviceIDs, "clGetDeviceIDs", cl_int(cl_platform_id, cl_bitfield, cl_uint, cl_device_id*, cl_uint*))             \
  X(getDeviceInfo, "clGetDeviceInfo", cl_int(cl_device_id, cl_uint, size_t, void*, size_t*))                           \
  X(createContext, "clCreateContext",                                                                                  \
    cl_context(const intptr_t*, cl_uint, const cl_device_id*, ContextNotify, void*, cl_int*))                          \
  X(releaseContext, "clReleaseContext", cl_int(cl_context))                                                            \
  X(createCommandQueueWithProperties, "clCreateCommandQueueWithProperties",                                            \
    cl_command_queue(cl_context, cl_device_id, const cl_bitfield*, cl_int*))                                           \
  X(releaseCommandQueue, "clReleaseCommandQueue", cl_int(cl_command_queue))                                            \
  X(finish, "clFinish", cl_int(cl_command_queue))                                                                      \
  X(flush, "clFlush", cl_int(cl_command_queue))                                                                        \
  X(svmAlloc, "clSVMAlloc", void*(cl_context, cl_bitfield, size_t, cl_uint))                                           \
  X(svmFree, "clSVMFree", void(cl_context, void*))                                                                     \
  X(enqueueSVMMemcpy, "clEnqueueSVMMemcpy",                                                                            \
    cl_int(cl_command_queue, cl_uint, void*, const void*, size_t, cl_uint, const cl_event*, cl_event*))                \
  X(enqueueSVMMemFill, "clEnqueueSVMMemFill",                                                                          \
    cl_int(cl_command_queue, void*, const void*, size_t, size_t, cl_uint, const cl_event*, cl_event*))                 \
  X(createProgramWithIL, "clCreateProgramWithIL", cl_program(cl_context, const void*, size_t, cl_int*))                \
  X(buildProgram, "clBuildProgram", cl_int(cl_program, cl_uint, const cl_device_id*, const char*, BuildNotify, void*)) \
  X(getProgramBuildInfo, "clGetProgramBuildInfo", cl_int(cl_program, cl_device_id, cl_uint, size_t, void*, size_t*))   \
  X(releaseProgram, "clReleaseProgram", cl_int(cl_program))                                                            \
  X(createKernel, "clCreateKernel", cl_kernel(cl_program, const char*, cl_int*))                                       \
  X(releaseKernel, "clReleaseKernel", cl_int(cl_kernel))                                                               \
  X(setKernelArg, "clSetKernelArg", cl_int(cl_kernel, cl_uint, size_t, const void*))                                   \
  X(setKernelArgSVMPointer, "clSetKernelArgSVMPointer", cl_int(cl_kernel, cl_uint, const void*))                       \
  X(enqueueNDRangeKernel, "clEnqueueNDRangeKernel",                                                                    \
    cl_int(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,                 \
           const cl_event*, cl_event*))                                                                                \
  X(enqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList",                                                          \
    cl_int(cl_command_queue, cl_uint, const cl_event*, cl_event*))                                                     \
  X(enqueueBarrierWithWaitList, "clEnqueueBarrierWithWaitList",                                                        \
    cl_int(cl_command_queue, cl_uint, const cl_event*, cl_event*))                                                     \
  X(waitForEvents, "clWaitForEvents", cl_int(cl_uint, const cl_event*))                                                \
  X(releaseEvent, "clReleaseEvent", cl_int(cl_event))

/// The ICD loader's functions, resolved once per process (the library is never closed:
/// ICDs keep threads that outlive any one client).
struct Api {
#define PLUGSDK_OPENCL_MEMBER(name, symbol, type) std::add_pointer_t<type> name = nullptr;
  PLUGSDK_OPENCL_FUNCTIONS(PLUGSDK_OPENCL_MEMBER)
#undef PLUGSDK_OPENCL_MEMBER
  std::string library;  ///< the file that was loaded

  /// OK, or an error "<what>: CL_... (-N)" (RESOURCE_EXHAUSTED for the out-of-memory codes).
  sdk::Status check(cl_int r, const std::string& what) const;
};

/// "CL_BUILD_PROGRAM_FAILURE (-11)" for an OpenCL error code.
std::string errorName(cl_int r);

/// Loads the ICD loader (`library`: a file name or path; "" for "libOpenCL.so.1").
/// FAILED_PRECONDITION with the reason when it cannot be loaded or lacks an OpenCL 2.1
/// entry point: the plugin reports it as "no device".
sdk::StatusOr<std::shared_ptr<const Api>> loadApi(const std::string& library);

}  // namespace plugsdk::level_zero::opencl
