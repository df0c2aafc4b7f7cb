// plugsdk/sdk_trampolines.hpp -- the C function table of a Backend class: one static
// trampoline per ABI function that checks the arguments, converts handles and types,
// and turns Status and exceptions into plugsdk_error_t; the plugin-side error object and
// the entry point's version negotiation. Part of plugsdk.hpp (include that one).
#pragma once

#include "plugsdk/sdk_backend.hpp"

// Built with exceptions (the default) the trampolines catch everything; built without
// (-fno-exceptions) there is nothing to catch and the rest works the same.
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define PLUGSDK_HPP_EXCEPTIONS 1
#else
#define PLUGSDK_HPP_EXCEPTIONS 0
#endif

/// The plugin-side error object behind plugsdk_error_t (the core never defines it; a plugin
/// that includes this header gets this definition and must not write its own).
struct plugsdk_error {
  uint32_t code;        ///< plugsdk_code_t
  const char* text;     ///< what error_info returns: storage.c_str(), or a static string
  std::string storage;  ///< the message
  bool isStatic;        ///< the one preallocated out-of-memory error: never deleted
};

namespace plugsdk::sdk {

namespace detail {

/// The one error returned when not even an error can be allocated.
inline plugsdk_error_t* outOfMemoryError() noexcept {
  static plugsdk_error_t e{PLUGSDK_CODE_RESOURCE_EXHAUSTED, "out of memory (while making an error)", {}, true};
  return &e;
}

/// A new error "<fn>: <message>" (no prefix when fn is NULL). Never throws.
inline plugsdk_error_t* makeError(Code code, const char* fn, std::string_view message) noexcept {
  if (code == Code::kOk || static_cast<uint32_t>(code) > static_cast<uint32_t>(PLUGSDK_CODE_RESOURCE_EXHAUSTED))
    code = Code::kInternal;
  auto* e = new (std::nothrow) plugsdk_error_t{static_cast<uint32_t>(code), nullptr, {}, false};
  if (!e) return outOfMemoryError();
#if PLUGSDK_HPP_EXCEPTIONS
  try {
#endif
    if (fn) e->storage.append(fn).append(": ");
    e->storage.append(message);
#if PLUGSDK_HPP_EXCEPTIONS
  } catch (...) {
    delete e;
    return outOfMemoryError();
  }
#endif
  e->text = e->storage.c_str();
  return e;
}

inline plugsdk_error_t* errorDestroy(plugsdk_error_destroy_args_t* a) noexcept {
  if (!a) return makeError(Code::kInvalidArgument, "error_destroy", "args is NULL");
  if (a->struct_size < PLUGSDK_SIZE_THROUGH(plugsdk_error_destroy_args_t, error))
    return makeError(Code::kInvalidArgument, "error_destroy", "args->struct_size is too small");
  if (a->error && !a->error->isStatic) delete a->error;
  return nullptr;
}

inline plugsdk_error_t* errorInfo(plugsdk_error_info_args_t* a) noexcept {
  if (!a) return makeError(Code::kInvalidArgument, "error_info", "args is NULL");
  if (a->struct_size < PLUGSDK_SIZE_THROUGH(plugsdk_error_info_args_t, out_message))
    return makeError(Code::kInvalidArgument, "error_info", "args->struct_size is too small");
  if (!a->error) return makeError(Code::kInvalidArgument, "error_info", "args->error is NULL");
  a->out_code = a->error->code;
  a->out_message = a->error->text;
  return nullptr;
}

/// The C function table of plugin class B: one static trampoline per ABI function.
template <typename B>
struct Plugin {
  using BufferT = typename B::BufferType;
  using StreamT = typename B::StreamType;
  using EventT = typename B::EventType;
  using ExecutableT = typename B::ExecutableType;
  static_assert(std::is_base_of_v<Backend<BufferT, StreamT, EventT, ExecutableT>, B>,
                "PLUGSDK_DEFINE_PLUGIN's class must derive from plugsdk::sdk::Backend<...>");
  static_assert(std::is_default_constructible_v<B>, "PLUGSDK_DEFINE_PLUGIN's class must be default-constructible");

  using Copy = typename Backend<BufferT, StreamT, EventT, ExecutableT>::Copy;
  using Fill = typename Backend<BufferT, StreamT, EventT, ExecutableT>::Fill;
  using Launch = typename Backend<BufferT, StreamT, EventT, ExecutableT>::Launch;
  enum Live { kBuffers, kStreams, kEvents, kExecutables, kRecordings };

