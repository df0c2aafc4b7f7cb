// plugsdk/sdk_backend.hpp -- the base of a plugin's client class, sdk::Backend<...>: one
// virtual method per ABI function in C++ types, each with a default. Part of plugsdk.hpp
// (include that one).
#pragma once

#include "plugsdk/sdk_types.hpp"

namespace plugsdk::sdk {

namespace detail {

/// The non-template part of a client: what the layer keeps per client.
class ClientBase : public Handle {
 public:
  ClientBase() : Handle(HandleKind::kClient) {}

 private:
  template <typename B>
  friend struct Plugin;
  /// A stable copy of `s` that lives as long as the client (names and reasons handed out).
  const char* keep(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& k : kept_)
      if (k == s) return k.c_str();
    kept_.push_back(s);
    return kept_.back().c_str();
  }
  std::atomic<int64_t> live_[5] = {};  // buffers, streams, events, executables, recordings
  std::mutex mu_;
  std::list<std::string> kept_;
};

}  // namespace detail

/// The base of a plugin's client class: one object per plugsdk_client_t. Template arguments
/// are the vendor's handle classes (each derived from Buffer, Stream, Event, Executable);
/// methods receive and return those types, so no method casts. Every method has a default:
/// creation and work answer UNIMPLEMENTED, destruction just deletes the object (put cleanup
/// in destructors or override the destroy method). Methods may throw; the layer converts.
/// The class must be default-constructible; client_create then calls initialize(options).
template <typename BufferT = Buffer, typename StreamT = Stream, typename EventT = Event,
          typename ExecutableT = Executable>
class Backend : public detail::ClientBase {
  static_assert(std::is_base_of_v<Buffer, BufferT>, "BufferT must derive from plugsdk::sdk::Buffer");
  static_assert(std::is_base_of_v<Stream, StreamT>, "StreamT must derive from plugsdk::sdk::Stream");
  static_assert(std::is_base_of_v<Event, EventT>, "EventT must derive from plugsdk::sdk::Event");
  static_assert(std::is_base_of_v<Executable, ExecutableT>, "ExecutableT must derive from plugsdk::sdk::Executable");

 public:
  using BufferType = BufferT;
  using StreamType = StreamT;
  using EventType = EventT;
  using ExecutableType = ExecutableT;
  using Copy = CopyRequest<BufferT, StreamT>;
  using Fill = FillRequest<BufferT, StreamT>;
  using Launch = LaunchRequest<BufferT, StreamT, ExecutableT>;
  /// Set to true in your class to export compile_subgraph (the table entry is NULL otherwise,
  /// and a device reporting takesSubgraphs is then an INTERNAL error).
  static constexpr bool kTakesSubgraphs = false;
  /// Set to true in your class to export the recording functions (ABI 1.9: beginRecording,
  /// endRecording, launchRecording, destroyRecording); the entries are NULL otherwise.
  static constexpr bool kRecords = false;

  ~Backend() override = default;

