// The C++ plugin layer (plugsdk.hpp) through the C ABI: a plugin written with it
// (cpp_plugin.cc) is loaded by the core's Loader and every call it implements is run; every
// bad argument is an error naming the function; exceptions arrive as errors; struct_size is
// honoured both ways. Then KernelView and evalIndex over kernels from the core's encoder.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "core/compile/pipeline.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"
#include "core/plugin/loader.h"
#include "core/text/parser.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::plugin {
namespace {

namespace sdk = plugsdk::sdk;

/// An error as the plugin made it: code and raw message (no loader prefix).
struct Err {
  uint32_t code = PLUGSDK_CODE_OK;
  std::string message;
};

template <typename A>
A make() {
  A a{};
  a.struct_size = sizeof(A);
  return a;
}

class CppLayer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = Loader({PLUGSDK_SDK_TEST_PLUGIN_DIR}).load("cpptest");
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    plugin_ = *p;
    api_ = &plugin_->api();
    client_ = createClient(nullptr);
    ASSERT_NE(client_, nullptr);
  }
  void TearDown() override {
    if (client_) {
      EXPECT_EQ(destroyClient(client_).code, PLUGSDK_CODE_OK);
    }
  }

  /// Reads and destroys an error (OK for NULL).
  Err take(plugsdk_error_t* e) const {
    Err out;
    if (!e) return out;
    auto info = make<plugsdk_error_info_args_t>();
    info.error = e;
    EXPECT_EQ(api_->error_info(&info), nullptr);
    out.code = info.out_code;
    out.message = info.out_message ? info.out_message : "(NULL)";
    auto d = make<plugsdk_error_destroy_args_t>();
    d.error = e;
    EXPECT_EQ(api_->error_destroy(&d), nullptr);
    return out;
  }
  void expectOk(plugsdk_error_t* e) const {
    Err r = take(e);
    EXPECT_EQ(r.code, PLUGSDK_CODE_OK) << r.message;
  }
  /// The call failed with `code` and a message containing `part`.
  void expectError(plugsdk_error_t* e, uint32_t code, const std::string& part) const {
    Err r = take(e);
    EXPECT_EQ(r.code, code) << r.message;
    EXPECT_NE(r.message.find(part), std::string::npos) << "'" << r.message << "' lacks '" << part << "'";
  }

  plugsdk_client_t* createClient(const char* options) const {
    auto a = make<plugsdk_client_create_args_t>();
    a.options = options;
    expectOk(api_->client_create(&a));
    return a.out_client;
  }
  Err destroyClient(plugsdk_client_t* c) const {
    auto a = make<plugsdk_client_destroy_args_t>();
    a.client = c;
    return take(api_->client_destroy(&a));
  }
  plugsdk_buffer_t* allocate(uint64_t bytes, plugsdk_client_t* c = nullptr) const {
    auto a = make<plugsdk_buffer_allocate_args_t>();
    a.client = c ? c : client_;
    a.memory_kind = PLUGSDK_MEMORY_HOST;
    a.bytes = bytes;
    expectOk(api_->buffer_allocate(&a));
    return a.out_buffer;
  }
  void release(plugsdk_buffer_t* b, plugsdk_client_t* c = nullptr) const {
    auto a = make<plugsdk_buffer_free_args_t>();
    a.client = c ? c : client_;
    a.buffer = b;
    expectOk(api_->buffer_free(&a));
  }
  plugsdk_buffer_copy_args_t copyArgs(plugsdk_copy_kind_t kind) const {
    auto a = make<plugsdk_buffer_copy_args_t>();
    a.client = client_;
    a.kind = kind;
    return a;
  }
  void upload(plugsdk_buffer_t* b, const std::vector<float>& v) const {
    auto a = copyArgs(PLUGSDK_COPY_HOST_TO_DEVICE);
    a.dst = b;
    a.host_src = v.data();
    a.bytes = v.size() * sizeof(float);
    expectOk(api_->buffer_copy(&a));
  }
  std::vector<float> download(plugsdk_buffer_t* b, size_t n, uint64_t offset = 0) const {
    std::vector<float> v(n);
    auto a = copyArgs(PLUGSDK_COPY_DEVICE_TO_HOST);
    a.src = b;
    a.src_offset = offset;
    a.host_dst = v.data();
    a.bytes = n * sizeof(float);
    expectOk(api_->buffer_copy(&a));
    return v;
  }
  plugsdk_stream_t* createStream() const {
    auto a = make<plugsdk_stream_create_args_t>();
    a.client = client_;
    expectOk(api_->stream_create(&a));
    return a.out_stream;
  }
  void destroyStream(plugsdk_stream_t* s) const {
    auto a = make<plugsdk_stream_args_t>();
    a.client = client_;
    a.stream = s;
    expectOk(api_->stream_destroy(&a));
  }
  plugsdk_executable_t* compile(const plugsdk_kernel_t& k) const {
    auto a = make<plugsdk_compile_kernel_args_t>();
    a.client = client_;
    a.kernel = &k;
    expectOk(api_->compile_kernel(&a));
    return a.out_executable;
  }
  void destroyExecutable(plugsdk_executable_t* e) const {
    auto a = make<plugsdk_executable_destroy_args_t>();
    a.client = client_;
    a.executable = e;
    expectOk(api_->executable_destroy(&a));
  }

  std::shared_ptr<Plugin> plugin_;
  const plugsdk_api_t* api_ = nullptr;
  plugsdk_client_t* client_ = nullptr;
};

std::unique_ptr<EncodedKernel> encode(const char* text) {
  auto k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  if (!k.isOk()) return nullptr;
  auto e = encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().toString();
  return e.isOk() ? std::move(*e) : nullptr;
}

// y[i0] = 2 * x[2*i0+1] + 1 over a symbolic grid: the test plugin runs it.
const char* kAxpb = R"(kernel @axpb(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[2*i0+1] : f32
  %1 = const 2.0 : f32
  %2 = mul %0, %1 : f32
  %3 = const 1.0 : f32
  %4 = add %2, %3 : f32
  store %y[i0], %4
})";

// The example of docs/kernel-ir.md: two loops (the test plugin compiles it, cannot run it).
const char* kLoops = R"(kernel @k0(%x: f32 in, %w: f32 in, %b: f32 in, %y: f32 out) grid [s0] {
  %0 = const 64.0 : f32
  loop [64] {
    %1 = load %x[64*i0+r0] : f32
    %2 = reduce sum %1 : f32
  }
  %3 = div %2, %0 : f32
  loop [64] {
    %4 = load %x[64*i0+r0] : f32
    %5 = sub %4, %3 : f32
    store %y[64*i0+r0], %5
  }
})";

// ---- loading, versions, the table -----------------------------------------------------------

TEST_F(CppLayer, TableIsCompleteAndStamped) {
  EXPECT_EQ(plugin_->name(), "cpptest");
  EXPECT_STREQ(api_->plugin_version, "0.1.0");
  EXPECT_EQ(api_->abi_major, static_cast<uint32_t>(PLUGSDK_ABI_VERSION_MAJOR));
  EXPECT_EQ(api_->abi_minor, static_cast<uint32_t>(PLUGSDK_ABI_VERSION_MINOR));
  EXPECT_EQ(api_->struct_size, sizeof(plugsdk_api_t));
  EXPECT_EQ(api_->extension, nullptr);
  // No device takes subgraphs, so compile_subgraph is absent, as the header asks.
  EXPECT_EQ(api_->compile_subgraph, nullptr);
}

