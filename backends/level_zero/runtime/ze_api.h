// Level Zero, reached through dlopen("libze_loader.so.1") (the oneAPI loader, Debian's libze1):
// the runtime that runs the backend's SPIR-V on Intel GPUs (docs/level-zero-backend.md, step
// 3), with no link-time dependency, so the plugin loads where no loader is installed and says
// why it has no device. Types, constants and the functions' signatures come from the loader's
// header (<level_zero/ze_api.h>, Debian's libze-dev); only the functions below are resolved,
// each by its exported name. Every ze_result_t becomes an sdk::Status naming the call and the
// result by name ("zeModuleCreate: 0x70000004 (ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)").
#pragma once

#include <level_zero/ze_api.h>

#include <memory>
#include <string>
#include <type_traits>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::ze {

// Each entry: member name, exported symbol. The type is the header's declaration's.
#define PLUGSDK_ZE_FUNCTIONS(X)                                                   \
  X(init, zeInit)                                                                 \
  X(driverGet, zeDriverGet)                                                       \
  X(driverGetApiVersion, zeDriverGetApiVersion)                                   \
  X(driverGetProperties, zeDriverGetProperties)                                   \
  X(deviceGet, zeDeviceGet)                                                       \
  X(deviceGetProperties, zeDeviceGetProperties)                                   \
  X(deviceGetComputeProperties, zeDeviceGetComputeProperties)                     \
  X(deviceGetModuleProperties, zeDeviceGetModuleProperties)                       \
  X(deviceGetMemoryProperties, zeDeviceGetMemoryProperties)                       \
  X(deviceGetMemoryAccessProperties, zeDeviceGetMemoryAccessProperties)           \
  X(deviceGetCommandQueueGroupProperties, zeDeviceGetCommandQueueGroupProperties) \
  X(contextCreate, zeContextCreate)                                               \
  X(contextDestroy, zeContextDestroy)                                             \
  X(commandListCreateImmediate, zeCommandListCreateImmediate)                     \
  X(commandListDestroy, zeCommandListDestroy)                                     \
  X(commandListAppendLaunchKernel, zeCommandListAppendLaunchKernel)               \
  X(commandListAppendMemoryCopy, zeCommandListAppendMemoryCopy)                   \
  X(commandListAppendMemoryFill, zeCommandListAppendMemoryFill)                   \
  X(commandListAppendBarrier, zeCommandListAppendBarrier)                         \
  X(commandListAppendSignalEvent, zeCommandListAppendSignalEvent)                 \
  X(commandListAppendWaitOnEvents, zeCommandListAppendWaitOnEvents)               \
  X(commandListAppendEventReset, zeCommandListAppendEventReset)                   \
  X(commandListHostSynchronize, zeCommandListHostSynchronize)                     \
  X(memAllocDevice, zeMemAllocDevice)                                             \
  X(memAllocHost, zeMemAllocHost)                                                 \
  X(memAllocShared, zeMemAllocShared)                                             \
  X(memFree, zeMemFree)                                                           \
  X(moduleCreate, zeModuleCreate)                                                 \
  X(moduleDestroy, zeModuleDestroy)                                               \
  X(moduleBuildLogGetString, zeModuleBuildLogGetString)                           \
  X(moduleBuildLogDestroy, zeModuleBuildLogDestroy)                               \
  X(kernelCreate, zeKernelCreate)                                                 \
  X(kernelDestroy, zeKernelDestroy)                                               \
  X(kernelSetArgumentValue, zeKernelSetArgumentValue)                             \
  X(kernelSetGroupSize, zeKernelSetGroupSize)                                     \
  X(kernelSuggestGroupSize, zeKernelSuggestGroupSize)                             \
  X(eventPoolCreate, zeEventPoolCreate)                                           \
  X(eventPoolDestroy, zeEventPoolDestroy)                                         \
  X(eventCreate, zeEventCreate)                                                   \
  X(eventDestroy, zeEventDestroy)                                                 \
  X(eventHostSynchronize, zeEventHostSynchronize)

/// The loader's functions, resolved once per library and process (never closed: a loaded
/// driver keeps threads that outlive any one client).
struct Api {
#define PLUGSDK_ZE_MEMBER(name, symbol) decltype(&::symbol) name = nullptr;
  PLUGSDK_ZE_FUNCTIONS(PLUGSDK_ZE_MEMBER)
#undef PLUGSDK_ZE_MEMBER
  /// zeInitDrivers (loader 1.19 and later; nullptr before): preferred over zeInit.
  decltype(&::zeInitDrivers) initDrivers = nullptr;
  std::string library;  ///< the file that was loaded

  /// OK, or "<what>: 0x70000004 (ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)"; the code follows
  /// the result (out of memory: RESOURCE_EXHAUSTED; not initialized, device lost or an
  /// unsupported feature: FAILED_PRECONDITION; a rejected argument: INVALID_ARGUMENT; else
  /// INTERNAL).
  sdk::Status check(ze_result_t r, const std::string& what) const;
};

/// "0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)" for a result.
std::string resultName(ze_result_t r);

/// Loads the loader (`library`: a file name or path; "" for "libze_loader.so.1").
/// FAILED_PRECONDITION with the reason when it cannot be loaded or lacks an entry point
/// (named): the plugin reports it as "no device".
sdk::StatusOr<std::shared_ptr<const Api>> loadApi(const std::string& library);

}  // namespace plugsdk::level_zero::ze
