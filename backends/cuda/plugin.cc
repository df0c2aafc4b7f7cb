// The CUDA backend as a plugin (libplugsdk_cuda.so, plugin "cuda"): NVIDIA GPUs through the
// driver API (dlopen; no toolkit needed to build or load). Kernels become PTX through the
// shared LLVM lowering and LLVM's NVPTX target (codegen/), loaded by the driver's JIT;
// memory is device memory; a stream is a CUDA stream. Without a driver or a GPU the client
// has no device and says why. See README.md for the client options.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/codegen/nvptx.h"
#include "backends/cuda/codegen/ptx_cache.h"
#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/library/conv.h"
#include "backends/cuda/library/cublaslt_api.h"
#include "backends/cuda/library/cudnn_api.h"
#include "backends/cuda/library/matmul.h"
#include "backends/cuda/library/sdpa.h"
#include "backends/cuda/runtime/device.h"
#include "backends/cuda/runtime/graph_recording.h"
#include "backends/cuda/runtime/kernel_status.h"
#include "backends/cuda/runtime/module.h"
#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;
namespace cuda = plugsdk::cuda;

/// An on|off option: its value, else `$env` when set (env may be null), else `fallback`.
sdk::StatusOr<bool> onOff(const sdk::Options& options, const std::string& key, const char* env, const char* fallback) {
  const char* fromEnv = env ? std::getenv(env) : nullptr;
  const std::string v = options.get(key, fromEnv && *fromEnv ? fromEnv : fallback);
  if (v != "on" && v != "off")
    return sdk::invalidArgument("option " + key + (env ? " (or $" + std::string(env) + ")" : std::string()) + ": '" +
                                v + "' is not on or off");
  return v == "on";
}

struct CudaBuffer : sdk::Buffer {
  const cuda::DriverApi* api = nullptr;
  cuda::CUcontext context = nullptr;
  cuda::CUdeviceptr ptr = 0;
  bool borrowed = false;  ///< buffer_import: the caller's memory, never freed here
  ~CudaBuffer() override {
    if (ptr && !borrowed) {
      cuda::ContextGuard g(*api, context);
      api->memFree(ptr);
    }
  }
};

struct CudaExecutable;

struct CudaStream : sdk::Stream {
  const cuda::DriverApi* api = nullptr;
  cuda::CUcontext context = nullptr;
  cuda::CUstream stream = nullptr;
  uint32_t device = 0;
  bool owned = true;  ///< false: the caller's stream (stream_import), never destroyed here
  /// The work queued since the stream's last synchronize: how many launches and the last
  /// one's name, which a fault found at the synchronize (an illegal address) is reported with.
  uint64_t queued = 0;
  const CudaExecutable* last = nullptr;  ///< alive at the synchronize (the core destroys nothing queued work uses)
  /// While recording (ABI 1.9): the stream's own handle; `stream` is then the device's
  /// capture stream, so everything queued on this object is captured.
  cuda::CUstream recordingOf = nullptr;
  ~CudaStream() override {
    if (stream && owned) {
      cuda::ContextGuard g(*api, context);
      api->streamDestroy(stream);
    }
  }
};

struct CudaEvent : sdk::Event {
  const cuda::DriverApi* api = nullptr;
  cuda::CUevent event = nullptr;
  ~CudaEvent() override {
    if (event) api->eventDestroy(event);
  }
};

/// Work recorded from a stream (ABI 1.9): a CUDA graph, and what it queues for messages.
struct CudaRecording : sdk::Recording {
  std::unique_ptr<cuda::GraphRecording> graph;
  uint64_t launches = 0;
  const CudaExecutable* last = nullptr;
};

struct CudaExecutable : sdk::Executable {
  std::unique_ptr<cuda::LoadedKernel> kernel;      ///< a compiled kernel, or
  std::unique_ptr<cuda::MatmulExecutable> matmul;  ///< prims.matmul (library/matmul.h), or
  std::unique_ptr<cuda::ConvExecutable> conv;      ///< prims.convolution (library/conv.h), or
  std::unique_ptr<cuda::SdpaExecutable> sdpa;      ///< prims.sdpa (library/sdpa.h)
  uint32_t device = 0;
  /// What errors call it: "kernel @NAME" or the library prim (built only for a message).
  std::string describe() const {
    return matmul ? "prims.matmul" : conv ? "prims.convolution" : sdpa ? sdpa->name() : "kernel @" + kernel->name;
  }
};

class CudaBackend : public sdk::Backend<CudaBuffer, CudaStream, CudaEvent, CudaExecutable> {
 public:
  static constexpr bool kRecords = true;