TEST_F(CppLayer, EntryPointRefusesAnotherMajorWithAMessage) {
  void* h = dlopen(plugin_->path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  auto init = reinterpret_cast<plugsdk_plugin_init_fn>(dlsym(h, PLUGSDK_ENTRY_SYMBOL));
  ASSERT_NE(init, nullptr);
  auto a = make<plugsdk_init_args_t>();
  a.core_abi_major = 2;
  a.core_abi_minor = 3;
  EXPECT_EQ(init(&a), nullptr);
  ASSERT_NE(a.out_refusal, nullptr);
  EXPECT_EQ(std::string(a.out_refusal),
            "plugin cpptest implements ABI 1." + std::to_string(PLUGSDK_ABI_VERSION_MINOR) + "; the core offers 2.3");
  // A newer minor of the same major is served (the core reads what it knows).
  a = make<plugsdk_init_args_t>();
  a.core_abi_major = 1;
  a.core_abi_minor = 9;
  EXPECT_EQ(init(&a), api_);
  EXPECT_EQ(a.out_refusal, nullptr);
  // Args too small to hold the versions: refused without writing anything.
  a = make<plugsdk_init_args_t>();
  a.struct_size = sizeof(size_t);
  EXPECT_EQ(init(nullptr), nullptr);
  EXPECT_EQ(init(&a), nullptr);
  EXPECT_EQ(a.out_refusal, nullptr);
  dlclose(h);
}

// ---- every call the plugin implements ----------------------------------------------------------

TEST_F(CppLayer, DeviceCountAndInfo) {
  auto n = make<plugsdk_device_count_args_t>();
  n.client = client_;
  expectOk(api_->device_count(&n));
  EXPECT_EQ(n.out_count, 1u);
  EXPECT_EQ(n.out_reason, nullptr);

  auto a = make<plugsdk_device_info_args_t>();
  plugsdk_device_info_t info{};
  info.struct_size = sizeof(info);
  a.client = client_;
  a.info = &info;
  expectOk(api_->device_info(&a));
  EXPECT_EQ(info.struct_size, sizeof(info));
  EXPECT_STREQ(info.name, "cpptest0");
  EXPECT_EQ(info.dtypes, PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_F32) | PLUGSDK_DTYPE_BIT(PLUGSDK_DTYPE_I64));
  EXPECT_EQ(info.vector_bits, 128u);
  EXPECT_EQ(info.memory_kinds, PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED);
  EXPECT_EQ(info.memory_bytes, 1ull << 30);
  EXPECT_EQ(info.max_buffer_bytes, 1ull << 28);
  EXPECT_EQ(info.max_kernel_stmts, 64u);
  EXPECT_TRUE(info.fuses_horizontal);
  EXPECT_FALSE(info.takes_subgraphs);
  // The name stays valid while the client lives, across calls.
  const char* name = info.name;
  expectOk(api_->device_info(&a));
  EXPECT_EQ(info.name, name);

  a.device = 1;
  expectError(api_->device_info(&a), PLUGSDK_CODE_INVALID_ARGUMENT, "device_info: device 1 does not exist (1 devices)");
}

TEST_F(CppLayer, DeviceInfoIsFilledOnlyUpToTheCallersStructSize) {
  // An older reader's struct that ends after memory_kinds, with a canary behind it.
  const size_t small = PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, memory_kinds);
  alignas(plugsdk_device_info_t) unsigned char raw[sizeof(plugsdk_device_info_t) + 32];
  std::memset(raw, 0xAB, sizeof(raw));
  auto* info = reinterpret_cast<plugsdk_device_info_t*>(raw);
  info->struct_size = small;
  info->extension = nullptr;
  auto a = make<plugsdk_device_info_args_t>();
  a.client = client_;
  a.info = info;
  expectOk(api_->device_info(&a));
  EXPECT_EQ(info->struct_size, small);
  EXPECT_STREQ(info->name, "cpptest0");
  EXPECT_EQ(info->memory_kinds, PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED);
  for (size_t i = small; i < sizeof(raw); ++i) ASSERT_EQ(raw[i], 0xAB) << "byte " << i << " past struct_size written";

  // A newer reader's larger struct: filled up to the plugin's size, which struct_size reports;
  // the rest is left alone.
  std::memset(raw, 0xAB, sizeof(raw));
  info->struct_size = sizeof(raw);
  info->extension = nullptr;
  expectOk(api_->device_info(&a));
  EXPECT_EQ(info->struct_size, sizeof(plugsdk_device_info_t));
  EXPECT_EQ(info->max_kernel_stmts, 64u);
  for (size_t i = sizeof(plugsdk_device_info_t); i < sizeof(raw); ++i) ASSERT_EQ(raw[i], 0xAB) << "byte " << i;

  // Not even the header: refused.
  info->struct_size = sizeof(size_t);
  expectError(api_->device_info(&a), PLUGSDK_CODE_INVALID_ARGUMENT, "device_info: args->info->struct_size");
}

TEST_F(CppLayer, BuffersCopyAndFill) {
  plugsdk_buffer_t* a = allocate(64);
  plugsdk_buffer_t* b = allocate(64);
  std::vector<float> v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) + 0.5f;
  upload(a, v);
  EXPECT_EQ(download(a, 16), v);
  EXPECT_EQ(download(a, 4, 48), std::vector<float>(v.begin() + 12, v.end()));

  // Device to device, on a stream this time, then a 4-byte pattern fill.
  plugsdk_stream_t* s = createStream();
  auto c = copyArgs(PLUGSDK_COPY_DEVICE_TO_DEVICE);
  c.stream = s;
  c.src = a;
  c.src_offset = 8;
  c.dst = b;
  c.bytes = 56;
  expectOk(api_->buffer_copy(&c));
  auto f = make<plugsdk_buffer_fill_args_t>();
  f.client = client_;
  f.stream = s;
  f.buffer = b;
  f.offset = 16;
  f.bytes = 8;
  const float seven = 7.0f;
  std::memcpy(f.pattern, &seven, 4);
  f.pattern_bytes = 4;
  expectOk(api_->buffer_fill(&f));
  auto sync = make<plugsdk_stream_args_t>();
  sync.client = client_;
  sync.stream = s;
  expectOk(api_->stream_synchronize(&sync));
  std::vector<float> got = download(b, 14);
  EXPECT_EQ(got[0], 2.5f);
  EXPECT_EQ(got[3], 5.5f);
  EXPECT_EQ(got[4], 7.0f);
  EXPECT_EQ(got[5], 7.0f);
  EXPECT_EQ(got[6], 8.5f);
  EXPECT_EQ(got[13], 15.5f);

  // Zero bytes is a valid buffer.
  plugsdk_buffer_t* empty = allocate(0);
  ASSERT_NE(empty, nullptr);
  release(empty);
  destroyStream(s);
  release(a);
  release(b);
}