  /// Runs `body` with the common checks (args present and large enough) and converts its
  /// Status -- and any exception -- into an error. Nothing escapes.
  template <typename Args, typename Body>
  static plugsdk_error_t* guarded(const char* fn, Args* args, size_t need, Body&& body) noexcept {
#if PLUGSDK_HPP_EXCEPTIONS
    try {
      return checked(fn, args, need, body);
    } catch (const std::bad_alloc& e) {
      return makeError(Code::kResourceExhausted, fn, std::string("out of memory (") + e.what() + ")");
    } catch (const std::exception& e) {
      return makeError(Code::kInternal, fn, std::string("uncaught exception: ") + e.what());
    } catch (...) {
      return makeError(Code::kInternal, fn, "uncaught exception of a type not derived from std::exception");
    }
#else
    return checked(fn, args, need, body);
#endif
  }
  template <typename Args, typename Body>
  static plugsdk_error_t* checked(const char* fn, Args* args, size_t need, Body& body) {
    if (!args) return makeError(Code::kInvalidArgument, fn, "args is NULL");
    if (args->struct_size < need)
      return makeError(Code::kInvalidArgument, fn,
                       "args->struct_size is " + std::to_string(args->struct_size) + "; ABI 1.0 needs at least " +
                           std::to_string(need));
    Status s = body();
    return s.isOk() ? nullptr : makeError(s.code(), nullptr, s.message());
  }

  static Status argError(const char* fn, const std::string& what) {
    return invalidArgument(std::string(fn) + ": " + what);
  }

  template <typename C, typename T>
  static C* toC(T* object) {
    return reinterpret_cast<C*>(static_cast<Handle*>(object));
  }

  /// The client behind a handle, or INVALID_ARGUMENT.
  static Status client(const char* fn, plugsdk_client_t* c, B** out) {
    if (!c) return argError(fn, "args->client is NULL");
    Handle* h = reinterpret_cast<Handle*>(c);
    if (h->magic_ != Handle::kMagic + static_cast<uint64_t>(HandleKind::kClient))
      return argError(fn, "args->client is not a client of this plugin");
    *out = static_cast<B*>(static_cast<ClientBase*>(h));
    return Status::ok();
  }

  /// The object of type T (kind `kind`) behind a handle, or INVALID_ARGUMENT naming `field`.
  /// The cast is safe: the kind is checked and this client only ever makes T objects.
  template <typename Base, typename T, typename CHandle>
  static Status handle(const char* fn, const char* field, CHandle* c, HandleKind kind, const B* owner, T** out) {
    if (!c) return argError(fn, std::string("args->") + field + " is NULL");
    Handle* h = reinterpret_cast<Handle*>(const_cast<std::remove_const_t<CHandle>*>(c));
    if (h->magic_ != Handle::kMagic + static_cast<uint64_t>(kind))
      return argError(fn, std::string("args->") + field + " is not a " + kindName(kind) + " handle");
    if (h->owner_ != static_cast<const ClientBase*>(owner))
      return argError(fn, std::string("args->") + field + " belongs to another client");
    *out = static_cast<T*>(static_cast<Base*>(h));
    return Status::ok();
  }
  static const char* kindName(HandleKind k) {
    switch (k) {
      case HandleKind::kClient: return "client";
      case HandleKind::kBuffer: return "buffer";
      case HandleKind::kStream: return "stream";
      case HandleKind::kEvent: return "event";
      case HandleKind::kExecutable: return "executable";
      case HandleKind::kRecording: return "recording";
    }
    return "?";
  }
  static Status buffer(const char* fn, const char* f, plugsdk_buffer_t* c, const B* b, BufferT** out) {
    return handle<Buffer>(fn, f, c, HandleKind::kBuffer, b, out);
  }
  /// A stream that may be NULL (synchronous).
  static Status optionalStream(const char* fn, plugsdk_stream_t* c, const B* b, StreamT** out) {
    *out = nullptr;
    return c ? handle<Stream>(fn, "stream", c, HandleKind::kStream, b, out) : Status::ok();
  }
  static Status stream(const char* fn, plugsdk_stream_t* c, const B* b, StreamT** out) {
    return handle<Stream>(fn, "stream", c, HandleKind::kStream, b, out);
  }
  static Status event(const char* fn, plugsdk_event_t* c, const B* b, EventT** out) {
    return handle<Event>(fn, "event", c, HandleKind::kEvent, b, out);
  }
  static Status executable(const char* fn, const plugsdk_executable_t* c, const B* b, ExecutableT** out) {
    return handle<Executable>(fn, "executable", c, HandleKind::kExecutable, b, out);
  }

  /// A device index below deviceCount() (not checked when deviceCount itself fails).
  static Status device(const char* fn, B& b, uint32_t device) {
    StatusOr<DeviceCount> n = b.deviceCount();
    if (n.isOk() && device >= n->count)
      return argError(
          fn, "device " + std::to_string(device) + " does not exist (" + std::to_string(n->count) + " devices)");
    return Status::ok();
  }

  /// [offset, offset + bytes) lies within `buf`.
  static Status range(const char* fn, const char* what, const Buffer& buf, uint64_t offset, uint64_t bytes) {
    if (offset > buf.bytes() || bytes > buf.bytes() - offset)
      return argError(fn, std::string(what) + " range [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                              ") is outside its buffer of " + std::to_string(buf.bytes()) + " bytes");
    return Status::ok();
  }

