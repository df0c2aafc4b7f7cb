// A small plugin written with the C++ layer (plugsdk.hpp), built as libplugsdk_cpptest.so for
// cpp_layer_test.cc: one host device, host-memory buffers (host memory imports in place),
// synchronous streams (any native handle imports as one), events, and
// kernels that compile always and run only when trivial (f32 loads, constants, index
// values, add/sub/mul, plain stores, no loops); anything else launches as UNIMPLEMENTED.
// Client options make it fail on purpose: "throw=runtime|bad_alloc|int" (device_count
// throws), "init=throw|fail" (client_create throws or returns an error); "async_failures=1"
// reports ABI 1.3's async_stream_failures; "conv_dtypes=f32,bf16" reports prims.convolution
// in library_ops with ABI 1.4's forms (those input dtypes, transposed ones left out; "all":
// every form). Its library calls are never compiled (compileLibrary stays UNIMPLEMENTED).
// "split_rows=N" and "split_columns=N" report ABI 1.5's split_row_reductions and
// split_column_reductions (a decimal count; anything else fails client_create).
// "matmul_dtypes=f32" reports prims.matmul in library_ops with ABI 1.6's matmul_dtypes (those
// operand dtypes; "all": every one).
// "record=on|refuse|stale|expire" records streams (ABI 1.9) as lists of calls over raw host
// pointers: on replays them; refuse makes recording_end answer UNIMPLEMENTED; stale makes
// recording_launch answer FAILED_PRECONDITION; expire does so from a recording's second
// launch on. Without the option recording_begin answers UNIMPLEMENTED.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

#include "plugsdk/plugsdk.hpp"

namespace {

namespace sdk = plugsdk::sdk;

struct HostBuffer : sdk::Buffer {
  std::vector<uint8_t> data;
  uint8_t* borrowed = nullptr;  ///< buffer_import's host memory (then `data` is unused)
  uint8_t* host() { return borrowed ? borrowed : data.data(); }
};

/// Work recorded from a stream: calls over raw host pointers.
using RecordedCalls = std::vector<std::function<sdk::Status()>>;

struct HostStream : sdk::Stream {
  void* native = nullptr;  ///< stream_import's handle (work runs when queued, so it only tags)
  bool recording = false;  ///< between recording_begin and recording_end: calls go to `recorded`
  RecordedCalls recorded;
};

struct HostRecording : sdk::Recording {
  RecordedCalls calls;
  int launches = 0;
};

struct HostEvent : sdk::Event {
  bool recorded = false;
};

struct HostExecutable : sdk::Executable {
  std::string kernelName;
  std::vector<plugsdk_stmt_t> stmts;  // copied: the kernel is borrowed only while compiling
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_index_expr_t> grid;
  uint32_t numValues = 0;
  std::string unsupported;  // why launch answers UNIMPLEMENTED ("" when it runs)
};

/// Why the test plugin cannot run statement `s`, or "".
std::string unsupported(const plugsdk_stmt_t& s) {
  switch (s.kind) {
    case PLUGSDK_STMT_LOAD:
      return s.dtype == PLUGSDK_DTYPE_F32 && s.num_operands == 0 ? "" : "a masked or non-f32 load";
    case PLUGSDK_STMT_CONST: return s.dtype == PLUGSDK_DTYPE_F32 ? "" : "a non-f32 constant";
    case PLUGSDK_STMT_INDEX: return "";
    case PLUGSDK_STMT_SCALAR:
      return s.dtype == PLUGSDK_DTYPE_F32 &&
                     (s.op == PLUGSDK_OP_ADD || s.op == PLUGSDK_OP_SUB || s.op == PLUGSDK_OP_MUL)
                 ? ""
                 : "an elementwise op other than f32 add, sub, mul";
    case PLUGSDK_STMT_STORE: return s.op == PLUGSDK_COMBINE_NONE ? "" : "a combining store";
    default: return "statement kind " + std::to_string(s.kind);
  }
}

/// Option `key` as a decimal count that fits uint32_t into `*out` (0 when absent), or
/// INVALID_ARGUMENT naming the option.
sdk::Status countOption(const sdk::Options& options, const char* key, uint32_t* out) {
  *out = 0;
  if (!options.has(key)) return sdk::Status::ok();
  const std::string v = options.get(key);
  uint64_t n = 0;
  bool ok = !v.empty() && v.size() <= 10;
  for (size_t i = 0; ok && i < v.size(); ++i) {
    ok = v[i] >= '0' && v[i] <= '9';
    n = n * 10 + static_cast<uint64_t>(v[i] - '0');
  }
  if (!ok || n > UINT32_MAX)
    return sdk::invalidArgument(std::string(key) + ": '" + v + "' is not a count (a decimal 0 to 4294967295)");
  *out = static_cast<uint32_t>(n);
  return sdk::Status::ok();
}

/// Option `key`'s comma-separated floating dtypes ("f32,bf16") as PLUGSDK_DTYPE_BITs in
/// `*bits`, or INVALID_ARGUMENT naming the option and the unknown dtype.
sdk::Status dtypeListOption(const char* key, const std::string& list, uint32_t* bits) {
  const std::pair<const char*, plugsdk_dtype_t> names[] = {
      {"f16", PLUGSDK_DTYPE_F16}, {"bf16", PLUGSDK_DTYPE_BF16}, {"f32", PLUGSDK_DTYPE_F32}, {"f64", PLUGSDK_DTYPE_F64}};
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    auto it = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return name == n.first; });
    if (it == std::end(names)) return sdk::invalidArgument(std::string(key) + ": unknown dtype '" + name + "'");
    *bits |= PLUGSDK_DTYPE_BIT(it->second);
  }
  return sdk::Status::ok();
}