TEST_F(CppLayer, StreamsAndEvents) {
  plugsdk_stream_t* s = createStream();
  auto e = make<plugsdk_event_args_t>();
  e.client = client_;
  e.stream = s;
  expectOk(api_->event_create(&e));
  ASSERT_NE(e.out_event, nullptr);
  e.event = e.out_event;
  // The plugin's own error passes through unprefixed, with its code.
  Err early = take(api_->event_synchronize(&e));
  EXPECT_EQ(early.code, PLUGSDK_CODE_FAILED_PRECONDITION);
  EXPECT_EQ(early.message, "the event was never recorded");
  expectOk(api_->event_record(&e));
  expectOk(api_->event_wait(&e));
  expectOk(api_->event_synchronize(&e));
  expectOk(api_->event_destroy(&e));
  // An event may also be made without a stream.
  e.stream = nullptr;
  e.out_event = nullptr;
  expectOk(api_->event_create(&e));
  e.event = e.out_event;
  expectOk(api_->event_destroy(&e));
  destroyStream(s);
}

TEST_F(CppLayer, CompileKernelLogAndLaunch) {
  auto enc = encode(kAxpb);
  ASSERT_TRUE(enc);
  plugsdk_executable_t* exe = compile(enc->get());
  ASSERT_NE(exe, nullptr);
  auto log = make<plugsdk_executable_log_args_t>();
  log.client = client_;
  log.executable = exe;
  expectOk(api_->executable_log(&log));
  EXPECT_STREQ(log.out_log, "compiled axpb: 6 statements");

  std::vector<float> x(10);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  plugsdk_buffer_t* bx = allocate(40);
  plugsdk_buffer_t* by = allocate(32);
  upload(bx, x);
  plugsdk_buffer_t* bufs[] = {bx, by};
  uint64_t offsets[] = {0, 8};  // y starts 2 floats into its buffer
  int64_t s0 = 4;
  auto l = make<plugsdk_launch_args_t>();
  l.client = client_;
  l.executable = exe;
  l.num_buffers = 2;
  l.buffers = bufs;
  l.offsets = offsets;
  l.num_symbols = 1;
  l.symbol_values = &s0;
  expectOk(api_->launch(&l));
  EXPECT_EQ(download(by, 4, 8), (std::vector<float>{3, 7, 11, 15}));  // 2*x[2i+1]+1
  // NULL offsets: every offset 0 (the ABI), so y now lands at the start of its buffer.
  l.offsets = nullptr;
  expectOk(api_->launch(&l));
  EXPECT_EQ(download(by, 4, 0), (std::vector<float>{3, 7, 11, 15}));
  l.offsets = offsets;

  // s0 = 6 reads x[11] of 10 at i0 = 5: the plugin's bounds check, OUT_OF_RANGE.
  s0 = 6;
  expectError(api_->launch(&l), PLUGSDK_CODE_OUT_OF_RANGE, "element 11 of argument 0 is out of bounds");
  destroyExecutable(exe);

  // A kernel with loops compiles, and its launch is UNIMPLEMENTED here.
  auto loops = encode(kLoops);
  ASSERT_TRUE(loops);
  exe = compile(loops->get());
  plugsdk_buffer_t* four[] = {bx, bx, bx, by};
  uint64_t zeros[4] = {};
  s0 = 0;
  l.executable = exe;
  l.num_buffers = 4;
  l.buffers = four;
  l.offsets = zeros;
  expectError(api_->launch(&l), PLUGSDK_CODE_UNIMPLEMENTED, "cannot run kernel k0: statement 1 is statement kind 9");
  destroyExecutable(exe);
  release(bx);
  release(by);
}

TEST_F(CppLayer, DefaultsAnswerUnimplemented) {
  // compile_library is not overridden by the test plugin: the base class answers.
  std::vector<plugsdk_index_insn_t> pool = {
      {PLUGSDK_INDEX_CONST, 0, 4}, {PLUGSDK_INDEX_CONST, 0, 1}, {PLUGSDK_INDEX_CONST, 0, 0}};
  plugsdk_index_expr_t size{0, 1}, stride{1, 1};
  plugsdk_tensor_desc_t d{PLUGSDK_DTYPE_F32, 1, &size, &stride, {2, 1}};
  plugsdk_tensor_desc_t io[] = {d, d, d};
  auto a = make<plugsdk_compile_library_args_t>();
  a.client = client_;
  a.op = PLUGSDK_LIBRARY_MATMUL;
  a.num_inputs = 2;
  a.inputs = io;
  a.num_outputs = 1;
  a.outputs = io + 2;
  a.index_insns = pool.data();
  a.num_index_insns = pool.size();
  expectError(api_->compile_library(&a), PLUGSDK_CODE_UNIMPLEMENTED, "compile_library is not implemented");
}

// ---- bad arguments ---------------------------------------------------------------------------------

/// One ABI function, called with its args NULL, too small, or (where it has one) a NULL client.
struct AnyCall {
  const char* name;
  std::function<plugsdk_error_t*(bool nullArgs, size_t structSize, plugsdk_client_t* client)> call;
};

template <typename A>
AnyCall anyCall(const char* name, plugsdk_error_t* (*fn)(A*)) {
  return {name, [fn](bool nullArgs, size_t structSize, plugsdk_client_t* client) {
            A a{};
            a.struct_size = structSize;
            if constexpr (requires { a.client; }) a.client = client;
            return fn(nullArgs ? nullptr : &a);
          }};
}

TEST_F(CppLayer, EveryFunctionChecksItsArgs) {
  const plugsdk_api_t& t = *api_;
  const std::vector<AnyCall> calls = {
      anyCall("error_destroy", t.error_destroy),
      anyCall("error_info", t.error_info),
      anyCall("client_create", t.client_create),
      anyCall("client_destroy", t.client_destroy),
      anyCall("device_count", t.device_count),
      anyCall("device_info", t.device_info),
      anyCall("buffer_allocate", t.buffer_allocate),
      anyCall("buffer_free", t.buffer_free),
      anyCall("buffer_copy", t.buffer_copy),
      anyCall("buffer_fill", t.buffer_fill),
      anyCall("stream_create", t.stream_create),
      anyCall("stream_destroy", t.stream_destroy),
      anyCall("stream_synchronize", t.stream_synchronize),
      anyCall("event_create", t.event_create),
      anyCall("event_record", t.event_record),
      anyCall("event_wait", t.event_wait),
      anyCall("event_synchronize", t.event_synchronize),
      anyCall("event_destroy", t.event_destroy),
      anyCall("compile_kernel", t.compile_kernel),
      anyCall("compile_library", t.compile_library),
      anyCall("executable_destroy", t.executable_destroy),
      anyCall("executable_log", t.executable_log),
      anyCall("launch", t.launch),
  };
  ASSERT_EQ(calls.size(), 23u);  // every function of the 1.0 table but the optional compile_subgraph
  for (const AnyCall& c : calls) {
    SCOPED_TRACE(c.name);
    const std::string fn = c.name;
    expectError(c.call(true, 0, client_), PLUGSDK_CODE_INVALID_ARGUMENT, fn + ": args is NULL");
    expectError(c.call(false, sizeof(size_t), client_), PLUGSDK_CODE_INVALID_ARGUMENT,
                fn == "error_destroy" || fn == "error_info" ? fn + ": args->struct_size is too small"
                                                            : fn + ": args->struct_size is 8; ABI 1.0 needs at least");
    if (fn != "error_destroy" && fn != "error_info" && fn != "client_create")
      expectError(c.call(false, 1024, nullptr), PLUGSDK_CODE_INVALID_ARGUMENT, fn + ": args->client is NULL");
  }
}

