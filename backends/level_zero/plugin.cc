// The Intel GPU backend as a plugin (libplugsdk_level_zero.so, plugin "level_zero"): kernels
// become SPIR-V modules written by the backend (spirv/) and validated by SPIRV-Tools. Two
// runtimes run them (option runtime): opencl, the same SPIR-V through an OpenCL device that
// takes it (PoCL's CPU device in CI: opencl/), and level_zero, Intel GPUs through the Level
// Zero loader, not built yet (step 3 of docs/level-zero-backend.md: it reports no device, with
// zeInit's answer). Memory is OpenCL shared virtual memory; a stream is an in-order queue.
// See README.md for the client options.
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/level_zero/opencl/device.h"
#include "backends/level_zero/opencl/kernel_status.h"
#include "backends/level_zero/opencl/program.h"
#include "backends/level_zero/runtime/ze_probe.h"
#include "backends/level_zero/spirv/lower_kernel.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
namespace cl = plugsdk::level_zero::opencl;
namespace spirv = plugsdk::level_zero::spirv;

struct LzBuffer : sdk::Buffer {
  const cl::Device* device = nullptr;
  uint8_t* ptr = nullptr;  ///< SVM
  ~LzBuffer() override {
    if (device) device->free(ptr);
  }
};

struct LzStream : sdk::Stream {
  const cl::Api* api = nullptr;
  cl::cl_command_queue queue = nullptr;
  ~LzStream() override {
    if (queue) {
      api->finish(queue);
      api->releaseCommandQueue(queue);
    }
  }
};

struct LzEvent : sdk::Event {
  const cl::Api* api = nullptr;
  cl::cl_event event = nullptr;  ///< the last record's marker (nullptr: never recorded)
  ~LzEvent() override {
    if (event) api->releaseEvent(event);
  }
};

struct LzExecutable : sdk::Executable {
  std::unique_ptr<cl::Kernel> kernel;
};

