// What the cuDNN probes share: device 0's primary context made current, cuDNN loaded with a
// handle, and a stream. The probes run on the GPU machine (tools/probes/device_cudnn_*.sh).
#pragma once

#include <cstdio>
#include <memory>
#include <optional>

#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/cudnn_api.h"

namespace plugsdk::cuda {

struct ProbeDevice {
  std::shared_ptr<const DriverApi> driver;
  std::shared_ptr<const dnn::Api> dnn;
  CUcontext context = nullptr;
  dnn::Handle handle = nullptr;
  CUstream stream = nullptr;
};

/// The device, or nullopt after printing why it could not be opened (no driver, no cuDNN).
inline std::optional<ProbeDevice> openProbeDevice() {
  ProbeDevice d;
  auto cu = loadDriver("");
  if (!cu.isOk()) {
    std::printf("driver: %s\n", cu.status().message().c_str());
    return std::nullopt;
  }
  d.driver = *cu;
  d.driver->init(0);
  d.driver->primaryCtxRetain(&d.context, 0);
  d.driver->ctxPushCurrent(d.context);
  auto dnnApi = dnn::load("");
  if (!dnnApi.isOk()) {
    std::printf("cudnn: %s\n", dnnApi.status().message().c_str());
    return std::nullopt;
  }
  d.dnn = *dnnApi;
  d.dnn->create(&d.handle);
  d.driver->streamCreate(&d.stream, 0);
  return d;
}

}  // namespace plugsdk::cuda
