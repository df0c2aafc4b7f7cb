// Device discovery (see device.h).
#include "backends/cuda/runtime/device.h"

namespace plugsdk::cuda {

sdk::StatusOr<std::vector<Device>> openDevices(const DriverApi& api) {
  int count = 0;
  sdk::Status st = api.check(api.deviceGetCount(&count), "cuDeviceGetCount");
  if (!st.isOk()) return st;
  std::vector<Device> out;
  for (int i = 0; i < count; ++i) {
    Device d;
    st = api.check(api.deviceGet(&d.handle, i), "cuDeviceGet(" + std::to_string(i) + ")");
    if (!st.isOk()) break;
    char name[256] = {};
    api.deviceGetName(name, sizeof(name) - 1, d.handle);
    d.name = name;
    auto attr = [&](int a) {
      int v = 0;
      api.deviceGetAttribute(&v, a, d.handle);
      return v;
    };
    d.arch.major = attr(kAttrComputeCapabilityMajor);
    d.arch.minor = attr(kAttrComputeCapabilityMinor);
    d.multiprocessors = attr(kAttrMultiprocessorCount);
    d.l2Bytes = attr(kAttrL2CacheSize);
    d.maxGridX = attr(kAttrMaxGridDimX);
    // kHz x bits: two transfers per clock (DDR), bytes per transfer = bus width / 8.
    d.dramGBs = 2.0 * attr(kAttrMemoryClockRateKHz) * 1e3 * (attr(kAttrGlobalMemoryBusWidth) / 8) / 1e9;
    size_t bytes = 0;
    api.deviceTotalMem(&bytes, d.handle);
    d.memoryBytes = bytes;
    st = api.check(api.primaryCtxRetain(&d.context, d.handle), "cuDevicePrimaryCtxRetain(" + d.name + ")");
    if (!st.isOk()) break;
    out.push_back(d);
  }
  if (!st.isOk()) {
    closeDevices(api, out);
    return st;
  }
  return out;
}

void closeDevices(const DriverApi& api, std::vector<Device>& devices) {
  for (Device& d : devices)
    if (d.context) api.primaryCtxRelease(d.handle);
  devices.clear();
}

}  // namespace plugsdk::cuda