TEST_F(CppLayer, HandlesAreChecked) {
  plugsdk_buffer_t* buf = allocate(16);
  plugsdk_stream_t* s = createStream();
  plugsdk_client_t* other = createClient(nullptr);
  plugsdk_buffer_t* foreign = allocate(16, other);

  auto f = make<plugsdk_buffer_free_args_t>();
  f.client = client_;
  expectError(api_->buffer_free(&f), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_free: args->buffer is NULL");
  f.buffer = reinterpret_cast<plugsdk_buffer_t*>(s);  // a stream passed as a buffer
  expectError(api_->buffer_free(&f), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_free: args->buffer is not a buffer handle");
  f.buffer = foreign;
  expectError(api_->buffer_free(&f), PLUGSDK_CODE_INVALID_ARGUMENT,
              "buffer_free: args->buffer belongs to another client");
  auto sy = make<plugsdk_stream_args_t>();
  sy.client = reinterpret_cast<plugsdk_client_t*>(buf);
  sy.stream = s;
  expectError(api_->stream_synchronize(&sy), PLUGSDK_CODE_INVALID_ARGUMENT,
              "stream_synchronize: args->client is not a client of this plugin");
  sy.client = client_;
  sy.stream = nullptr;
  expectError(api_->stream_synchronize(&sy), PLUGSDK_CODE_INVALID_ARGUMENT, "stream_synchronize: args->stream is NULL");

  auto e = make<plugsdk_event_args_t>();
  e.client = client_;
  expectError(api_->event_record(&e), PLUGSDK_CODE_INVALID_ARGUMENT, "event_record: args->event is NULL");
  expectOk(api_->event_create(&e));
  e.event = e.out_event;
  expectError(api_->event_record(&e), PLUGSDK_CODE_INVALID_ARGUMENT, "event_record: args->stream is NULL");
  expectError(api_->event_wait(&e), PLUGSDK_CODE_INVALID_ARGUMENT, "event_wait: args->stream is NULL");
  expectOk(api_->event_destroy(&e));

  auto x = make<plugsdk_executable_log_args_t>();
  x.client = client_;
  expectError(api_->executable_log(&x), PLUGSDK_CODE_INVALID_ARGUMENT, "executable_log: args->executable is NULL");
  x.executable = reinterpret_cast<const plugsdk_executable_t*>(buf);
  expectError(api_->executable_log(&x), PLUGSDK_CODE_INVALID_ARGUMENT, "is not a executable handle");

  // A client with live objects is not destroyed, and says what is left.
  Err busy = destroyClient(other);
  EXPECT_EQ(busy.code, PLUGSDK_CODE_FAILED_PRECONDITION);
  EXPECT_NE(busy.message.find("client_destroy: the client still has 1 buffers, 0 streams"), std::string::npos)
      << busy.message;
  release(foreign, other);
  EXPECT_EQ(destroyClient(other).code, PLUGSDK_CODE_OK);
  destroyStream(s);
  release(buf);
}

TEST_F(CppLayer, BufferCallsCheckKindsAndRanges) {
  auto al = make<plugsdk_buffer_allocate_args_t>();
  al.client = client_;
  al.memory_kind = PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_DEVICE;
  expectError(api_->buffer_allocate(&al), PLUGSDK_CODE_INVALID_ARGUMENT,
              "buffer_allocate: args->memory_kind 3 is not one plugsdk_memory_kind_t bit");
  al.memory_kind = PLUGSDK_MEMORY_HOST;
  al.device = 2;
  expectError(api_->buffer_allocate(&al), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_allocate: device 2 does not exist");

  plugsdk_buffer_t* buf = allocate(16);
  float host[8] = {};
  auto c = copyArgs(PLUGSDK_COPY_HOST_TO_DEVICE);
  c.dst = buf;
  c.bytes = 4;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_copy: args->host_src is NULL");
  c.host_src = host;
  c.dst_offset = 12;
  c.bytes = 8;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT,
              "buffer_copy: the destination range [12, +8) is outside its buffer of 16 bytes");
  c.dst_offset = ~0ull;  // offset + bytes wraps around: still refused
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "is outside its buffer");
  c = copyArgs(PLUGSDK_COPY_DEVICE_TO_HOST);
  c.src = buf;
  c.bytes = 4;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_copy: args->host_dst is NULL");
  c.host_dst = host;
  c.bytes = 17;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_copy: the source range [0, +17)");
  c = copyArgs(PLUGSDK_COPY_DEVICE_TO_DEVICE);
  c.src = buf;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_copy: args->dst is NULL");
  c.kind = 7;
  expectError(api_->buffer_copy(&c), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_copy: args->kind 7 is not");

  auto f = make<plugsdk_buffer_fill_args_t>();
  f.client = client_;
  f.buffer = buf;
  f.bytes = 6;
  f.pattern_bytes = 3;
  expectError(api_->buffer_fill(&f), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_fill: args->pattern_bytes is 3");
  f.pattern_bytes = 4;
  expectError(api_->buffer_fill(&f), PLUGSDK_CODE_INVALID_ARGUMENT,
              "buffer_fill: args->bytes (6) is not a multiple of pattern_bytes (4)");
  f.bytes = 8;
  f.offset = 12;
  expectError(api_->buffer_fill(&f), PLUGSDK_CODE_INVALID_ARGUMENT, "buffer_fill: the fill range [12, +8)");
  release(buf);
}

TEST_F(CppLayer, CompileAndLaunchCheckTheirInputs) {
  auto k = make<plugsdk_compile_kernel_args_t>();
  k.client = client_;
  expectError(api_->compile_kernel(&k), PLUGSDK_CODE_INVALID_ARGUMENT, "compile_kernel: args->kernel is NULL");
  auto enc = encode(kAxpb);
  ASSERT_TRUE(enc);
  plugsdk_kernel_t bad = enc->get();
  bad.stmt_size = 8;
  k.kernel = &bad;
  expectError(api_->compile_kernel(&k), PLUGSDK_CODE_INVALID_ARGUMENT,
              "compile_kernel: args->kernel: kernel stmt_size");
  bad = enc->get();
  bad.num_symbols = 0;  // the grid's s0 now names no symbol
  expectError(api_->compile_kernel(&k), PLUGSDK_CODE_INVALID_ARGUMENT, "compile_kernel: args->kernel: grid dim 0");

  auto lib = make<plugsdk_compile_library_args_t>();
  lib.client = client_;
  lib.op = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_SDPA;
  expectError(api_->compile_library(&lib), PLUGSDK_CODE_INVALID_ARGUMENT, "compile_library: args->op 5 is not");
  lib.op = PLUGSDK_LIBRARY_MATMUL;
  plugsdk_tensor_desc_t d{PLUGSDK_DTYPE_F32, 2, nullptr, nullptr, {0, 1}};
  lib.num_inputs = 1;
  lib.inputs = &d;
  expectError(api_->compile_library(&lib), PLUGSDK_CODE_INVALID_ARGUMENT,
              "compile_library: input 0 has rank 2 and NULL sizes or strides");

  plugsdk_executable_t* exe = compile(enc->get());
  plugsdk_buffer_t* buf = allocate(64);
  plugsdk_buffer_t* bufs[] = {buf, buf};
  uint64_t offsets[] = {0, 0};
  int64_t s0 = 1;
  auto l = make<plugsdk_launch_args_t>();
  l.client = client_;
  l.executable = exe;
  l.num_buffers = 1;
  l.buffers = bufs;
  l.offsets = offsets;
  l.num_symbols = 1;
  l.symbol_values = &s0;
  expectError(api_->launch(&l), PLUGSDK_CODE_INVALID_ARGUMENT, "launch: 1 buffers for an executable that takes 2");
  l.num_buffers = 2;
  l.num_symbols = 0;
  expectError(api_->launch(&l), PLUGSDK_CODE_INVALID_ARGUMENT,
              "launch: 0 symbol values for an executable that takes 1");
  l.num_symbols = 1;
  l.buffers = nullptr;
  expectError(api_->launch(&l), PLUGSDK_CODE_INVALID_ARGUMENT, "launch: args->buffers is NULL with num_buffers 2");
  l.buffers = bufs;
  offsets[1] = 65;
  expectError(api_->launch(&l), PLUGSDK_CODE_INVALID_ARGUMENT, "launch: args->offsets[1] (65) is past the end");
  offsets[1] = 0;
  bufs[1] = nullptr;
  expectError(api_->launch(&l), PLUGSDK_CODE_INVALID_ARGUMENT, "launch: args->buffers[1] is NULL");
  bufs[1] = buf;
  expectOk(api_->launch(&l));
  destroyExecutable(exe);
  release(buf);
}

// ---- exceptions and plugin errors ------------------------------------------------------------------

TEST_F(CppLayer, ExceptionsBecomeErrors) {
  struct Case {
    const char* options;
    uint32_t code;
    const char* message;
  };
  for (const Case& c : {Case{"throw=runtime", PLUGSDK_CODE_INTERNAL,
                             "device_count: uncaught exception: device_count was asked to throw"},
                        Case{"throw=bad_alloc", PLUGSDK_CODE_RESOURCE_EXHAUSTED, "device_count: out of memory ("},
                        Case{"throw=int", PLUGSDK_CODE_INTERNAL,
                             "device_count: uncaught exception of a type not derived from std::exception"}}) {
    SCOPED_TRACE(c.options);
    plugsdk_client_t* cl = createClient(c.options);
    auto n = make<plugsdk_device_count_args_t>();
    n.client = cl;
    expectError(api_->device_count(&n), c.code, c.message);
    // Through the core's loader, the code maps to the core's Status.
    Status s = plugin_->check(api_->device_count(&n), "device_count");
    EXPECT_EQ(static_cast<uint32_t>(s.code()), c.code);
    EXPECT_NE(s.message().find("plugin cpptest"), std::string::npos) << s.toString();
    EXPECT_EQ(destroyClient(cl).code, PLUGSDK_CODE_OK);
  }
}

TEST_F(CppLayer, ClientCreateFailuresReturnNoClient) {
  auto a = make<plugsdk_client_create_args_t>();
  a.options = "init=throw";
  expectError(api_->client_create(&a), PLUGSDK_CODE_INTERNAL,
              "client_create: uncaught exception: initialize was asked to throw");
  EXPECT_EQ(a.out_client, nullptr);
  a.options = "init=fail";
  Err r = take(api_->client_create(&a));
  EXPECT_EQ(r.code, PLUGSDK_CODE_UNAVAILABLE);
  EXPECT_EQ(r.message, "initialize was asked to fail");  // the plugin's own message, unprefixed
  EXPECT_EQ(a.out_client, nullptr);
  a.options = "a=1;novalue";
  expectError(api_->client_create(&a), PLUGSDK_CODE_INVALID_ARGUMENT,
              "client_create: options: option 'novalue' is not key=value");
  EXPECT_EQ(a.out_client, nullptr);
}

TEST_F(CppLayer, ErrorObjectsAreCheckedToo) {
  auto info = make<plugsdk_error_info_args_t>();
  expectError(api_->error_info(&info), PLUGSDK_CODE_INVALID_ARGUMENT, "error_info: args->error is NULL");
  auto d = make<plugsdk_error_destroy_args_t>();
  EXPECT_EQ(api_->error_destroy(&d), nullptr);  // destroying NULL is a no-op
}

// ---- KernelView and evalIndex over the core's encoder ---------------------------------------------

sdk::StmtRef nth(const sdk::StmtRange& r, size_t n) {
  auto it = r.begin();
  while (n--) ++it;
  return *it;
}

TEST(KernelView, WalksLoopBodiesAsNestedRanges) {
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  ASSERT_TRUE(sdk::KernelView::validate(k).isOk()) << sdk::KernelView::validate(k).message();
  sdk::KernelView v(k);
  EXPECT_EQ(v.name(), "k0");
  EXPECT_EQ(v.text(), kernel::printKernel(*kernel::parseKernel(kLoops)));
  ASSERT_EQ(v.numArgs(), 4u);
  EXPECT_STREQ(v.arg(3).name, "y");
  EXPECT_EQ(v.arg(3).access, static_cast<uint32_t>(PLUGSDK_ACCESS_WRITE));
  ASSERT_EQ(v.numSymbols(), 1u);
  EXPECT_EQ(v.symbol(0), "s0");

  std::vector<uint32_t> top;
  std::vector<std::vector<uint32_t>> bodies;
  size_t seen = 0;
  for (const sdk::StmtRef s : v.body()) {
    top.push_back(s->kind);
    ++seen;
    if (!s.isLoop()) {
      EXPECT_TRUE(s.body().empty());
      continue;
    }
    bodies.emplace_back();
    for (const sdk::StmtRef t : s.body()) {
      bodies.back().push_back(t->kind);
      EXPECT_EQ(&t.stmt(), &v.stmt(t.position()));
      ++seen;
    }
  }
  EXPECT_EQ(top,
            (std::vector<uint32_t>{PLUGSDK_STMT_CONST, PLUGSDK_STMT_LOOP, PLUGSDK_STMT_SCALAR, PLUGSDK_STMT_LOOP}));
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0], (std::vector<uint32_t>{PLUGSDK_STMT_LOAD, PLUGSDK_STMT_REDUCE}));
  EXPECT_EQ(bodies[1], (std::vector<uint32_t>{PLUGSDK_STMT_LOAD, PLUGSDK_STMT_SCALAR, PLUGSDK_STMT_STORE}));
  EXPECT_EQ(seen, v.numStmts());

  // The store in the second loop: y[64*i0 + r0] at i0 = 3, r0 = 5.
  const sdk::StmtRef loop2 = nth(v.body(), 3);
  const sdk::StmtRef store = nth(loop2.body(), 2);
  ASSERT_EQ(store->kind, PLUGSDK_STMT_STORE);
  std::vector<int64_t> i = {3}, r = {5}, sym = {8};
  auto at = v.evalIndex(store->index, sdk::IndexEnv{i, r, sym});
  ASSERT_TRUE(at.isOk()) << at.status().message();
  EXPECT_EQ(*at, 197);
  auto grid = v.gridSizes(sdk::Span<const int64_t>(sym));
  ASSERT_TRUE(grid.isOk());
  EXPECT_EQ(*grid, std::vector<int64_t>{8});
  ASSERT_EQ(loop2->num_loop_sizes, 1u);
  EXPECT_EQ(*v.evalIndex(loop2->loop_sizes[0], sdk::IndexEnv{}), 64);
}

TEST(KernelView, StepsByTheKernelsElementSizesNotSizeof) {
  // A core of a later minor version: statements and arguments carry 24 more bytes each.
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  const size_t stmtSize = sizeof(plugsdk_stmt_t) + 24, argSize = sizeof(plugsdk_kernel_arg_t) + 24;
  std::vector<unsigned char> stmts(k.num_stmts * stmtSize, 0xEE), args(k.num_args * argSize, 0xEE);
  for (size_t i = 0; i < k.num_stmts; ++i) std::memcpy(&stmts[i * stmtSize], &k.stmts[i], sizeof(plugsdk_stmt_t));
  for (size_t i = 0; i < k.num_args; ++i) std::memcpy(&args[i * argSize], &k.args[i], sizeof(plugsdk_kernel_arg_t));
  plugsdk_kernel_t wide = k;
  wide.stmt_size = stmtSize;
  wide.stmts = reinterpret_cast<const plugsdk_stmt_t*>(stmts.data());
  wide.arg_size = argSize;
  wide.args = reinterpret_cast<const plugsdk_kernel_arg_t*>(args.data());
  ASSERT_TRUE(sdk::KernelView::validate(wide).isOk()) << sdk::KernelView::validate(wide).message();
  sdk::KernelView v(wide);
  for (size_t i = 0; i < k.num_stmts; ++i) {
    EXPECT_EQ(v.stmt(i).kind, k.stmts[i].kind) << i;
    EXPECT_EQ(v.stmt(i).result, k.stmts[i].result) << i;
  }
  EXPECT_STREQ(v.arg(3).name, "y");
  std::vector<size_t> top;
  for (const sdk::StmtRef s : v.body()) top.push_back(s.position());
  EXPECT_EQ(top, (std::vector<size_t>{0, 1, 4, 5}));
}

TEST(KernelView, ValidateRefusesMalformedKernels) {
  auto enc = encode(kLoops);
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  auto refused = [](const plugsdk_kernel_t& bad, const std::string& part) {
    sdk::Status s = sdk::KernelView::validate(bad);
    EXPECT_EQ(s.code(), sdk::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  };
  plugsdk_kernel_t bad = k;
  bad.struct_size = offsetof(plugsdk_kernel_t, num_values);
  refused(bad, "kernel struct_size");
  bad = k;
  bad.num_stmts = 0;
  bad.stmts = nullptr;
  EXPECT_TRUE(sdk::KernelView::validate(bad).isOk());  // an empty body is fine...
  bad.num_stmts = 3;
  refused(bad, "NULL array");  // ...a missing one is not

  std::vector<plugsdk_stmt_t> stmts(k.stmts, k.stmts + k.num_stmts);
  bad = k;
  bad.stmts = stmts.data();
  stmts[1].body_count = 9;  // the first loop claims more than there is
  refused(bad, "statement 1: a LOOP body of 9 statements past the end of its block");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[5].body_count = 0;  // the second loop loses its body: r0 is then used outside a loop
  refused(bad, "r0 is not in scope");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[2].arg = 4;
  refused(bad, "statement 2: argument 4 of 4");
  stmts.assign(k.stmts, k.stmts + k.num_stmts);
  stmts[4].operands[1] = 99;
  refused(bad, "statement 4: operand %99");

  std::vector<plugsdk_index_insn_t> insns(k.index_insns, k.index_insns + k.num_index_insns);
  bad = k;
  bad.index_insns = insns.data();
  const plugsdk_index_expr_t load = k.stmts[2].index;
  insns[load.first].op = PLUGSDK_INDEX_MUL;  // pops an empty stack
  refused(bad, "the stack underflows");
  insns.assign(k.index_insns, k.index_insns + k.num_index_insns);
  insns[load.first + load.count - 1].op = 77;
  refused(bad, "unknown op 77");
  insns.assign(k.index_insns, k.index_insns + k.num_index_insns);
  bad.num_index_insns = load.first;  // programs reach past the pool
  refused(bad, "outside the pool");
}

/// Every kernel the scheduler makes, for a graph with every statement kind and for the
/// conformance models, passes validate and walks completely: the layer never refuses a
/// kernel of the core's.
TEST(KernelView, EveryScheduledKernelValidates) {
  const char* mix = R"(graph @mix(%x: f32[s0, 16], %i: i64[s0, 4], %y: f32[4, 16], %t: i64[2, 16]) {
  %sm = aten._softmax(%x) {dim = 1, half_to_float = false}
  %p = aten.constant_pad_nd(%sm) {pad = [1, 1], value = 0.5}
  %g = aten.gather(%x, %i) {dim = 1}
  %c = aten.cat(%x, %x) {dim = 1}
  %s = aten.scatter_add(%y, %t, %y) {dim = 0}
  %d, %m = aten.native_dropout(%x) {p = 0.25, train = true, seed = 3}
  %h = aten._to_copy(%g) {dtype = f16}
  return %p, %h, %c, %s, %d
})";
  std::vector<std::string> graphs = {mix};
  for (const char* model : {"mlp", "resnet18", "transformer_encoder", "gpt2_block"}) {
    std::ifstream in(std::string(PLUGSDK_SOURCE_DIR "/conformance/models/") + model + ".pgraph");
    ASSERT_TRUE(in) << model;
    std::stringstream ss;
    ss << in.rdbuf();
    graphs.push_back(ss.str());
  }
  auto ctx = ir::makeDefaultContext();
  size_t kernels = 0;
  std::set<uint32_t> kinds;
  for (const std::string& text : graphs) {
    auto g = text::parseGraph(*ctx, text);
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    auto c = compile::compileGraph(*ctx, *g, {});
    ASSERT_TRUE(c.isOk()) << c.status().toString();
    for (const kernel::Kernel& k : c->program.kernels) {
      auto enc = encodeKernel(k);
      ASSERT_TRUE(enc.isOk()) << enc.status().toString();
      const sdk::Status st = sdk::KernelView::validate((*enc)->get());
      ASSERT_TRUE(st.isOk()) << k.name << ": " << st.message() << "\n" << (*enc)->get().text;
      sdk::KernelView v((*enc)->get());
      size_t walked = 0;
      for (const sdk::StmtRef s : v.body()) {
        kinds.insert(s->kind);
        ++walked;
        for (const sdk::StmtRef t : s.body()) kinds.insert(t->kind), ++walked;
      }
      EXPECT_EQ(walked, v.numStmts()) << k.name;
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 20u);
  EXPECT_EQ(kinds.size(), 11u) << "not every statement kind was exercised";
}

TEST(KernelView, SymbolicLoopExtentsValidateAndEvaluate) {
  auto enc = encode(R"(kernel @rows(%x: f32 in, %y: f32 out) grid [s0] {
  loop [s1] {
    %0 = load %x[i0*s1+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
})");
  ASSERT_TRUE(enc);
  ASSERT_TRUE(sdk::KernelView::validate(enc->get()).isOk()) << sdk::KernelView::validate(enc->get()).message();
  sdk::KernelView v(enc->get());
  std::vector<int64_t> sym(v.numSymbols(), 0);
  for (size_t i = 0; i < v.numSymbols(); ++i) sym[i] = v.symbol(i) == "s1" ? 9 : 3;
  auto n = v.evalIndex(v.stmt(0).loop_sizes[0], sdk::IndexEnv{{}, {}, sym});
  ASSERT_TRUE(n.isOk()) << n.status().message();
  EXPECT_EQ(*n, 9);
}

/// Python's // and % computed another way (through long double floor), as the oracle.
int64_t pyFloorDiv(int64_t a, int64_t b) {
  return static_cast<int64_t>(std::floor(static_cast<long double>(a) / static_cast<long double>(b)));
}
int64_t pyMod(int64_t a, int64_t b) { return a - b * pyFloorDiv(a, b); }

TEST(EvalIndex, FloorSemanticsMatchPython) {
  EXPECT_EQ(sdk::floorDiv(-7, 2), -4);
  EXPECT_EQ(sdk::floorDiv(7, -2), -4);
  EXPECT_EQ(sdk::floorDiv(-7, -2), 3);
  EXPECT_EQ(sdk::floorDiv(-8, 2), -4);
  EXPECT_EQ(sdk::floorMod(-7, 3), 2);
  EXPECT_EQ(sdk::floorMod(7, -3), -2);
  EXPECT_EQ(sdk::floorMod(-7, -3), -1);
  EXPECT_EQ(sdk::floorMod(-6, 3), 0);
  EXPECT_EQ(sdk::floorMod(std::numeric_limits<int64_t>::min(), -1), 0);
  for (int64_t a = -20; a <= 20; ++a)
    for (int64_t b : {-7, -3, -2, -1, 1, 2, 3, 5}) {
      ASSERT_EQ(sdk::floorDiv(a, b), pyFloorDiv(a, b)) << a << " // " << b;
      ASSERT_EQ(sdk::floorMod(a, b), pyMod(a, b)) << a << " % " << b;
    }
}

TEST(EvalIndex, EncodedFloorDivAndModWithNegativeOperands) {
  // Grid points i0 - 7 go negative: (i0-7)//3 and (i0-7)%3 must floor, not truncate.
  auto enc = encode(R"(kernel @fm(%y: i64 out) grid [s0] {
  %0 = index (i0-7)//3 : i64
  %1 = index (i0-7) % 3 : i64
  %2 = index (s1-i0)//4*s1+(i0-7) % s1 : i64
  store %y[3*i0], %0
  store %y[3*i0+1], %1
  store %y[3*i0+2], %2
})");
  ASSERT_TRUE(enc);
  const plugsdk_kernel_t& k = enc->get();
  ASSERT_TRUE(sdk::KernelView::validate(k).isOk()) << sdk::KernelView::validate(k).message();
  sdk::KernelView v(k);
  ASSERT_EQ(v.numSymbols(), 2u);
  const size_t s1 = v.symbol(0) == "s1" ? 0 : 1;
  int floors = 0;
  for (size_t i = 0; i < k.num_index_insns; ++i)
    floors += k.index_insns[i].op == PLUGSDK_INDEX_FLOORDIV || k.index_insns[i].op == PLUGSDK_INDEX_MOD;
  EXPECT_GE(floors, 4);
  for (int64_t s1v : {5, 6}) {
    std::vector<int64_t> sym(2, 16);
    sym[s1] = s1v;
    for (int64_t i0 = 0; i0 < 16; ++i0) {
      std::vector<int64_t> grid = {i0};
      const sdk::IndexEnv env{grid, {}, sym};
      const int64_t want[3] = {pyFloorDiv(i0 - 7, 3), pyMod(i0 - 7, 3),
                               pyFloorDiv(s1v - i0, 4) * s1v + pyMod(i0 - 7, s1v)};
      for (size_t j = 0; j < 3; ++j) {
        auto got = v.evalIndex(v.stmt(j).index, env);
        ASSERT_TRUE(got.isOk()) << got.status().message();
        EXPECT_EQ(*got, want[j]) << "statement " << j << " at i0 = " << i0 << ", s1 = " << s1v;
      }
    }
  }
}

TEST(EvalIndex, IndirectIndicesReadValues) {
  auto enc = encode(R"(kernel @g(%x: f32 in, %t: i64 in, %y: f32 out) grid [4, 8] {
  %0 = load %t[i0] : i64
  %1 = load %x[8*%0+i1] : f32
  store %y[8*i0+i1], %1
})");
  ASSERT_TRUE(enc);
  sdk::KernelView v(enc->get());
  ASSERT_TRUE(sdk::KernelView::validate(enc->get()).isOk());
  std::vector<int64_t> grid = {2, 5};
  auto got = v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, {}, {}}, [](int32_t id) { return id == 0 ? 3 : -1000; });
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_EQ(*got, 29);
  // Without a value lookup, a VALUE operand is an error, not a guess.
  EXPECT_EQ(v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, {}, {}}).status().code(), sdk::Code::kOutOfRange);
}

