// The Level Zero runtime (see ze_runtime.h).
#include "backends/level_zero/runtime/ze_runtime.h"

#include <cstring>
#include <limits>

#include "plugsdk/plugsdk.h"

namespace plugsdk::level_zero::ze {

std::string reproduceCommand(const std::string& file, const std::string& device) {
  return "ocloc compile -spirv_input -file " + file + " -device <" + device +
         "'s ocloc name, e.g. dg2>   (Intel's offline compiler, intel-ocloc)";
}

uint64_t suggestedFor(uint64_t points) {
  const uint64_t rounded = (points + 63) / 64 * 64;
  return std::min<uint64_t>(rounded, uint64_t{1} << 31);
}

sdk::StatusOr<Groups> groupsFor(uint64_t points, uint32_t suggested, uint32_t maxGroupCountX,
                                const std::string& kernel) {
  Groups g;
  g.size = suggested == 0 ? 1 : suggested;
  const uint64_t count = (points + g.size - 1) / g.size;
  const uint64_t limit = maxGroupCountX ? maxGroupCountX : std::numeric_limits<uint32_t>::max();
  if (count > limit)
    return sdk::invalidArgument("kernel @" + kernel + ": " + std::to_string(points) + " work-items in groups of " +
                                std::to_string(g.size) + " are " + std::to_string(count) +
                                " groups, more than the device's maxGroupCountX " + std::to_string(limit));
  g.count = static_cast<uint32_t>(count);
  return g;
}

namespace {

ze_command_list_handle_t listOf(Queue q) { return static_cast<ze_command_list_handle_t>(q); }
constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

/// The status words in USM host (or shared) memory: kernels write them through PCIe (or the
/// memory an integrated GPU shares); the host reads and clears them directly.
class HostWords : public KernelStatus::Words {
 public:
  HostWords(const Device& device, uint32_t* words) : device_(device), words_(words) {}
  ~HostWords() override { device_.free(words_); }
  uint32_t* base() const override { return words_; }
  sdk::Status read(int32_t* out, uint32_t count) override {
    std::memcpy(out, words_, 4ull * count);
    return sdk::Status::ok();
  }
  void clear(uint32_t slot) override { words_[slot] = 0; }

 private:
  const Device& device_;
  uint32_t* words_;
};

struct Module : RuntimeModule {
  const Api* api = nullptr;
  ze_module_handle_t module = nullptr;
  ~Module() override {
    if (module) api->moduleDestroy(module);
  }
};

struct Kernel : RuntimeKernel {
  const Api* api = nullptr;
  std::shared_ptr<Module> module;
  ze_kernel_handle_t kernel = nullptr;
  ~Kernel() override {
    if (kernel) api->kernelDestroy(kernel);
  }
};

struct Event : RuntimeEvent {
  const Api* api = nullptr;
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t event = nullptr;
  bool recorded = false;
  ~Event() override {
    if (event) api->eventDestroy(event);
    if (pool) api->eventPoolDestroy(pool);
  }
};

class ZeRuntime : public RuntimeOn<ZeRuntime, Device, Api> {
 public:
  explicit ZeRuntime(std::unique_ptr<Device> device) : RuntimeOn(std::move(device)) {
    const DeviceProps& p = device_->props();
    info_.description = p.describe() + "; SPIR-V through Level Zero, runtime=level_zero";
    info_.fp64 = p.fp64;
    for (uint32_t s : p.subGroupSizes)
      if (s && (!info_.minSubgroupSize || s < info_.minSubgroupSize)) info_.minSubgroupSize = s;
    info_.memoryKinds = PLUGSDK_MEMORY_DEVICE;
    info_.memoryBytes = p.memoryBytes;
    info_.maxAllocBytes = p.maxAllocBytes;
  }
  sdk::Status init() {
    // The kernels write the words with atomics: host memory where the device's atomics reach
    // it, else shared memory (also read by the host directly once the work finished).
    const uint32_t kind =
        device_->props().hostAtomics || !device_->props().sharedAtomics ? PLUGSDK_MEMORY_HOST : PLUGSDK_MEMORY_SHARED;
    sdk::StatusOr<void*> p = device_->allocate(kind, 4ull * KernelStatus::kSlots);
    if (!p.isOk()) return p.status().withContext("the kernel status words");
    std::memset(*p, 0, 4ull * KernelStatus::kSlots);
    status_ = std::make_unique<KernelStatus>(std::make_unique<HostWords>(*device_, static_cast<uint32_t*>(*p)));
    return sdk::Status::ok();
  }

