// Picking the OpenCL device and opening its context (see device.h).
#include "backends/level_zero/opencl/device.h"

#include <vector>

namespace plugsdk::level_zero::opencl {

bool DeviceProps::hasExtension(const std::string& name) const {
  size_t at = 0;
  while ((at = extensions.find(name, at)) != std::string::npos) {
    const size_t end = at + name.size();
    if ((at == 0 || extensions[at - 1] == ' ') && (end == extensions.size() || extensions[end] == ' ')) return true;
    at = end;
  }
  return false;
}

namespace {

std::string platformString(const Api& api, cl_platform_id p, cl_uint what) {
  size_t n = 0;
  if (api.getPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.getPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

std::string deviceString(const Api& api, cl_device_id d, cl_uint what) {
  size_t n = 0;
  if (api.getDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  if (api.getDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

template <typename T>
T deviceValue(const Api& api, cl_device_id d, cl_uint what) {
  T v{};
  if (api.getDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

DeviceProps readProps(const Api& api, cl_platform_id p, cl_device_id d) {
  DeviceProps props;
  props.platform = platformString(api, p, CL_PLATFORM_NAME);
  props.platformVersion = platformString(api, p, CL_PLATFORM_VERSION);
  props.name = deviceString(api, d, CL_DEVICE_NAME);
  props.version = deviceString(api, d, CL_DEVICE_VERSION);
  props.driver = deviceString(api, d, CL_DRIVER_VERSION);
  props.ilVersion = deviceString(api, d, CL_DEVICE_IL_VERSION);
  props.extensions = deviceString(api, d, CL_DEVICE_EXTENSIONS);
  props.memoryBytes = deviceValue<cl_ulong>(api, d, CL_DEVICE_GLOBAL_MEM_SIZE);
  props.maxAllocBytes = deviceValue<cl_ulong>(api, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  props.computeUnits = deviceValue<cl_uint>(api, d, CL_DEVICE_MAX_COMPUTE_UNITS);
  props.maxSubgroups = deviceValue<cl_uint>(api, d, CL_DEVICE_MAX_NUM_SUB_GROUPS);
  props.cpu = (deviceValue<cl_bitfield>(api, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  props.fp64 = deviceValue<cl_bitfield>(api, d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  props.correctlyRoundedDivSqrt =
      (deviceValue<cl_bitfield>(api, d, CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  props.int64Atomics =
      props.hasExtension("cl_khr_int64_base_atomics") && props.hasExtension("cl_khr_int64_extended_atomics");
  props.svm = deviceValue<cl_bitfield>(api, d, CL_DEVICE_SVM_CAPABILITIES);
  return props;
}

}  // namespace

sdk::StatusOr<std::unique_ptr<Device>> Device::open(std::shared_ptr<const Api> api) {
  cl_uint numPlatforms = 0;
  cl_int r = api->getPlatformIDs(0, nullptr, &numPlatforms);
  if (r == CL_PLATFORM_NOT_FOUND_KHR || (r == CL_SUCCESS && numPlatforms == 0))
    return sdk::failedPrecondition("OpenCL: " + api->library +
                                   " found no platform (no ICD is registered in /etc/OpenCL/vendors or "
                                   "$OCL_ICD_VENDORS; Debian: install pocl-opencl-icd)");
  sdk::Status st = api->check(r, "clGetPlatformIDs");
  if (!st.isOk()) return sdk::failedPrecondition(st.message());
  std::vector<cl_platform_id> platforms(numPlatforms);
  st = api->check(api->getPlatformIDs(numPlatforms, platforms.data(), nullptr), "clGetPlatformIDs");
  if (!st.isOk()) return sdk::failedPrecondition(st.message());

  // Candidates: SPIR-V and coarse-grained SVM; a CPU device (PoCL's) first.
  std::string seen;
  cl_device_id best = nullptr;
  DeviceProps bestProps;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (api->getDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
      seen += (seen.empty() ? "" : "; ") + platformString(*api, p, CL_PLATFORM_NAME) + ": no device";
      continue;
    }
    std::vector<cl_device_id> devices(n);
    if (api->getDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : devices) {
      DeviceProps props = readProps(*api, p, d);
      const bool spirv = props.ilVersion.find("SPIR-V") != std::string::npos;
      const bool svm = (props.svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
      if (!spirv || !svm) {
        seen += (seen.empty() ? "" : "; ") + props.platform + " / " + props.name + ": " +
                (!spirv ? "takes no SPIR-V (CL_DEVICE_IL_VERSION is empty)" : "has no SVM");
        continue;
      }
      if (!best || (props.cpu && !bestProps.cpu)) {
        best = d;
        bestProps = std::move(props);
      }
    }
  }
  if (!best) return sdk::failedPrecondition("OpenCL: no device takes SPIR-V and SVM (" + seen + ")");

  std::unique_ptr<Device> dev(new Device());
  dev->api_ = std::move(api);
  dev->device_ = best;
  dev->props_ = std::move(bestProps);
  cl_int err = CL_SUCCESS;
  dev->context_ = dev->api_->createContext(nullptr, 1, &best, nullptr, nullptr, &err);
  st = dev->api_->check(err, "clCreateContext on " + dev->props_.name);
  if (!st.isOk()) return sdk::failedPrecondition(st.message());
  return dev;
}

Device::~Device() {
  if (context_) api_->releaseContext(context_);
}

sdk::StatusOr<cl_command_queue> Device::createQueue() const {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = api_->createCommandQueueWithProperties(context_, device_, nullptr, &err);
  sdk::Status st = api_->check(err, "clCreateCommandQueueWithProperties");
  if (!st.isOk()) return st;
  return q;
}

sdk::StatusOr<void*> Device::allocate(uint64_t bytes) const {
  const uint64_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  if (props_.maxAllocBytes && rounded > props_.maxAllocBytes)
    return sdk::resourceExhausted("cannot allocate " + std::to_string(bytes) + " bytes on " + props_.name +
                                  ": one allocation takes at most " + std::to_string(props_.maxAllocBytes) +
                                  " bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  void* p = api_->svmAlloc(context_, CL_MEM_READ_WRITE, rounded, 64);
  if (!p)
    return sdk::resourceExhausted("cannot allocate " + std::to_string(bytes) + " bytes on " + props_.name +
                                  " (clSVMAlloc returned NULL)");
  return p;
}

void Device::free(void* p) const {
  if (p) api_->svmFree(context_, p);
}

}  // namespace plugsdk::level_zero::opencl
