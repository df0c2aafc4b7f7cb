// A stand-in for the Level Zero loader (libze_loader.so.1) with one fake GPU behind it, for
// the runtime's plumbing tests on machines with no Intel GPU: it exports the entry points
// runtime/ze_api.h resolves, answers them as a driver would (a GPU device with properties, a
// compute queue group that is not group 0, USM from malloc, copies and fills done at once),
// runs no kernel, and records every call with the arguments the tests check. Controls
// (extern "C", found by the tests with dlsym): make a named call fail with a given result,
// set the build log, make a launch write a code into one of its pointer parameters (the
// status word), pretend the device is not a GPU, read and clear the call log.
#include <level_zero/ze_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct FakeKernel {
  std::map<uint32_t, std::vector<uint8_t>> args;
};

struct State {
  std::mutex mu;
  std::string log;
  std::map<std::string, ze_result_t> failures;
  std::string buildLog;
  int statusParam = -1;
  int32_t statusCode = 0;
  bool notGpu = false;
  bool hostAtomics = true;
  int liveAllocations = 0;
} g;

int gDriver, gDevice, gContext, gList, gModule, gBuildLog, gPool, gEvent;

void note(const std::string& line) {
  std::lock_guard<std::mutex> lock(g.mu);
  g.log += line + "\n";
}

/// The injected failure of `call`, or success.
ze_result_t answer(const char* call) {
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.failures.find(call);
  return it == g.failures.end() ? ZE_RESULT_SUCCESS : it->second;
}

template <typename T>
T handle(int& h) {
  return reinterpret_cast<T>(&h);
}

ze_result_t allocate(const char* call, size_t size, size_t alignment, void** p) {
  note(std::string(call) + " " + std::to_string(size) + " align=" + std::to_string(alignment));
  if (ze_result_t r = answer(call)) return r;
  *p = std::aligned_alloc(alignment ? alignment : 64, size);
  std::lock_guard<std::mutex> lock(g.mu);
  ++g.liveAllocations;
  return ZE_RESULT_SUCCESS;
}

}  // namespace