  /// client_create: the parsed options ("key=value;...").
  virtual Status initialize(const Options& options) {
    (void)options;
    return Status::ok();
  }
  /// device_count. The layer also uses it to check every device index it is given.
  virtual StatusOr<DeviceCount> deviceCount() { return unimplemented("device_count is not implemented"); }
  /// device_info for a device below the count.
  virtual StatusOr<DeviceInfo> deviceInfo(uint32_t device) {
    (void)device;
    return unimplemented("device_info is not implemented");
  }
  /// buffer_allocate: memoryKind is one plugsdk_memory_kind_t bit; bytes may be 0.
  virtual StatusOr<std::unique_ptr<BufferT>> allocate(uint32_t device, uint32_t memoryKind, uint64_t bytes) {
    (void)device, (void)memoryKind, (void)bytes;
    return unimplemented("buffer_allocate is not implemented");
  }
  /// buffer_import (ABI 1.1): a buffer over memory the caller owns (memoryKind HOST: a host
  /// pointer; DEVICE: an address in the device's memory), freed with freeBuffer without
  /// freeing `data`. The default says UNIMPLEMENTED, and the core copies instead.
  virtual StatusOr<std::unique_ptr<BufferT>> importBuffer(uint32_t device, uint32_t memoryKind, void* data,
                                                          uint64_t bytes) {
    (void)device, (void)memoryKind, (void)data, (void)bytes;
    return unimplemented("buffer_import is not implemented: tensors are copied");
  }
  /// buffer_free: the buffer is gone after this whatever it returns.
  virtual Status freeBuffer(std::unique_ptr<BufferT> buffer) {
    (void)buffer;
    return Status::ok();
  }
  /// buffer_copy.
  virtual Status copy(const Copy& c) {
    (void)c;
    return unimplemented("buffer_copy is not implemented");
  }
  /// buffer_fill.
  virtual Status fill(const Fill& f) {
    (void)f;
    return unimplemented("buffer_fill is not implemented");
  }
  /// stream_create.
  virtual StatusOr<std::unique_ptr<StreamT>> createStream(uint32_t device) {
    (void)device;
    return unimplemented("stream_create is not implemented");
  }
  /// stream_import (ABI 1.2): a stream over the caller's native stream (`native`, borrowed:
  /// destroyStream must not destroy it). The default says UNIMPLEMENTED, and the core waits
  /// for the caller's stream instead.
  virtual StatusOr<std::unique_ptr<StreamT>> importStream(uint32_t device, void* native) {
    (void)device, (void)native;
    return unimplemented("stream_import is not implemented: runs wait for the caller's stream");
  }
  /// recording_begin (ABI 1.9, with kRecords): what is queued on `stream` from now on is
  /// recorded, not run, until endRecording.
  virtual Status beginRecording(StreamT& stream) {
    (void)stream;
    return unimplemented("recording_begin is not implemented");
  }
  /// recording_end: ends the recording on `stream` (always) and returns what it holds, or
  /// UNIMPLEMENTED when it cannot be replayed (nothing of it ran).
  virtual StatusOr<std::unique_ptr<Recording>> endRecording(StreamT& stream) {
    (void)stream;
    return unimplemented("recording_end is not implemented");
  }
  /// recording_launch: queues the recorded work on `stream` (FAILED_PRECONDITION, nothing
  /// queued: it can no longer run).
  virtual Status launchRecording(Recording& recording, StreamT& stream) {
    (void)recording, (void)stream;
    return unimplemented("recording_launch is not implemented");
  }
  /// recording_destroy: the recording is gone after this whatever it returns.
  virtual Status destroyRecording(std::unique_ptr<Recording> recording) {
    (void)recording;
    return Status::ok();
  }
  /// stream_destroy: the stream is gone after this whatever it returns.
  virtual Status destroyStream(std::unique_ptr<StreamT> stream) {
    (void)stream;
    return Status::ok();
  }
  /// stream_synchronize: the host waits for everything queued on the stream.
  virtual Status synchronizeStream(StreamT& stream) {
    (void)stream;
    return unimplemented("stream_synchronize is not implemented");
  }
  /// event_create (`stream` is the args' stream, may be NULL).
  virtual StatusOr<std::unique_ptr<EventT>> createEvent(StreamT* stream) {
    (void)stream;
    return unimplemented("event_create is not implemented");
  }
  /// event_record: the event marks the current end of the stream.
  virtual Status recordEvent(EventT& event, StreamT& stream) {
    (void)event, (void)stream;
    return unimplemented("event_record is not implemented");
  }
  /// event_wait: work queued on the stream after this waits for the event.
  virtual Status waitEvent(StreamT& stream, EventT& event) {
    (void)stream, (void)event;
    return unimplemented("event_wait is not implemented");
  }
  /// event_synchronize: the host waits for the event.
  virtual Status synchronizeEvent(EventT& event) {
    (void)event;
    return unimplemented("event_synchronize is not implemented");
  }
  /// event_destroy: the event is gone after this whatever it returns.
  virtual Status destroyEvent(std::unique_ptr<EventT> event) {
    (void)event;
    return Status::ok();
  }
  /// compile_kernel: the kernel is validated; it and `options` are borrowed for the call.
  virtual StatusOr<std::unique_ptr<ExecutableT>> compileKernel(uint32_t device, const KernelView& kernel,
                                                               std::string_view options) {
    (void)device, (void)kernel, (void)options;
    return unimplemented("compile_kernel is not implemented");
  }
  /// compile_library: everything in `call` is borrowed for the call.
  virtual StatusOr<std::unique_ptr<ExecutableT>> compileLibrary(const LibraryCall& call) {
    (void)call;
    return unimplemented("compile_library is not implemented");
  }
  /// compile_subgraph (exported only with kTakesSubgraphs).
  virtual StatusOr<std::unique_ptr<ExecutableT>> compileSubgraph(const SubgraphCall& call) {
    (void)call;
    return unimplemented("compile_subgraph is not implemented");
  }
  /// executable_destroy: the executable is gone after this whatever it returns.
  virtual Status destroyExecutable(std::unique_ptr<ExecutableT> executable) {
    (void)executable;
    return Status::ok();
  }
  /// launch. A failing kernel CHECK is OUT_OF_RANGE with the check's message.
  virtual Status launch(const Launch& l) {
    (void)l;
    return unimplemented("launch is not implemented");
  }
};
}  // namespace plugsdk::sdk
