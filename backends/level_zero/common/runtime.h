// What the plugin needs of a runtime that runs the backend's SPIR-V: memory the kernels take
// as plain pointers (OpenCL SVM, Level Zero USM), in-order queues (an OpenCL in-order queue,
// a Level Zero in-order immediate command list), events, modules built from SPIR-V words,
// and kernels launched over the flattened grid with the status words read back. Two
// implementations: opencl/runtime.h (PoCL in CI) and runtime/ze_runtime.h (Intel GPUs through
// the Level Zero loader). plugin.cc keeps what is the same for both: options, lowering,
// dumps, sharing modules, the ordering of work without a stream, copies and fills the
// runtime cannot do in one call.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/level_zero/common/kernel_status.h"
#include "backends/level_zero/common/launch_shape.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero {

/// What the runtime says of its device (the plugin's DeviceInfo is made from it).
struct RuntimeDevice {
  std::string description;  ///< name, driver, runtime
  bool fp64 = false;
  uint32_t memoryKinds = 0;  ///< PLUGSDK_MEMORY_* the runtime allocates
  uint64_t memoryBytes = 0;
  uint64_t maxAllocBytes = 0;
  /// The work-items of a work-group run one after another (a CPU device: PoCL's), so a
  /// spread loop gives each a contiguous chunk (spirv::CompileOptions::contiguousChunks).
  bool workItemsInSequence = false;
  uint32_t computeUnits = 0;  ///< 0: unknown
  /// The smallest sub-group the device forms (spirv::CompileOptions::minSubgroupSize): 0,
  /// unknown (no sub-group sums); UINT32_MAX, a sub-group is the whole work-group.
  uint32_t minSubgroupSize = 0;
};

/// An in-order queue (opaque to the plugin).
using Queue = void*;

/// A recorded point of a queue (released with the event).
class RuntimeEvent {
 public:
  virtual ~RuntimeEvent() = default;
};

/// A built module (shared by the kernels created from it).
class RuntimeModule {
 public:
  virtual ~RuntimeModule() = default;
};

/// A kernel ready to launch: its grid and parameters and its status slot. Its argument
/// values live in the runtime's kernel object, so launches of one kernel hold `mu`.
struct RuntimeKernel {
  LaunchShape shape;
  KernelStatus* status = nullptr;  ///< the client's, which outlives its kernels
  uint32_t statusSlot = 0;
  std::mutex mu;
  virtual ~RuntimeKernel() {
    if (status) status->release(statusSlot);
  }
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual const RuntimeDevice& device() const = 0;

  /// `bytes` (rounded up to 64, at least 64: an empty buffer still has an address, and 8- and
  /// 16-bit combining stores swap the aligned 32-bit word around their element) of memory of
  /// `kind` (one PLUGSDK_MEMORY_* bit the device reports). RESOURCE_EXHAUSTED past the limit.
  virtual sdk::StatusOr<void*> allocate(uint32_t kind, uint64_t bytes) = 0;
  virtual void free(void* p) = 0;

  virtual sdk::StatusOr<Queue> createQueue() = 0;
  virtual void destroyQueue(Queue q) = 0;  ///< after its work finished
  /// Waits for everything queued on `q`.
  virtual sdk::Status finish(Queue q, const std::string& what) = 0;
  /// Copies `bytes` between any two of the runtime's memory and host memory (not
  /// overlapping); `wait`: finished on return.
  virtual sdk::Status copy(Queue q, void* dst, const void* src, uint64_t bytes, bool wait) = 0;
  /// Fills `bytes` at `p` (aligned to `patternBytes`, a power of two up to 8) with the pattern.
  virtual sdk::Status fill(Queue q, void* p, const void* pattern, uint32_t patternBytes, uint64_t bytes) = 0;

  virtual sdk::StatusOr<std::unique_ptr<RuntimeEvent>> createEvent() = 0;
  /// `e` becomes the point of `q` after the work queued so far.
  virtual sdk::Status record(RuntimeEvent& e, Queue q) = 0;
  /// Work queued on `q` from now on waits for `e` (recorded).
  virtual sdk::Status wait(Queue q, RuntimeEvent& e) = 0;
  /// The host waits for `e` (recorded).
  virtual sdk::Status synchronize(RuntimeEvent& e) = 0;

