// The stand-in of ze_fake_loader.cc as a Level Zero *driver*: the tables the real loader
// (libze_loader.so.1) asks a driver for, filled with the stand-in's functions, so the real
// loader's dispatch can be tested with it posing as the loader's null driver
// (libze_null.so.1, ZE_ENABLE_NULL_DRIVER=1: level_zero_null_driver_test). The loader asks
// for every table (core, tools, sysman) and gives up when one is missing: the ones the
// runtime does not use are answered empty (the loader turns a null entry into an error).
#include <level_zero/ze_ddi.h>

#include <cstdint>

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t, ze_global_dditable_t* t) {
  t->pfnInit = zeInit;
  t->pfnInitDrivers = zeInitDrivers;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t, ze_driver_dditable_t* t) {
  t->pfnGet = zeDriverGet;
  t->pfnGetApiVersion = zeDriverGetApiVersion;
  t->pfnGetProperties = zeDriverGetProperties;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t, ze_device_dditable_t* t) {
  t->pfnGet = zeDeviceGet;
  t->pfnGetProperties = zeDeviceGetProperties;
  t->pfnGetComputeProperties = zeDeviceGetComputeProperties;
  t->pfnGetModuleProperties = zeDeviceGetModuleProperties;
  t->pfnGetMemoryProperties = zeDeviceGetMemoryProperties;
  t->pfnGetMemoryAccessProperties = zeDeviceGetMemoryAccessProperties;
  t->pfnGetCommandQueueGroupProperties = zeDeviceGetCommandQueueGroupProperties;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t, ze_context_dditable_t* t) {
  t->pfnCreate = zeContextCreate;
  t->pfnDestroy = zeContextDestroy;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t, ze_command_list_dditable_t* t) {
  t->pfnCreateImmediate = zeCommandListCreateImmediate;
  t->pfnDestroy = zeCommandListDestroy;
  t->pfnAppendLaunchKernel = zeCommandListAppendLaunchKernel;
  t->pfnAppendMemoryCopy = zeCommandListAppendMemoryCopy;
  t->pfnAppendMemoryFill = zeCommandListAppendMemoryFill;
  t->pfnAppendBarrier = zeCommandListAppendBarrier;
  t->pfnAppendSignalEvent = zeCommandListAppendSignalEvent;
  t->pfnAppendWaitOnEvents = zeCommandListAppendWaitOnEvents;
  t->pfnAppendEventReset = zeCommandListAppendEventReset;
  t->pfnHostSynchronize = zeCommandListHostSynchronize;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t, ze_mem_dditable_t* t) {
  t->pfnAllocDevice = zeMemAllocDevice;
  t->pfnAllocHost = zeMemAllocHost;
  t->pfnAllocShared = zeMemAllocShared;
  t->pfnFree = zeMemFree;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t, ze_module_dditable_t* t) {
  t->pfnCreate = zeModuleCreate;
  t->pfnDestroy = zeModuleDestroy;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(ze_api_version_t,
                                                                     ze_module_build_log_dditable_t* t) {
  t->pfnGetString = zeModuleBuildLogGetString;
  t->pfnDestroy = zeModuleBuildLogDestroy;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t, ze_kernel_dditable_t* t) {
  t->pfnCreate = zeKernelCreate;
  t->pfnDestroy = zeKernelDestroy;
  t->pfnSetArgumentValue = zeKernelSetArgumentValue;
  t->pfnSetGroupSize = zeKernelSetGroupSize;
  t->pfnSuggestGroupSize = zeKernelSuggestGroupSize;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t, ze_event_pool_dditable_t* t) {
  t->pfnCreate = zeEventPoolCreate;
  t->pfnDestroy = zeEventPoolDestroy;
  return ZE_RESULT_SUCCESS;
}
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t, ze_event_dditable_t* t) {
  t->pfnCreate = zeEventCreate;
  t->pfnDestroy = zeEventDestroy;
  t->pfnHostSynchronize = zeEventHostSynchronize;
  return ZE_RESULT_SUCCESS;
}