TEST(EvalIndex, ErrorsAreReportedNotUndefined) {
  using Insn = plugsdk_index_insn_t;
  auto run = [](std::vector<Insn> p, const sdk::IndexEnv& env = {}) {
    return sdk::evalIndex(sdk::Span<const Insn>(p), plugsdk_index_expr_t{0, static_cast<uint32_t>(p.size())}, env);
  };
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  auto c = [](int64_t v) { return Insn{PLUGSDK_INDEX_CONST, 0, v}; };
  auto op = [](plugsdk_index_op_t o) { return Insn{o, 0, 0}; };
  EXPECT_EQ(*run({c(7), c(-2), op(PLUGSDK_INDEX_FLOORDIV)}), -4);
  EXPECT_EQ(*run({c(7), c(-3), op(PLUGSDK_INDEX_MOD)}), -2);
  EXPECT_EQ(*run({c(2), c(3), c(4), op(PLUGSDK_INDEX_MUL), op(PLUGSDK_INDEX_SUB)}), -10);
  EXPECT_NE(run({c(1), c(0), op(PLUGSDK_INDEX_FLOORDIV)}).status().message().find("division by zero"),
            std::string::npos);
  EXPECT_NE(run({c(1), c(0), op(PLUGSDK_INDEX_MOD)}).status().message().find("division by zero"), std::string::npos);
  EXPECT_NE(run({c(kMin), c(-1), op(PLUGSDK_INDEX_FLOORDIV)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(kMax), c(1), op(PLUGSDK_INDEX_ADD)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(kMax), c(2), op(PLUGSDK_INDEX_MUL)}).status().message().find("overflow"), std::string::npos);
  EXPECT_NE(run({c(1), op(PLUGSDK_INDEX_ADD)}).status().message().find("underflows"), std::string::npos);
  EXPECT_NE(run({c(1), c(2)}).status().message().find("leaves 2 values"), std::string::npos);
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_LOOP_VAR, 0, 0}}).status().message().find("r0 with a loop of rank 0"),
            std::string::npos);
  std::vector<int64_t> grid = {4};
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_GRID_VAR, 0, 1}}, sdk::IndexEnv{grid, {}, {}}).status().message().find("i1"),
            std::string::npos);
  EXPECT_NE(run({Insn{PLUGSDK_INDEX_SYMBOL, 0, 0}}).status().message().find("symbol 0 with 0 values"),
            std::string::npos);
  // A program longer than the evaluator's inline stack.
  std::vector<Insn> longProgram;
  for (int i = 0; i < 40; ++i) longProgram.push_back(c(1));
  for (int i = 0; i < 39; ++i) longProgram.push_back(op(PLUGSDK_INDEX_ADD));
  EXPECT_EQ(*run(longProgram), 40);
}