  /// Options (README.md): driver=LIBRARY (default libcuda.so.1; tests point it elsewhere to
  /// see the no-driver path), libdevice=PATH (default: findLibdevice), dump=DIR (each
  /// kernel's .kir, .ll and .ptx), opt=2|3, fault=llvm|address (tests: malformed IR on
  /// purpose; every kernel's first argument at an address that is not mapped),
  /// split=off (never split a reduction over several blocks), lanes=4|8 (elements per thread
  /// in each access), minblocks=0..8 (blocks per multiprocessor the registers must allow;
  /// 0: ptxas decides), cublaslt=PATH|off (the cuBLASLt library for prims.matmul; default:
  /// found by library/cublaslt_api.h; off: the generated kernel only), cudnn=PATH|off (the
  /// cuDNN library for prims.convolution; default: found by library/cudnn_api.h; off or none
  /// found: convolutions are left to the core's expansion), cache_dir=DIR|off (the PTX cache,
  /// codegen/ptx_cache.h; default: defaultCacheDir("cuda")), epilogue=native|kernel|off (fused
  /// epilogues on prims.matmul: inside cuBLASLt where it computes them, else as their own
  /// kernel; kernel: always their own kernel; off: none taken. Default: $PLUGSDK_CUDA_EPILOGUE,
  /// else native), conv_epilogue=on|off (fused epilogues on prims.convolution, as their own
  /// kernel after cuDNN's; default: $PLUGSDK_CUDA_CONV_EPILOGUE, else off; none with
  /// epilogue=off), record=on|off (ABI 1.9 recordings as CUDA graphs; default:
  /// $PLUGSDK_CUDA_RECORD, else on), pad_results=on|off (a cuBLASLt result whose rows are not
  /// 16-byte aligned is computed into a padded temporary and copied into place,
  /// matmul_plan.h's paddedResultLd; default: $PLUGSDK_CUDA_PAD_RESULTS, else on).
  sdk::Status initialize(const sdk::Options& options) override {
    for (const auto& [key, value] : options.entries())
      if (key != "driver" && key != "libdevice" && key != "dump" && key != "opt" && key != "fault" && key != "split" &&
          key != "lanes" && key != "minblocks" && key != "cublaslt" && key != "cudnn" && key != "cache_dir" &&
          key != "epilogue" && key != "conv_epilogue" && key != "record" && key != "pad_results")
        return sdk::invalidArgument(
            "unknown option '" + key +
            "' (the cuda plugin takes driver, libdevice, dump, opt, fault, split, lanes, "
            "minblocks, cublaslt, cudnn, cache_dir, epilogue, conv_epilogue, record, pad_results)");
    sdk::StatusOr<bool> record = onOff(options, "record", "PLUGSDK_CUDA_RECORD", "on");
    if (!record.isOk()) return record.status();
    record_ = *record;
    sdk::StatusOr<bool> pad = onOff(options, "pad_results", "PLUGSDK_CUDA_PAD_RESULTS", "on");
    if (!pad.isOk()) return pad.status();
    padResults_ = *pad;
    const char* epilogueEnv = std::getenv("PLUGSDK_CUDA_EPILOGUE");
    epilogue_ = options.get("epilogue", epilogueEnv && *epilogueEnv ? epilogueEnv : "native");
    if (epilogue_ != "native" && epilogue_ != "kernel" && epilogue_ != "off")
      return sdk::invalidArgument("option epilogue (or $PLUGSDK_CUDA_EPILOGUE): '" + epilogue_ +
                                  "' is not native, kernel or off");
    // Off by default: on NCHW operands cuDNN fuses none, and the epilogue kernel after it made
    // resnet50's training step 1.2% slower (3.8% before the result store left the epilogue;
    // docs/cuda-backend.md, fourteenth session).
    sdk::StatusOr<bool> convEpilogue = onOff(options, "conv_epilogue", "PLUGSDK_CUDA_CONV_EPILOGUE", "off");
    if (!convEpilogue.isOk()) return convEpilogue.status();
    convEpilogue_ = *convEpilogue && epilogue_ != "off";
    sdk::StatusOr<bool> split = onOff(options, "split", nullptr, "on");
    if (!split.isOk()) return split.status();
    splitReductions_ = *split;
    const std::string lanes = options.get("lanes", "4");
    if (lanes != "1" && lanes != "2" && lanes != "4" && lanes != "8")
      return sdk::invalidArgument("option lanes: '" + lanes + "' is not 1, 2, 4 or 8");
    ptxOptions_.lanes = static_cast<uint32_t>(lanes[0] - '0');
    const std::string minBlocks = options.get("minblocks", "0");
    if (minBlocks.size() != 1 || minBlocks[0] < '0' || minBlocks[0] > '8')
      return sdk::invalidArgument("option minblocks: '" + minBlocks + "' is not 0 to 8");
    ptxOptions_.minBlocksPerSm = static_cast<uint32_t>(minBlocks[0] - '0');
    ptxOptions_.libdevice = options.get("libdevice", cuda::findLibdevice());
    const std::string opt = options.get("opt", "3");
    if (opt != "2" && opt != "3") return sdk::invalidArgument("option opt: '" + opt + "' is not 2 or 3");
    ptxOptions_.optLevel = opt == "2" ? 2 : 3;
    const std::string fault = options.get("fault");
    if (!fault.empty() && fault != "llvm" && fault != "address")
      return sdk::invalidArgument("option fault: '" + fault + "' is not llvm or address");
    ptxOptions_.breakIr = fault == "llvm";
    faultAddress_ = fault == "address";
    std::string cacheDir = options.get("cache_dir", plugsdk::lowering::defaultCacheDir("cuda"));
    if (cacheDir == "off") cacheDir.clear();
    ptxCache_ = std::make_unique<cuda::PtxCache>(cacheDir);
    dumpDir_ = options.get("dump");
    if (!dumpDir_.empty() && mkdir(dumpDir_.c_str(), 0755) != 0 && errno != EEXIST)
      return sdk::invalidArgument("option dump: cannot create " + dumpDir_ + ": " + std::strerror(errno));
    // No driver or no GPU is not an error: the client has no device, and says why.
    sdk::StatusOr<std::shared_ptr<const cuda::DriverApi>> api = cuda::loadDriver(options.get("driver"));
    if (!api.isOk()) {
      noDevice_ = api.status().message();
      return sdk::Status::ok();
    }
    api_ = *api;
    sdk::StatusOr<std::vector<cuda::Device>> devices = cuda::openDevices(*api_);
    if (!devices.isOk()) {
      noDevice_ = devices.status().message();
      return sdk::Status::ok();
    }
    devices_ = std::move(*devices);
    if (devices_.empty()) noDevice_ = "the CUDA driver reports no GPU";
    // cuBLASLt for prims.matmul, when this machine has it (else the generated kernel).
    const std::string cublas = options.get("cublaslt");
    std::shared_ptr<const cuda::lt::Api> lt;
    if (cublas != "off") {
      sdk::StatusOr<std::shared_ptr<const cuda::lt::Api>> loaded = cuda::lt::load(cublas);
      if (loaded.isOk())
        lt = *loaded;
      else if (!cublas.empty())
        return loaded.status().withContext("option cublaslt");
    }
    // cuDNN for prims.convolution, when this machine has it (else the core expands them).
    const std::string cudnn = options.get("cudnn");
    std::shared_ptr<const cuda::dnn::Api> dnn;
    if (cudnn != "off") {
      sdk::StatusOr<std::shared_ptr<const cuda::dnn::Api>> loaded = cuda::dnn::load(cudnn);
      if (loaded.isOk())
        dnn = *loaded;
      else if (!cudnn.empty())
        return loaded.status().withContext("option cudnn");
    }
    for (const cuda::Device& d : devices_) {
      auto c = std::make_unique<cuda::DnnDevice>();
      c->api = api_.get();
      c->dnn = dnn;
      c->context = d.context;
      dnn_.push_back(std::move(c));
    }
    for (const cuda::Device& d : devices_) {
      auto l = std::make_unique<cuda::LtDevice>();
      l->api = api_.get();
      l->lt = lt;
      l->context = d.context;
      l->padResults = padResults_;
      lt_.push_back(std::move(l));
    }
    for (const cuda::Device& d : devices_) {
      cuda::ContextGuard g(*api_, d.context);
      sdk::StatusOr<std::unique_ptr<cuda::KernelStatus>> s = cuda::KernelStatus::create(*api_);
      if (!s.isOk()) return s.status().withContext(d.name);
      status_.push_back(std::move(*s));
    }
    return sdk::Status::ok();
  }

