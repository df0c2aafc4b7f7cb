// The Level Zero device the SPIR-V runs on: the first GPU of the loader's drivers
// (zeInitDrivers, else zeInit), what the backend reads of it (properties, compute, module
// and memory properties, the compute queue group), its context, USM allocations and in-order
// immediate command lists. No loader, no driver or no GPU is FAILED_PRECONDITION saying what
// was found (the plugin has no device then: "Level Zero: zeInitDrivers returned 0x78000001
// (ZE_RESULT_ERROR_UNINITIALIZED): no Level Zero driver" on these machines).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/level_zero/runtime/ze_api.h"

namespace plugsdk::level_zero::ze {

/// What the backend reads of a device.
struct DeviceProps {
  std::string name;
  uint32_t driverVersion = 0, apiVersion = 0, vendorId = 0, deviceId = 0;
  bool integrated = false;
  uint64_t maxAllocBytes = 0;  ///< maxMemAllocSize: one allocation at most
  uint64_t memoryBytes = 0;    ///< the device's memories' totalSize, summed
  uint32_t maxTotalGroupSize = 0, maxGroupSizeX = 0, maxGroupCountX = 0;
  std::vector<uint32_t> subGroupSizes;
  uint32_t spirvVersion = 0;  ///< ZE_MAKE_VERSION(major, minor); 0: takes no SPIR-V
  bool fp16 = false, fp64 = false, int64Atomics = false;
  bool roundedDivSqrt = false;  ///< f32 divide and sqrt correctly rounded on request
  uint32_t computeOrdinal = 0;  ///< the command queue group with compute
  /// Kernels' atomics reach USM host / shared memory (ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC).
  bool hostAtomics = false, sharedAtomics = false;

  /// "Intel(R) Arc(TM) A770 (driver 0x..., Level Zero 1.12, SPIR-V 1.4, sub-groups 8/16/32)"
  std::string describe() const;
};

class Device {
 public:
  /// Opens the first GPU device of the loader `api` (see the banner).
  static sdk::StatusOr<std::unique_ptr<Device>> open(std::shared_ptr<const Api> api);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Api& api() const { return *api_; }
  const DeviceProps& props() const { return props_; }
  ze_device_handle_t handle() const { return device_; }
  ze_context_handle_t context() const { return context_; }

  /// An in-order immediate command list on the compute queue group.
  sdk::StatusOr<ze_command_list_handle_t> createList() const;
  /// `bytes` of USM of `kind` (PLUGSDK_MEMORY_DEVICE: zeMemAllocDevice, HOST: zeMemAllocHost,
  /// SHARED: zeMemAllocShared), rounded up to 64 bytes, at least 64, aligned to 64.
  /// RESOURCE_EXHAUSTED past maxMemAllocSize or when the driver runs out.
  sdk::StatusOr<void*> allocate(uint32_t kind, uint64_t bytes) const;
  void free(void* p) const;

 private:
  Device() = default;
  std::shared_ptr<const Api> api_;
  DeviceProps props_;
  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_context_handle_t context_ = nullptr;
};

}  // namespace plugsdk::level_zero::ze
