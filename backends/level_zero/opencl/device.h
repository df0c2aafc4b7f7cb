// The OpenCL device the SPIR-V runs on (PoCL's CPU device in CI): picked from the ICD
// loader's platforms, with its context, its properties, shared virtual memory and in-order
// queues. A machine with no platform, or none that takes SPIR-V and SVM, has no device and
// the reason says what was found.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/level_zero/opencl/opencl_api.h"

namespace plugsdk::level_zero::opencl {

/// What the backend reads of a device.
struct DeviceProps {
  std::string name, platform, platformVersion, version, driver, ilVersion, extensions;
  uint64_t memoryBytes = 0;    ///< CL_DEVICE_GLOBAL_MEM_SIZE
  uint64_t maxAllocBytes = 0;  ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE (one SVM allocation at most)
  uint32_t computeUnits = 0;
  uint32_t maxSubgroups = 0;  ///< CL_DEVICE_MAX_NUM_SUB_GROUPS (0: no sub-groups)
  bool cpu = false;
  bool fp64 = false;                     ///< cl_khr_fp64 (CL_DEVICE_DOUBLE_FP_CONFIG != 0)
  bool int64Atomics = false;             ///< cl_khr_int64_base_atomics and _extended_atomics
  bool correctlyRoundedDivSqrt = false;  ///< -cl-fp32-correctly-rounded-divide-sqrt is taken
  uint64_t svm = 0;                      ///< CL_DEVICE_SVM_CAPABILITIES

  bool hasExtension(const std::string& name) const;
};

class Device {
 public:
  /// Opens the device to run on: among the platforms' devices that take SPIR-V
  /// (CL_DEVICE_IL_VERSION) and coarse-grained SVM buffers, a CPU device first (PoCL's),
  /// else the first. FAILED_PRECONDITION with what was found when there is none (no
  /// platform: no ICD is installed or /etc/OpenCL/vendors is empty).
  static sdk::StatusOr<std::unique_ptr<Device>> open(std::shared_ptr<const Api> api);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Api& api() const { return *api_; }
  const DeviceProps& props() const { return props_; }
  cl_context context() const { return context_; }
  cl_device_id id() const { return device_; }

  /// An in-order queue on the device (release it with api().releaseCommandQueue).
  sdk::StatusOr<cl_command_queue> createQueue() const;
  /// `bytes` of SVM (rounded up to 64 bytes, at least 64: an empty buffer still has an
  /// address, and 8- and 16-bit combining stores swap the aligned 32-bit word around their
  /// element, which must lie in the allocation). RESOURCE_EXHAUSTED past the device's limit.
  sdk::StatusOr<void*> allocate(uint64_t bytes) const;
  void free(void* p) const;

 private:
  Device() = default;
  std::shared_ptr<const Api> api_;
  DeviceProps props_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
};

}  // namespace plugsdk::level_zero::opencl