extern "C" {

// Controls.
__attribute__((visibility("default"))) void plugsdk_fake_ze_fail(const char* call, uint32_t result) {
  std::lock_guard<std::mutex> lock(g.mu);
  if (result == 0)
    g.failures.erase(call);
  else
    g.failures[call] = static_cast<ze_result_t>(result);
}
__attribute__((visibility("default"))) void plugsdk_fake_ze_build_log(const char* text) {
  std::lock_guard<std::mutex> lock(g.mu);
  g.buildLog = text;
}
__attribute__((visibility("default"))) void plugsdk_fake_ze_status_on_launch(int param, int32_t code) {
  std::lock_guard<std::mutex> lock(g.mu);
  g.statusParam = param;
  g.statusCode = code;
}
__attribute__((visibility("default"))) void plugsdk_fake_ze_host_atomics(int on) {
  std::lock_guard<std::mutex> lock(g.mu);
  g.hostAtomics = on != 0;
}
__attribute__((visibility("default"))) void plugsdk_fake_ze_not_gpu(int on) {
  std::lock_guard<std::mutex> lock(g.mu);
  g.notGpu = on != 0;
}
/// The calls since the last take, one a line.
__attribute__((visibility("default"))) size_t plugsdk_fake_ze_take_log(char* out, size_t size) {
  std::lock_guard<std::mutex> lock(g.mu);
  const size_t n = g.log.size();
  if (out && size > n) {
    std::memcpy(out, g.log.c_str(), n + 1);
    g.log.clear();
  }
  return n;
}
__attribute__((visibility("default"))) int plugsdk_fake_ze_live_allocations() {
  std::lock_guard<std::mutex> lock(g.mu);
  return g.liveAllocations;
}

// Drivers and devices.
ze_result_t zeInit(ze_init_flags_t flags) {
  note("zeInit flags=" + std::to_string(flags));
  return answer("zeInit");
}
ze_result_t zeInitDrivers(uint32_t* count, ze_driver_handle_t* drivers, ze_init_driver_type_desc_t* desc) {
  note("zeInitDrivers flags=" + std::to_string(desc ? desc->flags : 0));
  if (ze_result_t r = answer("zeInitDrivers")) return r;
  if (drivers && *count >= 1) drivers[0] = handle<ze_driver_handle_t>(gDriver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDriverGet(uint32_t* count, ze_driver_handle_t* drivers) {
  note("zeDriverGet");
  if (ze_result_t r = answer("zeDriverGet")) return r;
  if (drivers && *count >= 1) drivers[0] = handle<ze_driver_handle_t>(gDriver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDriverGetApiVersion(ze_driver_handle_t, ze_api_version_t* version) {
  *version = ZE_API_VERSION_1_6;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDriverGetProperties(ze_driver_handle_t, ze_driver_properties_t* p) {
  p->driverVersion = 0x01020304;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGet(ze_driver_handle_t, uint32_t* count, ze_device_handle_t* devices) {
  note("zeDeviceGet");
  if (ze_result_t r = answer("zeDeviceGet")) return r;
  if (devices && *count >= 1) devices[0] = handle<ze_device_handle_t>(gDevice);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetProperties(ze_device_handle_t, ze_device_properties_t* p) {
  note("zeDeviceGetProperties stype=" + std::to_string(p->stype));
  if (ze_result_t r = answer("zeDeviceGetProperties")) return r;
  std::lock_guard<std::mutex> lock(g.mu);
  p->type = g.notGpu ? ZE_DEVICE_TYPE_CPU : ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->maxMemAllocSize = uint64_t{1} << 30;
  std::snprintf(p->name, sizeof p->name, "plugsdk fake GPU");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t, ze_device_compute_properties_t* p) {
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = 1024;
  p->maxGroupCountX = 1u << 20;
  p->numSubGroupSizes = 3;
  p->subGroupSizes[0] = 8;
  p->subGroupSizes[1] = 16;
  p->subGroupSizes[2] = 32;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetModuleProperties(ze_device_handle_t, ze_device_module_properties_t* p) {
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  p->flags = ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  p->fp32flags = ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t, uint32_t* count, ze_device_memory_properties_t* p) {
  if (p && *count >= 1) p[0].totalSize = uint64_t{8} << 30;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetMemoryAccessProperties(ze_device_handle_t, ze_device_memory_access_properties_t* p) {
  std::lock_guard<std::mutex> lock(g.mu);
  const ze_memory_access_cap_flags_t rw = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
  p->hostAllocCapabilities = g.hostAtomics ? rw | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC : rw;
  p->deviceAllocCapabilities = p->sharedSingleDeviceAllocCapabilities = rw | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t, uint32_t* count,
                                                   ze_command_queue_group_properties_t* p) {
  // Group 0 copies only; group 1 computes (the runtime must pick 1).
  if (p && *count >= 2) {
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
  }
  *count = 2;
  return ZE_RESULT_SUCCESS;
}

// Contexts, command lists, memory.
ze_result_t zeContextCreate(ze_driver_handle_t, const ze_context_desc_t*, ze_context_handle_t* ctx) {
  note("zeContextCreate");
  if (ze_result_t r = answer("zeContextCreate")) return r;
  *ctx = handle<ze_context_handle_t>(gContext);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeContextDestroy(ze_context_handle_t) {
  note("zeContextDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListCreateImmediate(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t* d,
                                         ze_command_list_handle_t* list) {
  note("zeCommandListCreateImmediate ordinal=" + std::to_string(d->ordinal) + " flags=" + std::to_string(d->flags) +
       " mode=" + std::to_string(d->mode));
  if (ze_result_t r = answer("zeCommandListCreateImmediate")) return r;
  *list = handle<ze_command_list_handle_t>(gList);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListDestroy(ze_command_list_handle_t) {
  note("zeCommandListDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListHostSynchronize(ze_command_list_handle_t, uint64_t) {
  note("zeCommandListHostSynchronize");
  return answer("zeCommandListHostSynchronize");
}
ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t, void* dst, const void* src, size_t size,
                                          ze_event_handle_t, uint32_t, ze_event_handle_t*) {
  note("zeCommandListAppendMemoryCopy " + std::to_string(size));
  if (ze_result_t r = answer("zeCommandListAppendMemoryCopy")) return r;
  std::memcpy(dst, src, size);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t, void* p, const void* pattern, size_t patternSize,
                                          size_t size, ze_event_handle_t, uint32_t, ze_event_handle_t*) {
  note("zeCommandListAppendMemoryFill " + std::to_string(patternSize) + " " + std::to_string(size));
  if (ze_result_t r = answer("zeCommandListAppendMemoryFill")) return r;
  for (size_t i = 0; i < size; i += patternSize) std::memcpy(static_cast<uint8_t*>(p) + i, pattern, patternSize);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t, ze_event_handle_t, uint32_t, ze_event_handle_t*) {
  note("zeCommandListAppendBarrier");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t, ze_event_handle_t) {
  note("zeCommandListAppendSignalEvent");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t, uint32_t n, ze_event_handle_t*) {
  note("zeCommandListAppendWaitOnEvents " + std::to_string(n));
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendEventReset(ze_command_list_handle_t, ze_event_handle_t) {
  note("zeCommandListAppendEventReset");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeMemAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, size_t size, size_t alignment,
                             ze_device_handle_t, void** p) {
  return allocate("zeMemAllocDevice", size, alignment, p);
}
ze_result_t zeMemAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*, size_t size, size_t alignment,
                           void** p) {
  return allocate("zeMemAllocHost", size, alignment, p);
}
ze_result_t zeMemAllocShared(ze_context_handle_t, const ze_device_mem_alloc_desc_t*, const ze_host_mem_alloc_desc_t*,
                             size_t size, size_t alignment, ze_device_handle_t, void** p) {
  return allocate("zeMemAllocShared", size, alignment, p);
}
ze_result_t zeMemFree(ze_context_handle_t, void* p) {
  note("zeMemFree");
  std::free(p);
  std::lock_guard<std::mutex> lock(g.mu);
  --g.liveAllocations;
  return ZE_RESULT_SUCCESS;
}

// Modules and kernels.
ze_result_t zeModuleCreate(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t* d, ze_module_handle_t* m,
                           ze_module_build_log_handle_t* log) {
  uint32_t magic = 0;
  if (d->inputSize >= 4) std::memcpy(&magic, d->pInputModule, 4);
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", magic);
  note("zeModuleCreate format=" + std::to_string(d->format) + " bytes=" + std::to_string(d->inputSize) +
       " magic=" + hex + " flags='" + (d->pBuildFlags ? d->pBuildFlags : "") + "'");
  if (log) *log = handle<ze_module_build_log_handle_t>(gBuildLog);
  if (ze_result_t r = answer("zeModuleCreate")) return r;
  *m = handle<ze_module_handle_t>(gModule);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleDestroy(ze_module_handle_t) {
  note("zeModuleDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t, size_t* size, char* out) {
  std::lock_guard<std::mutex> lock(g.mu);
  if (out && *size >= g.buildLog.size() + 1) std::memcpy(out, g.buildLog.c_str(), g.buildLog.size() + 1);
  *size = g.buildLog.size() + 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t) {
  note("zeModuleBuildLogDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelCreate(ze_module_handle_t, const ze_kernel_desc_t* d, ze_kernel_handle_t* k) {
  note(std::string("zeKernelCreate ") + d->pKernelName);
  if (ze_result_t r = answer("zeKernelCreate")) return r;
  *k = reinterpret_cast<ze_kernel_handle_t>(new FakeKernel());
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelDestroy(ze_kernel_handle_t k) {
  note("zeKernelDestroy");
  delete reinterpret_cast<FakeKernel*>(k);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t index, size_t size, const void* value) {
  note("zeKernelSetArgumentValue " + std::to_string(index) + " " + std::to_string(size));
  if (ze_result_t r = answer("zeKernelSetArgumentValue")) return r;
  const auto* bytes = static_cast<const uint8_t*>(value);
  reinterpret_cast<FakeKernel*>(k)->args[index].assign(bytes, bytes + size);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t, uint32_t x, uint32_t y, uint32_t z) {
  note("zeKernelSetGroupSize " + std::to_string(x) + " " + std::to_string(y) + " " + std::to_string(z));
  return answer("zeKernelSetGroupSize");
}
ze_result_t zeKernelSuggestGroupSize(ze_kernel_handle_t, uint32_t x, uint32_t, uint32_t, uint32_t* gx, uint32_t* gy,
                                     uint32_t* gz) {
  note("zeKernelSuggestGroupSize " + std::to_string(x));
  // As a driver does: the largest power of two up to 256 that divides x.
  uint32_t s = 256;
  while (s > 1 && x % s != 0) s /= 2;
  *gx = s;
  *gy = *gz = 1;
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t, ze_kernel_handle_t k, const ze_group_count_t* c,
                                            ze_event_handle_t, uint32_t, ze_event_handle_t*) {
  note("zeCommandListAppendLaunchKernel " + std::to_string(c->groupCountX) + " " + std::to_string(c->groupCountY) +
       " " + std::to_string(c->groupCountZ));
  if (ze_result_t r = answer("zeCommandListAppendLaunchKernel")) return r;
  std::lock_guard<std::mutex> lock(g.mu);
  auto& args = reinterpret_cast<FakeKernel*>(k)->args;
  if (g.statusParam >= 0 && args.count(g.statusParam) && args[g.statusParam].size() == sizeof(void*)) {
    int32_t* word = nullptr;
    std::memcpy(&word, args[g.statusParam].data(), sizeof word);
    if (*word == 0) *word = g.statusCode;  // the first failure wins, as in the kernels
  }
  return ZE_RESULT_SUCCESS;
}

// Events.
ze_result_t zeEventPoolCreate(ze_context_handle_t, const ze_event_pool_desc_t* d, uint32_t, ze_device_handle_t*,
                              ze_event_pool_handle_t* pool) {
  note("zeEventPoolCreate flags=" + std::to_string(d->flags) + " count=" + std::to_string(d->count));
  if (ze_result_t r = answer("zeEventPoolCreate")) return r;
  *pool = handle<ze_event_pool_handle_t>(gPool);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t) {
  note("zeEventPoolDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventCreate(ze_event_pool_handle_t, const ze_event_desc_t*, ze_event_handle_t* e) {
  note("zeEventCreate");
  *e = handle<ze_event_handle_t>(gEvent);
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventDestroy(ze_event_handle_t) {
  note("zeEventDestroy");
  return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventHostSynchronize(ze_event_handle_t, uint64_t) {
  note("zeEventHostSynchronize");
  return answer("zeEventHostSynchronize");
}

}  // extern "C"
