// Device: client and stream lifetime, capability query, buffers and copies through the table.
#include "core/plugin/device.h"

#include <utility>

namespace plugsdk::plugin {

std::string DeviceCaps::dtypeList() const {
  std::string out;
  for (int t = 0; t < ir::kNumDTypes; ++t)
    if (supports(static_cast<ir::DType>(t)))
      out += (out.empty() ? "" : ", ") + std::string(ir::dtypeName(static_cast<ir::DType>(t)));
  return out.empty() ? "none" : out;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = std::exchange(o.device_, nullptr);
    handle_ = std::exchange(o.handle_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (device_ && handle_) {
    auto held = device_->lock();
    plugsdk_buffer_free_args_t a{};
    a.struct_size = sizeof(a);
    a.client = device_->client();
    a.buffer = handle_;
    // A failing free has nobody to report to from a destructor: the error is destroyed.
    (void)device_->check(device_->api().buffer_free(&a), "buffer_free");
  }
  device_ = nullptr;
  handle_ = nullptr;
  bytes_ = 0;
}

DeviceCaps capsFrom(const plugsdk_device_info_t& i) {
  DeviceCaps c;
  c.name = i.name ? i.name : "";
  c.dtypes = i.dtypes;
  c.vectorBits = i.vector_bits;
  c.memoryKinds = i.memory_kinds;
  c.memoryBytes = i.memory_bytes;
  c.maxBufferBytes = i.max_buffer_bytes;
  c.libraryOps = i.library_ops;
  c.epilogueOps = i.epilogue_ops;
  c.maxKernelStmts = i.max_kernel_stmts;
  c.fusesHorizontal = i.fuses_horizontal;
  c.fusesReductionEpilogue = i.fuses_reduction_epilogue;
  c.fusesMultiReduction = i.fuses_multi_reduction;
  c.takesSubgraphs = i.takes_subgraphs;
  // ABI 1.3, read only where the plugin's struct covers it.
  c.asyncStreamFailures =
      i.struct_size >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, async_stream_failures) && i.async_stream_failures;
  // ABI 1.4, likewise: an older plugin takes every form of prims.convolution.
  if (i.struct_size >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, convolution_skips_transposed)) {
    c.convolutionDtypes = i.convolution_dtypes;
    c.convolutionSkipsTransposed = i.convolution_skips_transposed;
  }
  // ABI 1.5, likewise: an older plugin's reductions are never split.
  if (i.struct_size >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, split_column_reductions)) {
    c.splitRowReductions = i.split_row_reductions;
    c.splitColumnReductions = i.split_column_reductions;
  }
  // ABI 1.6, likewise: an older plugin's matmul takes every dtype.
  if (i.struct_size >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, matmul_dtypes)) c.matmulDtypes = i.matmul_dtypes;
  // ABI 1.7, likewise: an older plugin's attention takes every form.
  if (i.struct_size >= PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, sdpa_head_dim_multiple)) {
    c.sdpaDtypes = i.sdpa_dtypes;
    c.sdpaSkips = i.sdpa_skips;
    c.sdpaHeadDimMax = i.sdpa_head_dim_max;
    c.sdpaHeadDimMultiple = i.sdpa_head_dim_multiple;
  }
  return c;
}

StatusOr<std::unique_ptr<Device>> Device::open(std::shared_ptr<const Plugin> plugin, uint32_t index,
                                               const std::string& options) {
  std::unique_ptr<Device> d(new Device());
  d->plugin_ = std::move(plugin);
  d->index_ = index;
  const plugsdk_api_t& api = d->api();
  const std::string& path = d->plugin_->path();

  plugsdk_client_create_args_t c{};
  c.struct_size = sizeof(c);
  c.options = options.empty() ? nullptr : options.c_str();
  RETURN_IF_ERROR(d->check(api.client_create(&c), "client_create"));
  if (!c.out_client) return internalError("plugin " + path + ": client_create succeeded but returned a NULL client");
  d->client_ = c.out_client;

  plugsdk_device_count_args_t n{};
  n.struct_size = sizeof(n);
  n.client = d->client_;
  RETURN_IF_ERROR(d->check(api.device_count(&n), "device_count"));
  if (index >= n.out_count)
    return notFound("plugin " + path + " has " + std::to_string(n.out_count) + " device(s), no device " +
                    std::to_string(index) + (n.out_count == 0 && n.out_reason ? std::string(": ") + n.out_reason : ""));

  plugsdk_device_info_t info{};
  info.struct_size = sizeof(info);
  plugsdk_device_info_args_t ia{};
  ia.struct_size = sizeof(ia);
  ia.client = d->client_;
  ia.device = index;
  ia.info = &info;
  RETURN_IF_ERROR(d->check(api.device_info(&ia), "device_info"));
  d->caps_ = capsFrom(info);
  d->caps_.mixedMatmul = d->plugin_->abiMinor() >= 2;  // ABI 1.2: f32 results of f16/bf16 matmuls

  plugsdk_stream_create_args_t s{};
  s.struct_size = sizeof(s);
  s.client = d->client_;
  s.device = index;
  RETURN_IF_ERROR(d->check(api.stream_create(&s), "stream_create"));
  if (!s.out_stream) return internalError("plugin " + path + ": stream_create succeeded but returned a NULL stream");
  d->stream_ = s.out_stream;
  return d;
}

