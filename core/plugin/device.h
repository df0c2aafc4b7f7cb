// One device of a loaded plugin, as the core uses it: a client, the device's capabilities
// (read once, as data), a stream, and device buffers that free themselves. Every call goes
// through the plugin's table and every failure -- an error it returns, a NULL handle it
// hands back -- becomes a Status naming the plugin file, the call and the cause.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/ir/dtype.h"
#include "core/plugin/loader.h"
#include "core/support/status.h"

namespace plugsdk::plugin {

/// plugsdk_device_info_t in core types.
struct DeviceCaps {
  std::string name;
  uint32_t dtypes = 0;  ///< PLUGSDK_DTYPE_BIT set
  uint32_t vectorBits = 0;
  uint32_t memoryKinds = 0;
  uint64_t memoryBytes = 0;
  uint64_t maxBufferBytes = 0;
  uint32_t libraryOps = 0;  ///< plugsdk_library_op_t bits
  uint32_t epilogueOps = 0;
  uint32_t maxKernelStmts = 0;
  bool fusesHorizontal = false;
  bool fusesReductionEpilogue = false;
  bool fusesMultiReduction = false;
  bool takesSubgraphs = false;
  /// prims.matmul may give an f32 result from f16/bf16 operands (a plugin of ABI >= 1.2).
  bool mixedMatmul = false;
  /// A run-time failure of a launch on an imported stream is raised there by the native
  /// runtime (ABI 1.3 async_stream_failures): runs on it need not wait to report one.
  bool asyncStreamFailures = false;
  /// The forms of prims.convolution taken when libraryOps has it (ABI 1.4): PLUGSDK_DTYPE_BIT
  /// of the input dtypes (0: every dtype), and whether transposed ones are left out. Older
  /// plugins take every form.
  uint32_t convolutionDtypes = 0;
  bool convolutionSkipsTransposed = false;
  /// Split reductions (ABI 1.5; FusionCaps::splitRowReductions / splitColumnReductions): a
  /// reduction over the innermost dim keeping fewer rows than splitRowReductions, or one
  /// keeping its innermost dim with fewer columns than splitColumnReductions, is computed in
  /// two stages. 0: never (older plugins).
  uint32_t splitRowReductions = 0;
  uint32_t splitColumnReductions = 0;
  /// The operand dtypes of prims.matmul taken when libraryOps has it (ABI 1.6):
  /// PLUGSDK_DTYPE_BIT of each (0: every dtype, as older plugins).
  uint64_t matmulDtypes = 0;
  /// The forms of prims.sdpa taken when libraryOps has it (ABI 1.7; 0: every form, as older
  /// plugins): the query dtypes (PLUGSDK_DTYPE_BIT), plugsdk_sdpa_skip_t bits of the forms
  /// left to the core, the head dims' bound and multiple.
  uint64_t sdpaDtypes = 0;
  uint32_t sdpaSkips = 0;
  uint32_t sdpaHeadDimMax = 0, sdpaHeadDimMultiple = 0;

  bool supports(ir::DType t) const { return (dtypes >> static_cast<unsigned>(t)) & 1u; }
  /// True when a prims.convolution of input dtype `t` is a form the device takes (given
  /// that libraryOps has the op).
  bool takesConvolution(ir::DType t, bool transposed) const {
    return (!convolutionDtypes || ((convolutionDtypes >> static_cast<unsigned>(t)) & 1u)) &&
           !(transposed && convolutionSkipsTransposed);
  }
  /// True when a prims.matmul of operand dtype `t` is a form the device takes (given that
  /// libraryOps has the op).
  bool takesMatmul(ir::DType t) const { return !matmulDtypes || ((matmulDtypes >> static_cast<unsigned>(t)) & 1u); }
  /// "f32, f64, ..." for messages.
  std::string dtypeList() const;
};

/// The capabilities in `info` as a plugin filled it: fields past its struct_size (a plugin
/// of an older minor) read as absent, i.e. their defaults.
DeviceCaps capsFrom(const plugsdk_device_info_t& info);

class Device;

/// Device memory owned by the core; freed through the plugin when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const Device* device, plugsdk_buffer_t* handle, uint64_t bytes)
      : device_(device), handle_(handle), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  plugsdk_buffer_t* handle() const { return handle_; }
  uint64_t bytes() const { return bytes_; }
  void reset();
  /// Gives up ownership without freeing: the caller frees the handle through the plugin.
  plugsdk_buffer_t* release() {
    device_ = nullptr;
    bytes_ = 0;
    return std::exchange(handle_, nullptr);
  }

 private:
  const Device* device_ = nullptr;
  plugsdk_buffer_t* handle_ = nullptr;
  uint64_t bytes_ = 0;
};