// ---- the worked example of docs/abi/reference.md -----------------------------------------------

const char* kExample = R"(kernel @rowmax(%x: f32 in, %y: f32 out) grid [s0, 6] {
  loop [4] {
    %0 = load %x[4*(i1//2)+24*i0+12*(i1 % 2)+r0] : f32
    %1 = reduce max %0 : f32
  }
  %2 = const 0.5 : f32
  %3 = mul %1, %2 : f32
  store %y[6*i0+i1], %3
})";

const char* dtypeName(uint32_t d) {
  static const char* const kNames[] = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "BF16", "F32", "F64"};
  return d < 10 ? kNames[d] : "?";
}
const char* kindName(uint32_t k) {
  static const char* const kNames[] = {"LOAD", "CONST",  "INDEX", "SCALAR", "WHERE", "CAST",
                                       "RAND", "REDUCE", "STORE", "LOOP",   "CHECK"};
  return k < 11 ? kNames[k] : "?";
}
std::string range(plugsdk_index_expr_t e) {
  return "{" + std::to_string(e.first) + ", " + std::to_string(e.count) + "}";
}

/// The encoded arrays of a kernel, as the reference shows them.
std::string describeEncoding(const plugsdk_kernel_t& k) {
  std::ostringstream o;
  o << "name        \"" << k.name << "\"\n";
  o << "args        arg_size " << k.arg_size << ", num_args " << k.num_args << "\n";
  for (size_t i = 0; i < k.num_args; ++i)
    o << "  [" << i << "] name \"" << k.args[i].name << "\", dtype " << k.args[i].dtype << " ("
      << dtypeName(k.args[i].dtype) << "), access " << k.args[i].access << "\n";
  o << "symbols     num_symbols " << k.num_symbols << ":";
  for (size_t i = 0; i < k.num_symbols; ++i) o << " [" << i << "] \"" << k.symbols[i] << "\"";
  o << "\ngrid        num_grid " << k.num_grid << ":";
  for (size_t i = 0; i < k.num_grid; ++i) o << " [" << i << "] " << range(k.grid[i]);
  o << "\nindex_insns num_index_insns " << k.num_index_insns << " ({op, operand})\n";
  for (size_t i = 0; i < k.num_index_insns; ++i)
    o << "  [" << (i < 10 ? " " : "") << i << "] " << sdk::detail::indexOpName(k.index_insns[i].op) << " "
      << k.index_insns[i].operand << "\n";
  o << "stmts       stmt_size " << k.stmt_size << ", num_stmts " << k.num_stmts << " (fields that matter)\n";
  for (size_t i = 0; i < k.num_stmts; ++i) {
    const plugsdk_stmt_t& st = k.stmts[i];
    o << "  [" << i << "] " << kindName(st.kind) << ": result " << st.result;
    if (st.kind != PLUGSDK_STMT_LOOP && st.kind != PLUGSDK_STMT_STORE) o << ", dtype " << dtypeName(st.dtype);
    if (st.kind == PLUGSDK_STMT_LOAD || st.kind == PLUGSDK_STMT_STORE) o << ", arg " << st.arg;
    static const char* const kReduce[] = {"SUM", "PROD", "MAX", "MIN", "ARGMAX", "ARGMIN"};
    static const char* const kCombine[] = {"NONE", "SUM", "PROD", "MAX", "MIN"};
    if (st.kind == PLUGSDK_STMT_SCALAR) o << ", op " << st.op << (st.op == PLUGSDK_OP_MUL ? " (MUL)" : "");
    if (st.kind == PLUGSDK_STMT_REDUCE) o << ", op " << st.op << " (" << (st.op < 6 ? kReduce[st.op] : "?") << ")";
    if (st.kind == PLUGSDK_STMT_STORE) o << ", op " << st.op << " (" << (st.op < 5 ? kCombine[st.op] : "?") << ")";
    if (st.num_operands) {
      o << ", operands [";
      for (uint32_t j = 0; j < st.num_operands; ++j) o << (j ? ", " : "") << st.operands[j];
      o << "]";
    }
    if (sdk::detail::usesIndex(st.kind)) o << ", index " << range(st.index);
    if (st.kind == PLUGSDK_STMT_CONST) o << ", fvalue " << st.fvalue;
    if (st.kind == PLUGSDK_STMT_LOOP) {
      o << ", body_count " << st.body_count << ", loop_sizes [";
      for (uint32_t j = 0; j < st.num_loop_sizes; ++j) o << (j ? ", " : "") << range(st.loop_sizes[j]);
      o << "]";
    }
    o << "\n";
  }
  o << "num_values  " << k.num_values << "\n";
  return o.str();
}