Device::~Device() {
  const plugsdk_api_t& api = this->api();
  for (const auto& [native, stream] : imported_) {
    plugsdk_stream_args_t s{};
    s.struct_size = sizeof(s);
    s.client = client_;
    s.stream = stream;
    (void)check(api.stream_destroy(&s), "stream_destroy (an imported stream)");
  }
  if (stream_) {
    plugsdk_stream_args_t s{};
    s.struct_size = sizeof(s);
    s.client = client_;
    s.stream = stream_;
    (void)check(api.stream_destroy(&s), "stream_destroy");
  }
  if (client_) {
    plugsdk_client_destroy_args_t c{};
    c.struct_size = sizeof(c);
    c.client = client_;
    (void)check(api.client_destroy(&c), "client_destroy");
  }
}

std::string Device::describe() const {
  return plugin_->name() + ":" + std::to_string(index_) + (caps_.name.empty() ? "" : " (" + caps_.name + ")");
}

StatusOr<DeviceBuffer> Device::allocate(uint64_t bytes) const {
  auto held = lock();
  if (caps_.maxBufferBytes && bytes > caps_.maxBufferBytes)
    return resourceExhausted("device " + describe() + ": a buffer of " + std::to_string(bytes) +
                             " bytes exceeds its limit of " + std::to_string(caps_.maxBufferBytes));
  plugsdk_buffer_allocate_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.device = index_;
  a.memory_kind = (caps_.memoryKinds & PLUGSDK_MEMORY_DEVICE)   ? PLUGSDK_MEMORY_DEVICE
                  : (caps_.memoryKinds & PLUGSDK_MEMORY_SHARED) ? PLUGSDK_MEMORY_SHARED
                                                                : PLUGSDK_MEMORY_HOST;
  a.bytes = bytes;
  RETURN_IF_ERROR(check(api().buffer_allocate(&a), "buffer_allocate"));
  if (!a.out_buffer)
    return internalError("plugin " + plugin_->path() + ": buffer_allocate succeeded but returned a NULL buffer");
  return DeviceBuffer(this, a.out_buffer, bytes);
}

StatusOr<DeviceBuffer> Device::import(uint32_t memoryKind, void* data, uint64_t bytes) const {
  auto fn = plugin_->bufferImportFn();
  if (!fn) return unimplemented("plugin " + plugin_->name() + " has no buffer_import (ABI 1.0): tensors are copied");
  auto held = lock();
  plugsdk_buffer_import_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.device = index_;
  a.memory_kind = memoryKind;
  a.data = data;
  a.bytes = bytes;
  RETURN_IF_ERROR(check(fn(&a), "buffer_import"));
  if (!a.out_buffer)
    return internalError("plugin " + plugin_->path() + ": buffer_import succeeded but returned a NULL buffer");
  return DeviceBuffer(this, a.out_buffer, bytes);
}

Status Device::upload(const DeviceBuffer& dst, uint64_t offset, const void* src, uint64_t bytes) const {
  auto held = lock();
  plugsdk_buffer_copy_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.kind = PLUGSDK_COPY_HOST_TO_DEVICE;
  a.dst = dst.handle();
  a.dst_offset = offset;
  a.host_src = src;
  a.bytes = bytes;
  return check(api().buffer_copy(&a), "buffer_copy (host to device)");
}

