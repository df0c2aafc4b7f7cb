// The OpenCL runtime (see runtime.h).
#include "backends/level_zero/opencl/runtime.h"

#include "backends/level_zero/opencl/device.h"
#include "backends/level_zero/opencl/kernel_status.h"
#include "backends/level_zero/opencl/program.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::level_zero::opencl {

namespace {

cl_command_queue queueOf(Queue q) { return static_cast<cl_command_queue>(q); }

struct Marker : RuntimeEvent {
  const Api* api = nullptr;
  cl_event event = nullptr;  ///< the last record's marker
  ~Marker() override {
    if (event) api->releaseEvent(event);
  }
};

class OpenclRuntime : public RuntimeOn<OpenclRuntime, Device, Api> {
 public:
  explicit OpenclRuntime(std::unique_ptr<Device> device) : RuntimeOn(std::move(device)) {
    const DeviceProps& p = device_->props();
    info_.description = p.name + " (" + p.platformVersion + "; SPIR-V through OpenCL, runtime=opencl)";
    info_.fp64 = p.fp64;
    info_.workItemsInSequence = p.cpu;
    info_.computeUnits = p.computeUnits;
    // Sub-groups on a CPU device (PoCL: a sub-group is the work-group's first dimension, so
    // the whole of a group-mode kernel's LocalSize G 1 1; OpenCLSubgroups.* checks it). On
    // other OpenCL devices the size is known only per built kernel: no sub-group sums.
    info_.minSubgroupSize =
        p.cpu && p.maxSubgroups > 0 && p.extensions.find("cl_khr_subgroups") != std::string::npos ? UINT32_MAX : 0;
    info_.memoryKinds = PLUGSDK_MEMORY_DEVICE;
    info_.memoryBytes = p.memoryBytes;
    info_.maxAllocBytes = p.maxAllocBytes;
  }
  sdk::Status init() {
    sdk::StatusOr<std::unique_ptr<KernelStatus>> s = createKernelStatus(*device_);
    if (!s.isOk()) return s.status().withContext(device_->props().name);
    status_ = std::move(*s);
    return sdk::Status::ok();
  }

  sdk::StatusOr<void*> allocate(uint32_t, uint64_t bytes) override { return device_->allocate(bytes); }
  void free(void* p) override { device_->free(p); }

  sdk::StatusOr<Queue> createQueue() override {
    sdk::StatusOr<cl_command_queue> q = device_->createQueue();
    if (!q.isOk()) return q.status();
    return static_cast<Queue>(*q);
  }
  void destroyQueue(Queue q) override {
    api_.finish(queueOf(q));
    api_.releaseCommandQueue(queueOf(q));
  }
  sdk::Status finish(Queue q, const std::string& what) override { return api_.check(api_.finish(queueOf(q)), what); }

  sdk::Status copy(Queue q, void* dst, const void* src, uint64_t bytes, bool wait) override {
    return api_.check(
        api_.enqueueSVMMemcpy(queueOf(q), wait ? CL_TRUE : CL_FALSE, dst, src, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy(" + std::to_string(bytes) + " bytes)");
  }
  sdk::Status fill(Queue q, void* p, const void* pattern, uint32_t patternBytes, uint64_t bytes) override {
    return api_.check(api_.enqueueSVMMemFill(queueOf(q), p, pattern, patternBytes, bytes, 0, nullptr, nullptr),
                      "clEnqueueSVMMemFill(" + std::to_string(bytes) + " bytes)");
  }

  sdk::StatusOr<std::unique_ptr<RuntimeEvent>> createEvent() override {
    auto e = std::make_unique<Marker>();
    e->api = &api_;
    return std::unique_ptr<RuntimeEvent>(std::move(e));
  }
  sdk::Status record(RuntimeEvent& e, Queue q) override {
    auto& m = static_cast<Marker&>(e);
    cl_event marker = nullptr;
    sdk::Status st =
        api_.check(api_.enqueueMarkerWithWaitList(queueOf(q), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    if (!st.isOk()) return st;
    if (m.event) api_.releaseEvent(m.event);
    m.event = marker;
    return api_.check(api_.flush(queueOf(q)), "clFlush");
  }
  sdk::Status wait(Queue q, RuntimeEvent& e) override {
    auto& m = static_cast<Marker&>(e);
    if (!m.event) return sdk::Status::ok();
    return api_.check(api_.enqueueBarrierWithWaitList(queueOf(q), 1, &m.event, nullptr),
                      "clEnqueueBarrierWithWaitList");
  }
  sdk::Status synchronize(RuntimeEvent& e) override {
    auto& m = static_cast<Marker&>(e);
    if (!m.event) return sdk::Status::ok();
    return api_.check(api_.waitForEvents(1, &m.event), "clWaitForEvents");
  }

  sdk::StatusOr<std::shared_ptr<RuntimeModule>> build(const std::vector<uint32_t>& words, const std::string& what,
                                                      const std::string& stem, const std::string& keepDir) override {
    sdk::StatusOr<std::shared_ptr<Program>> p = buildProgram(*device_, words, what, stem, keepDir);
    if (!p.isOk()) return p.status();
    return std::shared_ptr<RuntimeModule>(*p);
  }
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createKernel(std::shared_ptr<RuntimeModule> module,
                                                             const std::string& entry, const sdk::KernelView& k,
                                                             std::vector<std::string> checkMessages) override {
    sdk::StatusOr<std::unique_ptr<Kernel>> kernel =
        opencl::createKernel(api_, std::static_pointer_cast<Program>(module), entry, LaunchShape::of(k));
    if (!kernel.isOk()) return kernel.status();
    (*kernel)->status = status_.get();
    (*kernel)->statusSlot = status_->assign(std::string(k.name()), std::move(checkMessages));
    return std::unique_ptr<RuntimeKernel>(std::move(*kernel));
  }
  sdk::StatusOr<std::unique_ptr<RuntimeKernel>> createLibraryKernel(std::shared_ptr<RuntimeModule> module,
                                                                    const std::string& entry,
                                                                    const std::string& name) override {
    LaunchShape shape;
    shape.name = name;
    sdk::StatusOr<std::unique_ptr<Kernel>> kernel =
        opencl::createKernel(api_, std::static_pointer_cast<Program>(module), entry, std::move(shape));
    if (!kernel.isOk()) return kernel.status();
    return std::unique_ptr<RuntimeKernel>(std::move(*kernel));
  }
  sdk::Status launchGroups(RuntimeKernel& k, const std::vector<KernelParam>& params,
                           const std::array<uint32_t, 3>& local, const std::array<uint64_t, 3>& groups,
                           Queue q) override {
    return opencl::launchGroups(static_cast<Kernel&>(k), params, local, groups, queueOf(q));
  }
  sdk::Status launch(RuntimeKernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                     Queue q) override {
    return launchKernel(static_cast<Kernel&>(k), args, symbols, queueOf(q));
  }
};

}  // namespace

sdk::StatusOr<std::unique_ptr<Runtime>> openRuntime(const std::string& library) {
  return OpenclRuntime::open(library, &loadApi);
}

}  // namespace plugsdk::level_zero::opencl
