// The C++ plugin layer (plugsdk.hpp) through the C ABI: a plugin written with it
// (cpp_plugin.cc) is loaded by the core's Loader and every call it implements is run; every
// bad argument is an error naming the function; exceptions arrive as errors; struct_size is
// honoured both ways. KernelView and evalIndex are in cpp_layer_kernel_view_test.cc.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "core/plugin/loader.h"
#include "plugsdk/kernel_view.hpp"
#include "sdk/tests/encoded_kernels.h"

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

// y[i0] = 2 * x[2*i0+1] + 1 over a symbolic grid: the test plugin runs it.
const char* kAxpb = R"(kernel @axpb(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[2*i0+1] : f32
  %1 = const 2.0 : f32
  %2 = mul %0, %1 : f32
  %3 = const 1.0 : f32
  %4 = add %2, %3 : f32
  store %y[i0], %4
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

}  // namespace
}  // namespace plugsdk::plugin