  sdk::StatusOr<void*> allocate(uint32_t kind, uint64_t bytes) override { return device_->allocate(kind, bytes); }
  void free(void* p) override { device_->free(p); }

  sdk::StatusOr<Queue> createQueue() override {
    sdk::StatusOr<ze_command_list_handle_t> l = device_->createList();
    if (!l.isOk()) return l.status();
    return static_cast<Queue>(*l);
  }
  void destroyQueue(Queue q) override {
    api_.commandListHostSynchronize(listOf(q), kForever);
    api_.commandListDestroy(listOf(q));
  }
  sdk::Status finish(Queue q, const std::string& what) override {
    return api_.check(api_.commandListHostSynchronize(listOf(q), kForever), what + ": zeCommandListHostSynchronize");
  }

  sdk::Status copy(Queue q, void* dst, const void* src, uint64_t bytes, bool wait) override {
    const std::string what = "zeCommandListAppendMemoryCopy(" + std::to_string(bytes) + " bytes)";
    sdk::Status st =
        api_.check(api_.commandListAppendMemoryCopy(listOf(q), dst, src, bytes, nullptr, 0, nullptr), what);
    if (st.isOk() && wait) st = finish(q, what);
    return st;
  }
  sdk::Status fill(Queue q, void* p, const void* pattern, uint32_t patternBytes, uint64_t bytes) override {
    return api_.check(api_.commandListAppendMemoryFill(listOf(q), p, pattern, patternBytes, bytes, nullptr, 0, nullptr),
                      "zeCommandListAppendMemoryFill(" + std::to_string(bytes) + " bytes)");
  }

  sdk::StatusOr<std::unique_ptr<RuntimeEvent>> createEvent() override {
    auto e = std::make_unique<Event>();
    e->api = &api_;
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pd.count = 1;
    ze_device_handle_t d = device_->handle();
    sdk::Status st = api_.check(api_.eventPoolCreate(device_->context(), &pd, 1, &d, &e->pool), "zeEventPoolCreate");
    if (!st.isOk()) return st;
    ze_event_desc_t ed{};
    ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
    ed.index = 0;
    ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
    ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
    st = api_.check(api_.eventCreate(e->pool, &ed, &e->event), "zeEventCreate");
    if (!st.isOk()) return st;
    return std::unique_ptr<RuntimeEvent>(std::move(e));
  }
  sdk::Status record(RuntimeEvent& re, Queue q) override {
    auto& e = static_cast<Event&>(re);
    // In order: the reset, then the signal, follow the work queued so far.
    sdk::Status st = api_.check(api_.commandListAppendEventReset(listOf(q), e.event), "zeCommandListAppendEventReset");
    if (st.isOk())
      st = api_.check(api_.commandListAppendSignalEvent(listOf(q), e.event), "zeCommandListAppendSignalEvent");
    if (st.isOk()) e.recorded = true;
    return st;
  }
  sdk::Status wait(Queue q, RuntimeEvent& re) override {
    auto& e = static_cast<Event&>(re);
    if (!e.recorded) return sdk::Status::ok();
    return api_.check(api_.commandListAppendWaitOnEvents(listOf(q), 1, &e.event), "zeCommandListAppendWaitOnEvents");
  }
  sdk::Status synchronize(RuntimeEvent& re) override {
    auto& e = static_cast<Event&>(re);
    if (!e.recorded) return sdk::Status::ok();
    return api_.check(api_.eventHostSynchronize(e.event, kForever), "zeEventHostSynchronize");
  }