/// The kernel's name as a file stem and SPIR-V entry point (letters, digits, '_').
std::string entryName(std::string_view name) {
  std::string s = "k_";
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

class LevelZeroBackend : public sdk::Backend<LzBuffer, LzStream, LzEvent, LzExecutable> {
 public:
  /// Options (README.md): runtime=opencl|level_zero (default: $PLUGSDK_LEVEL_ZERO_RUNTIME,
  /// else level_zero), opencl=LIBRARY (the ICD loader; default libOpenCL.so.1), ze_loader=LIBRARY
  /// (default libze_loader.so.1), dump=DIR (each kernel's .kir, .spvasm and .spv).
  sdk::Status initialize(const sdk::Options& options) override {
    for (const auto& [key, value] : options.entries())
      if (key != "runtime" && key != "opencl" && key != "ze_loader" && key != "dump")
        return sdk::invalidArgument("unknown option '" + key +
                                    "' (the level_zero plugin takes runtime, opencl, ze_loader, dump)");
    const char* envRuntime = std::getenv("PLUGSDK_LEVEL_ZERO_RUNTIME");
    const std::string runtime = options.get("runtime", envRuntime && *envRuntime ? envRuntime : "level_zero");
    if (runtime != "opencl" && runtime != "level_zero")
      return sdk::invalidArgument("option runtime: '" + runtime + "' is not opencl or level_zero" +
                                  (options.has("runtime") ? "" : " (from PLUGSDK_LEVEL_ZERO_RUNTIME)"));
    dumpDir_ = options.get("dump");
    if (!dumpDir_.empty() && mkdir(dumpDir_.c_str(), 0755) != 0 && errno != EEXIST)
      return sdk::invalidArgument("option dump: cannot create " + dumpDir_ + ": " + std::strerror(errno));
    // No runtime or no device is not an error: the client has no device, and says why.
    if (runtime == "level_zero") {
      noDevice_ = plugsdk::level_zero::levelZeroNoDeviceReason(options.get("ze_loader"));
      return sdk::Status::ok();
    }
    sdk::StatusOr<std::shared_ptr<const cl::Api>> api = cl::loadApi(options.get("opencl"));
    if (!api.isOk()) {
      noDevice_ = api.status().message();
      return sdk::Status::ok();
    }
    api_ = *api;
    sdk::StatusOr<std::unique_ptr<cl::Device>> device = cl::Device::open(api_);
    if (!device.isOk()) {
      noDevice_ = device.status().message();
      return sdk::Status::ok();
    }
    device_ = std::move(*device);
    sdk::StatusOr<cl::cl_command_queue> q = device_->createQueue();
    if (!q.isOk()) return q.status().withContext(device_->props().name);
    queue_ = *q;
    sdk::StatusOr<std::unique_ptr<cl::KernelStatus>> s = cl::KernelStatus::create(*device_);
    if (!s.isOk()) return s.status().withContext(device_->props().name);
    status_ = std::move(*s);
    return sdk::Status::ok();
  }

  ~LevelZeroBackend() override {
    if (queue_) {
      api_->finish(queue_);
      api_->releaseCommandQueue(queue_);
    }
    programs_.clear();
    status_.reset();
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{device_ ? 1u : 0u, noDevice_}; }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    const cl::DeviceProps& p = device_->props();
    sdk::DeviceInfo d;
    d.name = p.name + " (" + p.platformVersion + "; SPIR-V through OpenCL, runtime=opencl)";
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten, f64 where the device has it
    if (!p.fp64) d.dtypes &= ~PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F64);
    d.vectorBits = 0;  // one work-item per grid point, scalar
    d.memoryKinds = PLUGSDK_MEMORY_DEVICE;
    d.memoryBytes = p.memoryBytes;
    d.maxBufferBytes = p.maxAllocBytes;
    // No library ops: the core expands matmul, convolution and attention into loop kernels.
    d.libraryOps = 0;
    d.maxKernelStmts = 0;
    d.fusesHorizontal = true;
    d.fusesReductionEpilogue = true;
    d.fusesMultiReduction = true;
    // No split reductions (ABI 1.5) until rows are reduced by work-groups (step 4).
    d.splitRowReductions = 0;
    d.splitColumnReductions = 0;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<LzBuffer>> allocate(uint32_t, uint32_t, uint64_t bytes) override {
    sdk::StatusOr<void*> p = device_->allocate(bytes);
    if (!p.isOk()) return p.status();
    auto b = std::make_unique<LzBuffer>();
    b->device = device_.get();
    b->ptr = static_cast<uint8_t*>(*p);
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    if (c.bytes == 0) return sdk::Status::ok();
    const std::string what = "copying " + std::to_string(c.bytes) + " bytes";
    cl::cl_command_queue q = c.stream ? c.stream->queue : queue_;
    if (!c.stream) {
      sdk::Status st = drain(what);
      if (!st.isOk()) return st;
    }
    const cl::cl_uint blocking = c.stream ? cl::CL_FALSE : cl::CL_TRUE;
    cl::cl_int r = cl::CL_SUCCESS;
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE:
        r = api_->enqueueSVMMemcpy(q, blocking, c.dst->ptr + c.dstOffset, c.hostSrc, c.bytes, 0, nullptr, nullptr);
        break;
      case PLUGSDK_COPY_DEVICE_TO_HOST:
        r = api_->enqueueSVMMemcpy(q, blocking, c.hostDst, c.src->ptr + c.srcOffset, c.bytes, 0, nullptr, nullptr);
        break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE: {
        uint8_t* dst = c.dst->ptr + c.dstOffset;
        const uint8_t* src = c.src->ptr + c.srcOffset;
        if (dst < src + c.bytes && src < dst + c.bytes) {
          // Overlapping ranges (clEnqueueSVMMemcpy rejects them): through the host.
          std::vector<uint8_t> host(c.bytes);
          r = api_->enqueueSVMMemcpy(q, cl::CL_TRUE, host.data(), src, c.bytes, 0, nullptr, nullptr);
          if (r == cl::CL_SUCCESS)
            r = api_->enqueueSVMMemcpy(q, cl::CL_TRUE, dst, host.data(), c.bytes, 0, nullptr, nullptr);
        } else {
          r = api_->enqueueSVMMemcpy(q, blocking, dst, src, c.bytes, 0, nullptr, nullptr);
        }
        break;
      }
    }
    return api_->check(r, what);
  }

  sdk::Status fill(const Fill& f) override {
    if (f.bytes == 0) return sdk::Status::ok();
    const std::string what = "filling " + std::to_string(f.bytes) + " bytes";
    cl::cl_command_queue q = f.stream ? f.stream->queue : queue_;
    if (!f.stream) {
      sdk::Status st = drain(what);
      if (!st.isOk()) return st;
    }
    uint8_t* p = f.buffer.ptr + f.offset;
    cl::cl_int r = cl::CL_SUCCESS;
    if (reinterpret_cast<uintptr_t>(p) % f.patternBytes == 0) {
      r = api_->enqueueSVMMemFill(q, p, f.pattern, f.patternBytes, f.bytes, 0, nullptr, nullptr);
      if (r == cl::CL_SUCCESS && !f.stream) r = api_->finish(q);
    } else {
      // clEnqueueSVMMemFill wants the destination aligned to the pattern: through the host.
      std::vector<uint8_t> host(f.bytes);
      for (uint64_t i = 0; i < f.bytes; i += f.patternBytes) std::memcpy(host.data() + i, f.pattern, f.patternBytes);
      r = api_->enqueueSVMMemcpy(q, cl::CL_TRUE, p, host.data(), f.bytes, 0, nullptr, nullptr);
    }
    return api_->check(r, what);
  }

  sdk::StatusOr<std::unique_ptr<LzStream>> createStream(uint32_t) override {
    sdk::StatusOr<cl::cl_command_queue> q = device_->createQueue();
    if (!q.isOk()) return q.status();
    auto s = std::make_unique<LzStream>();
    s->api = api_.get();
    s->queue = *q;
    std::lock_guard<std::mutex> lock(mu_);
    queues_.insert(s->queue);
    return s;
  }

  sdk::Status destroyStream(std::unique_ptr<LzStream> stream) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queues_.erase(stream->queue);
    }
    stream.reset();
    return sdk::Status::ok();
  }

  /// Waits for the stream, then reports the first run-time error of a kernel (kernel_status.h).
  sdk::Status synchronizeStream(LzStream& s) override {
    sdk::Status st = api_->check(api_->finish(s.queue), "synchronizing a stream");
    if (!st.isOk()) return st;
    return status_->collect();
  }

  sdk::StatusOr<std::unique_ptr<LzEvent>> createEvent(LzStream*) override {
    auto e = std::make_unique<LzEvent>();
    e->api = api_.get();
    return e;
  }
  sdk::Status recordEvent(LzEvent& e, LzStream& s) override {
    cl::cl_event marker = nullptr;
    sdk::Status st =
        api_->check(api_->enqueueMarkerWithWaitList(s.queue, 0, nullptr, &marker), "clEnqueueMarkerWithWaitList");
    if (!st.isOk()) return st;
    if (e.event) api_->releaseEvent(e.event);
    e.event = marker;
    return api_->check(api_->flush(s.queue), "clFlush");
  }
  sdk::Status waitEvent(LzStream& s, LzEvent& e) override {
    if (!e.event) return sdk::Status::ok();
    return api_->check(api_->enqueueBarrierWithWaitList(s.queue, 1, &e.event, nullptr), "clEnqueueBarrierWithWaitList");
  }
  sdk::Status synchronizeEvent(LzEvent& e) override {
    if (!e.event) return sdk::Status::ok();
    return api_->check(api_->waitForEvents(1, &e.event), "clWaitForEvents");
  }

  sdk::StatusOr<std::unique_ptr<LzExecutable>> compileKernel(uint32_t, const sdk::KernelView& k,
                                                             std::string_view) override {
    const std::string entry = entryName(k.name());
    sdk::StatusOr<spirv::SpirvKernel> sk = spirv::compileKernel(k, entry);
    if (!sk.isOk()) return sk.status();
    if (!dumpDir_.empty()) {
      const std::string stem = dumpDir_ + "/" + entry;
      std::ofstream(stem + ".kir") << k.text();
      std::ofstream(stem + ".spv", std::ios::binary)
          .write(reinterpret_cast<const char*>(sk->words.data()), static_cast<std::streamsize>(sk->words.size() * 4));
      sdk::StatusOr<std::string> text = spirv::disassemble(sk->words);
      if (text.isOk()) std::ofstream(stem + ".spvasm") << *text;
    }
    // Programs are shared by equal modules (the same kernel compiled again, in this client).
    const std::string key(reinterpret_cast<const char*>(sk->words.data()), sk->words.size() * 4);
    std::shared_ptr<cl::Program> program;
    bool cached = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = programs_.find(key);
      if (it != programs_.end()) program = it->second;
    }
    if (!program) {
      cached = false;
      sdk::StatusOr<std::shared_ptr<cl::Program>> built =
          cl::buildProgram(*device_, sk->words, "kernel @" + std::string(k.name()), "plugsdk_" + entry, dumpDir_);
      if (!built.isOk()) return built.status();
      program = *built;
      std::lock_guard<std::mutex> lock(mu_);
      programs_.emplace(key, program);
    }
    sdk::StatusOr<std::unique_ptr<cl::Kernel>> kernel = cl::createKernel(*api_, program, entry, k);
    if (!kernel.isOk()) return kernel.status();
    (*kernel)->status = status_.get();
    (*kernel)->statusSlot = status_->assign(std::string(k.name()), sk->checkMessages);
    auto e = std::make_unique<LzExecutable>();
    e->kernel = std::move(*kernel);
    e->setLog("kernel @" + std::string(k.name()) + ": SPIR-V " + std::to_string(sk->words.size() * 4) +
              " bytes, one work-item per grid point; " + (cached ? "program shared with an equal kernel" : "built") +
              " for " + device_->props().name);
    return e;
  }

  sdk::Status launch(const Launch& l) override {
    cl::Kernel& k = *l.executable.kernel;
    std::vector<void*> args;
    for (size_t i = 0; i < l.buffers.size(); ++i) args.push_back(l.buffers[i]->ptr + l.offsets[i]);
    const std::vector<int64_t> symbols(l.symbolValues.begin(), l.symbolValues.end());
    if (l.stream) return cl::launchKernel(k, args, symbols, l.stream->queue);
    sdk::Status st = drain("kernel @" + k.name);
    if (st.isOk()) st = cl::launchKernel(k, args, symbols, queue_);
    if (st.isOk()) st = api_->check(api_->finish(queue_), "kernel @" + k.name);
    if (!st.isOk()) return st;
    return status_->collect();
  }

 private:
  /// Before work with no stream (synchronous): everything queued on the client's streams
  /// completes first, as the ABI orders it after them.
  sdk::Status drain(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    for (cl::cl_command_queue q : queues_) {
      sdk::Status st = api_->check(api_->finish(q), what);
      if (!st.isOk()) return st;
    }
    return sdk::Status::ok();
  }

  std::shared_ptr<const cl::Api> api_;
  std::unique_ptr<cl::Device> device_;
  std::string noDevice_;
  cl::cl_command_queue queue_ = nullptr;  ///< synchronous work
  std::unique_ptr<cl::KernelStatus> status_;
  std::string dumpDir_;
  std::mutex mu_;
  std::set<cl::cl_command_queue> queues_;                         ///< the live streams'
  std::map<std::string, std::shared_ptr<cl::Program>> programs_;  ///< by SPIR-V words
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(LevelZeroBackend, "level_zero", "0.1 (SPIR-V written by the backend; OpenCL on PoCL)")
