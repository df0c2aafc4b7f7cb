// Finding the Level Zero GPU and opening its context (see ze_device.h).
#include "backends/level_zero/runtime/ze_device.h"

#include <cstdio>
#include <map>
#include <mutex>

#include "plugsdk/plugsdk.h"

namespace plugsdk::level_zero::ze {

std::string DeviceProps::describe() const {
  char driver[32];
  std::snprintf(driver, sizeof driver, "0x%x", driverVersion);
  std::string s = name + " (driver " + driver + ", Level Zero " + std::to_string(ZE_MAJOR_VERSION(apiVersion)) + "." +
                  std::to_string(ZE_MINOR_VERSION(apiVersion)) + ", SPIR-V " +
                  std::to_string(ZE_MAJOR_VERSION(spirvVersion)) + "." +
                  std::to_string(ZE_MINOR_VERSION(spirvVersion)) + ", sub-groups ";
  for (size_t i = 0; i < subGroupSizes.size(); ++i) s += (i ? "/" : "") + std::to_string(subGroupSizes[i]);
  return s + (subGroupSizes.empty() ? "none" : "") + ")";
}

namespace {

/// The GPU drivers: zeInitDrivers where the loader has it, else (or when it finds none)
/// zeInit + zeDriverGet. FAILED_PRECONDITION naming both answers when there is none.
sdk::StatusOr<std::vector<ze_driver_handle_t>> findDrivers(const Api& api) {
  std::string tried;
  if (api.initDrivers) {
    ze_init_driver_type_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC;
    desc.flags = ZE_INIT_DRIVER_TYPE_FLAG_GPU;
    uint32_t n = 0;
    ze_result_t r = api.initDrivers(&n, nullptr, &desc);
    if (r == ZE_RESULT_SUCCESS && n > 0) {
      std::vector<ze_driver_handle_t> drivers(n);
      r = api.initDrivers(&n, drivers.data(), &desc);
      if (r == ZE_RESULT_SUCCESS) {
        drivers.resize(n);
        return drivers;
      }
    }
    tried = "zeInitDrivers returned " + resultName(r) + (r == ZE_RESULT_SUCCESS ? " with 0 drivers" : "") + ", ";
  }
  ze_result_t r = api.init(ZE_INIT_FLAG_GPU_ONLY);
  uint32_t n = 0;
  if (r == ZE_RESULT_SUCCESS) r = api.driverGet(&n, nullptr);
  if (r == ZE_RESULT_SUCCESS && n > 0) {
    std::vector<ze_driver_handle_t> drivers(n);
    r = api.driverGet(&n, drivers.data());
    if (r == ZE_RESULT_SUCCESS) {
      drivers.resize(n);
      return drivers;
    }
  }
  tried += "zeInit/zeDriverGet returned " + resultName(r) + (r == ZE_RESULT_SUCCESS ? " with 0 drivers" : "");
  return sdk::failedPrecondition("Level Zero: " + tried +
                                 (r == ZE_RESULT_ERROR_UNINITIALIZED || r == ZE_RESULT_SUCCESS
                                      ? ": no Level Zero driver (an Intel GPU needs Intel's compute runtime, "
                                        "Debian: libze-intel-gpu1)"
                                      : ""));
}

/// findDrivers, once per loader and process: Debian's loader 1.20.6 crashes (SIGSEGV) in a
/// second zeInitDrivers after the first returned ZE_RESULT_ERROR_UNINITIALIZED (measured in
/// the toolbox), and a driver found once stays.
sdk::StatusOr<std::vector<ze_driver_handle_t>> gpuDrivers(const Api& api) {
  static std::mutex mu;
  static std::map<const Api*, sdk::StatusOr<std::vector<ze_driver_handle_t>>> found;
  std::lock_guard<std::mutex> lock(mu);
  auto it = found.find(&api);
  if (it == found.end()) it = found.emplace(&api, findDrivers(api)).first;
  return it->second;
}

DeviceProps readProps(const Api& api, ze_driver_handle_t driver, ze_device_handle_t d,
                      const ze_device_properties_t& p) {
  DeviceProps props;
  props.name = p.name;
  props.vendorId = p.vendorId;
  props.deviceId = p.deviceId;
  props.integrated = (p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0;
  props.maxAllocBytes = p.maxMemAllocSize;
  ze_driver_properties_t dp{};
  dp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  if (api.driverGetProperties(driver, &dp) == ZE_RESULT_SUCCESS) props.driverVersion = dp.driverVersion;
  ze_api_version_t version{};
  if (api.driverGetApiVersion(driver, &version) == ZE_RESULT_SUCCESS) props.apiVersion = version;
  ze_device_compute_properties_t cp{};
  cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  if (api.deviceGetComputeProperties(d, &cp) == ZE_RESULT_SUCCESS) {
    props.maxTotalGroupSize = cp.maxTotalGroupSize;
    props.maxGroupSizeX = cp.maxGroupSizeX;
    props.maxGroupCountX = cp.maxGroupCountX;
    for (uint32_t i = 0; i < cp.numSubGroupSizes && i < ZE_SUBGROUPSIZE_COUNT; ++i)
      props.subGroupSizes.push_back(cp.subGroupSizes[i]);
  }
  ze_device_module_properties_t mp{};
  mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  if (api.deviceGetModuleProperties(d, &mp) == ZE_RESULT_SUCCESS) {
    props.spirvVersion = mp.spirvVersionSupported;
    props.fp16 = (mp.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
    props.fp64 = (mp.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
    props.int64Atomics = (mp.flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS) != 0;
    props.roundedDivSqrt = (mp.fp32flags & ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT) != 0;
  }
  uint32_t n = 0;
  if (api.deviceGetMemoryProperties(d, &n, nullptr) == ZE_RESULT_SUCCESS && n > 0) {
    std::vector<ze_device_memory_properties_t> mem(n);
    for (auto& m : mem) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    if (api.deviceGetMemoryProperties(d, &n, mem.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n; ++i) props.memoryBytes += mem[i].totalSize;
  }
  ze_device_memory_access_properties_t access{};
  access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
  if (api.deviceGetMemoryAccessProperties(d, &access) == ZE_RESULT_SUCCESS) {
    props.hostAtomics = (access.hostAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC) != 0;
    props.sharedAtomics = (access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC) != 0;
  }
  n = 0;
  if (api.deviceGetCommandQueueGroupProperties(d, &n, nullptr) == ZE_RESULT_SUCCESS && n > 0) {
    std::vector<ze_command_queue_group_properties_t> groups(n);
    for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    if (api.deviceGetCommandQueueGroupProperties(d, &n, groups.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n; ++i)
        if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
          props.computeOrdinal = i;
          break;
        }
  }
  return props;
}

}  // namespace

sdk::StatusOr<std::unique_ptr<Device>> Device::open(std::shared_ptr<const Api> api) {
  sdk::StatusOr<std::vector<ze_driver_handle_t>> drivers = gpuDrivers(*api);
  if (!drivers.isOk()) return drivers.status();
  std::string seen;
  for (ze_driver_handle_t driver : *drivers) {
    uint32_t n = 0;
    sdk::Status st = api->check(api->deviceGet(driver, &n, nullptr), "zeDeviceGet");
    std::vector<ze_device_handle_t> devices(n);
    if (st.isOk() && n > 0) st = api->check(api->deviceGet(driver, &n, devices.data()), "zeDeviceGet");
    if (!st.isOk()) return sdk::failedPrecondition("Level Zero: " + st.message());
    for (uint32_t i = 0; i < n; ++i) {
      ze_device_properties_t p{};
      p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      st = api->check(api->deviceGetProperties(devices[i], &p), "zeDeviceGetProperties");
      if (!st.isOk()) return sdk::failedPrecondition("Level Zero: " + st.message());
      if (p.type != ZE_DEVICE_TYPE_GPU) {
        seen += std::string(seen.empty() ? "" : "; ") + p.name + ": not a GPU (type " + std::to_string(p.type) + ")";
        continue;
      }
      std::unique_ptr<Device> dev(new Device());
      dev->api_ = api;
      dev->driver_ = driver;
      dev->device_ = devices[i];
      dev->props_ = readProps(*api, driver, devices[i], p);
      ze_context_desc_t desc{};
      desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
      st = api->check(api->contextCreate(driver, &desc, &dev->context_), "zeContextCreate on " + dev->props_.name);
      if (!st.isOk()) return sdk::failedPrecondition("Level Zero: " + st.message());
      return dev;
    }
  }
  return sdk::failedPrecondition("Level Zero: " + std::to_string(drivers->size()) + " driver(s) but no GPU (" +
                                 (seen.empty() ? "no device" : seen) + ")");
}

Device::~Device() {
  if (context_) api_->contextDestroy(context_);
}

sdk::StatusOr<ze_command_list_handle_t> Device::createList() const {
  ze_command_queue_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.ordinal = props_.computeOrdinal;
  desc.index = 0;
  desc.flags = ZE_COMMAND_QUEUE_FLAG_IN_ORDER;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  ze_command_list_handle_t list = nullptr;
  sdk::Status st =
      api_->check(api_->commandListCreateImmediate(context_, device_, &desc, &list), "zeCommandListCreateImmediate");
  if (!st.isOk()) return st;
  return list;
}

sdk::StatusOr<void*> Device::allocate(uint32_t kind, uint64_t bytes) const {
  const uint64_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  const std::string what = "allocating " + std::to_string(bytes) + " bytes on " + props_.name;
  if (props_.maxAllocBytes && rounded > props_.maxAllocBytes)
    return sdk::resourceExhausted(what + ": one allocation takes at most " + std::to_string(props_.maxAllocBytes) +
                                  " bytes (maxMemAllocSize)");
  ze_device_mem_alloc_desc_t device{};
  device.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  ze_host_mem_alloc_desc_t host{};
  host.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void* p = nullptr;
  sdk::Status st;
  switch (kind) {
    case PLUGSDK_MEMORY_HOST:
      st = api_->check(api_->memAllocHost(context_, &host, rounded, 64, &p), what + ": zeMemAllocHost");
      break;
    case PLUGSDK_MEMORY_SHARED:
      st = api_->check(api_->memAllocShared(context_, &device, &host, rounded, 64, device_, &p),
                       what + ": zeMemAllocShared");
      break;
    default:
      st = api_->check(api_->memAllocDevice(context_, &device, rounded, 64, device_, &p), what + ": zeMemAllocDevice");
      break;
  }
  if (!st.isOk()) return st;
  return p;
}

void Device::free(void* p) const {
  if (p) api_->memFree(context_, p);
}

}  // namespace plugsdk::level_zero::ze