/// Work recorded from a stream (ABI 1.9), owned by the core; destroyed through the plugin.
class DeviceRecording {
 public:
  DeviceRecording() = default;
  DeviceRecording(const Device* device, plugsdk_recording_t* handle) : device_(device), handle_(handle) {}
  DeviceRecording(DeviceRecording&& o) noexcept { *this = std::move(o); }
  DeviceRecording& operator=(DeviceRecording&& o) noexcept;
  DeviceRecording(const DeviceRecording&) = delete;
  DeviceRecording& operator=(const DeviceRecording&) = delete;
  ~DeviceRecording() { reset(); }

  plugsdk_recording_t* handle() const { return handle_; }
  void reset();

 private:
  const Device* device_ = nullptr;
  plugsdk_recording_t* handle_ = nullptr;
};

class Device {
 public:
  /// Creates a client (with plugin-specific `options`, "key=value;..."), checks that device
  /// `index` exists (a plugin with none says why) and reads its capabilities.
  static StatusOr<std::unique_ptr<Device>> open(std::shared_ptr<const Plugin> plugin, uint32_t index = 0,
                                                const std::string& options = "");
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Plugin& plugin() const { return *plugin_; }
  const plugsdk_api_t& api() const { return plugin_->api(); }
  const DeviceCaps& caps() const { return caps_; }
  uint32_t index() const { return index_; }
  plugsdk_client_t* client() const { return client_; }
  plugsdk_stream_t* stream() const { return stream_; }
  /// "minimal:0 (host0)" for messages.
  std::string describe() const;

  /// Holds the device's client for a sequence of calls: the ABI promises a plugin that no two
  /// threads call into one client at once. Every method here takes it; callers that make
  /// several calls in a row (DeviceProgram) hold it across them.
  std::unique_lock<std::recursive_mutex> lock() const { return std::unique_lock<std::recursive_mutex>(mu_); }

  /// Converts a plugin error into a Status naming the plugin and the call.
  Status check(plugsdk_error_t* err, const std::string& call) const { return plugin_->check(err, call); }

  StatusOr<DeviceBuffer> allocate(uint64_t bytes) const;
  /// A buffer over the caller's memory (buffer_import; memoryKind says what `data` is), or
  /// UNIMPLEMENTED when the plugin has no buffer_import or cannot use that memory (then the
  /// caller copies). The buffer borrows `data`: keep it alive while the buffer is in use.
  StatusOr<DeviceBuffer> import(uint32_t memoryKind, void* data, uint64_t bytes) const;
  Status upload(const DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t bytes) const;
  Status download(const DeviceBuffer& src, uint64_t offset, void* dst, uint64_t bytes) const;
  /// Sets `bytes` bytes from `offset` to `byte`, queued on the device's stream.
  Status fill(const DeviceBuffer& dst, uint64_t offset, uint64_t bytes, uint8_t byte) const;
  /// A device-to-device copy queued on `stream` (the device's own stream when null).
  Status copyOnDevice(const DeviceBuffer& src, uint64_t srcOffset, const DeviceBuffer& dst, uint64_t dstOffset,
                      uint64_t bytes, plugsdk_stream_t* stream) const;
  /// Waits for everything queued on the device's stream.
  Status synchronize() const;
  /// Whether the plugin can wrap a caller's native stream (stream_import, ABI 1.2).
  bool importsStreams() const { return plugin_->streamImportFn() != nullptr; }
  /// The stream over the caller's native stream `native` (stream_import), made once per
  /// native handle and kept until the device closes; UNIMPLEMENTED when the plugin has none.
  StatusOr<plugsdk_stream_t*> importStream(void* native) const;
  /// Waits for everything queued on `stream` (one of this device's).
  Status synchronize(plugsdk_stream_t* stream) const;

  /// Whether the plugin records streams (recording_begin and the rest, ABI 1.9).
  bool records() const { return plugin_->records(); }
  /// What is queued on `stream` from now on is recorded, not run (UNIMPLEMENTED: the plugin
  /// does not record this stream).
  Status beginRecording(plugsdk_stream_t* stream) const;
  /// Ends the recording on `stream` and returns it (UNIMPLEMENTED: it cannot be replayed).
  StatusOr<DeviceRecording> endRecording(plugsdk_stream_t* stream) const;
  /// Queues `recording` on `stream` (FAILED_PRECONDITION: it can no longer run).
  Status launchRecording(const DeviceRecording& recording, plugsdk_stream_t* stream) const;

 private:
  Device() = default;
  std::shared_ptr<const Plugin> plugin_;
  uint32_t index_ = 0;
  plugsdk_client_t* client_ = nullptr;
  plugsdk_stream_t* stream_ = nullptr;
  mutable std::map<void*, plugsdk_stream_t*> imported_;  ///< importStream's, by native handle (under mu_)
  DeviceCaps caps_;
  mutable std::recursive_mutex mu_;
};

}  // namespace plugsdk::plugin
