// The x86 CPU backend as a plugin (libplugsdk_cpu.so, plugin "cpu"): one device, the host.
// Memory is host memory (64-byte aligned), streams run work when it is queued, kernels are
// compiled to machine code by kernel_compiler (LLVM 19 ORC JIT) and run on oneTBB
// (runtime/launch). See README.md for the client options.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include "backends/cpu/jit.h"
#include "backends/cpu/kernel_compiler.h"
#include "backends/cpu/library/library_call.h"
#include "backends/cpu/runtime/launch.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
namespace cpu = plugsdk::cpu;

struct CpuBuffer : sdk::Buffer {
  uint8_t* data = nullptr;
  bool borrowed = false;  ///< buffer_import: the caller's memory, never freed here
  ~CpuBuffer() override {
    if (!borrowed) std::free(data);
  }
};

struct CpuStream : sdk::Stream {};
struct CpuEvent : sdk::Event {};

struct CpuExecutable : sdk::Executable {
  std::shared_ptr<const cpu::CompiledKernel> kernel;  ///< a kernel, or
  std::unique_ptr<cpu::LibraryPlan> library;          ///< a library call
  int id = 0;                                         ///< library calls: numbered per client (profile rows)
};

uint64_t hostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{1} << 32;
}

sdk::StatusOr<int> parseInt(const std::string& key, const std::string& text, int lo, int hi) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi)
    return sdk::invalidArgument("option " + key + ": '" + text + "' is not an integer in [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

class CpuBackend : public sdk::Backend<CpuBuffer, CpuStream, CpuEvent, CpuExecutable> {
 public:
  /// Options (README.md): isa=auto|avx512|avx2|scalar (default: $PLUGSDK_CPU_ISA, else
  /// auto), threads=N (default: the cores this process may run on), cache_dir=DIR|off
  /// (default: compile_cache.h's defaultCacheDir("cpu")), dump=DIR, opt=2|3, library=all|none (none: the
  /// core expands matmul, convolution and sdpa into loop kernels), conv=auto|im2col (im2col:
  /// never the shifted-rows convolution; for comparisons), conv_forms=all|float-plain
  /// (float-plain: claim convolution for f16/bf16/f32/f64 and not transposed, as a GPU's
  /// convolution library takes it (ABI 1.4), so the core's handling of the other forms runs
  /// on this machine too), fault=llvm|alloc (tests).
  sdk::Status initialize(const sdk::Options& options) override {
    for (const auto& [key, value] : options.entries())
      if (key != "isa" && key != "threads" && key != "cache_dir" && key != "dump" && key != "opt" && key != "fault" &&
          key != "library" && key != "profile" && key != "conv" && key != "conv_forms")
        return sdk::invalidArgument("unknown option '" + key +
                                    "' (the cpu plugin takes isa, threads, cache_dir, dump, opt, fault, library, "
                                    "profile, conv, conv_forms)");
    const std::string library = options.get("library", "all");
    if (library != "all" && library != "none")
      return sdk::invalidArgument("option library: '" + library + "' is not all or none");
    if (library == "none") libraryOps_ = 0;
    const std::string conv = options.get("conv", "auto");
    if (conv != "auto" && conv != "im2col")
      return sdk::invalidArgument("option conv: '" + conv + "' is not auto or im2col");
    shiftedConv_ = conv == "auto";
    const std::string forms = options.get("conv_forms", "all");
    if (forms != "all" && forms != "float-plain")
      return sdk::invalidArgument("option conv_forms: '" + forms + "' is not all or float-plain");
    floatPlainConv_ = forms == "float-plain";
    profile_ = options.get("profile", "0") == "1";
    const char* envIsa = std::getenv("PLUGSDK_CPU_ISA");
    const std::string isaName = options.get("isa", envIsa ? envIsa : "auto");
    sdk::StatusOr<cpu::Isa> isa = cpu::selectIsa(cpu::hostFeatures(), isaName);
    if (!isa.isOk())
      return sdk::Status(isa.status().code(),
                         isa.status().message() + (options.has("isa") ? "" : " (from PLUGSDK_CPU_ISA)"));
    isa_ = *isa;
    int threads = tbb::info::default_concurrency();
    if (options.has("threads")) {
      sdk::StatusOr<int> t = parseInt("threads", options.get("threads"), 1, 1024);
      if (!t.isOk()) return t.status();
      threads = *t;
    }
    arena_ = std::make_unique<tbb::task_arena>(threads);
    cpu::CompilerOptions co;
    if (options.has("opt")) {
      sdk::StatusOr<int> o = parseInt("opt", options.get("opt"), 2, 3);
      if (!o.isOk()) return o.status();
      co.optLevel = *o;
    }
    const std::string fault = options.get("fault");
    if (!fault.empty() && fault != "llvm" && fault != "alloc")
      return sdk::invalidArgument("option fault: '" + fault + "' is not llvm or alloc");
    co.breakIr = fault == "llvm";
    failAllocations_ = fault == "alloc";
    co.dumpDir = options.get("dump");
    if (!co.dumpDir.empty() && mkdir(co.dumpDir.c_str(), 0755) != 0 && errno != EEXIST)
      return sdk::invalidArgument("option dump: cannot create " + co.dumpDir + ": " + std::strerror(errno));
    std::string cacheDir = options.get("cache_dir", plugsdk::lowering::defaultCacheDir("cpu"));
    if (cacheDir == "off") cacheDir.clear();
    sdk::StatusOr<std::unique_ptr<cpu::Jit>> jit = cpu::Jit::create(isa_);
    if (!jit.isOk()) return jit.status();
    jit_ = std::move(*jit);
    compiler_ =
        std::make_unique<cpu::KernelCompiler>(*jit_, plugsdk::lowering::DiskCache(cacheDir, "CPU-OBJECT", ".kobj"), co);
    return sdk::Status::ok();
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{1, ""}; }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    sdk::DeviceInfo d;
    d.name = "cpu0 (" + isa_.llvmCpu + ", " + std::string(isa_.name()) + ", " +
             std::to_string(arena_->max_concurrency()) + " threads)";
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten
    d.vectorBits = isa_.vectorBytes() * 8;
    d.memoryKinds = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
    d.memoryBytes = hostMemoryBytes();
    d.maxBufferBytes = d.memoryBytes;
    d.libraryOps = libraryOps_;
    if (floatPlainConv_) {
      d.convolutionDtypes =
          sdk::dtypeBits({PLUGSDK_DTYPE_F16, PLUGSDK_DTYPE_BF16, PLUGSDK_DTYPE_F32, PLUGSDK_DTYPE_F64});
      d.convolutionSkipsTransposed = true;
    }
    d.epilogueOps = libraryOps_ & (PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION);
    d.maxKernelStmts = 0;
    d.fusesHorizontal = true;
    d.fusesReductionEpilogue = true;
    d.fusesMultiReduction = true;
    // No split reductions (ABI 1.5): oneTBB runs rows as tasks over a few cores, which the
    // rows of most reductions already fill; a second stage would add a pass over the partials
    // for little gain.
    d.splitRowReductions = 0;
    d.splitColumnReductions = 0;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<CpuBuffer>> allocate(uint32_t, uint32_t, uint64_t bytes) override {
    auto b = std::make_unique<CpuBuffer>();
    if (bytes == 0) return b;
    const uint64_t rounded = (bytes + 63) / 64 * 64;
    if (!failAllocations_) b->data = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
    if (!b->data)
      return sdk::resourceExhausted("cannot allocate " + std::to_string(bytes) + " bytes of host memory" +
                                    (failAllocations_ ? " (fault=alloc)" : ""));
    return b;
  }

  /// Host memory is this device's memory: a torch CPU tensor is used in place.
  sdk::StatusOr<std::unique_ptr<CpuBuffer>> importBuffer(uint32_t, uint32_t memoryKind, void* data, uint64_t) override {
    if (memoryKind == PLUGSDK_MEMORY_DEVICE)
      return sdk::unimplemented(
          "buffer_import: the cpu device addresses host memory only (memory_kind HOST or SHARED)");
    auto b = std::make_unique<CpuBuffer>();
    b->data = static_cast<uint8_t*>(data);
    b->borrowed = true;
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    if (c.bytes == 0) return sdk::Status::ok();
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE: std::memcpy(c.dst->data + c.dstOffset, c.hostSrc, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_HOST: std::memcpy(c.hostDst, c.src->data + c.srcOffset, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE:
        std::memmove(c.dst->data + c.dstOffset, c.src->data + c.srcOffset, c.bytes);
        break;
    }
    return sdk::Status::ok();
  }

  sdk::Status fill(const Fill& f) override {
    uint8_t* p = f.buffer.data + f.offset;
    if (f.patternBytes == 1) {
      std::memset(p, f.pattern[0], f.bytes);
      return sdk::Status::ok();
    }
    for (uint64_t i = 0; i < f.bytes; i += f.patternBytes) std::memcpy(p + i, f.pattern, f.patternBytes);
    return sdk::Status::ok();
  }

  // Work runs when it is queued: there is never anything to wait for.
  sdk::StatusOr<std::unique_ptr<CpuStream>> createStream(uint32_t) override { return std::make_unique<CpuStream>(); }
  sdk::Status synchronizeStream(CpuStream&) override { return sdk::Status::ok(); }
  sdk::StatusOr<std::unique_ptr<CpuEvent>> createEvent(CpuStream*) override { return std::make_unique<CpuEvent>(); }
  sdk::Status recordEvent(CpuEvent&, CpuStream&) override { return sdk::Status::ok(); }
  sdk::Status waitEvent(CpuStream&, CpuEvent&) override { return sdk::Status::ok(); }
  sdk::Status synchronizeEvent(CpuEvent&) override { return sdk::Status::ok(); }

  sdk::StatusOr<std::unique_ptr<CpuExecutable>> compileKernel(uint32_t, const sdk::KernelView& k,
                                                              std::string_view) override {
    sdk::StatusOr<std::shared_ptr<const cpu::CompiledKernel>> c = compiler_->compile(k);
    if (!c.isOk()) return c.status();
    auto e = std::make_unique<CpuExecutable>();
    e->kernel = *c;
    e->setLog((*c)->log);
    return e;
  }

  sdk::StatusOr<std::unique_ptr<CpuExecutable>> compileLibrary(const sdk::LibraryCall& c) override {
    if ((libraryOps_ & c.op) == 0) return sdk::unimplemented("compile_library: this client claims no such library op");
    if (!gemm_) {
      sdk::StatusOr<cpu::GemmKernels> g = cpu::buildGemmKernels(*jit_);
      if (!g.isOk()) return g.status().withContext("compile_library: the GEMM micro-kernel");
      gemm_ = std::make_unique<cpu::GemmKernels>(std::move(*g));
    }
    sdk::StatusOr<cpu::LibraryPlan> plan = cpu::planLibrary(c, *compiler_);
    if (!plan.isOk()) return plan.status();
    auto e = std::make_unique<CpuExecutable>();
    e->library = std::make_unique<cpu::LibraryPlan>(std::move(*plan));
    e->id = ++libraryCalls_;
    if (e->library->epilogue) e->setLog(e->library->epilogue->log);
    return e;
  }

  /// profile=1: the time of every launch, summed per executable, printed to stderr when the
  /// client is destroyed (slowest first).
  ~CpuBackend() override {
    if (!profile_ || profile_times_.empty()) return;
    std::vector<std::pair<double, std::string>> rows;
    double total = 0;
    for (const auto& [name, t] : profile_times_) {
      rows.emplace_back(t.first, name + " x" + std::to_string(t.second));
      total += t.first;
    }
    std::sort(rows.rbegin(), rows.rend());
    std::fprintf(stderr, "cpu plugin profile: %.3f ms in %zu executables\n", total * 1e3, rows.size());
    for (const auto& [t, name] : rows)
      std::fprintf(stderr, "  %9.3f ms %5.1f%%  %s\n", t * 1e3, 100 * t / total, name.c_str());
  }

  sdk::Status launch(const Launch& l) override {
    if (!profile_) return run(l);
    const auto start = std::chrono::steady_clock::now();
    sdk::Status st = run(l);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const CpuExecutable& e = l.executable;
    auto& slot = profile_times_[e.library ? e.library->opName + " #" + std::to_string(e.id) : "@" + e.kernel->name];
    slot.first += t;
    slot.second += 1;
    return st;
  }

 private:
  sdk::Status run(const Launch& l) {
    std::vector<int64_t> symbols(l.symbolValues.begin(), l.symbolValues.end());
    if (l.executable.library) {
      // NULL marks an absent input; an empty buffer (no allocation) is present, so it gets a
      // non-NULL address that is never read.
      alignas(64) static uint8_t empty[64];
      std::vector<uint8_t*> buffers;
      for (size_t i = 0; i < l.buffers.size(); ++i)
        buffers.push_back(!l.buffers[i] ? nullptr : l.buffers[i]->data ? l.buffers[i]->data + l.offsets[i] : empty);
      return cpu::runLibrary(*l.executable.library, buffers, symbols,
                             cpu::LibraryContext{gemm_.get(), arena_.get(), shiftedConv_});
    }
    const cpu::CompiledKernel& k = *l.executable.kernel;
    std::vector<void*> args;
    for (size_t i = 0; i < l.buffers.size(); ++i) args.push_back(l.buffers[i]->data + l.offsets[i]);
    return cpu::launchKernel(k, args, symbols, *arena_);
  }

  cpu::Isa isa_;
  bool profile_ = false;
  int libraryCalls_ = 0;
  std::map<std::string, std::pair<double, int>> profile_times_;
  bool failAllocations_ = false;
  bool shiftedConv_ = true;
  bool floatPlainConv_ = false;  ///< option conv_forms=float-plain
  uint32_t libraryOps_ = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA;
  std::unique_ptr<tbb::task_arena> arena_;
  // Declared after the JIT, so destroyed before it: they hold code the JIT unmaps.
  std::unique_ptr<cpu::Jit> jit_;
  std::unique_ptr<cpu::KernelCompiler> compiler_;
  std::unique_ptr<cpu::GemmKernels> gemm_;
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(CpuBackend, "cpu", "0.1 (LLVM 19 ORC JIT, AVX-512 / AVX2 / scalar, oneTBB)")