  sdk::StatusOr<std::shared_ptr<RuntimeModule>> build(const std::vector<uint32_t>& words, const std::string& what,
                                                      const std::string& stem, const std::string& keepDir) override {
    auto m = std::make_shared<Module>();
    m->api = &api_;
    // The reference computes f32 division and sqrt correctly rounded; OpenCL's rules (which
    // IGC follows for SPIR-V) allow 2.5 and 3 ulp unless asked.
    const char* flags = device_->props().roundedDivSqrt ? "-cl-fp32-correctly-rounded-divide-sqrt" : "";
    ze_module_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    desc.inputSize = words.size() * 4;
    desc.pInputModule = reinterpret_cast<const uint8_t*>(words.data());
    desc.pBuildFlags = flags;
    ze_module_build_log_handle_t log = nullptr;
    const ze_result_t r = api_.moduleCreate(device_->context(), device_->handle(), &desc, &m->module, &log);
    std::string text;
    if (log) {
      size_t n = 0;
      if (r != ZE_RESULT_SUCCESS && api_.moduleBuildLogGetString(log, &n, nullptr) == ZE_RESULT_SUCCESS && n > 0) {
        text.assign(n, '\0');
        if (api_.moduleBuildLogGetString(log, &n, text.data()) != ZE_RESULT_SUCCESS) text.clear();
        text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
      }
      api_.moduleBuildLogDestroy(log);
    }
    if (r == ZE_RESULT_SUCCESS) return std::shared_ptr<RuntimeModule>(std::move(m));
    m->module = nullptr;
    const std::string file = keepRejectedModule(words, stem, keepDir);
    const sdk::Status st = api_.check(r, "zeModuleCreate");
    return sdk::Status(st.code() == sdk::Code::kResourceExhausted ? st.code() : sdk::Code::kInternal,
                       what + ": " + device_->props().name + " rejected its SPIR-V: " + st.message() +
                           (!text.empty() ? "; build log:\n" + text : "\n(no build log)") +
                           "\nreproduce: " + reproduceCommand(file, device_->props().name) + "\n  (build flags '" +
                           flags + "'; spirv-dis " + file + " for the module)");
  }

  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createKernel(std::shared_ptr<RuntimeModule> module,
                                                             const std::string& entry, const sdk::KernelView& k,
                                                             std::vector<std::string> checkMessages) override {
    auto out = std::make_unique<Kernel>();
    out->api = &api_;
    out->shape = LaunchShape::of(k);
    out->module = std::static_pointer_cast<Module>(module);
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    desc.pKernelName = entry.c_str();
    sdk::Status st = api_.check(api_.kernelCreate(out->module->module, &desc, &out->kernel),
                                "kernel @" + out->shape.name + ": zeKernelCreate(" + entry + ")");
    if (!st.isOk()) return st;
    out->status = status_.get();
    out->statusSlot = status_->assign(out->shape.name, std::move(checkMessages));
    return std::unique_ptr<RuntimeKernel>(std::move(out));
  }

  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createLibraryKernel(std::shared_ptr<RuntimeModule> module,
                                                                    const std::string& entry,
                                                                    const std::string& name) override {
    auto out = std::make_unique<Kernel>();
    out->api = &api_;
    out->shape.name = name;
    out->module = std::static_pointer_cast<Module>(module);
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    desc.pKernelName = entry.c_str();
    sdk::Status st = api_.check(api_.kernelCreate(out->module->module, &desc, &out->kernel),
                                name + ": zeKernelCreate(" + entry + ")");
    if (!st.isOk()) return st;
    return std::unique_ptr<RuntimeKernel>(std::move(out));
  }