  /// Hands a newly made object to the core: checks it exists, records its owner and counts it.
  template <typename T>
  static Status adopt(const char* fn, B& b, StatusOr<std::unique_ptr<T>>& made, Live live) {
    if (!made.isOk()) return made.status();
    if (!*made) return internalError(std::string(fn) + ": the plugin returned no object and no error");
    static_cast<Handle&>(**made).owner_ = static_cast<const ClientBase*>(&b);
    b.live_[live].fetch_add(1);
    return Status::ok();
  }

  // ---- the trampolines (one per plugsdk_api_t function) ----------------------------------

  static plugsdk_error_t* clientCreate(plugsdk_client_create_args_t* a) noexcept {
    constexpr const char* fn = "client_create";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_client_create_args_t, out_client), [&]() -> Status {
      StatusOr<Options> options = Options::parse(a->options ? a->options : "");
      if (!options.isOk()) return options.status().withContext(std::string(fn) + ": options");
      std::unique_ptr<B> b = std::make_unique<B>();
      PLUGSDK_RETURN_IF_ERROR(b->initialize(*options));
      a->out_client = toC<plugsdk_client_t>(b.release());
      return Status::ok();
    });
  }

  static plugsdk_error_t* clientDestroy(plugsdk_client_destroy_args_t* a) noexcept {
    constexpr const char* fn = "client_destroy";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_client_destroy_args_t, client), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      const int64_t n[5] = {b->live_[0].load(), b->live_[1].load(), b->live_[2].load(), b->live_[3].load(),
                            b->live_[4].load()};
      if (n[0] || n[1] || n[2] || n[3] || n[4])
        return failedPrecondition(std::string(fn) + ": the client still has " + std::to_string(n[0]) + " buffers, " +
                                  std::to_string(n[1]) + " streams, " + std::to_string(n[2]) + " events, " +
                                  std::to_string(n[3]) + " executables and " + std::to_string(n[4]) +
                                  " recordings; destroy them first (it was not destroyed)");
      delete b;
      return Status::ok();
    });
  }

  static plugsdk_error_t* deviceCount(plugsdk_device_count_args_t* a) noexcept {
    constexpr const char* fn = "device_count";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_device_count_args_t, out_reason), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      StatusOr<DeviceCount> n = b->deviceCount();
      if (!n.isOk()) return n.status();
      a->out_count = n->count;
      a->out_reason = n->reason.empty() ? nullptr : b->keep(n->reason);
      return Status::ok();
    });
  }

  static plugsdk_error_t* deviceInfo(plugsdk_device_info_args_t* a) noexcept {
    constexpr const char* fn = "device_info";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_device_info_args_t, info), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      if (!a->info) return argError(fn, "args->info is NULL");
      constexpr size_t kHead = PLUGSDK_SIZE_THROUGH(plugsdk_device_info_t, extension);
      if (a->info->struct_size < kHead)
        return argError(fn, "args->info->struct_size is " + std::to_string(a->info->struct_size) +
                                "; it must at least cover struct_size and extension (" + std::to_string(kHead) + ")");
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      StatusOr<DeviceInfo> d = b->deviceInfo(a->device);
      if (!d.isOk()) return d.status();
      if (d->takesSubgraphs && !B::kTakesSubgraphs)
        return internalError(std::string(fn) +
                             ": the device reports takes_subgraphs but the plugin class does "
                             "not set kTakesSubgraphs (compile_subgraph is not exported)");
      plugsdk_device_info_t c{};
      c.struct_size = std::min(a->info->struct_size, sizeof(plugsdk_device_info_t));
      c.extension = a->info->extension;
      c.name = b->keep(d->name);
      c.dtypes = d->dtypes;
      c.vector_bits = d->vectorBits;
      c.memory_kinds = d->memoryKinds;
      c.memory_bytes = d->memoryBytes;
      c.max_buffer_bytes = d->maxBufferBytes;
      c.library_ops = d->libraryOps;
      c.epilogue_ops = d->epilogueOps;
      c.max_kernel_stmts = d->maxKernelStmts;
      c.fuses_horizontal = d->fusesHorizontal;
      c.fuses_reduction_epilogue = d->fusesReductionEpilogue;
      c.fuses_multi_reduction = d->fusesMultiReduction;
      c.takes_subgraphs = d->takesSubgraphs;
      c.async_stream_failures = d->asyncStreamFailures;
      c.convolution_dtypes = d->convolutionDtypes;
      c.convolution_skips_transposed = d->convolutionSkipsTransposed;
      c.split_row_reductions = d->splitRowReductions;
      c.split_column_reductions = d->splitColumnReductions;
      c.matmul_dtypes = d->matmulDtypes;
      c.sdpa_dtypes = d->sdpaDtypes;
      c.sdpa_skips = d->sdpaSkips;
      c.sdpa_head_dim_max = d->sdpaHeadDimMax;
      c.sdpa_head_dim_multiple = d->sdpaHeadDimMultiple;
      // Only the bytes the caller has; struct_size then says how much was filled.
      std::memcpy(static_cast<void*>(a->info), &c, c.struct_size);
      return Status::ok();
    });
  }

  /// buffer_allocate and buffer_import: checks the client, the memory kind and the device,
  /// makes the buffer with make(backend, kind), stamps it with its device, kind and size and
  /// hands it out through a->out_buffer.
  template <typename Args, typename Make>
  static Status newBuffer(const char* fn, Args* a, Make make) {
    B* b = nullptr;
    PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
    const uint32_t k = a->memory_kind;
    if (k != PLUGSDK_MEMORY_DEVICE && k != PLUGSDK_MEMORY_HOST && k != PLUGSDK_MEMORY_SHARED)
      return argError(fn, "args->memory_kind " + std::to_string(k) + " is not one plugsdk_memory_kind_t bit");
    PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
    StatusOr<std::unique_ptr<BufferT>> made = make(*b, k);
    PLUGSDK_RETURN_IF_ERROR(adopt(fn, *b, made, kBuffers));
    Buffer& base = **made;
    base.device_ = a->device;
    base.memoryKind_ = k;
    base.bytes_ = a->bytes;
    a->out_buffer = toC<plugsdk_buffer_t>(made->release());
    return Status::ok();
  }

  static plugsdk_error_t* bufferAllocate(plugsdk_buffer_allocate_args_t* a) noexcept {
    constexpr const char* fn = "buffer_allocate";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_buffer_allocate_args_t, out_buffer), [&]() -> Status {
      return newBuffer(fn, a, [&](B& b, uint32_t kind) { return b.allocate(a->device, kind, a->bytes); });
    });
  }

  static plugsdk_error_t* bufferImport(plugsdk_buffer_import_args_t* a) noexcept {
    constexpr const char* fn = "buffer_import";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_buffer_import_args_t, out_buffer), [&]() -> Status {
      if (!a->data && a->bytes != 0)
        return argError(fn, "args->data is NULL for " + std::to_string(a->bytes) + " bytes");
      return newBuffer(fn, a, [&](B& b, uint32_t kind) { return b.importBuffer(a->device, kind, a->data, a->bytes); });
    });
  }

  static plugsdk_error_t* bufferFree(plugsdk_buffer_free_args_t* a) noexcept {
    constexpr const char* fn = "buffer_free";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_buffer_free_args_t, buffer), [&]() -> Status {
      B* b = nullptr;
      BufferT* buf = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(buffer(fn, "buffer", a->buffer, b, &buf));
      b->live_[kBuffers].fetch_sub(1);
      return b->freeBuffer(std::unique_ptr<BufferT>(buf));
    });
  }

  static plugsdk_error_t* bufferCopy(plugsdk_buffer_copy_args_t* a) noexcept {
    constexpr const char* fn = "buffer_copy";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_buffer_copy_args_t, bytes), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(optionalStream(fn, a->stream, b, &s));
      BufferT* src = nullptr;
      BufferT* dst = nullptr;
      switch (a->kind) {
        case PLUGSDK_COPY_HOST_TO_DEVICE:
          if (!a->host_src) return argError(fn, "args->host_src is NULL (HOST_TO_DEVICE)");
          PLUGSDK_RETURN_IF_ERROR(buffer(fn, "dst", a->dst, b, &dst));
          break;
        case PLUGSDK_COPY_DEVICE_TO_HOST:
          if (!a->host_dst) return argError(fn, "args->host_dst is NULL (DEVICE_TO_HOST)");
          PLUGSDK_RETURN_IF_ERROR(buffer(fn, "src", a->src, b, &src));
          break;
        case PLUGSDK_COPY_DEVICE_TO_DEVICE:
          PLUGSDK_RETURN_IF_ERROR(buffer(fn, "src", a->src, b, &src));
          PLUGSDK_RETURN_IF_ERROR(buffer(fn, "dst", a->dst, b, &dst));
          break;
        default: return argError(fn, "args->kind " + std::to_string(a->kind) + " is not a plugsdk_copy_kind_t");
      }
      if (src) PLUGSDK_RETURN_IF_ERROR(range(fn, "the source", *src, a->src_offset, a->bytes));
      if (dst) PLUGSDK_RETURN_IF_ERROR(range(fn, "the destination", *dst, a->dst_offset, a->bytes));
      const Copy c{s,
                   static_cast<plugsdk_copy_kind_t>(a->kind),
                   src,
                   src ? a->src_offset : 0,
                   dst,
                   dst ? a->dst_offset : 0,
                   a->kind == PLUGSDK_COPY_HOST_TO_DEVICE ? a->host_src : nullptr,
                   a->kind == PLUGSDK_COPY_DEVICE_TO_HOST ? a->host_dst : nullptr,
                   a->bytes};
      return b->copy(c);
    });
  }

  static plugsdk_error_t* bufferFill(plugsdk_buffer_fill_args_t* a) noexcept {
    constexpr const char* fn = "buffer_fill";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_buffer_fill_args_t, pattern_bytes), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(optionalStream(fn, a->stream, b, &s));
      BufferT* buf = nullptr;
      PLUGSDK_RETURN_IF_ERROR(buffer(fn, "buffer", a->buffer, b, &buf));
      const uint32_t p = a->pattern_bytes;
      if (p != 1 && p != 2 && p != 4 && p != 8)
        return argError(fn, "args->pattern_bytes is " + std::to_string(p) + "; it must be 1, 2, 4 or 8");
      if (a->bytes % p != 0)
        return argError(fn, "args->bytes (" + std::to_string(a->bytes) + ") is not a multiple of pattern_bytes (" +
                                std::to_string(p) + ")");
      PLUGSDK_RETURN_IF_ERROR(range(fn, "the fill", *buf, a->offset, a->bytes));
      return b->fill(Fill{s, *buf, a->offset, a->bytes, a->pattern, p});
    });
  }

  static plugsdk_error_t* streamCreate(plugsdk_stream_create_args_t* a) noexcept {
    constexpr const char* fn = "stream_create";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_stream_create_args_t, out_stream), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      StatusOr<std::unique_ptr<StreamT>> made = b->createStream(a->device);
      PLUGSDK_RETURN_IF_ERROR(adopt(fn, *b, made, kStreams));
      static_cast<Stream&>(**made).device_ = a->device;
      a->out_stream = toC<plugsdk_stream_t>(made->release());
      return Status::ok();
    });
  }

  static plugsdk_error_t* streamImport(plugsdk_stream_import_args_t* a) noexcept {
    constexpr const char* fn = "stream_import";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_stream_import_args_t, out_stream), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      if (!a->native) return invalidArgument(std::string(fn) + ": native is NULL");
      StatusOr<std::unique_ptr<StreamT>> made = b->importStream(a->device, a->native);
      PLUGSDK_RETURN_IF_ERROR(adopt(fn, *b, made, kStreams));
      static_cast<Stream&>(**made).device_ = a->device;
      a->out_stream = toC<plugsdk_stream_t>(made->release());
      return Status::ok();
    });
  }

  /// recording_begin / _end / _launch / _destroy (ABI 1.9) share one args struct.
  static plugsdk_error_t* recordingBegin(plugsdk_recording_args_t* a) noexcept {
    constexpr const char* fn = "recording_begin";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_recording_args_t, out_recording), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      return b->beginRecording(*s);
    });
  }

  static plugsdk_error_t* recordingEnd(plugsdk_recording_args_t* a) noexcept {
    constexpr const char* fn = "recording_end";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_recording_args_t, out_recording), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      StatusOr<std::unique_ptr<Recording>> made = b->endRecording(*s);
      PLUGSDK_RETURN_IF_ERROR(adopt(fn, *b, made, kRecordings));
      static_cast<Recording&>(**made).device_ = static_cast<const Stream&>(*s).device();
      a->out_recording = toC<plugsdk_recording_t>(made->release());
      return Status::ok();
    });
  }

  static plugsdk_error_t* recordingLaunch(plugsdk_recording_args_t* a) noexcept {
    constexpr const char* fn = "recording_launch";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_recording_args_t, out_recording), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      Recording* r = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      PLUGSDK_RETURN_IF_ERROR(handle<Recording>(fn, "recording", a->recording, HandleKind::kRecording, b, &r));
      const uint32_t device = static_cast<const Stream&>(*s).device();
      if (r->device() != device)
        return argError(fn, "the recording is of device " + std::to_string(r->device()) + ", the stream of device " +
                                std::to_string(device));
      return b->launchRecording(*r, *s);
    });
  }

  static plugsdk_error_t* recordingDestroy(plugsdk_recording_args_t* a) noexcept {
    constexpr const char* fn = "recording_destroy";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_recording_args_t, out_recording), [&]() -> Status {
      B* b = nullptr;
      Recording* r = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(handle<Recording>(fn, "recording", a->recording, HandleKind::kRecording, b, &r));
      b->live_[kRecordings].fetch_sub(1);
      return b->destroyRecording(std::unique_ptr<Recording>(r));
    });
  }

  static plugsdk_error_t* streamDestroy(plugsdk_stream_args_t* a) noexcept {
    constexpr const char* fn = "stream_destroy";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_stream_args_t, stream), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      b->live_[kStreams].fetch_sub(1);
      return b->destroyStream(std::unique_ptr<StreamT>(s));
    });
  }

  static plugsdk_error_t* streamSynchronize(plugsdk_stream_args_t* a) noexcept {
    constexpr const char* fn = "stream_synchronize";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_stream_args_t, stream), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      return b->synchronizeStream(*s);
    });
  }

  static plugsdk_error_t* eventCreate(plugsdk_event_args_t* a) noexcept {
    constexpr const char* fn = "event_create";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_event_args_t, out_event), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(optionalStream(fn, a->stream, b, &s));
      StatusOr<std::unique_ptr<EventT>> made = b->createEvent(s);
      PLUGSDK_RETURN_IF_ERROR(adopt(fn, *b, made, kEvents));
      a->out_event = toC<plugsdk_event_t>(made->release());
      return Status::ok();
    });
  }

  /// event_record, event_wait, event_synchronize, event_destroy share one args struct.
  template <typename Body>
  static plugsdk_error_t* eventCall(const char* fn, plugsdk_event_args_t* a, bool needsStream, Body&& body) noexcept {
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_event_args_t, event), [&]() -> Status {
      B* b = nullptr;
      StreamT* s = nullptr;
      EventT* e = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(event(fn, a->event, b, &e));
      if (needsStream) PLUGSDK_RETURN_IF_ERROR(stream(fn, a->stream, b, &s));
      return body(*b, e, s);
    });
  }
  static plugsdk_error_t* eventRecord(plugsdk_event_args_t* a) noexcept {
    return eventCall("event_record", a, true, [](B& b, EventT* e, StreamT* s) { return b.recordEvent(*e, *s); });
  }
  static plugsdk_error_t* eventWait(plugsdk_event_args_t* a) noexcept {
    return eventCall("event_wait", a, true, [](B& b, EventT* e, StreamT* s) { return b.waitEvent(*s, *e); });
  }
  static plugsdk_error_t* eventSynchronize(plugsdk_event_args_t* a) noexcept {
    return eventCall("event_synchronize", a, false, [](B& b, EventT* e, StreamT*) { return b.synchronizeEvent(*e); });
  }
  static plugsdk_error_t* eventDestroy(plugsdk_event_args_t* a) noexcept {
    return eventCall("event_destroy", a, false, [](B& b, EventT* e, StreamT*) {
      b.live_[kEvents].fetch_sub(1);
      return b.destroyEvent(std::unique_ptr<EventT>(e));
    });
  }

  /// Records an executable's origin and arity, and hands it over.
  static Status finishExecutable(const char* fn, B& b, StatusOr<std::unique_ptr<ExecutableT>>& made,
                                 uint32_t deviceIndex, Executable::Origin origin, size_t buffers, size_t symbols,
                                 plugsdk_executable_t** out) {
    PLUGSDK_RETURN_IF_ERROR(adopt(fn, b, made, kExecutables));
    Executable& e = **made;
    e.device_ = deviceIndex;
    e.origin_ = origin;
    e.numBuffers_ = buffers;
    e.numSymbols_ = symbols;
    *out = toC<plugsdk_executable_t>(made->release());
    return Status::ok();
  }

  static plugsdk_error_t* compileKernel(plugsdk_compile_kernel_args_t* a) noexcept {
    constexpr const char* fn = "compile_kernel";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_compile_kernel_args_t, out_executable), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      if (!a->kernel) return argError(fn, "args->kernel is NULL");
      PLUGSDK_RETURN_IF_ERROR(KernelView::validate(*a->kernel).withContext(std::string(fn) + ": args->kernel"));
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      const KernelView view(*a->kernel);
      StatusOr<std::unique_ptr<ExecutableT>> made =
          b->compileKernel(a->device, view, a->options ? std::string_view(a->options) : std::string_view());
      return finishExecutable(fn, *b, made, a->device, Executable::Origin::kKernel, a->kernel->num_args,
                              a->kernel->num_symbols, &a->out_executable);
    });
  }

  static Status checkDesc(const char* fn, const std::string& what, const plugsdk_tensor_desc_t& d,
                          Span<const plugsdk_index_insn_t> pool, size_t numSymbols) {
    if (d.rank > 0 && (!d.sizes || !d.strides))
      return argError(fn, what + " has rank " + std::to_string(d.rank) + " and NULL sizes or strides");
    const IndexScope scope{0, 0, numSymbols, 0};
    for (uint32_t i = 0; i < d.rank; ++i) {
      PLUGSDK_RETURN_IF_ERROR(
          checkProgram(pool, d.sizes[i], scope).withContext(fn + (": " + what) + " size " + std::to_string(i)));
      PLUGSDK_RETURN_IF_ERROR(
          checkProgram(pool, d.strides[i], scope).withContext(fn + (": " + what) + " stride " + std::to_string(i)));
    }
    if (d.rank > 0 || d.dtype != UINT32_MAX)  // an absent optional input has no offset program
      PLUGSDK_RETURN_IF_ERROR(checkProgram(pool, d.offset, scope).withContext(fn + (": " + what) + " offset"));
    return Status::ok();
  }

  static plugsdk_error_t* compileLibrary(plugsdk_compile_library_args_t* a) noexcept {
    constexpr const char* fn = "compile_library";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_compile_library_args_t, out_executable), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      const uint32_t op = a->op;
      if (op != PLUGSDK_LIBRARY_MATMUL && op != PLUGSDK_LIBRARY_CONVOLUTION && op != PLUGSDK_LIBRARY_SDPA &&
          op != PLUGSDK_LIBRARY_SDPA_BACKWARD)
        return argError(fn, "args->op " + std::to_string(op) + " is not one plugsdk_library_op_t bit");
      if ((a->num_inputs && !a->inputs) || (a->num_outputs && !a->outputs) || (a->num_index_insns && !a->index_insns) ||
          (a->num_symbols && !a->symbols))
        return argError(fn, "an array of args is NULL with a nonzero count");
      const Span<const plugsdk_index_insn_t> pool(a->index_insns, a->num_index_insns);
      for (size_t i = 0; i < a->num_inputs; ++i)
        PLUGSDK_RETURN_IF_ERROR(checkDesc(fn, "input " + std::to_string(i), a->inputs[i], pool, a->num_symbols));
      for (size_t i = 0; i < a->num_outputs; ++i)
        PLUGSDK_RETURN_IF_ERROR(checkDesc(fn, "output " + std::to_string(i), a->outputs[i], pool, a->num_symbols));
      size_t buffers = a->num_inputs + a->num_outputs;
      std::unique_ptr<KernelView> epilogue;
      if (a->epilogue) {
        PLUGSDK_RETURN_IF_ERROR(KernelView::validate(*a->epilogue).withContext(std::string(fn) + ": args->epilogue"));
        epilogue = std::make_unique<KernelView>(*a->epilogue);
        for (size_t i = 0; i < epilogue->numArgs(); ++i)
          buffers += (epilogue->arg(i).access & PLUGSDK_ACCESS_ACCUMULATOR) == 0;
      }
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      const LibraryCall call{a->device,
                             static_cast<plugsdk_library_op_t>(op),
                             a->attributes ? std::string_view(a->attributes) : std::string_view(),
                             {a->inputs, a->num_inputs},
                             {a->outputs, a->num_outputs},
                             pool,
                             {a->symbols, a->num_symbols},
                             epilogue.get()};
      StatusOr<std::unique_ptr<ExecutableT>> made = b->compileLibrary(call);
      // The core binds the call's symbols, then the epilogue's own, in one launch.
      const size_t symbols = a->num_symbols + (a->epilogue ? a->epilogue->num_symbols : 0);
      return finishExecutable(fn, *b, made, a->device, Executable::Origin::kLibrary, buffers, symbols,
                              &a->out_executable);
    });
  }

  static plugsdk_error_t* compileSubgraph(plugsdk_compile_subgraph_args_t* a) noexcept {
    constexpr const char* fn = "compile_subgraph";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_compile_subgraph_args_t, out_executable), [&]() -> Status {
      B* b = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      if (!a->graph_text) return argError(fn, "args->graph_text is NULL");
      if (a->num_symbols && !a->symbols) return argError(fn, "args->symbols is NULL with a nonzero count");
      PLUGSDK_RETURN_IF_ERROR(device(fn, *b, a->device));
      const SubgraphCall call{a->device,
                              a->graph_text,
                              {a->symbols, a->num_symbols},
                              a->options ? std::string_view(a->options) : std::string_view()};
      StatusOr<std::unique_ptr<ExecutableT>> made = b->compileSubgraph(call);
      return finishExecutable(fn, *b, made, a->device, Executable::Origin::kSubgraph, Executable::kUnknown,
                              a->num_symbols, &a->out_executable);
    });
  }

  static plugsdk_error_t* executableDestroy(plugsdk_executable_destroy_args_t* a) noexcept {
    constexpr const char* fn = "executable_destroy";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_executable_destroy_args_t, executable), [&]() -> Status {
      B* b = nullptr;
      ExecutableT* e = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(executable(fn, a->executable, b, &e));
      b->live_[kExecutables].fetch_sub(1);
      return b->destroyExecutable(std::unique_ptr<ExecutableT>(e));
    });
  }

  static plugsdk_error_t* executableLog(plugsdk_executable_log_args_t* a) noexcept {
    constexpr const char* fn = "executable_log";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_executable_log_args_t, out_log), [&]() -> Status {
      B* b = nullptr;
      ExecutableT* e = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(executable(fn, a->executable, b, &e));
      a->out_log = static_cast<const Executable&>(*e).log().c_str();
      return Status::ok();
    });
  }

  static plugsdk_error_t* launch(plugsdk_launch_args_t* a) noexcept {
    constexpr const char* fn = "launch";
    return guarded(fn, a, PLUGSDK_SIZE_THROUGH(plugsdk_launch_args_t, symbol_values), [&]() -> Status {
      B* b = nullptr;
      ExecutableT* e = nullptr;
      StreamT* s = nullptr;
      PLUGSDK_RETURN_IF_ERROR(client(fn, a->client, &b));
      PLUGSDK_RETURN_IF_ERROR(executable(fn, a->executable, b, &e));
      PLUGSDK_RETURN_IF_ERROR(optionalStream(fn, a->stream, b, &s));
      const Executable& base = *e;
      if (a->num_buffers && !a->buffers)
        return argError(fn, "args->buffers is NULL with num_buffers " + std::to_string(a->num_buffers));
      // The ABI: NULL offsets means every offset is 0. Backends always get a full span.
      const std::vector<uint64_t> zeros(a->offsets ? 0 : a->num_buffers, 0);
      const uint64_t* offsets = a->offsets ? a->offsets : zeros.data();
      if (a->num_symbols && !a->symbol_values)
        return argError(fn, "args->symbol_values is NULL with num_symbols " + std::to_string(a->num_symbols));
      if (base.numBuffers() != Executable::kUnknown && a->num_buffers != base.numBuffers())
        return argError(fn, std::to_string(a->num_buffers) + " buffers for an executable that takes " +
                                std::to_string(base.numBuffers()));
      if (base.numSymbols() != Executable::kUnknown && a->num_symbols != base.numSymbols())
        return argError(fn, std::to_string(a->num_symbols) + " symbol values for an executable that takes " +
                                std::to_string(base.numSymbols()));
      std::vector<BufferT*> buffers(a->num_buffers, nullptr);
      for (size_t i = 0; i < a->num_buffers; ++i) {
        // The field's name is built only for an error (launch is the hot path).
        auto field = [i] { return "buffers[" + std::to_string(i) + "]"; };
        if (!a->buffers[i]) {
          if (base.origin() == Executable::Origin::kLibrary) continue;  // an absent optional input
          return argError(fn, "args->" + field() + " is NULL");
        }
        if (!buffer(fn, "buffers[]", a->buffers[i], b, &buffers[i]).isOk())
          return buffer(fn, field().c_str(), a->buffers[i], b, &buffers[i]);
        if (offsets[i] > buffers[i]->bytes())
          return argError(fn, "args->offsets[" + std::to_string(i) + "] (" + std::to_string(offsets[i]) +
                                  ") is past the end of its buffer of " + std::to_string(buffers[i]->bytes()) +
                                  " bytes");
      }
      const Launch l{
          s, *e, {buffers.data(), buffers.size()}, {offsets, a->num_buffers}, {a->symbol_values, a->num_symbols}};
      return b->launch(l);
    });
  }

  static plugsdk_api_t makeTable(const char* name, const char* version) {
    plugsdk_api_t t{};
    t.struct_size = sizeof(plugsdk_api_t);
    t.extension = nullptr;
    t.abi_major = PLUGSDK_ABI_VERSION_MAJOR;
    t.abi_minor = PLUGSDK_ABI_VERSION_MINOR;
    t.plugin_name = name;
    t.plugin_version = version;
    t.error_destroy = &errorDestroy;
    t.error_info = &errorInfo;
    t.client_create = &clientCreate;
    t.client_destroy = &clientDestroy;
    t.device_count = &deviceCount;
    t.device_info = &deviceInfo;
    t.buffer_allocate = &bufferAllocate;
    t.buffer_free = &bufferFree;
    t.buffer_copy = &bufferCopy;
    t.buffer_fill = &bufferFill;
    t.stream_create = &streamCreate;
    t.stream_destroy = &streamDestroy;
    t.stream_synchronize = &streamSynchronize;
    t.event_create = &eventCreate;
    t.event_record = &eventRecord;
    t.event_wait = &eventWait;
    t.event_synchronize = &eventSynchronize;
    t.event_destroy = &eventDestroy;
    t.compile_kernel = &compileKernel;
    t.compile_library = &compileLibrary;
    t.executable_destroy = &executableDestroy;
    t.executable_log = &executableLog;
    t.launch = &launch;
    t.compile_subgraph = B::kTakesSubgraphs ? &compileSubgraph : nullptr;
    t.buffer_import = &bufferImport;
    t.stream_import = &streamImport;
    t.recording_begin = B::kRecords ? &recordingBegin : nullptr;
    t.recording_end = B::kRecords ? &recordingEnd : nullptr;
    t.recording_launch = B::kRecords ? &recordingLaunch : nullptr;
    t.recording_destroy = B::kRecords ? &recordingDestroy : nullptr;
    return t;
  }

  /// The body of plugsdk_plugin_init: refuses another major version with a message,
  /// otherwise returns the static table.
  static const plugsdk_api_t* init(plugsdk_init_args_t* args, const char* name, const char* version) noexcept {
    if (!args || args->struct_size < PLUGSDK_SIZE_THROUGH(plugsdk_init_args_t, core_abi_minor)) return nullptr;
    if (args->core_abi_major != PLUGSDK_ABI_VERSION_MAJOR) {
      static char refusal[256];
      std::snprintf(refusal, sizeof(refusal), "plugin %s implements ABI %d.%d; the core offers %u.%u", name,
                    PLUGSDK_ABI_VERSION_MAJOR, PLUGSDK_ABI_VERSION_MINOR, static_cast<unsigned>(args->core_abi_major),
                    static_cast<unsigned>(args->core_abi_minor));
      if (args->struct_size >= PLUGSDK_SIZE_THROUGH(plugsdk_init_args_t, out_refusal)) args->out_refusal = refusal;
      return nullptr;
    }
    static const plugsdk_api_t table = makeTable(name, version);
    return &table;
  }
};

}  // namespace detail
}  // namespace plugsdk::sdk
