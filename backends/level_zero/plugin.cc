// The Intel GPU backend as a plugin (libplugsdk_level_zero.so, plugin "level_zero"): kernels
// become SPIR-V modules written by the backend (spirv/) and validated by SPIRV-Tools. Two
// runtimes run them (option runtime, common/runtime.h): level_zero, Intel GPUs through the
// Level Zero loader (runtime/: USM, in-order immediate command lists), and opencl, the same
// SPIR-V through an OpenCL device that takes it (PoCL's CPU device in CI: opencl/). This file
// keeps what is the same for both. See README.md for the client options.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/level_zero/common/runtime.h"
#include "backends/level_zero/library/library_ops.h"
#include "backends/level_zero/opencl/runtime.h"
#include "backends/level_zero/runtime/ze_runtime.h"
#include "backends/level_zero/spirv/lower_kernel.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
namespace lz = plugsdk::level_zero;
namespace spirv = plugsdk::level_zero::spirv;

struct LzBuffer : sdk::Buffer {
  lz::Runtime* runtime = nullptr;
  uint8_t* ptr = nullptr;  ///< SVM (opencl) or USM (level_zero)
  ~LzBuffer() override {
    if (runtime) runtime->free(ptr);
  }
};

struct LzStream : sdk::Stream {
  lz::Runtime* runtime = nullptr;
  lz::Queue queue = nullptr;  ///< in order
  ~LzStream() override {
    if (queue) runtime->destroyQueue(queue);
  }
};

struct LzEvent : sdk::Event {
  std::unique_ptr<lz::RuntimeEvent> event;
};

struct LzExecutable : sdk::Executable {
  std::unique_ptr<lz::RuntimeKernel> kernel;        ///< a kernel of the program's
  std::unique_ptr<lz::library::LibraryOp> library;  ///< or a library call (library/)
};