  sdk::Status launchGroups(RuntimeKernel& rk, const std::vector<KernelParam>& params,
                           const std::array<uint32_t, 3>& local, const std::array<uint64_t, 3>& groups,
                           Queue q) override {
    auto& k = static_cast<Kernel&>(rk);
    const std::string& what = k.shape.name;
    for (uint64_t g : groups)
      if (g > std::numeric_limits<uint32_t>::max())
        return sdk::invalidArgument(what + ": " + std::to_string(g) + " work-groups in one dim");
    std::lock_guard<std::mutex> lock(k.mu);
    for (uint32_t i = 0; i < params.size(); ++i) {
      sdk::Status st = api_.check(api_.kernelSetArgumentValue(k.kernel, i, params[i].size, params[i].value),
                                  what + ": zeKernelSetArgumentValue(parameter " + std::to_string(i) + ")");
      if (!st.isOk()) return st;
    }
    sdk::Status st =
        api_.check(api_.kernelSetGroupSize(k.kernel, local[0], local[1], local[2]), what + ": zeKernelSetGroupSize");
    if (!st.isOk()) return st;
    const ze_group_count_t count{static_cast<uint32_t>(groups[0]), static_cast<uint32_t>(groups[1]),
                                 static_cast<uint32_t>(groups[2])};
    return api_.check(api_.commandListAppendLaunchKernel(listOf(q), k.kernel, &count, nullptr, 0, nullptr),
                      what + ": zeCommandListAppendLaunchKernel(" + std::to_string(groups[0]) + " x " +
                          std::to_string(groups[1]) + " x " + std::to_string(groups[2]) + " groups)");
  }

  sdk::Status launch(RuntimeKernel& rk, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                     Queue q) override {
    auto& k = static_cast<Kernel&>(rk);
    sdk::StatusOr<uint64_t> n = k.shape.points(symbols);
    if (!n.isOk()) return n.status();
    const uint64_t points = *n;
    if (points == 0) return sdk::Status::ok();
    const std::string what = "kernel @" + k.shape.name;
    void* const status = k.status->address(k.statusSlot);
    const std::vector<KernelParam> params = kernelParams(args, status, symbols);
    // zeCommandListAppendLaunchKernel copies the arguments and the group size: the lock
    // covers setting them and the append.
    std::lock_guard<std::mutex> lock(k.mu);
    for (uint32_t i = 0; i < params.size(); ++i) {
      sdk::Status st = api_.check(api_.kernelSetArgumentValue(k.kernel, i, params[i].size, params[i].value),
                                  what + ": zeKernelSetArgumentValue(parameter " + std::to_string(i) + ")");
      if (!st.isOk()) return st;
    }
    // A work-group per point (the module's LocalSize), else the driver's suggestion.
    uint32_t gx = k.shape.groupSize, gy = 0, gz = 0;
    sdk::Status st;
    if (!gx) {
      st = api_.check(
          api_.kernelSuggestGroupSize(k.kernel, static_cast<uint32_t>(suggestedFor(points)), 1, 1, &gx, &gy, &gz),
          what + ": zeKernelSuggestGroupSize");
      if (!st.isOk()) return st;
    }
    sdk::StatusOr<Groups> g = groupsFor(k.shape.groupSize ? points * k.shape.groupSize : points, gx,
                                        device_->props().maxGroupCountX, k.shape.name);
    if (!g.isOk()) return g.status();
    st = api_.check(api_.kernelSetGroupSize(k.kernel, g->size, 1, 1), what + ": zeKernelSetGroupSize");
    if (!st.isOk()) return st;
    const ze_group_count_t count{g->count, 1, 1};
    return api_.check(api_.commandListAppendLaunchKernel(listOf(q), k.kernel, &count, nullptr, 0, nullptr),
                      what + ": zeCommandListAppendLaunchKernel(" + std::to_string(g->count) + " groups of " +
                          std::to_string(g->size) + ")");
  }
};

}  // namespace

sdk::StatusOr<std::unique_ptr<Runtime>> openRuntime(const std::string& library) {
  return ZeRuntime::open(library, &loadApi);
}

}  // namespace plugsdk::level_zero::ze
