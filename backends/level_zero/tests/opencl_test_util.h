// Shared by the tests that run kernels on the OpenCL device (PoCL in the toolbox): the device
// or why there is none (the test skips with it), SVM arrays, kernels from the text form
// lowered, built and launched with their status words read back.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends/level_zero/opencl/device.h"
#include "backends/level_zero/opencl/kernel_status.h"
#include "backends/level_zero/opencl/program.h"
#include "backends/level_zero/tests/spirv_test_util.h"

namespace plugsdk::level_zero::opencl::testing {

/// The device, or why there is none (the test skips with it).
struct Opened {
  std::unique_ptr<Device> device;
  std::string why;
};

inline Opened openDevice() {
  sdk::StatusOr<std::shared_ptr<const Api>> api = loadApi("");
  if (!api.isOk()) return {nullptr, api.status().message()};
  sdk::StatusOr<std::unique_ptr<Device>> d = Device::open(*api);
  if (!d.isOk()) return {nullptr, d.status().message()};
  return {std::move(*d), ""};
}

#define OPEN_OR_SKIP(var)                                   \
  Opened var##Opened = openDevice();                        \
  if (!var##Opened.device) GTEST_SKIP() << var##Opened.why; \
  Device& var = *var##Opened.device

/// SVM for `n` values of T, holding `init` (zero-padded).
template <typename T>
struct SvmArray {
  const Device& d;
  T* p = nullptr;
  size_t n;
  SvmArray(const Device& dev, size_t count, const std::vector<T>& init = {}) : d(dev), n(count) {
    sdk::StatusOr<void*> a = d.allocate(n * sizeof(T));
    EXPECT_TRUE(a.isOk()) << a.status().message();
    p = static_cast<T*>(a.isOk() ? *a : nullptr);
    std::vector<T> host(n);
    std::copy(init.begin(), init.end(), host.begin());
    write(host);
  }
  ~SvmArray() { d.free(p); }
  void write(const std::vector<T>& host) {
    sdk::StatusOr<cl_command_queue> q = d.createQueue();
    ASSERT_TRUE(q.isOk());
    ASSERT_EQ(d.api().enqueueSVMMemcpy(*q, CL_TRUE, p, host.data(), n * sizeof(T), 0, nullptr, nullptr), CL_SUCCESS);
    d.api().releaseCommandQueue(*q);
  }
  std::vector<T> read() const {
    std::vector<T> host(n);
    sdk::StatusOr<cl_command_queue> q = d.createQueue();
    EXPECT_TRUE(q.isOk());
    EXPECT_EQ(d.api().enqueueSVMMemcpy(*q, CL_TRUE, host.data(), p, n * sizeof(T), 0, nullptr, nullptr), CL_SUCCESS);
    d.api().releaseCommandQueue(*q);
    return host;
  }
};

/// A kernel from the text form, lowered, validated, built and ready to launch.
struct Built {
  std::unique_ptr<plugin::EncodedKernel> encoded;
  std::unique_ptr<Kernel> kernel;
};

inline Built build(Device& d, KernelStatus& status, const std::string& text,
                   const spirv::CompileOptions& options = {}) {
  Built b;
  b.encoded = spirv::testing::encode(text);
  if (!b.encoded) return b;
  const sdk::KernelView view(b.encoded->get());
  sdk::StatusOr<spirv::SpirvKernel> sk = spirv::compileKernel(view, std::string(view.name()), options);
  EXPECT_TRUE(sk.isOk()) << sk.status().message();
  if (!sk.isOk()) return b;
  sdk::StatusOr<std::shared_ptr<Program>> p = buildProgram(d, sk->words, "test", "plugsdk_test", "");
  EXPECT_TRUE(p.isOk()) << p.status().message();
  if (!p.isOk()) return b;
  sdk::StatusOr<std::unique_ptr<Kernel>> k = createKernel(d.api(), *p, sk->entry, LaunchShape::of(view));
  EXPECT_TRUE(k.isOk()) << k.status().message();
  if (!k.isOk()) return b;
  b.kernel = std::move(*k);
  b.kernel->shape.groupSize = sk->groupSize;
  b.kernel->status = &status;
  b.kernel->statusSlot = status.assign(b.kernel->shape.name, sk->checkMessages);
  return b;
}

/// Launches and waits; the status words' first error, if any.
inline sdk::Status run(Device& d, KernelStatus& status, Kernel& k, const std::vector<void*>& args,
                       const std::vector<int64_t>& symbols) {
  sdk::StatusOr<cl_command_queue> q = d.createQueue();
  if (!q.isOk()) return q.status();
  sdk::Status st = launchKernel(k, args, symbols, *q);
  if (st.isOk()) st = d.api().check(d.api().finish(*q), "clFinish");
  d.api().releaseCommandQueue(*q);
  if (!st.isOk()) return st;
  return status.collect();
}

}  // namespace plugsdk::level_zero::opencl::testing