  ~CudaBackend() override {
    lt_.clear();
    dnn_.clear();
    for (size_t d = 0; d < captureStreams_.size(); ++d)
      if (captureStreams_[d]) {
        cuda::ContextGuard g(*api_, devices_[d].context);
        api_->streamDestroy(captureStreams_[d]);
      }
    for (size_t d = 0; d < status_.size(); ++d) {
      cuda::ContextGuard g(*api_, devices_[d].context);
      status_[d].reset();
    }
    if (api_) cuda::closeDevices(*api_, devices_);
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override {
    return sdk::DeviceCount{static_cast<uint32_t>(devices_.size()), noDevice_};
  }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t device) override {
    const cuda::Device& g = devices_[device];
    sdk::DeviceInfo d;
    d.name = g.name + " (" + g.arch.name() + ", " + std::to_string(g.multiprocessors) + " SMs, CUDA driver " +
             std::to_string(api_->version / 1000) + "." + std::to_string(api_->version % 1000 / 10) + ")";
    d.dtypes = (1u << (PLUGSDK_DTYPE_F64 + 1)) - 1;  // all ten
    d.vectorBits = 128;                              // one thread's widest access
    d.memoryKinds = PLUGSDK_MEMORY_DEVICE;
    d.memoryBytes = g.memoryBytes;
    d.maxBufferBytes = g.memoryBytes;
    // Convolution through cuDNN when it loaded: its float dtypes, not transposed (the core
    // expands the rest, and attention, into kernels and matmuls).
    d.libraryOps = PLUGSDK_LIBRARY_MATMUL;
    if (dnn_[device]->dnn) {
      d.libraryOps |= PLUGSDK_LIBRARY_CONVOLUTION;
      d.convolutionDtypes =
          sdk::dtypeBits({PLUGSDK_DTYPE_F16, PLUGSDK_DTYPE_BF16, PLUGSDK_DTYPE_F32, PLUGSDK_DTYPE_F64});
      d.convolutionSkipsTransposed = true;
      // Attention as cuDNN's fused flash kernel (ABI 1.7): f16 / bf16 without a mask or
      // dropout, causal or not, head dims up to 128 in multiples of 8 (measured on cuDNN 9.14:
      // 32..256, dv != d; tools/probes/cudnn_sdpa_probe.cc). A mask's fully masked rows would
      // give lse -inf where prims.sdpa says 0, and its dropout is cuDNN's own generator: both
      // stay with the core, as do f32 / f64 (no fused engine).
      // Its backward likewise as cuDNN's fused kernel (ABI 1.8; the same forms, measured in
      // tools/probes/cudnn_sdpa_bwd_probe.cc). $PLUGSDK_CUDA_SDPA=off leaves every attention
      // to the core (matmuls and a softmax); =forward keeps the forward only.
      const char* env = std::getenv("PLUGSDK_CUDA_SDPA");
      const std::string sdpa = env ? env : "";
      if (sdpa != "off") {
        d.libraryOps |= PLUGSDK_LIBRARY_SDPA;
        if (sdpa != "forward") d.libraryOps |= PLUGSDK_LIBRARY_SDPA_BACKWARD;
        d.sdpaDtypes = sdk::dtypeBits({PLUGSDK_DTYPE_F16, PLUGSDK_DTYPE_BF16});
        d.sdpaSkips = PLUGSDK_SDPA_SKIPS_BOOL_MASK | PLUGSDK_SDPA_SKIPS_FLOAT_MASK | PLUGSDK_SDPA_SKIPS_DROPOUT;
        d.sdpaHeadDimMax = 128;
        d.sdpaHeadDimMultiple = 8;
      }
    }
    // Fused epilogues on matmuls (library/matmul.h): cuBLASLt's own (bias, relu, the tanh
    // GELU, a residual) inside the GEMM, any other as its own kernel after it.
    if (epilogue_ != "off") d.epilogueOps = PLUGSDK_LIBRARY_MATMUL;
    // ... and on convolutions, as their own kernel after cuDNN's (library/conv.h).
    if (convEpilogue_ && (d.libraryOps & PLUGSDK_LIBRARY_CONVOLUTION)) d.epilogueOps |= PLUGSDK_LIBRARY_CONVOLUTION;
    d.maxKernelStmts = 0;
    d.fusesHorizontal = true;
    d.fusesReductionEpilogue = true;
    d.fusesMultiReduction = true;
    // Kernels launched on an imported stream raise their failures as device-side asserts
    // (codegen/device_assert.h), which the caller's runtime reports: no wait needed for them.
    d.asyncStreamFailures = true;
    // Split reductions (ABI 1.5): a row reduction runs a block per row, and a few rows leave
    // most of the GPU idle -- about 8 blocks per SM on a 132-SM H100 fill it, so a reduction
    // keeping fewer than 1024 rows is split into partials until rows x slices reaches that.
    // A column sum runs 4 columns a thread, so it wants many more points: 65536.
    d.splitRowReductions = 1024;
    d.splitColumnReductions = 65536;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<CudaBuffer>> allocate(uint32_t device, uint32_t, uint64_t bytes) override {
    auto b = newBuffer(device);
    if (bytes == 0) return b;
    cuda::ContextGuard g(*api_, b->context);
    const cuda::CUresult r = api_->memAlloc(&b->ptr, bytes);
    if (r == cuda::CUDA_ERROR_OUT_OF_MEMORY) {
      size_t free = 0, total = 0;
      api_->memGetInfo(&free, &total);
      return sdk::resourceExhausted("cannot allocate " + std::to_string(bytes) + " bytes on " + devices_[device].name +
                                    ": " + std::to_string(free) + " of " + std::to_string(total) + " bytes are free");
    }
    sdk::Status st = api_->check(r, "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
    if (!st.isOk()) return st;
    return b;
  }

  /// A device pointer of this GPU (a torch CUDA tensor's data_ptr) is used in place.
  sdk::StatusOr<std::unique_ptr<CudaBuffer>> importBuffer(uint32_t device, uint32_t memoryKind, void* data,
                                                          uint64_t) override {
    if (memoryKind != PLUGSDK_MEMORY_DEVICE)
      return sdk::unimplemented("buffer_import: the cuda device imports device memory only (memory_kind DEVICE)");
    auto b = newBuffer(device);
    b->ptr = reinterpret_cast<cuda::CUdeviceptr>(data);
    b->borrowed = true;
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    if (c.bytes == 0) return sdk::Status::ok();
    const CudaBuffer* any = c.dst ? c.dst : c.src;
    cuda::ContextGuard g(*api_, any->context);
    cuda::CUstream s = c.stream ? c.stream->stream : nullptr;
    if (!s) {
      sdk::Status st = drain("copying " + std::to_string(c.bytes) + " bytes");
      if (!st.isOk()) return st;
    }
    cuda::CUresult r = cuda::CUDA_SUCCESS;
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE:
        r = api_->memcpyHtoDAsync(c.dst->ptr + c.dstOffset, c.hostSrc, c.bytes, s);
        break;
      case PLUGSDK_COPY_DEVICE_TO_HOST:
        r = api_->memcpyDtoHAsync(c.hostDst, c.src->ptr + c.srcOffset, c.bytes, s);
        break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE:
        r = api_->memcpyDtoDAsync(c.dst->ptr + c.dstOffset, c.src->ptr + c.srcOffset, c.bytes, s);
        break;
    }
    sdk::Status st = api_->check(r, "copying " + std::to_string(c.bytes) + " bytes");
    if (!st.isOk() || c.stream) return st;
    return api_->check(api_->ctxSynchronize(), "copying " + std::to_string(c.bytes) + " bytes");
  }

  sdk::Status fill(const Fill& f) override {
    cuda::ContextGuard g(*api_, f.buffer.context);
    cuda::CUstream s = f.stream ? f.stream->stream : nullptr;
    if (!s) {
      sdk::Status st = drain("filling " + std::to_string(f.bytes) + " bytes");
      if (!st.isOk()) return st;
    }
    const cuda::CUdeviceptr p = f.buffer.ptr + f.offset;
    uint8_t pat[8];
    std::memcpy(pat, f.pattern, f.patternBytes);
    uint32_t width = f.patternBytes;
    // A pattern that repeats within itself fills with the narrower memset.
    if (width == 8 && std::memcmp(pat, pat + 4, 4) == 0) width = 4;
    cuda::CUresult r = cuda::CUDA_SUCCESS;
    if (width == 1) {
      r = api_->memsetD8Async(p, pat[0], f.bytes, s);
    } else if (width == 2) {
      uint16_t v;
      std::memcpy(&v, pat, 2);
      r = api_->memsetD16Async(p, v, f.bytes / 2, s);
    } else if (width == 4) {
      uint32_t v;
      std::memcpy(&v, pat, 4);
      r = api_->memsetD32Async(p, v, f.bytes / 4, s);
    } else {
      // An 8-byte pattern (an f64 or i64 fill): staged through the host.
      std::vector<uint8_t> host(f.bytes);
      for (uint64_t i = 0; i < f.bytes; i += 8) std::memcpy(host.data() + i, pat, 8);
      r = api_->memcpyHtoDAsync(p, host.data(), f.bytes, s);
      if (r == cuda::CUDA_SUCCESS) r = s ? api_->streamSynchronize(s) : api_->ctxSynchronize();
    }
    sdk::Status st = api_->check(r, "filling " + std::to_string(f.bytes) + " bytes");
    if (!st.isOk() || f.stream) return st;
    return api_->check(api_->ctxSynchronize(), "filling " + std::to_string(f.bytes) + " bytes");
  }

  sdk::StatusOr<std::unique_ptr<CudaStream>> createStream(uint32_t device) override {
    auto s = std::make_unique<CudaStream>();
    s->api = api_.get();
    s->context = devices_[device].context;
    s->device = device;
    cuda::ContextGuard g(*api_, s->context);
    sdk::Status st = api_->check(api_->streamCreate(&s->stream, cuda::kStreamNonBlocking), "cuStreamCreate");
    if (!st.isOk()) return st;
    return s;
  }

  /// stream_import: `native` is a CUstream of the device's primary context (torch's streams
  /// are), or the driver's special handles CU_STREAM_LEGACY (0x1, the legacy default stream)
  /// and CU_STREAM_PER_THREAD (0x2).
  sdk::StatusOr<std::unique_ptr<CudaStream>> importStream(uint32_t device, void* native) override {
    auto s = std::make_unique<CudaStream>();
    s->api = api_.get();
    s->context = devices_[device].context;
    s->device = device;
    s->stream = static_cast<cuda::CUstream>(native);
    s->owned = false;
    return s;
  }

  /// Waits for the stream, then reports the first run-time error of a kernel (kernel_status.h).
  sdk::Status synchronizeStream(CudaStream& s) override {
    cuda::ContextGuard g(*api_, s.context);
    const std::string queued =
        s.queued && s.last
            ? std::to_string(s.queued) + " launch(es) queued since the last synchronize, the last " + s.last->describe()
            : "nothing queued";
    sdk::Status st = api_->check(api_->streamSynchronize(s.stream), "synchronizing a stream (" + queued + ")");
    s.queued = 0;
    s.last = nullptr;
    if (!st.isOk()) return st;
    return status_[s.device]->collect(s.stream);
  }

  /// Recordings (graph_recording.h): the stream object's handle is swapped for the device's
  /// capture stream until endRecording, so launches, copies and fills on it are captured.
  sdk::Status beginRecording(CudaStream& s) override {
    if (!record_) return sdk::unimplemented("recording is off (option record=off)");
    if (s.recordingOf) return sdk::failedPrecondition("recording_begin: the stream is recording already");
    cuda::ContextGuard g(*api_, s.context);
    sdk::Status st = cuda::notCaptured(*api_, s.stream);
    if (!st.isOk()) return st;
    captureStreams_.resize(devices_.size(), nullptr);
    cuda::CUstream& capture = captureStreams_[s.device];
    if (!capture) {
      st = api_->check(api_->streamCreate(&capture, cuda::kStreamNonBlocking), "cuStreamCreate (the capture stream)");
      if (!st.isOk()) return st;
    }
    st = cuda::beginCapture(*api_, capture);
    if (!st.isOk()) return st;
    s.recordingOf = s.stream;
    s.stream = capture;
    recordedFrom_ = s.queued;
    return sdk::Status::ok();
  }
  sdk::StatusOr<std::unique_ptr<sdk::Recording>> endRecording(CudaStream& s) override {
    if (!s.recordingOf) return sdk::failedPrecondition("recording_end: the stream is not recording");
    cuda::ContextGuard g(*api_, s.context);
    sdk::StatusOr<std::unique_ptr<cuda::GraphRecording>> graph = cuda::endCapture(*api_, s.context, s.stream);
    s.stream = s.recordingOf;
    s.recordingOf = nullptr;
    const uint64_t launches = s.queued - recordedFrom_;
    s.queued = recordedFrom_;  // nothing of it ran
    if (!graph.isOk()) return graph.status();
    auto r = std::make_unique<CudaRecording>();
    r->graph = std::move(*graph);
    r->launches = launches;
    r->last = s.last;
    return std::unique_ptr<sdk::Recording>(std::move(r));
  }
  sdk::Status launchRecording(sdk::Recording& recording, CudaStream& s) override {
    const auto& r = static_cast<const CudaRecording&>(recording);
    cuda::ContextGuard g(*api_, s.context);
    sdk::Status st = r.graph->launch(s.stream);
    if (!st.isOk()) return st;
    s.queued += r.launches;
    s.last = r.last;
    return sdk::Status::ok();
  }

  sdk::StatusOr<std::unique_ptr<CudaEvent>> createEvent(CudaStream* stream) override {
    auto e = std::make_unique<CudaEvent>();
    e->api = api_.get();
    cuda::ContextGuard g(*api_, stream ? stream->context : devices_[0].context);
    sdk::Status st = api_->check(api_->eventCreate(&e->event, cuda::kEventDisableTiming), "cuEventCreate");
    if (!st.isOk()) return st;
    return e;
  }
  sdk::Status recordEvent(CudaEvent& e, CudaStream& s) override {
    cuda::ContextGuard g(*api_, s.context);
    return api_->check(api_->eventRecord(e.event, s.stream), "cuEventRecord");
  }
  sdk::Status waitEvent(CudaStream& s, CudaEvent& e) override {
    cuda::ContextGuard g(*api_, s.context);
    return api_->check(api_->streamWaitEvent(s.stream, e.event, 0), "cuStreamWaitEvent");
  }
  sdk::Status synchronizeEvent(CudaEvent& e) override {
    return api_->check(api_->eventSynchronize(e.event), "cuEventSynchronize");
  }

  sdk::StatusOr<std::unique_ptr<CudaExecutable>> compileKernel(uint32_t device, const sdk::KernelView& k,
                                                               std::string_view) override {
    std::string log;
    sdk::StatusOr<std::unique_ptr<cuda::LoadedKernel>> loaded = loadedKernel(device, k, &log);
    if (!loaded.isOk()) return loaded.status();
    auto e = std::make_unique<CudaExecutable>();
    e->kernel = std::move(*loaded);
    e->device = device;
    e->setLog(log);
    return e;
  }

  sdk::StatusOr<std::unique_ptr<CudaExecutable>> compileLibrary(const sdk::LibraryCall& c) override {
    if (c.op != PLUGSDK_LIBRARY_MATMUL && c.op != PLUGSDK_LIBRARY_CONVOLUTION && c.op != PLUGSDK_LIBRARY_SDPA &&
        c.op != PLUGSDK_LIBRARY_SDPA_BACKWARD)
      return sdk::unimplemented(
          "the cuda plugin implements prims.matmul, prims.convolution, prims.sdpa and prims.sdpa_backward only "
          "(library op " +
          std::to_string(c.op) + ")");
    if (c.epilogue && epilogue_ == "off")
      return sdk::unimplemented("the cuda plugin takes no fused epilogue with option epilogue=off");
    if (c.epilogue && c.op == PLUGSDK_LIBRARY_CONVOLUTION && !convEpilogue_)
      return sdk::unimplemented(
          "the cuda plugin takes no fused epilogue on prims.convolution with option "
          "conv_epilogue=off");
    if (c.epilogue && c.op != PLUGSDK_LIBRARY_MATMUL && c.op != PLUGSDK_LIBRARY_CONVOLUTION)
      return sdk::unimplemented("the cuda plugin takes a fused epilogue on prims.matmul and prims.convolution only");
    const uint32_t device = c.device;
    if (c.op == PLUGSDK_LIBRARY_SDPA || c.op == PLUGSDK_LIBRARY_SDPA_BACKWARD) {
      sdk::StatusOr<std::unique_ptr<cuda::SdpaExecutable>> a = cuda::SdpaExecutable::create(c, dnn_[device].get());
      if (!a.isOk()) return a.status();
      auto e = std::make_unique<CudaExecutable>();
      e->setLog((*a)->log());
      e->sdpa = std::move(*a);
      e->device = device;
      return e;
    }
    if (c.op == PLUGSDK_LIBRARY_CONVOLUTION) {
      sdk::StatusOr<std::unique_ptr<cuda::ConvExecutable>> conv = cuda::ConvExecutable::create(
          c, dnn_[device].get(), [this, device](const sdk::KernelView& k) { return loadedKernel(device, k, nullptr); },
          epilogue_ == "native");
      if (!conv.isOk()) return conv.status();
      auto e = std::make_unique<CudaExecutable>();
      e->setLog((*conv)->log());
      e->conv = std::move(*conv);
      e->device = device;
      return e;
    }
    sdk::StatusOr<std::unique_ptr<cuda::MatmulExecutable>> m = cuda::MatmulExecutable::create(
        c, lt_[device].get(), [this, device](const sdk::KernelView& k) { return loadedKernel(device, k, nullptr); },
        epilogue_ == "native");
    if (!m.isOk()) return m.status();
    auto e = std::make_unique<CudaExecutable>();
    e->setLog((*m)->log());
    e->matmul = std::move(*m);
    e->device = device;
    return e;
  }

  sdk::Status launch(const Launch& l) override {
    const CudaExecutable& e = l.executable;
    cuda::ContextGuard g(*api_, devices_[e.device].context);
    std::vector<cuda::CUdeviceptr> args;
    for (size_t i = 0; i < l.buffers.size(); ++i)  // NULL: an absent optional library input
      args.push_back(l.buffers[i] ? l.buffers[i]->ptr + l.offsets[i] : 0);
    std::vector<int64_t> symbols(l.symbolValues.begin(), l.symbolValues.end());
    cuda::KernelStatus& status = *status_[e.device];
    cuda::CUstream s = l.stream ? l.stream->stream : nullptr;
    if (!s) {
      sdk::Status st = drain(e.describe());
      if (!st.isOk()) return st;
    } else {  // no string work on this path: the name is built only for an error
      ++l.stream->queued;
      l.stream->last = &e;
    }
    // On an imported stream (the caller does not wait for it), bit 0 of the status pointer:
    // a failure is also raised as a device-side assert (codegen/device_assert.h).
    sdk::Status st;
    if (e.matmul) {
      st = e.matmul->launch(args.data(), args.size(), symbols, s);
    } else if (e.conv) {
      st = e.conv->launch(args.data(), args.size(), symbols, s);
    } else if (e.sdpa) {
      st = e.sdpa->launch(args.data(), args.size(), symbols, s);
    } else {
      if (faultAddress_ && !args.empty()) args[0] = cuda::CUdeviceptr{1} << 46;  // the fault test hook
      const cuda::CUdeviceptr statusWord =
          status.address(e.kernel->statusSlot) | (l.stream && !l.stream->owned ? 1u : 0u);
      st = cuda::launchKernel(*e.kernel, args, symbols, statusWord, s);
    }
    if (!st.isOk() || l.stream) return st;
    // Synchronous: a fault of this launch (an illegal address) surfaces here; say whose.
    st = status.collect(nullptr);
    if (!st.isOk() && st.message().find(e.describe()) == std::string::npos) return st.withContext(e.describe());
    return st;
  }

 private:
  /// Before work with no stream (synchronous): everything queued on the client's streams
  /// completes first, as the ABI orders it after them. (The streams are non-blocking, so
  /// the driver's legacy NULL stream would not wait for them.)
  bool faultAddress_ = false;        ///< option fault=address (tests: an illegal address on purpose)
  std::string epilogue_ = "native";  ///< option epilogue
  bool convEpilogue_ = false;        ///< option conv_epilogue (and epilogue not off)
  bool padResults_ = true;           ///< option pad_results

  sdk::Status drain(const std::string& what) { return api_->check(api_->ctxSynchronize(), what); }

  /// A kernel compiled to PTX and loaded, its status slot assigned; `log` (when given) gets
  /// the executable's log line.
  sdk::StatusOr<std::unique_ptr<cuda::LoadedKernel>> loadedKernel(uint32_t device, const sdk::KernelView& k,
                                                                  std::string* log) {
    const cuda::Device& d = devices_[device];
    std::string origin;
    sdk::StatusOr<cuda::PtxKernel> ptx = ptxCache_->get(k, d.arch, ptxOptions_, &origin);
    if (!ptx.isOk()) return ptx.status();
    if (!dumpDir_.empty()) {
      const std::string stem = dumpDir_ + "/" + std::string(k.name()) + "." + ptx->entry;
      std::ofstream(stem + ".kir") << k.text();
      if (!ptx->llvmIr.empty()) std::ofstream(stem + ".ll") << ptx->llvmIr;
      std::ofstream(stem + ".ptx") << ptx->ptx;
    }
    cuda::ContextGuard g(*api_, d.context);
    sdk::StatusOr<std::unique_ptr<cuda::LoadedKernel>> loaded = cuda::loadKernel(*api_, k, *ptx, d.arch, dumpDir_);
    if (!loaded.isOk()) return loaded.status();
    cuda::LoadedKernel& lk = **loaded;
    lk.context = d.context;
    lk.multiprocessors = d.multiprocessors;
    if (!splitReductions_) lk.mapping.splittable = false;
    lk.status = status_[device].get();
    lk.statusSlot = lk.status->assign(lk.name, ptx->checkMessages);
    if (log)
      *log = "kernel @" + lk.name + ": PTX for " + d.arch.name() + " (" + std::to_string(ptx->ptx.size()) +
             " bytes), " + cuda::mappingName(ptx->mapping.kind) +
             (ptx->mapping.splittable ? " (its loop may be split over blocks)" : "") + "; " + origin;
    return loaded;
  }

  std::unique_ptr<CudaBuffer> newBuffer(uint32_t device) {
    auto b = std::make_unique<CudaBuffer>();
    b->api = api_.get();
    b->context = devices_[device].context;
    return b;
  }

  std::shared_ptr<const cuda::DriverApi> api_;
  std::vector<cuda::Device> devices_;
  std::string noDevice_;
  std::vector<std::unique_ptr<cuda::KernelStatus>> status_;  ///< per device
  std::vector<std::unique_ptr<cuda::LtDevice>> lt_;          ///< per device: cuBLASLt for prims.matmul
  std::vector<std::unique_ptr<cuda::DnnDevice>> dnn_;        ///< per device: cuDNN for prims.convolution
  cuda::PtxOptions ptxOptions_;
  std::unique_ptr<cuda::PtxCache> ptxCache_;
  std::string dumpDir_;
  bool splitReductions_ = true;
  bool record_ = true;                          ///< option record
  std::vector<cuda::CUstream> captureStreams_;  ///< per device, made on first recording
  uint64_t recordedFrom_ = 0;                   ///< the recording stream's `queued` at recording_begin
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(CudaBackend, "cuda", "0.1 (PTX from LLVM 19 NVPTX, CUDA driver API)")