/// The block the reference carries between its markers: text form, then the encoding.
std::string workedExample() {
  auto enc = encode(kExample);
  if (!enc) return "(encoding failed)";
  return std::string("```\n") + enc->get().text + "```\n\n```\n" + describeEncoding(enc->get()) + "```\n";
}

TEST(ReferenceDoc, WorkedExampleMatchesTheEncoder) {
  std::ifstream in(PLUGSDK_SOURCE_DIR "/docs/abi/reference.md");
  ASSERT_TRUE(in) << "cannot read docs/abi/reference.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- worked-example:begin (generated: sdk/tests/cpp_layer_test.cc) -->\n";
  const std::string end = "<!-- worked-example:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string want = workedExample();
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), want)
      << "docs/abi/reference.md's worked example is stale; the encoder gives:\n"
      << want;
  // The example evaluates as the reference says: at i0 = 1, i1 = 3, r0 = 2 the load reads
  // element 4*(3//2) + 24*1 + 12*(3%2) + 2 = 42.
  auto enc = encode(kExample);
  ASSERT_TRUE(enc);
  sdk::KernelView v(enc->get());
  std::vector<int64_t> grid = {1, 3}, loop = {2}, sym = {5};
  EXPECT_EQ(*v.evalIndex(v.stmt(1).index, sdk::IndexEnv{grid, loop, sym}), 42);
}

}  // namespace
}  // namespace plugsdk::plugin