  /// Builds `words`. When the device rejects them: INTERNAL with the build log, the module
  /// kept in `keepDir` (or $TMPDIR, or /tmp) as `stem`.spv, and the command that reproduces
  /// the build (`what` names the module in the message).
  virtual sdk::StatusOr<std::shared_ptr<RuntimeModule>> build(const std::vector<uint32_t>& words,
                                                              const std::string& what, const std::string& stem,
                                                              const std::string& keepDir) = 0;
  /// The kernel `entry` of `module`, for launches of `k`; its status slot reports failures
  /// with these CHECK messages.
  virtual sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createKernel(std::shared_ptr<RuntimeModule> module,
                                                                     const std::string& entry, const sdk::KernelView& k,
                                                                     std::vector<std::string> checkMessages) = 0;
  /// The kernel `entry` of a module the backend wrote itself (a library op: library/), named
  /// `name` in messages; it has no grid and no status word.
  virtual sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createLibraryKernel(std::shared_ptr<RuntimeModule> module,
                                                                            const std::string& entry,
                                                                            const std::string& name) = 0;
  /// Queues a library kernel on `q` (not waited for) over groups[0] x groups[1] x groups[2]
  /// work-groups of local[] work-items (its module's LocalSize), with `params`.
  virtual sdk::Status launchGroups(RuntimeKernel& k, const std::vector<KernelParam>& params,
                                   const std::array<uint32_t, 3>& local, const std::array<uint64_t, 3>& groups,
                                   Queue q) = 0;
  /// Queues `k` on `q` (not waited for): one work-item per grid point, the parameters of
  /// common/launch_shape.h.
  virtual sdk::Status launch(RuntimeKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                             Queue q) = 0;
  /// The status words' first error since the last call (the work that wrote them finished).
  virtual sdk::Status collectStatus() = 0;
};

/// What both runtimes hold: their device (opened from the API table), its description, the
/// status words; and how both open: load the library once per process, open the device,
/// `Impl::init()` (which makes the status words).
template <typename Impl, typename DeviceT, typename ApiT>
class RuntimeOn : public Runtime {
 public:
  using LoadApi = sdk::StatusOr<std::shared_ptr<const ApiT>> (*)(const std::string&);
  ~RuntimeOn() override { status_.reset(); }  // the words go before the device
  const RuntimeDevice& device() const override { return info_; }
  sdk::Status collectStatus() override { return status_->collect(); }

  /// FAILED_PRECONDITION, saying why, where the library or a device is missing.
  static sdk::StatusOr<std::unique_ptr<Runtime>> open(const std::string& library, LoadApi loadApi) {
    sdk::StatusOr<std::shared_ptr<const ApiT>> api = loadApi(library);
    if (!api.isOk()) return api.status();
    sdk::StatusOr<std::unique_ptr<DeviceT>> device = DeviceT::open(*api);
    if (!device.isOk()) return device.status();
    auto rt = std::make_unique<Impl>(std::move(*device));
    sdk::Status st = rt->init();
    if (!st.isOk()) return st;
    return std::unique_ptr<Runtime>(std::move(rt));
  }

 protected:
  explicit RuntimeOn(std::unique_ptr<DeviceT> device) : device_(std::move(device)), api_(device_->api()) {}
  std::unique_ptr<DeviceT> device_;
  const ApiT& api_;
  RuntimeDevice info_;
  std::unique_ptr<KernelStatus> status_;
};

/// `load(library)`, once per library name and process (a loaded runtime is never closed:
/// drivers keep threads that outlive any one client).
template <typename ApiT>
sdk::StatusOr<std::shared_ptr<const ApiT>> loadOnce(
    const std::string& library, sdk::StatusOr<std::shared_ptr<const ApiT>> (*load)(const std::string&)) {
  static std::mutex mu;
  static std::map<std::string, sdk::StatusOr<std::shared_ptr<const ApiT>>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(library);
  if (it == loaded.end()) it = loaded.emplace(library, load(library)).first;
  return it->second;
}

/// Writes a module a consumer rejected to `keepDir` (or $TMPDIR, or /tmp) as `stem`.spv and
/// returns the file's path.
std::string keepRejectedModule(const std::vector<uint32_t>& words, const std::string& stem, const std::string& keepDir);

}  // namespace plugsdk::level_zero