DeviceRecording& DeviceRecording::operator=(DeviceRecording&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = std::exchange(o.device_, nullptr);
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

void DeviceRecording::reset() {
  if (device_ && handle_) {
    auto held = device_->lock();
    plugsdk_recording_args_t a{};
    a.struct_size = sizeof(a);
    a.client = device_->client();
    a.recording = handle_;
    (void)device_->check(device_->api().recording_destroy(&a), "recording_destroy");  // nobody to report to
  }
  device_ = nullptr;
  handle_ = nullptr;
}

Status Device::beginRecording(plugsdk_stream_t* stream) const {
  if (!records()) return unimplemented("plugin " + plugin_->name() + " records no stream (ABI < 1.9)");
  auto held = lock();
  plugsdk_recording_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.stream = stream;
  return check(api().recording_begin(&a), "recording_begin");
}

StatusOr<DeviceRecording> Device::endRecording(plugsdk_stream_t* stream) const {
  if (!records()) return unimplemented("plugin " + plugin_->name() + " records no stream (ABI < 1.9)");
  auto held = lock();
  plugsdk_recording_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.stream = stream;
  RETURN_IF_ERROR(check(api().recording_end(&a), "recording_end"));
  if (!a.out_recording)
    return internalError("plugin " + plugin_->path() + ": recording_end succeeded but returned no recording");
  return DeviceRecording(this, a.out_recording);
}

Status Device::launchRecording(const DeviceRecording& recording, plugsdk_stream_t* stream) const {
  auto held = lock();
  plugsdk_recording_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.stream = stream;
  a.recording = recording.handle();
  return check(api().recording_launch(&a), "recording_launch");
}

Status Device::copyOnDevice(const DeviceBuffer& src, uint64_t srcOffset, const DeviceBuffer& dst, uint64_t dstOffset,
                            uint64_t bytes, plugsdk_stream_t* stream) const {
  if (bytes == 0) return Status::ok();
  auto held = lock();
  plugsdk_buffer_copy_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.stream = stream ? stream : stream_;
  a.kind = PLUGSDK_COPY_DEVICE_TO_DEVICE;
  a.src = src.handle();
  a.src_offset = srcOffset;
  a.dst = dst.handle();
  a.dst_offset = dstOffset;
  a.bytes = bytes;
  return check(api().buffer_copy(&a), "buffer_copy (device to device)");
}

Status Device::fill(const DeviceBuffer& dst, uint64_t offset, uint64_t bytes, uint8_t byte) const {
  if (bytes == 0) return Status::ok();
  auto held = lock();
  plugsdk_buffer_fill_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.stream = stream_;
  a.buffer = dst.handle();
  a.offset = offset;
  a.bytes = bytes;
  a.pattern[0] = byte;
  a.pattern_bytes = 1;
  return check(api().buffer_fill(&a), "buffer_fill");
}

Status Device::download(const DeviceBuffer& src, uint64_t offset, void* dst, uint64_t bytes) const {
  auto held = lock();
  plugsdk_buffer_copy_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.kind = PLUGSDK_COPY_DEVICE_TO_HOST;
  a.src = src.handle();
  a.src_offset = offset;
  a.host_dst = dst;
  a.bytes = bytes;
  return check(api().buffer_copy(&a), "buffer_copy (device to host)");
}

Status Device::synchronize() const { return synchronize(stream_); }

Status Device::synchronize(plugsdk_stream_t* stream) const {
  auto held = lock();
  plugsdk_stream_args_t s{};
  s.struct_size = sizeof(s);
  s.client = client_;
  s.stream = stream;
  return check(api().stream_synchronize(&s), "stream_synchronize");
}

StatusOr<plugsdk_stream_t*> Device::importStream(void* native) const {
  auto fn = plugin_->streamImportFn();
  if (!fn) return unimplemented("plugin " + plugin_->name() + " has no stream_import (ABI < 1.2)");
  if (!native) return invalidArgument("importStream: the native stream is NULL");
  auto held = lock();
  auto it = imported_.find(native);
  if (it != imported_.end()) return it->second;
  plugsdk_stream_import_args_t a{};
  a.struct_size = sizeof(a);
  a.client = client_;
  a.device = index_;
  a.native = native;
  RETURN_IF_ERROR(check(fn(&a), "stream_import"));
  if (!a.out_stream)
    return internalError("plugin " + plugin_->path() + ": stream_import succeeded but returned a NULL stream");
  imported_.emplace(native, a.out_stream);
  return a.out_stream;
}

}  // namespace plugsdk::plugin