/// The kernel's SPIR-V entry point, as the cuda plugin names its entries: "plugsdk_" and 16 hex
/// digits of a hash (FNV-1a) of its text form without its name, so that a kernel has one
/// entry in every process (profiles and dumps compare across runs) and equal kernels of
/// different programs share one.
std::string entryName(const sdk::KernelView& k) {
  const std::string_view text = k.text();
  const size_t from = std::min(text.find('('), text.size());
  uint64_t h = 14695981039346656037ull;
  for (size_t i = from; i < text.size(); ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("plugsdk_") + hex;
}

class LevelZeroBackend : public sdk::Backend<LzBuffer, LzStream, LzEvent, LzExecutable> {
 public:
  /// Options (README.md): runtime=opencl|level_zero (default: $PLUGSDK_LEVEL_ZERO_RUNTIME,
  /// else level_zero), opencl=LIBRARY (the ICD loader; default libOpenCL.so.1), ze_loader=LIBRARY
  /// (default libze_loader.so.1), dump=DIR (each kernel's .kir, .spv and .spvasm), spirv_opt=on|off
  /// (SPIRV-Tools' optimizer; default on), matmul=tiled|loops (f32 prims.matmul as the tiled
  /// kernel, or the core's loop kernels; default tiled), conv=implicit|im2col (f32
  /// prims.convolution as the implicit-GEMM kernel, or the core's expansion: im2col and a
  /// matmul; default implicit), sdpa=flash|loops (f32 prims.sdpa as the flash-attention
  /// kernel, or the core's matmuls and softmax; default flash), subgroup_sums=on|off (row sums' first combine levels in
  /// sub-groups where the device's sub-group size is known; default off), group_size=N (row reductions' work-group size
  /// at most: a power of two up to 1024, 0 for one work-item per point; default 256, spirv::kDefaultGroupSize).
  sdk::Status initialize(const sdk::Options& options) override {
    for (const auto& [key, value] : options.entries())
      if (key != "runtime" && key != "opencl" && key != "ze_loader" && key != "dump" && key != "spirv_opt" &&
          key != "group_size" && key != "matmul" && key != "conv" && key != "sdpa" && key != "subgroup_sums")
        return sdk::invalidArgument("unknown option '" + key +
                                    "' (the level_zero plugin takes runtime, opencl, ze_loader, dump, spirv_opt, "
                                    "group_size, matmul, conv, sdpa, subgroup_sums)");
    // Default: $PLUGSDK_LEVEL_ZERO_MATMUL, else tiled (the conformance runner passes no options).
    const char* envMatmul = std::getenv("PLUGSDK_LEVEL_ZERO_MATMUL");
    const std::string matmul = options.get("matmul", envMatmul && *envMatmul ? envMatmul : "tiled");
    if (matmul != "tiled" && matmul != "loops")
      return sdk::invalidArgument("option matmul: '" + matmul + "' is not tiled or loops" +
                                  (options.has("matmul") ? "" : " (from PLUGSDK_LEVEL_ZERO_MATMUL)"));
    tiledMatmul_ = matmul == "tiled";
    // Likewise $PLUGSDK_LEVEL_ZERO_CONV, else implicit.
    const char* envConv = std::getenv("PLUGSDK_LEVEL_ZERO_CONV");
    const std::string conv = options.get("conv", envConv && *envConv ? envConv : "implicit");
    if (conv != "implicit" && conv != "im2col")
      return sdk::invalidArgument("option conv: '" + conv + "' is not implicit or im2col" +
                                  (options.has("conv") ? "" : " (from PLUGSDK_LEVEL_ZERO_CONV)"));
    implicitConv_ = conv == "implicit";
    // Likewise $PLUGSDK_LEVEL_ZERO_SDPA, else flash.
    const char* envSdpa = std::getenv("PLUGSDK_LEVEL_ZERO_SDPA");
    const std::string sdpa = options.get("sdpa", envSdpa && *envSdpa ? envSdpa : "flash");
    if (sdpa != "flash" && sdpa != "loops")
      return sdk::invalidArgument("option sdpa: '" + sdpa + "' is not flash or loops" +
                                  (options.has("sdpa") ? "" : " (from PLUGSDK_LEVEL_ZERO_SDPA)"));
    flashSdpa_ = sdpa == "flash";
    const std::string opt = options.get("spirv_opt", "on");
    if (opt != "on" && opt != "off") return sdk::invalidArgument("option spirv_opt: '" + opt + "' is not on or off");
    compileOptions_.optimize = opt == "on";
    // Off unless asked for ($PLUGSDK_LEVEL_ZERO_SUBGROUP_SUMS, as matmul): slower on PoCL, and
    // several sub-groups a work-group (an Intel GPU's) have run nowhere yet.
    const char* envSg = std::getenv("PLUGSDK_LEVEL_ZERO_SUBGROUP_SUMS");
    const std::string sg = options.get("subgroup_sums", envSg && *envSg ? envSg : "off");
    if (sg != "on" && sg != "off")
      return sdk::invalidArgument("option subgroup_sums: '" + sg + "' is not on or off" +
                                  (options.has("subgroup_sums") ? "" : " (from PLUGSDK_LEVEL_ZERO_SUBGROUP_SUMS)"));
    const bool subgroupSums = sg == "on";
    const std::string group = options.get("group_size", std::to_string(spirv::kDefaultGroupSize));
    char* end = nullptr;
    const unsigned long g = std::strtoul(group.c_str(), &end, 10);
    if (group.empty() || *end || g > 1024 || (g & (g - 1)) != 0 || g == 1)
      return sdk::invalidArgument("option group_size: '" + group + "' is not 0 or a power of two from 2 to 1024");
    compileOptions_.maxGroupSize = static_cast<uint32_t>(g);
    const char* envRuntime = std::getenv("PLUGSDK_LEVEL_ZERO_RUNTIME");
    const std::string runtime = options.get("runtime", envRuntime && *envRuntime ? envRuntime : "level_zero");
    if (runtime != "opencl" && runtime != "level_zero")
      return sdk::invalidArgument("option runtime: '" + runtime + "' is not opencl or level_zero" +
                                  (options.has("runtime") ? "" : " (from PLUGSDK_LEVEL_ZERO_RUNTIME)"));
    dumpDir_ = options.get("dump");
    if (!dumpDir_.empty() && mkdir(dumpDir_.c_str(), 0755) != 0 && errno != EEXIST)
      return sdk::invalidArgument("option dump: cannot create " + dumpDir_ + ": " + std::strerror(errno));
    sdk::StatusOr<std::unique_ptr<lz::Runtime>> rt = runtime == "level_zero"
                                                         ? lz::ze::openRuntime(options.get("ze_loader"))
                                                         : lz::opencl::openRuntime(options.get("opencl"));
    // No runtime or no device is not an error: the client has no device, and says why.
    if (!rt.isOk() && rt.status().code() == sdk::Code::kFailedPrecondition) {
      noDevice_ = rt.status().message();
      return sdk::Status::ok();
    }
    if (!rt.isOk()) return rt.status();
    runtime_ = std::move(*rt);
    compileOptions_.contiguousChunks = runtime_->device().workItemsInSequence;
    compileOptions_.minSubgroupSize = subgroupSums ? runtime_->device().minSubgroupSize : 0;
    library_ = std::make_unique<lz::library::LibraryOps>(*runtime_, dumpDir_);
    sdk::StatusOr<lz::Queue> q = runtime_->createQueue();
    if (!q.isOk()) return q.status().withContext(runtime_->device().description);
    queue_ = *q;
    return sdk::Status::ok();
  }

  ~LevelZeroBackend() override {
    if (queue_) runtime_->destroyQueue(queue_);
    programs_.clear();
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{runtime_ ? 1u : 0u, noDevice_}; }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    const lz::RuntimeDevice& p = runtime_->device();
    sdk::DeviceInfo d;
    d.name = p.description;
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten, f64 where the device has it
    if (!p.fp64) d.dtypes &= ~PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F64);
    d.vectorBits = 0;  // scalar work-items
    d.memoryKinds = p.memoryKinds;
    d.memoryBytes = p.memoryBytes;
    d.maxBufferBytes = p.maxAllocBytes;
    // prims.matmul on f32 operands as the tiled kernel (library/matmul_spirv.h, ABI 1.6
    // matmul_dtypes) and f32 prims.convolution as the implicit GEMM (library/conv_spirv.h,
    // ABI 1.4 convolution_dtypes; a transposed one the core rewrites as a plain convolution
    // of its dilated input, which comes here), and f32 prims.sdpa as flash attention
    // (library/sdpa_spirv.h, ABI 1.7: no mask, a bool or float mask, causal, Ev != E, head
    // dims up to its tiles' 128; dropout left to the core); the core expands the other dtypes
    // and forms. Options matmul=loops / conv=im2col / sdpa=loops leave that op to the core
    // (the measurements' baselines: conv=im2col is im2col and a matmul when matmul is kept).
    // The attention backward (ABI 1.8) is not claimed: the core expands it.
    d.libraryOps = (tiledMatmul_ ? PLUGSDK_LIBRARY_MATMUL : 0) | (implicitConv_ ? PLUGSDK_LIBRARY_CONVOLUTION : 0) |
                   (flashSdpa_ ? PLUGSDK_LIBRARY_SDPA : 0);
    d.matmulDtypes = sdk::dtypeBits({PLUGSDK_DTYPE_F32});
    d.convolutionDtypes = sdk::dtypeBits({PLUGSDK_DTYPE_F32});
    d.convolutionSkipsTransposed = true;
    d.sdpaDtypes = sdk::dtypeBits({PLUGSDK_DTYPE_F32});
    d.sdpaSkips = PLUGSDK_SDPA_SKIPS_DROPOUT;
    d.sdpaHeadDimMax = lz::library::kSdpaHeadDimMax;
    d.maxKernelStmts = 0;
    d.fusesHorizontal = true;
    d.fusesReductionEpilogue = true;
    d.fusesMultiReduction = true;
    // Split reductions (ABI 1.5): a row reduction keeping fewer rows than 8 per compute unit
    // is split into partials until rows x slices reaches that, so every compute unit gets
    // work-groups (one row, one work-group, one core otherwise). Where the compute units are
    // not known (Level Zero: not read yet), none. Column reductions (a work-item per point)
    // are not split.
    d.splitRowReductions = compileOptions_.maxGroupSize ? 8 * p.computeUnits : 0;
    d.splitColumnReductions = 0;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<LzBuffer>> allocate(uint32_t, uint32_t kind, uint64_t bytes) override {
    sdk::StatusOr<void*> p = runtime_->allocate(kind, bytes);
    if (!p.isOk()) return p.status();
    auto b = std::make_unique<LzBuffer>();
    b->runtime = runtime_.get();
    b->ptr = static_cast<uint8_t*>(*p);
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    if (c.bytes == 0) return sdk::Status::ok();
    const std::string what = "copying " + std::to_string(c.bytes) + " bytes";
    lz::Queue q = c.stream ? c.stream->queue : queue_;
    if (!c.stream) {
      sdk::Status st = drain(what);
      if (!st.isOk()) return st;
    }
    const bool wait = !c.stream;
    sdk::Status st;
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE:
        st = runtime_->copy(q, c.dst->ptr + c.dstOffset, c.hostSrc, c.bytes, wait);
        break;
      case PLUGSDK_COPY_DEVICE_TO_HOST:
        st = runtime_->copy(q, c.hostDst, c.src->ptr + c.srcOffset, c.bytes, wait);
        break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE: {
        uint8_t* dst = c.dst->ptr + c.dstOffset;
        const uint8_t* src = c.src->ptr + c.srcOffset;
        if (dst < src + c.bytes && src < dst + c.bytes) {
          // Overlapping ranges (neither runtime copies them in one call): through the host.
          std::vector<uint8_t> host(c.bytes);
          st = runtime_->copy(q, host.data(), src, c.bytes, true);
          if (st.isOk()) st = runtime_->copy(q, dst, host.data(), c.bytes, true);
        } else {
          st = runtime_->copy(q, dst, src, c.bytes, wait);
        }
        break;
      }
    }
    return st.isOk() ? st : st.withContext(what);
  }

  sdk::Status fill(const Fill& f) override {
    if (f.bytes == 0) return sdk::Status::ok();
    const std::string what = "filling " + std::to_string(f.bytes) + " bytes";
    lz::Queue q = f.stream ? f.stream->queue : queue_;
    if (!f.stream) {
      sdk::Status st = drain(what);
      if (!st.isOk()) return st;
    }
    uint8_t* p = f.buffer.ptr + f.offset;
    sdk::Status st;
    if (reinterpret_cast<uintptr_t>(p) % f.patternBytes == 0) {
      st = runtime_->fill(q, p, f.pattern, f.patternBytes, f.bytes);
      if (st.isOk() && !f.stream) st = runtime_->finish(q, what);
    } else {
      // Both runtimes want the destination aligned to the pattern: through the host.
      std::vector<uint8_t> host(f.bytes);
      for (uint64_t i = 0; i < f.bytes; i += f.patternBytes) std::memcpy(host.data() + i, f.pattern, f.patternBytes);
      st = runtime_->copy(q, p, host.data(), f.bytes, true);
    }
    return st.isOk() ? st : st.withContext(what);
  }

  sdk::StatusOr<std::unique_ptr<LzStream>> createStream(uint32_t) override {
    sdk::StatusOr<lz::Queue> q = runtime_->createQueue();
    if (!q.isOk()) return q.status();
    auto s = std::make_unique<LzStream>();
    s->runtime = runtime_.get();
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
    sdk::Status st = runtime_->finish(s.queue, "synchronizing a stream");
    if (!st.isOk()) return st;
    return runtime_->collectStatus();
  }

  sdk::StatusOr<std::unique_ptr<LzEvent>> createEvent(LzStream*) override {
    sdk::StatusOr<std::unique_ptr<lz::RuntimeEvent>> r = runtime_->createEvent();
    if (!r.isOk()) return r.status();
    auto e = std::make_unique<LzEvent>();
    e->event = std::move(*r);
    return e;
  }
  sdk::Status recordEvent(LzEvent& e, LzStream& s) override { return runtime_->record(*e.event, s.queue); }
  sdk::Status waitEvent(LzStream& s, LzEvent& e) override { return runtime_->wait(s.queue, *e.event); }
  sdk::Status synchronizeEvent(LzEvent& e) override { return runtime_->synchronize(*e.event); }

  sdk::StatusOr<std::unique_ptr<LzExecutable>> compileKernel(uint32_t, const sdk::KernelView& k,
                                                             std::string_view) override {
    const std::string entry = entryName(k);
    sdk::StatusOr<spirv::SpirvKernel> sk = spirv::compileKernel(k, entry, compileOptions_);
    if (!sk.isOk()) return sk.status();
    if (!dumpDir_.empty()) {
      // Named as the cuda plugin names its dumps: the kernel's name, then its entry point.
      const std::string stem = dumpDir_ + "/" + std::string(k.name()) + "." + entry;
      std::ofstream(stem + ".kir") << k.text();
      std::ofstream(stem + ".spv", std::ios::binary)
          .write(reinterpret_cast<const char*>(sk->words.data()), static_cast<std::streamsize>(sk->words.size() * 4));
      sdk::StatusOr<std::string> text = spirv::disassemble(sk->words);
      if (text.isOk()) std::ofstream(stem + ".spvasm") << *text;
    }
    // Modules are shared by equal SPIR-V (the same kernel compiled again, in this client).
    const std::string key(reinterpret_cast<const char*>(sk->words.data()), sk->words.size() * 4);
    std::shared_ptr<lz::RuntimeModule> module;
    bool cached = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = programs_.find(key);
      if (it != programs_.end()) module = it->second;
    }
    if (!module) {
      cached = false;
      sdk::StatusOr<std::shared_ptr<lz::RuntimeModule>> built =
          runtime_->build(sk->words, "kernel @" + std::string(k.name()), entry, dumpDir_);
      if (!built.isOk()) return built.status();
      module = *built;
      std::lock_guard<std::mutex> lock(mu_);
      programs_.emplace(key, module);
    }
    sdk::StatusOr<std::unique_ptr<lz::RuntimeKernel>> kernel =
        runtime_->createKernel(module, entry, k, sk->checkMessages);
    if (!kernel.isOk()) return kernel.status();
    (*kernel)->shape.groupSize = sk->groupSize;
    auto e = std::make_unique<LzExecutable>();
    e->kernel = std::move(*kernel);
    e->setLog("kernel @" + std::string(k.name()) + ": SPIR-V " + std::to_string(sk->words.size() * 4) + " bytes" +
              (compileOptions_.optimize ? " (optimized)" : "") +
              (sk->groupSize ? ", a work-group of " + std::to_string(sk->groupSize) + " per grid point; "
                             : ", one work-item per grid point; ") +
              (cached ? "module shared with an equal kernel" : "built") + " for " + runtime_->device().description);
    return e;
  }

  /// f32 prims.matmul, prims.convolution and prims.sdpa (library/library_ops.h).
  sdk::StatusOr<std::unique_ptr<LzExecutable>> compileLibrary(const sdk::LibraryCall& c) override {
    sdk::StatusOr<std::unique_ptr<lz::library::LibraryOp>> op = library_->compile(c);
    if (!op.isOk()) return op.status();
    auto e = std::make_unique<LzExecutable>();
    e->setLog((*op)->log);
    e->library = std::move(*op);
    return e;
  }

  sdk::Status launch(const Launch& l) override {
    std::vector<void*> args;
    // A library call's absent optional input (prims.sdpa's attn_mask) comes as NULL.
    for (size_t i = 0; i < l.buffers.size(); ++i)
      args.push_back(l.buffers[i] ? l.buffers[i]->ptr + l.offsets[i] : nullptr);
    const std::vector<int64_t> symbols(l.symbolValues.begin(), l.symbolValues.end());
    auto run = [&](lz::Queue q) {
      return l.executable.library ? library_->launch(*l.executable.library, args, symbols, q)
                                  : runtime_->launch(*l.executable.kernel, args, symbols, q);
    };
    if (l.stream) return run(l.stream->queue);
    const std::string what =
        l.executable.library ? l.executable.library->name : "kernel @" + l.executable.kernel->shape.name;
    sdk::Status st = drain(what);
    if (st.isOk()) st = run(queue_);
    if (st.isOk()) st = runtime_->finish(queue_, what);
    if (!st.isOk()) return st;
    return runtime_->collectStatus();
  }

 private:
  /// Before work with no stream (synchronous): everything queued on the client's streams
  /// completes first, as the ABI orders it after them.
  sdk::Status drain(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    for (lz::Queue q : queues_) {
      sdk::Status st = runtime_->finish(q, what);
      if (!st.isOk()) return st;
    }
    return sdk::Status::ok();
  }

  std::unique_ptr<lz::Runtime> runtime_;
  std::string noDevice_;
  lz::Queue queue_ = nullptr;  ///< synchronous work
  std::string dumpDir_;
  bool tiledMatmul_ = true;   ///< option matmul: f32 prims.matmul as the tiled kernel
  bool implicitConv_ = true;  ///< option conv: f32 prims.convolution as the implicit GEMM
  bool flashSdpa_ = true;     ///< option sdpa: f32 prims.sdpa as flash attention
  spirv::CompileOptions compileOptions_;
  std::mutex mu_;
  std::set<lz::Queue> queues_;                                          ///< the live streams'
  std::map<std::string, std::shared_ptr<lz::RuntimeModule>> programs_;  ///< by SPIR-V words
  std::unique_ptr<lz::library::LibraryOps> library_;                    ///< the library ops' modules
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(LevelZeroBackend, "level_zero", "0.2 (SPIR-V written by the backend; Level Zero or OpenCL)")