class CppTestBackend : public sdk::Backend<HostBuffer, HostStream, HostEvent, HostExecutable> {
 public:
  static constexpr bool kRecords = true;

  sdk::Status initialize(const sdk::Options& options) override {
    throw_ = options.get("throw");
    record_ = options.get("record");
    if (!record_.empty() && record_ != "on" && record_ != "refuse" && record_ != "stale" && record_ != "expire")
      return sdk::invalidArgument("record: '" + record_ + "' is not on, refuse, stale or expire");
    asyncFailures_ = options.get("async_failures") == "1";
    const std::string conv = options.get("conv_dtypes");
    if (!conv.empty()) {
      takesConvolution_ = true;
      if (conv != "all") {
        skipsTransposed_ = true;
        PLUGSDK_RETURN_IF_ERROR(dtypeListOption("conv_dtypes", conv, &convDtypes_));
      }
    }
    const std::string matmul = options.get("matmul_dtypes");
    if (!matmul.empty()) {
      takesMatmul_ = true;
      if (matmul != "all") PLUGSDK_RETURN_IF_ERROR(dtypeListOption("matmul_dtypes", matmul, &matmulDtypes_));
    }
    PLUGSDK_RETURN_IF_ERROR(countOption(options, "split_rows", &splitRows_));
    PLUGSDK_RETURN_IF_ERROR(countOption(options, "split_columns", &splitColumns_));
    if (options.get("init") == "throw") throw std::runtime_error("initialize was asked to throw");
    if (options.get("init") == "fail") return sdk::unavailable("initialize was asked to fail");
    return sdk::Status::ok();
  }

  sdk::StatusOr<sdk::DeviceCount> deviceCount() override {
    if (throw_ == "runtime") throw std::runtime_error("device_count was asked to throw");
    if (throw_ == "bad_alloc") throw std::bad_alloc();
    if (throw_ == "int") throw 42;
    return sdk::DeviceCount{1, ""};
  }

  sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
    sdk::DeviceInfo d;
    d.name = "cpptest0";
    d.dtypes = sdk::dtypeBits({PLUGSDK_DTYPE_F32, PLUGSDK_DTYPE_I64});
    d.vectorBits = 128;
    d.memoryKinds = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
    d.memoryBytes = 1ull << 30;
    d.maxBufferBytes = 1ull << 28;
    d.maxKernelStmts = 64;
    d.fusesHorizontal = true;
    d.takesSubgraphs = false;
    d.asyncStreamFailures = asyncFailures_;
    if (takesConvolution_) d.libraryOps |= PLUGSDK_LIBRARY_CONVOLUTION;
    if (takesMatmul_) d.libraryOps |= PLUGSDK_LIBRARY_MATMUL;
    d.matmulDtypes = matmulDtypes_;
    d.convolutionDtypes = convDtypes_;
    d.convolutionSkipsTransposed = skipsTransposed_;
    d.splitRowReductions = splitRows_;
    d.splitColumnReductions = splitColumns_;
    return d;
  }

  sdk::StatusOr<std::unique_ptr<HostBuffer>> allocate(uint32_t, uint32_t, uint64_t bytes) override {
    auto b = std::make_unique<HostBuffer>();
    b->data.resize(bytes);
    return b;
  }

  /// Host memory in place (the core's zero-copy path and stream_import's tests use it).
  sdk::StatusOr<std::unique_ptr<HostBuffer>> importBuffer(uint32_t, uint32_t memoryKind, void* data,
                                                          uint64_t) override {
    if (memoryKind != PLUGSDK_MEMORY_HOST) return sdk::unimplemented("cpptest imports host memory only");
    auto b = std::make_unique<HostBuffer>();
    b->borrowed = static_cast<uint8_t*>(data);
    return b;
  }

  sdk::Status copy(const Copy& c) override {
    if (c.stream && c.stream->recording) {
      if (c.kind != PLUGSDK_COPY_DEVICE_TO_DEVICE) return sdk::unimplemented("cpptest records device copies only");
      uint8_t *dst = c.dst->host() + c.dstOffset, *src = c.src->host() + c.srcOffset;
      const uint64_t bytes = c.bytes;
      c.stream->recorded.push_back([=] {
        std::memmove(dst, src, bytes);
        return sdk::Status::ok();
      });
      return sdk::Status::ok();
    }
    switch (c.kind) {
      case PLUGSDK_COPY_HOST_TO_DEVICE: std::memcpy(c.dst->host() + c.dstOffset, c.hostSrc, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_HOST: std::memcpy(c.hostDst, c.src->host() + c.srcOffset, c.bytes); break;
      case PLUGSDK_COPY_DEVICE_TO_DEVICE:
        std::memmove(c.dst->host() + c.dstOffset, c.src->host() + c.srcOffset, c.bytes);
        break;
    }
    return sdk::Status::ok();
  }

  sdk::Status fill(const Fill& f) override {
    for (uint64_t i = 0; i < f.bytes; ++i) f.buffer.host()[f.offset + i] = f.pattern[i % f.patternBytes];
    return sdk::Status::ok();
  }

  sdk::StatusOr<std::unique_ptr<HostStream>> createStream(uint32_t) override { return std::make_unique<HostStream>(); }
  sdk::Status synchronizeStream(HostStream&) override { return sdk::Status::ok(); }  // work runs when queued
  sdk::StatusOr<std::unique_ptr<HostStream>> importStream(uint32_t, void* native) override {
    auto s = std::make_unique<HostStream>();
    s->native = native;
    return s;
  }

  sdk::Status beginRecording(HostStream& s) override {
    if (record_.empty()) return sdk::unimplemented("cpptest records only with option record");
    s.recording = true;
    s.recorded.clear();
    return sdk::Status::ok();
  }
  sdk::StatusOr<std::unique_ptr<sdk::Recording>> endRecording(HostStream& s) override {
    s.recording = false;
    auto r = std::make_unique<HostRecording>();
    r->calls = std::move(s.recorded);
    s.recorded.clear();
    if (record_ == "refuse") return sdk::unimplemented("cpptest was asked to refuse recordings (record=refuse)");
    return std::unique_ptr<sdk::Recording>(std::move(r));
  }
  sdk::Status launchRecording(sdk::Recording& recording, HostStream&) override {
    auto& r = static_cast<HostRecording&>(recording);
    if (record_ == "stale" || (record_ == "expire" && r.launches > 0))
      return sdk::failedPrecondition("cpptest was asked to call recordings stale (record=" + record_ + ")");
    ++r.launches;
    for (const auto& call : r.calls) PLUGSDK_RETURN_IF_ERROR(call());
    return sdk::Status::ok();
  }

  sdk::StatusOr<std::unique_ptr<HostEvent>> createEvent(HostStream*) override { return std::make_unique<HostEvent>(); }
  sdk::Status recordEvent(HostEvent& e, HostStream&) override {
    e.recorded = true;
    return sdk::Status::ok();
  }
  sdk::Status waitEvent(HostStream&, HostEvent&) override { return sdk::Status::ok(); }
  sdk::Status synchronizeEvent(HostEvent& e) override {
    return e.recorded ? sdk::Status::ok() : sdk::failedPrecondition("the event was never recorded");
  }

  sdk::StatusOr<std::unique_ptr<HostExecutable>> compileKernel(uint32_t, const sdk::KernelView& k,
                                                               std::string_view) override {
    auto e = std::make_unique<HostExecutable>();
    e->kernelName = std::string(k.name());
    for (size_t i = 0; i < k.numStmts(); ++i) {
      e->stmts.push_back(k.stmt(i));
      if (e->unsupported.empty()) {
        const std::string why = unsupported(k.stmt(i));
        if (!why.empty()) e->unsupported = "statement " + std::to_string(i) + " is " + why;
      }
    }
    e->pool.assign(k.indexPool().begin(), k.indexPool().end());
    for (size_t d = 0; d < k.numGrid(); ++d) e->grid.push_back(k.grid(d));
    e->numValues = k.numValues();
    e->setLog("compiled " + e->kernelName + ": " + std::to_string(k.numStmts()) + " statements" +
              (e->unsupported.empty() ? "" : "; launch is unimplemented (" + e->unsupported + ")"));
    return e;
  }

  /// Runs the kernel now, or records it (over the buffers' addresses) on a recording stream.
  sdk::Status launch(const Launch& l) override {
    const HostExecutable& e = l.executable;
    if (e.unsupported.empty() == false)
      return sdk::unimplemented("the test plugin cannot run kernel " + e.kernelName + ": " + e.unsupported);
    std::vector<uint8_t*> bases;
    std::vector<uint64_t> room;  // bytes from each base to its buffer's end
    for (size_t i = 0; i < l.buffers.size(); ++i) {
      bases.push_back(l.buffers[i]->host() + l.offsets[i]);
      room.push_back(l.buffers[i]->bytes() - l.offsets[i]);
    }
    std::vector<int64_t> symbols(l.symbolValues.begin(), l.symbolValues.end());
    if (l.stream && l.stream->recording) {
      const HostExecutable* k = &e;
      l.stream->recorded.push_back([k, bases, room, symbols] { return run(*k, bases, room, symbols); });
      return sdk::Status::ok();
    }
    return run(e, bases, room, symbols);
  }

  static sdk::Status run(const HostExecutable& e, const std::vector<uint8_t*>& bases, const std::vector<uint64_t>& room,
                         const std::vector<int64_t>& symbolValues) {
    const sdk::Span<const int64_t> symbols(symbolValues.data(), symbolValues.size());
    const sdk::Span<const plugsdk_index_insn_t> pool(e.pool);
    std::vector<int64_t> sizes;
    for (const plugsdk_index_expr_t& g : e.grid) {
      sdk::StatusOr<int64_t> n = sdk::evalIndex(pool, g, sdk::IndexEnv{{}, {}, symbols});
      if (!n.isOk()) return n.status();
      sizes.push_back(*n);
    }
    std::vector<int64_t> point(sizes.size(), 0);
    std::vector<double> floats(e.numValues);
    std::vector<int64_t> ints(e.numValues);
    auto value = [&](int32_t v) { return ints[static_cast<size_t>(v)]; };
    for (bool more = std::all_of(sizes.begin(), sizes.end(), [](int64_t n) { return n > 0; }); more;) {
      const sdk::IndexEnv env{point, {}, symbols};
      for (const plugsdk_stmt_t& s : e.stmts) {
        const bool memory = s.kind == PLUGSDK_STMT_LOAD || s.kind == PLUGSDK_STMT_STORE;
        const bool indexed = memory || s.kind == PLUGSDK_STMT_INDEX;
        int64_t index = 0;
        if (indexed) {
          sdk::StatusOr<int64_t> v = sdk::evalIndex(pool, s.index, env, value);
          if (!v.isOk()) return v.status();
          index = *v;
        }
        float* at = nullptr;
        if (memory) {
          const auto arg = static_cast<size_t>(s.arg);
          if (index < 0 || (static_cast<uint64_t>(index) + 1) * sizeof(float) > room[arg])
            return sdk::outOfRange("kernel " + e.kernelName + ": element " + std::to_string(index) + " of argument " +
                                   std::to_string(s.arg) + " is out of bounds");
          at = reinterpret_cast<float*>(bases[arg]) + index;
        }
        const size_t r = static_cast<size_t>(s.result);
        switch (s.kind) {
          case PLUGSDK_STMT_LOAD: floats[r] = *at; break;
          case PLUGSDK_STMT_CONST: floats[r] = s.fvalue; break;
          case PLUGSDK_STMT_INDEX: ints[r] = index, floats[r] = static_cast<double>(index); break;
          case PLUGSDK_STMT_SCALAR: {
            const double a = floats[static_cast<size_t>(s.operands[0])];
            const double b = floats[static_cast<size_t>(s.operands[1])];
            floats[r] = static_cast<float>(s.op == PLUGSDK_OP_ADD ? a + b : s.op == PLUGSDK_OP_SUB ? a - b : a * b);
            break;
          }
          case PLUGSDK_STMT_STORE: *at = static_cast<float>(floats[static_cast<size_t>(s.operands[0])]); break;
          default: break;
        }
      }
      // The next grid point, row-major.
      more = false;
      for (size_t d = point.size(); d-- > 0;) {
        if (++point[d] < sizes[d]) {
          more = true;
          break;
        }
        point[d] = 0;
      }
    }
    return sdk::Status::ok();
  }

 private:
  std::string throw_;
  std::string record_;             ///< option record: on, refuse, stale, expire ("": recording_begin is UNIMPLEMENTED)
  bool asyncFailures_ = false;     ///< option async_failures=1: report ABI 1.3's async_stream_failures
  bool takesConvolution_ = false;  ///< option conv_dtypes: report prims.convolution ...
  uint32_t convDtypes_ = 0;        ///< ... of these input dtypes (0: every one) ...
  bool skipsTransposed_ = false;   ///< ... and not transposed (a list given)
  uint32_t splitRows_ = 0;         ///< option split_rows: ABI 1.5's split_row_reductions
  uint32_t splitColumns_ = 0;      ///< option split_columns: split_column_reductions
  bool takesMatmul_ = false;       ///< option matmul_dtypes: report prims.matmul ...
  uint32_t matmulDtypes_ = 0;      ///< ... of these operand dtypes (ABI 1.6; 0, "all": every one)
};

}  // namespace

PLUGSDK_DEFINE_PLUGIN(CppTestBackend, "cpptest", "0.1.0")
