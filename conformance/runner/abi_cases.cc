// The ABI tier: what every plugin must do right before any kernel runs -- a consistent
// capability report, memory that round-trips (zero-size, large, unaligned offsets,
// device-to-device, fill patterns), frees that succeed, streams and events, and an error
// (never a crash) for every call with bad arguments.
#include <cstring>
#include <random>

#include "conformance/runner/suite.h"

namespace plugsdk::conformance {
namespace {

using plugin::Device;

/// A buffer freed explicitly, so that a failing buffer_free is seen (DeviceBuffer cannot
/// report it from its destructor).
struct RawBuffer {
  const Device& d;
  plugsdk_buffer_t* handle = nullptr;
  RawBuffer(const Device& device, plugsdk_buffer_t* h) : d(device), handle(h) {}
  RawBuffer(const RawBuffer&) = delete;
  RawBuffer& operator=(const RawBuffer&) = delete;
  Status free() {
    plugsdk_buffer_free_args_t a{};
    a.struct_size = sizeof(a);
    a.client = d.client();
    a.buffer = std::exchange(handle, nullptr);
    return d.check(d.api().buffer_free(&a), "buffer_free");
  }
  ~RawBuffer() {
    if (handle) (void)free();
  }
};

StatusOr<std::unique_ptr<RawBuffer>> allocate(const Device& d, uint64_t bytes) {
  ASSIGN_OR_RETURN(plugin::DeviceBuffer b, d.allocate(bytes));
  return std::make_unique<RawBuffer>(d, b.release());  // freed explicitly from now on
}

std::string randomBytes(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

Status copy(const Device& d, uint32_t kind, RawBuffer* src, uint64_t srcOff, RawBuffer* dst, uint64_t dstOff,
            const void* hostSrc, void* hostDst, uint64_t bytes) {
  plugsdk_buffer_copy_args_t a{};
  a.struct_size = sizeof(a);
  a.client = d.client();
  a.kind = kind;
  a.src = src ? src->handle : nullptr;
  a.src_offset = srcOff;
  a.dst = dst ? dst->handle : nullptr;
  a.dst_offset = dstOff;
  a.host_src = hostSrc;
  a.host_dst = hostDst;
  a.bytes = bytes;
  return d.check(d.api().buffer_copy(&a), "buffer_copy");
}

Status upload(const Device& d, RawBuffer& b, uint64_t off, const std::string& data) {
  return copy(d, PLUGSDK_COPY_HOST_TO_DEVICE, nullptr, 0, &b, off, data.data(), nullptr, data.size());
}

StatusOr<std::string> download(const Device& d, RawBuffer& b, uint64_t off, uint64_t n) {
  std::string out(n, '\0');
  RETURN_IF_ERROR(copy(d, PLUGSDK_COPY_DEVICE_TO_HOST, &b, off, nullptr, 0, nullptr, out.data(), n));
  return out;
}

Outcome roundTrip(const CaseContext& c, uint64_t bytes) {
  const Device& d = c.device;
  auto b = allocate(d, bytes);
  if (!b.isOk()) return Outcome::of(b.status());
  const std::string data = randomBytes(bytes, c.seed);
  if (Status s = upload(d, **b, 0, data); !s.isOk()) return Outcome::of(s);
  auto back = download(d, **b, 0, bytes);
  if (!back.isOk()) return Outcome::of(back.status());
  if (*back != data) return Outcome::fail(std::to_string(bytes) + " bytes came back different");
  return Outcome::of((*b)->free());
}

Outcome unalignedOffsets(const CaseContext& c) {
  const Device& d = c.device;
  auto b = allocate(d, 64);
  if (!b.isOk()) return Outcome::of(b.status());
  std::string want = randomBytes(64, c.seed);
  if (Status s = upload(d, **b, 0, want); !s.isOk()) return Outcome::of(s);
  for (uint64_t off : {1, 3, 7, 13, 61}) {
    const std::string piece = randomBytes(3, c.seed + off);
    if (Status s = upload(d, **b, off, piece); !s.isOk()) return Outcome::of(s);
    want.replace(off, 3, piece);
  }
  auto back = download(d, **b, 0, 64);
  if (!back.isOk()) return Outcome::of(back.status());
  auto mid = download(d, **b, 5, 9);  // an unaligned read, too
  if (!mid.isOk()) return Outcome::of(mid.status());
  if (*back != want || *mid != want.substr(5, 9)) return Outcome::fail("copies at unaligned offsets corrupted data");
  return Outcome::of((*b)->free());
}

Outcome deviceToDevice(const CaseContext& c) {
  const Device& d = c.device;
  auto a = allocate(d, 256);
  auto b = allocate(d, 256);
  if (!a.isOk()) return Outcome::of(a.status());
  if (!b.isOk()) return Outcome::of(b.status());
  const std::string x = randomBytes(256, c.seed), y = randomBytes(256, c.seed + 1);
  if (Status s = upload(d, **a, 0, x); !s.isOk()) return Outcome::of(s);
  if (Status s = upload(d, **b, 0, y); !s.isOk()) return Outcome::of(s);
  if (Status s = copy(d, PLUGSDK_COPY_DEVICE_TO_DEVICE, a->get(), 10, b->get(), 33, nullptr, nullptr, 100); !s.isOk())
    return Outcome::of(s);
  auto back = download(d, **b, 0, 256);
  if (!back.isOk()) return Outcome::of(back.status());
  std::string want = y;
  want.replace(33, 100, x.substr(10, 100));
  if (*back != want) return Outcome::fail("device-to-device copy [10, 110) -> [33, 133) gave wrong bytes");
  if (Status s = (*a)->free(); !s.isOk()) return Outcome::of(s);
  return Outcome::of((*b)->free());
}

Outcome fill(const CaseContext& c, uint32_t patternBytes) {
  const Device& d = c.device;
  auto b = allocate(d, 128);
  if (!b.isOk()) return Outcome::of(b.status());
  const std::string before = randomBytes(128, c.seed);
  if (Status s = upload(d, **b, 0, before); !s.isOk()) return Outcome::of(s);
  plugsdk_buffer_fill_args_t a{};
  a.struct_size = sizeof(a);
  a.client = d.client();
  a.buffer = (*b)->handle;
  a.offset = 8;
  a.bytes = 64;
  a.pattern_bytes = patternBytes;
  for (uint32_t i = 0; i < 8; ++i) a.pattern[i] = static_cast<uint8_t>(0xa0 + i);
  if (Status s = d.check(d.api().buffer_fill(&a), "buffer_fill"); !s.isOk()) return Outcome::of(s);
  if (Status s = d.synchronize(); !s.isOk()) return Outcome::of(s);
  auto back = download(d, **b, 0, 128);
  if (!back.isOk()) return Outcome::of(back.status());
  std::string want = before;
  for (uint64_t i = 0; i < 64; ++i) want[8 + i] = static_cast<char>(0xa0 + i % patternBytes);
  if (*back != want)
    return Outcome::fail("fill of 64 bytes at offset 8 with a " + std::to_string(patternBytes) +
                         "-byte pattern gave wrong bytes (or touched bytes outside)");
  return Outcome::of((*b)->free());
}

Outcome outOfRangeCopies(const CaseContext& c) {
  const Device& d = c.device;
  auto b = allocate(d, 16);
  if (!b.isOk()) return Outcome::of(b.status());
  const std::string data(32, 'x');
  if (upload(d, **b, 0, data).isOk()) return Outcome::fail("a 32-byte upload into a 16-byte buffer succeeded");
  if (upload(d, **b, 12, data.substr(0, 8)).isOk()) return Outcome::fail("an upload past the end succeeded");
  if (download(d, **b, 10, 8).isOk()) return Outcome::fail("a download past the end succeeded");
  return Outcome::of((*b)->free());
}

Outcome streamsAndEvents(const CaseContext& c) {
  const Device& d = c.device;
  const plugsdk_api_t& api = d.api();
  plugsdk_stream_create_args_t sc{};
  sc.struct_size = sizeof(sc);
  sc.client = d.client();
  sc.device = d.index();
  if (Status s = d.check(api.stream_create(&sc), "stream_create"); !s.isOk()) return Outcome::of(s);
  if (!sc.out_stream) return Outcome::fail("stream_create returned a NULL stream");
  plugsdk_event_args_t e{};
  e.struct_size = sizeof(e);
  e.client = d.client();
  e.stream = sc.out_stream;
  Status s = d.check(api.event_create(&e), "event_create");
  if (s.isOk() && !e.out_event) s = internalError("event_create returned a NULL event");
  if (s.isOk()) {
    e.event = e.out_event;
    s = d.check(api.event_record(&e), "event_record");
    if (s.isOk()) s = d.check(api.event_wait(&e), "event_wait");
    if (s.isOk()) s = d.check(api.event_synchronize(&e), "event_synchronize");
    if (Status x = d.check(api.event_destroy(&e), "event_destroy"); s.isOk()) s = x;
  }
  plugsdk_stream_args_t sa{};
  sa.struct_size = sizeof(sa);
  sa.client = d.client();
  sa.stream = sc.out_stream;
  if (Status x = d.check(api.stream_synchronize(&sa), "stream_synchronize"); s.isOk()) s = x;
  if (Status x = d.check(api.stream_destroy(&sa), "stream_destroy"); s.isOk()) s = x;
  return Outcome::of(s);
}

Outcome capabilities(const CaseContext& c) {
  const Device& d = c.device;
  const plugin::DeviceCaps& k = d.caps();
  const uint32_t allDTypes = (1u << ir::kNumDTypes) - 1;
  // The library ops of the plugin's own ABI minor (sdpa_backward came with 1.8).
  const uint32_t allLibrary = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA |
                              (d.plugin().abiMinor() >= 8 ? uint32_t{PLUGSDK_LIBRARY_SDPA_BACKWARD} : 0u);
  const uint32_t allMemory = PLUGSDK_MEMORY_DEVICE | PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED;
  if (k.name.empty()) return Outcome::fail("the device has no name");
  if (k.dtypes == 0 || (k.dtypes & ~allDTypes)) return Outcome::fail("dtypes is empty or has unknown bits");
  if (k.memoryKinds == 0 || (k.memoryKinds & ~allMemory)) return Outcome::fail("memory_kinds is empty or unknown");
  if (k.libraryOps & ~allLibrary)
    return Outcome::fail("library_ops has bits unknown to the plugin's ABI 1." + std::to_string(d.plugin().abiMinor()));
  if (k.epilogueOps & ~k.libraryOps) return Outcome::fail("epilogue_ops claims an op library_ops does not");
  if (k.convolutionDtypes & ~allDTypes) return Outcome::fail("convolution_dtypes has unknown bits");
  if (k.matmulDtypes & ~uint64_t{allDTypes}) return Outcome::fail("matmul_dtypes has unknown bits");
  if (k.sdpaDtypes & ~uint64_t{allDTypes}) return Outcome::fail("sdpa_dtypes has unknown bits");
  const uint32_t allSdpaSkips = PLUGSDK_SDPA_SKIPS_BOOL_MASK | PLUGSDK_SDPA_SKIPS_FLOAT_MASK |
                                PLUGSDK_SDPA_SKIPS_DROPOUT | PLUGSDK_SDPA_SKIPS_CAUSAL |
                                PLUGSDK_SDPA_SKIPS_UNEQUAL_HEAD_DIMS;
  if (k.sdpaSkips & ~allSdpaSkips) return Outcome::fail("sdpa_skips has unknown bits");
  if (k.takesSubgraphs != (d.api().compile_subgraph != nullptr))
    return Outcome::fail("takes_subgraphs disagrees with whether compile_subgraph is in the table");
  // An older core's smaller device_info: filled only up to its struct_size (a canary after it
  // survives), and the size written back is not larger.
  struct {
    plugsdk_device_info_t info;
    uint64_t canary;
  } probe{};
  const size_t small = PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, dtypes);
  probe.info.struct_size = small;
  std::memset(reinterpret_cast<char*>(&probe.info) + small, 0x5a, sizeof(probe) - small);
  plugsdk_device_info_args_t a{};
  a.struct_size = sizeof(a);
  a.client = d.client();
  a.device = d.index();
  a.info = &probe.info;
  if (Status s = d.check(d.api().device_info(&a), "device_info"); !s.isOk()) return Outcome::of(s);
  for (size_t i = small; i < sizeof(probe); ++i)
    if (reinterpret_cast<const unsigned char*>(&probe)[i] != 0x5a)
      return Outcome::fail("device_info wrote past the struct_size it was given (byte " + std::to_string(i) + ")");
  if (probe.info.struct_size > small) return Outcome::fail("device_info wrote back a larger struct_size than it got");
  if (probe.info.dtypes != k.dtypes) return Outcome::fail("device_info reports different dtypes to an older core");
  return Outcome::pass();
}

/// Every call with a NULL args pointer, and with a NULL client, returns an error.
Outcome badArguments(const CaseContext& c) {
  const Device& d = c.device;
  const plugsdk_api_t& api = d.api();
  std::string missed;
  auto expectError = [&](plugsdk_error_t* e, const char* what) {
    if (!e)
      missed += std::string(missed.empty() ? "" : ", ") + what;
    else
      (void)d.check(e, what);
  };
  expectError(api.device_count(nullptr), "device_count(NULL)");
  expectError(api.device_info(nullptr), "device_info(NULL)");
  expectError(api.buffer_allocate(nullptr), "buffer_allocate(NULL)");
  expectError(api.buffer_copy(nullptr), "buffer_copy(NULL)");
  expectError(api.buffer_fill(nullptr), "buffer_fill(NULL)");
  expectError(api.compile_kernel(nullptr), "compile_kernel(NULL)");
  expectError(api.launch(nullptr), "launch(NULL)");
  plugsdk_buffer_allocate_args_t al{};
  al.struct_size = sizeof(al);
  al.bytes = 16;  // client NULL
  expectError(api.buffer_allocate(&al), "buffer_allocate(client NULL)");
  al.client = d.client();
  al.struct_size = sizeof(size_t);  // too small for what it reads
  expectError(api.buffer_allocate(&al), "buffer_allocate(struct_size too small)");
  al.struct_size = sizeof(al);
  al.device = 1000000;
  expectError(api.buffer_allocate(&al), "buffer_allocate(device 1000000)");
  plugsdk_compile_kernel_args_t ck{};
  ck.struct_size = sizeof(ck);
  ck.client = d.client();  // kernel NULL
  expectError(api.compile_kernel(&ck), "compile_kernel(kernel NULL)");
  if (!missed.empty()) return Outcome::fail("these calls returned success: " + missed);
  return Outcome::pass();
}

}  // namespace

void addAbiCases(Suite& s) {
  s.add("abi", "abi.capabilities.consistent", capabilities);
  for (uint64_t n : {0ull, 1ull, 7ull, 4096ull, 16ull << 20})
    s.add("abi", "abi.memory.roundtrip." + std::to_string(n), [n](const CaseContext& c) { return roundTrip(c, n); });
  s.add("abi", "abi.memory.unaligned_offsets", unalignedOffsets);
  s.add("abi", "abi.memory.device_to_device", deviceToDevice);
  for (uint32_t p : {1u, 2u, 4u, 8u})
    s.add("abi", "abi.memory.fill." + std::to_string(p), [p](const CaseContext& c) { return fill(c, p); });
  s.add("abi", "abi.memory.out_of_range_is_an_error", outOfRangeCopies);
  s.add("abi", "abi.streams_and_events", streamsAndEvents);
  s.add("abi", "abi.errors.bad_arguments", badArguments);
}

}  // namespace plugsdk::conformance
