// The minimal backend (samples/minimal_backend) against the core's kernel interpreter: kernels
// written in the text form and kernels from scheduled programs are encoded, compiled and
// launched through the loaded plugin on random inputs with edge values, and every buffer must
// equal the interpreter's result exactly (NaN == NaN; floats compared after the rounding a
// store to memory of the argument's dtype does). Also: the ABI surface's bad-argument paths.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/compile/pipeline.h"
#include "core/exec/host_tensor.h"
#include "core/exec/kernel_utils.h"
#include "core/exec/reference_executor.h"
#include "core/kernel/interpreter.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/device.h"
#include "core/plugin/device_program.h"
#include "core/plugin/kernel_encoding.h"
#include "core/plugin/loader.h"
#include "core/sched/interpreter.h"
#include "core/text/parser.h"

namespace plugsdk::plugin {
namespace {

using exec::HostTensor;
using ir::DType;
using Symbols = std::map<std::string, int64_t>;

const DType kAllDTypes[] = {DType::kBool, DType::kU8,  DType::kI8,   DType::kI16, DType::kI32,
                            DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};

// ---- bytes <-> HostTensor (values are already representable in their dtype) -------------------

uint16_t halfBits(double v) {  // exact for f16-representable v
  if (std::isnan(v)) return 0x7e00;
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (std::isinf(v)) return sign | 0x7c00;
  if (v < std::ldexp(1.0, -14)) return sign | static_cast<uint16_t>(v * std::ldexp(1.0, 24));
  int e;
  double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>((m * 2 - 1) * 1024);
}

double halfValue(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0    ? std::ldexp(mant, -24)
             : exp == 31 ? (mant ? NAN : INFINITY)
                         : std::ldexp(mant | 0x400, exp - 25);
  return (h & 0x8000) ? -v : v;
}

std::vector<uint8_t> toBytes(const HostTensor& t) {
  const size_t n = static_cast<size_t>(t.numel());
  std::vector<uint8_t> out(n * static_cast<size_t>(sched::dtypeBytes(t.dtype())));
  uint8_t* p = out.data();
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype()) {
      case DType::kF64: std::memcpy(p + 8 * i, &t.doubles()[i], 8); break;
      case DType::kF32: {
        float f = static_cast<float>(t.doubles()[i]);
        std::memcpy(p + 4 * i, &f, 4);
        break;
      }
      case DType::kF16: {
        uint16_t h = halfBits(t.doubles()[i]);
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      case DType::kBF16: {
        float f = static_cast<float>(t.doubles()[i]);
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint16_t h = static_cast<uint16_t>(x >> 16);
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      default: {
        const int64_t v = t.ints()[i];
        std::memcpy(p + static_cast<size_t>(sched::dtypeBytes(t.dtype())) * i, &v,
                    static_cast<size_t>(sched::dtypeBytes(t.dtype())));  // little-endian
      }
    }
  }
  return out;
}

HostTensor fromBytes(DType dt, const std::vector<uint8_t>& bytes) {
  const int64_t size = sched::dtypeBytes(dt), n = static_cast<int64_t>(bytes.size()) / size;
  HostTensor t(dt, {n});
  const uint8_t* p = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* e = p + i * size;
    switch (dt) {
      case DType::kF64: std::memcpy(&t.doubles()[static_cast<size_t>(i)], e, 8); break;
      case DType::kF32: {
        float f;
        std::memcpy(&f, e, 4);
        t.doubles()[static_cast<size_t>(i)] = f;
        break;
      }
      case DType::kF16:
      case DType::kBF16: {
        uint16_t h;
        std::memcpy(&h, e, 2);
        uint32_t x = static_cast<uint32_t>(h) << 16;
        float f;
        std::memcpy(&f, &x, 4);
        t.doubles()[static_cast<size_t>(i)] = dt == DType::kF16 ? halfValue(h) : f;
        break;
      }
      case DType::kBool: t.setInt(i, *e != 0); break;
      case DType::kU8: t.setInt(i, *e); break;
      case DType::kI8: t.setInt(i, static_cast<int8_t>(*e)); break;
      case DType::kI16: {
        int16_t v;
        std::memcpy(&v, e, 2);
        t.setInt(i, v);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, e, 4);
        t.setInt(i, v);
        break;
      }
      default: {
        int64_t v;
        std::memcpy(&v, e, 8);
        t.setInt(i, v);
      }
    }
  }
  return t;
}

// ---- random data with edge values ----------------------------------------------------------------

struct Gen {
  std::mt19937_64 rng{12345};
  bool edges = true;              // NaN, inf, -0.0, INT_MIN, -1, ...
  int64_t intLo = 0, intHi = -1;  // when intLo <= intHi: integers uniform in [intLo, intHi]

  // A value representable in dt.
  double floatValue(DType dt) {
    const int k = edges ? std::uniform_int_distribution<int>(0, 15)(rng) : 15;
    const double special[] = {
        NAN,   INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0, 0.5, 65504.0 /* f16's largest */, 1e-6 /* an f16 subnormal */,
        3.5e38 /* past f32 */};
    if (k < 11) return exec::roundToFloatType(special[k], dt);
    std::normal_distribution<double> n(0.0, k == 11 ? 100.0 : 2.0);
    return exec::roundToFloatType(n(rng), dt);
  }

  static int64_t lowest(DType dt) {
    switch (dt) {
      case DType::kI8: return INT8_MIN;
      case DType::kI16: return INT16_MIN;
      case DType::kI32: return INT32_MIN;
      case DType::kI64: return INT64_MIN;
      default: return 0;
    }
  }
  static int64_t highest(DType dt) {
    switch (dt) {
      case DType::kBool: return 1;
      case DType::kU8: return UINT8_MAX;
      case DType::kI8: return INT8_MAX;
      case DType::kI16: return INT16_MAX;
      case DType::kI32: return INT32_MAX;
      default: return INT64_MAX;
    }
  }

  int64_t intValue(DType dt) {
    if (intLo <= intHi) return std::uniform_int_distribution<int64_t>(intLo, intHi)(rng);
    const int k = edges ? std::uniform_int_distribution<int>(0, 9)(rng) : 9;
    switch (k) {
      case 0: return lowest(dt);
      case 1: return highest(dt);
      case 2: return -1;
      case 3: return 0;
      case 4: return 1;
      default: return std::uniform_int_distribution<int64_t>(-300, 300)(rng);  // wrapped by the tensor
    }
  }

  HostTensor tensor(DType dt, int64_t n) {
    HostTensor t(dt, {n});
    for (int64_t i = 0; i < n; ++i) {
      if (ir::isFloating(dt))
        t.doubles()[static_cast<size_t>(i)] = floatValue(dt);
      else
        t.setInt(i, intValue(dt));  // wrapped to the dtype
    }
    return t;
  }
};

// ---- the plugin -----------------------------------------------------------------------------------

class MinimalBackend : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto p = Loader({PLUGSDK_BUILT_PLUGIN_DIR}).load("minimal");
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    plugin_ = *p;
    plugsdk_client_create_args_t c{};
    c.struct_size = sizeof(c);
    ASSERT_TRUE(check(api().client_create(&c), "client_create").isOk());
    client_ = c.out_client;
  }
  static void TearDownTestSuite() {
    plugsdk_client_destroy_args_t d{};
    d.struct_size = sizeof(d);
    d.client = client_;
    EXPECT_TRUE(check(api().client_destroy(&d), "client_destroy").isOk()) << "something leaked";
    plugin_.reset();
  }

  static const plugsdk_api_t& api() { return plugin_->api(); }
  static Status check(plugsdk_error_t* e, const std::string& call) { return plugin_->check(e, call); }

  static plugsdk_buffer_t* allocate(uint64_t bytes) {
    plugsdk_buffer_allocate_args_t a{};
    a.struct_size = sizeof(a);
    a.client = client_;
    a.memory_kind = PLUGSDK_MEMORY_HOST;
    a.bytes = bytes;
    Status s = check(api().buffer_allocate(&a), "buffer_allocate");
    EXPECT_TRUE(s.isOk()) << s.toString();
    return a.out_buffer;
  }
  static void release(plugsdk_buffer_t* b) {
    plugsdk_buffer_free_args_t f{};
    f.struct_size = sizeof(f);
    f.client = client_;
    f.buffer = b;
    EXPECT_TRUE(check(api().buffer_free(&f), "buffer_free").isOk());
  }
  static Status copy(plugsdk_copy_kind_t kind, plugsdk_buffer_t* b, void* host, uint64_t bytes) {
    plugsdk_buffer_copy_args_t c{};
    c.struct_size = sizeof(c);
    c.client = client_;
    c.kind = kind;
    (kind == PLUGSDK_COPY_HOST_TO_DEVICE ? c.dst : c.src) = b;
    c.host_src = host;
    c.host_dst = host;
    c.bytes = bytes;
    return check(api().buffer_copy(&c), "buffer_copy");
  }

  static StatusOr<plugsdk_executable_t*> compile(const plugsdk_kernel_t& k, const char* options = nullptr) {
    plugsdk_compile_kernel_args_t c{};
    c.struct_size = sizeof(c);
    c.client = client_;
    c.kernel = &k;
    c.options = options;
    RETURN_IF_ERROR(check(api().compile_kernel(&c), "compile_kernel"));
    return c.out_executable;
  }
  static void destroy(plugsdk_executable_t* x) {
    plugsdk_executable_destroy_args_t d{};
    d.struct_size = sizeof(d);
    d.client = client_;
    d.executable = x;
    EXPECT_TRUE(check(api().executable_destroy(&d), "executable_destroy").isOk());
  }
  static Status launch(plugsdk_executable_t* x, const std::vector<plugsdk_buffer_t*>& bufs,
                       const std::vector<int64_t>& symbols, const std::vector<uint64_t>* offsets = nullptr) {
    plugsdk_launch_args_t l{};
    l.struct_size = sizeof(l);
    l.client = client_;
    l.executable = x;
    l.num_buffers = bufs.size();
    l.buffers = bufs.data();
    l.offsets = offsets ? offsets->data() : nullptr;
    l.num_symbols = symbols.size();
    l.symbol_values = symbols.data();
    return check(api().launch(&l), "launch");
  }

  // Runs an encoded kernel on the plugin: one buffer per argument, uploaded, launched, read back.
  static Status runOnPlugin(const plugsdk_kernel_t& k, std::vector<HostTensor>& args, const Symbols& symbols,
                            const char* options) {
    ASSIGN_OR_RETURN(plugsdk_executable_t * x, compile(k, options));
    std::vector<int64_t> values;
    for (size_t i = 0; i < k.num_symbols; ++i) values.push_back(symbols.at(k.symbols[i]));
    std::vector<plugsdk_buffer_t*> bufs;
    for (HostTensor& t : args) {
      std::vector<uint8_t> bytes = toBytes(t);
      bufs.push_back(allocate(bytes.size()));
      EXPECT_TRUE(copy(PLUGSDK_COPY_HOST_TO_DEVICE, bufs.back(), bytes.data(), bytes.size()).isOk());
    }
    Status s = launch(x, bufs, values);
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<uint8_t> bytes(toBytes(args[i]).size());
      EXPECT_TRUE(copy(PLUGSDK_COPY_DEVICE_TO_HOST, bufs[i], bytes.data(), bytes.size()).isOk());
      args[i] = fromBytes(args[i].dtype(), bytes);
      release(bufs[i]);
    }
    destroy(x);
    return s;
  }

  // The interpreter's result as memory holds it: floats rounded to the argument's dtype.
  static Status runOnInterpreter(const kernel::Kernel& k, std::vector<HostTensor>& args, const Symbols& symbols) {
    std::vector<HostTensor*> ptrs;
    for (HostTensor& t : args) ptrs.push_back(&t);
    Status s = kernel::runKernel(k, ptrs, symbols);
    for (HostTensor& t : args)
      if (t.isFloating())
        for (double& v : t.doubles()) v = exec::roundToFloatType(v, t.dtype());
    return s;
  }

  static bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(double)) == 0;  // -0.0 != 0.0
  }

  static void expectSame(const std::vector<HostTensor>& want, const std::vector<HostTensor>& got,
                         const std::string& what, double tolerance = 0) {
    ASSERT_EQ(want.size(), got.size());
    for (size_t a = 0; a < want.size(); ++a) {
      int shown = 0;
      for (int64_t i = 0; i < want[a].numel() && shown < 5; ++i) {
        const double x = want[a].getDouble(i), y = got[a].getDouble(i);
        bool ok = want[a].isFloating()
                      ? same(x, y)
                      : want[a].ints()[static_cast<size_t>(i)] == got[a].ints()[static_cast<size_t>(i)];
        if (!ok && tolerance > 0) ok = std::fabs(x - y) <= tolerance * std::max(1.0, std::fabs(x));
        if (!ok) {
          ++shown;
          ADD_FAILURE() << what << ": argument " << a << " element " << i << ": interpreter " << x << ", plugin " << y;
        }
      }
    }
  }

  // The kernel on both, on the same inputs; statuses and every buffer must agree.
  static void compare(const kernel::Kernel& k, const std::vector<HostTensor>& inputs, const Symbols& symbols,
                      const char* options = nullptr, double tolerance = 0) {
    auto enc = encodeKernel(k);
    ASSERT_TRUE(enc.isOk()) << enc.status().toString();
    std::vector<HostTensor> want = inputs, got = inputs;
    Status ws = runOnInterpreter(k, want, symbols);
    Status gs = runOnPlugin((*enc)->get(), got, symbols, options);
    ASSERT_TRUE(ws.isOk() && gs.isOk()) << k.name << ": interpreter " << ws.toString() << "; plugin " << gs.toString();
    expectSame(want, got, k.name + (options ? std::string(" [") + options + "]" : ""), tolerance);
  }

  static kernel::Kernel parse(const std::string& text) {
    auto k = kernel::parseKernel(text);
    EXPECT_TRUE(k.isOk()) << k.status().toString() << "\n" << text;
    return k.isOk() ? *k : kernel::Kernel{};
  }

  static void runProgram(const std::string& dtype, const char* options, double tolerance);

  static std::shared_ptr<Plugin> plugin_;
  static plugsdk_client_t* client_;
};

std::shared_ptr<Plugin> MinimalBackend::plugin_;
plugsdk_client_t* MinimalBackend::client_ = nullptr;

std::string dt(DType t) { return std::string(ir::dtypeName(t)); }

// ---- the plugin's identity and device ----------------------------------------------------------------

TEST_F(MinimalBackend, IdentityAndDevice) {
  EXPECT_EQ(plugin_->name(), "minimal");
  EXPECT_EQ(api().abi_major, 1u);
  EXPECT_EQ(api().abi_minor, 0u);
  EXPECT_EQ(api().compile_subgraph, nullptr);
  plugsdk_device_count_args_t c{};
  c.struct_size = sizeof(c);
  c.client = client_;
  ASSERT_TRUE(check(api().device_count(&c), "device_count").isOk());
  EXPECT_EQ(c.out_count, 1u);

  plugsdk_device_info_t info{};
  info.struct_size = sizeof(info);
  plugsdk_device_info_args_t d{};
  d.struct_size = sizeof(d);
  d.client = client_;
  d.info = &info;
  ASSERT_TRUE(check(api().device_info(&d), "device_info").isOk());
  EXPECT_STREQ(info.name, "host0");
  EXPECT_EQ(info.dtypes, 0x3ffu);
  EXPECT_EQ(info.memory_kinds, unsigned{PLUGSDK_MEMORY_HOST | PLUGSDK_MEMORY_SHARED});
  EXPECT_EQ(info.library_ops, unsigned{PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA});
  EXPECT_EQ(info.epilogue_ops, unsigned{PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION});
  EXPECT_TRUE(info.fuses_horizontal && info.fuses_reduction_epilogue && info.fuses_multi_reduction);
  EXPECT_FALSE(info.takes_subgraphs);
  EXPECT_GT(info.memory_bytes, 0u);

  // A caller built against an older, smaller struct: nothing past its struct_size is written.
  plugsdk_device_info_t small;
  std::memset(&small, 0xab, sizeof(small));
  small.struct_size = PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, dtypes);
  small.extension = nullptr;
  d.info = &small;
  ASSERT_TRUE(check(api().device_info(&d), "device_info").isOk());
  EXPECT_EQ(small.dtypes, 0x3ffu);
  EXPECT_EQ(small.vector_bits, 0xababababu);
  EXPECT_EQ(small.struct_size, PLUGSDK_STRUCT_SIZE(plugsdk_device_info_t, dtypes));

  d.device = 1;
  Status s = check(api().device_info(&d), "device_info");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("device_info: no device 1"), std::string::npos) << s.toString();
}

TEST_F(MinimalBackend, RefusesAnotherMajorVersion) {
  void* h = dlopen(PLUGSDK_BUILT_PLUGIN_DIR "/libplugsdk_minimal.so", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto init = reinterpret_cast<plugsdk_plugin_init_fn>(dlsym(h, PLUGSDK_ENTRY_SYMBOL));
  ASSERT_NE(init, nullptr);
  plugsdk_init_args_t a{};
  a.struct_size = sizeof(a);
  a.core_abi_major = 2;
  EXPECT_EQ(init(&a), nullptr);
  ASSERT_NE(a.out_refusal, nullptr);
  EXPECT_NE(std::string(a.out_refusal).find("ABI major version 1"), std::string::npos);
  a.core_abi_major = 1;
  a.core_abi_minor = 3;  // a newer minor is fine
  EXPECT_NE(init(&a), nullptr);
  // Only the entry point is exported.
  EXPECT_EQ(dlsym(h, "mb_compile"), nullptr);
  EXPECT_EQ(dlsym(h, "mb_error"), nullptr);
  dlclose(h);
}

// ---- kernels: every scalar op on every dtype it accepts ----------------------------------------------

TEST_F(MinimalBackend, EveryScalarOpOnEveryDTypeMatchesTheInterpreter) {
  Gen gen;
  int kernels = 0;
  for (const prims::ScalarOpInfo& op : prims::allScalarOps()) {
    for (DType t : kAllDTypes) {
      if (!prims::acceptsDType(op, t)) continue;
      const DType r = op.predicate ? DType::kBool : t;
      std::string text = "kernel @" + std::string(op.name) + "_" + dt(t) + "(%a: " + dt(t) + " in, %b: " + dt(t) +
                         " in, %y: " + dt(r) + " out) grid [s0] {\n  %0 = load %a[i0] : " + dt(t) +
                         "\n  %1 = load %b[i0] : " + dt(t) + "\n  %2 = " + op.name + " %0" +
                         (op.arity == 2 ? ", %1" : "") + " : " + dt(r) + "\n  store %y[i0], %2\n}\n";
      kernel::Kernel k = parse(text);
      const int64_t n = 200;
      HostTensor a = gen.tensor(t, n), b = gen.tensor(t, n);
      const bool divides =
          op.op == prims::ScalarOp::kDiv || op.op == prims::ScalarOp::kRemainder || op.op == prims::ScalarOp::kFmod;
      if (!ir::isFloating(t) && divides) {
        for (int64_t i = 0; i < n; ++i)
          if (b.ints()[static_cast<size_t>(i)] == 0) b.setInt(i, i % 2 ? -1 : 7);  // INT_MIN / -1 included
        a.setInt(0, std::numeric_limits<int64_t>::min());
        b.setInt(0, -1);
      }
      if (op.op == prims::ScalarOp::kPow && !ir::isFloating(t))  // small exponents, some negative
        for (int64_t i = 0; i < n; ++i) b.setInt(i, b.ints()[static_cast<size_t>(i)] % 9);
      compare(k, {a, b, HostTensor(r, {n})}, {{"s0", n}});
      compare(k, {a, b, HostTensor(r, {n})}, {{"s0", n}}, "numerics=float64");
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 250);
}

TEST_F(MinimalBackend, IntegerDivisionByZeroFailsTheLaunch) {
  kernel::Kernel k = parse(R"(kernel @d(%a: i32 in, %y: i32 out) grid [4] {
  %0 = load %a[i0] : i32
  %1 = const 0 : i32
  %2 = div %0, %1 : i32
  store %y[i0], %2
})");
  auto enc = encodeKernel(k);
  ASSERT_TRUE(enc.isOk());
  std::vector<HostTensor> args = {HostTensor(DType::kI32, {4}), HostTensor(DType::kI32, {4})};
  Status s = runOnPlugin((*enc)->get(), args, {}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("launch: kernel @d: integer division by zero"), std::string::npos) << s.toString();
}

// Casts between every pair of dtypes (NaN, inf, out-of-range values included).
TEST_F(MinimalBackend, CastsBetweenEveryPairOfDTypes) {
  Gen gen;
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      kernel::Kernel k = parse("kernel @cast_" + dt(from) + "_" + dt(to) + "(%a: " + dt(from) + " in, %y: " + dt(to) +
                               " out) grid [300] {\n  %0 = load %a[i0] : " + dt(from) + "\n  %1 = cast %0 : " + dt(to) +
                               "\n  store %y[i0], %1\n}\n");
      HostTensor a = gen.tensor(from, 300);
      if (ir::isFloating(from)) {  // values around the integer ranges' edges
        const double edges[] = {3e9, -3e9, 1e20, -1e20, 255.5, 256.0, -129.0, 127.9, 32768.0, 2147483647.0};
        for (int i = 0; i < 10; ++i) a.doubles()[static_cast<size_t>(i)] = exec::roundToFloatType(edges[i], from);
      }
      compare(k, {a, HostTensor(to, {300})}, {});
    }
}

// ---- kernels: every statement kind, reductions, combines, masks, indirect indices ----------------

TEST_F(MinimalBackend, EveryStatementKind) {
  Gen gen;
  gen.edges = false;
  kernel::Kernel k = parse(R"(kernel @all(%a: i64 in, %b: f64 inout, %c: f32 out, %d: f16 out) grid [4, s1] {
  %0 = load %a[i0] : i64
  %1 = index i0*s1+i1 : i64
  %2 = const -2.5 : f64
  %3 = const inf : f64
  %4 = const 7 : i64
  %5 = mul %0, %4 : i64
  %6 = load %b[3*%5+i1 % 2] : f64
  %7 = lt %6, %2 : bool
  %8 = where %7, %2, %3 : f64
  %9 = cast %1 : f64
  %10 = rand 42, i0*s1+i1 : f32
  %11 = load %b[i0*s1+i1] if %7 : f64
  %12 = add %8, %11 : f64
  store.sum %b[%0], %12
  store %b[(i0+1)//2], %9
  store %c[i0*s1+i1], %10
  %13 = rand 7, i0*s1+i1 : f16
  store %d[i0*s1+i1], %13
  %14 = ge %5, %4 : bool
  check %14, "never fails: %a holds 1 and 2"
}
)");
  for (int64_t s1 : {3, 6}) {  // one compiled kernel, two symbol values
    HostTensor a(DType::kI64, {4});
    for (int64_t i = 0; i < 4; ++i) a.setInt(i, 1 + i % 2);
    compare(k, {a, gen.tensor(DType::kF64, 64), HostTensor(DType::kF32, {4 * s1}), HostTensor(DType::kF16, {4 * s1})},
            {{"s1", s1}});
  }
}

TEST_F(MinimalBackend, EveryReduceOpOverSeveralDTypes) {
  Gen gen;
  const char* ops[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  for (DType t :
       {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI8, DType::kU8, DType::kBool}) {
    for (const char* op : ops) {
      const bool arg = op[0] == 'a';
      if (t == DType::kBool && std::string(op) != "max" && std::string(op) != "min" && !arg) continue;
      const std::string r = arg ? "i64" : dt(t);
      kernel::Kernel k = parse("kernel @reduce_" + std::string(op) + "_" + dt(t) + "(%x: " + dt(t) + " in, %y: " + r +
                               " out) grid [s0] {\n  loop [s1, 3] {\n    %0 = load %x[3*s1*i0+3*r0+r1] : " + dt(t) +
                               "\n    %1 = reduce " + op + " %0 : " + r + "\n  }\n  store %y[i0], %1\n}\n");
      for (int64_t s1 : {1, 5}) {
        // Rows of edge values (NaN first or later, ties, infinities) and rows without edges.
        gen.edges = true;
        HostTensor x = gen.tensor(t, 40 * 3 * s1);
        gen.edges = false;
        HostTensor clean = gen.tensor(t, 40 * 3 * s1);
        for (int64_t i = 0; i < 20 * 3 * s1; ++i) {
          if (x.isFloating())
            x.doubles()[static_cast<size_t>(i)] = clean.doubles()[static_cast<size_t>(i)];
          else
            x.setInt(i, clean.ints()[static_cast<size_t>(i)] % 3);  // many ties
        }
        compare(k, {x, HostTensor(arg ? DType::kI64 : t, {40})}, {{"s0", 40}, {"s1", s1}});
        compare(k, {x, HostTensor(arg ? DType::kI64 : t, {40})}, {{"s0", 40}, {"s1", s1}}, "numerics=float64");
      }
    }
  }
}

TEST_F(MinimalBackend, ReduceOverAnEmptyLoop) {
  kernel::Kernel sum = parse(R"(kernel @empty_sum(%x: f32 in, %y: f32 out) grid [2] {
  loop [s0] {
    %0 = load %x[r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
})");
  compare(sum, {HostTensor(DType::kF32, {1}), HostTensor(DType::kF32, {2})}, {{"s0", 0}});
  kernel::Kernel max = parse(R"(kernel @empty_max(%x: f32 in, %y: f32 out) grid [2] {
  loop [s0] {
    %0 = load %x[r0] : f32
    %1 = reduce max %0 : f32
  }
  store %y[i0], %1
})");
  auto enc = encodeKernel(max);
  ASSERT_TRUE(enc.isOk());
  std::vector<HostTensor> args = {HostTensor(DType::kF32, {1}), HostTensor(DType::kF32, {2})};
  Status s = runOnPlugin((*enc)->get(), args, {{"s0", 0}}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("reduce max over an empty loop"), std::string::npos) << s.toString();
}

TEST_F(MinimalBackend, EveryCombiningStore) {
  Gen gen;
  gen.edges = false;
  for (DType t : {DType::kF64, DType::kI32, DType::kI8, DType::kF32})
    for (const char* c : {"", ".sum", ".prod", ".max", ".min"}) {
      // Scatter with repeated indices: %i holds values in [0, 8).
      kernel::Kernel k =
          parse("kernel @scatter" + std::string(c[0] ? c + 1 : "") + "_" + dt(t) + "(%i: i64 in, %v: " + dt(t) +
                " in, %y: " + dt(t) + " inout) grid [64] {\n  %0 = load %i[i0] : i64\n  %1 = load %v[i0] : " + dt(t) +
                "\n  store" + c + " %y[%0], %1\n}\n");
      gen.intLo = 0;
      gen.intHi = 7;
      HostTensor i = gen.tensor(DType::kI64, 64);
      gen.intLo = -3;
      gen.intHi = 3;
      HostTensor v = gen.tensor(t, 64), y = gen.tensor(t, 8);
      if (t == DType::kF32)  // small integers: f32 sums and products stay exact, in any order
        for (auto* x : {&v, &y})
          for (double& d : x->doubles()) d = std::round(d);
      compare(k, {i, v, y}, {});
    }
}

TEST_F(MinimalBackend, MaskedLoadsDoNotAccessMemory) {
  Gen gen;
  // Padding: elements outside [0, 10) are masked off, so the load never reads them.
  kernel::Kernel k = parse(R"(kernel @pad(%x: f32 in, %y: f32 out) grid [14] {
  %0 = index i0-2 : i64
  %1 = const 0 : i64
  %2 = const 10 : i64
  %3 = ge %0, %1 : bool
  %4 = lt %0, %2 : bool
  %5 = bitwise_and %3, %4 : bool
  %6 = load %x[i0-2] if %5 : f32
  %7 = const 0.5 : f32
  %8 = where %5, %6, %7 : f32
  store %y[i0], %8
})");
  compare(k, {gen.tensor(DType::kF32, 10), HostTensor(DType::kF32, {14})}, {});
}

TEST_F(MinimalBackend, IndirectIndicesAndFloorSemantics) {
  Gen gen;
  gen.edges = false;
  // A gather through values, and // and % on negative operands (Python floor semantics).
  kernel::Kernel k = parse(R"(kernel @gather(%x: f64 in, %i: i32 in, %y: f64 out, %z: i64 out) grid [s0, 4] {
  %0 = load %i[4*i0+i1] : i32
  %1 = cast %0 : i64
  %2 = load %x[4*%1+i1] : f64
  store %y[4*i0+i1], %2
  %3 = index (%1-5)//3 : i64
  %4 = index (%1-5) % 3 : i64
  %5 = index (%1-7)//(0-4)+((%1-7) % (0-4))*10 : i64
  %6 = add %3, %4 : i64
  %7 = add %6, %5 : i64
  store %z[4*i0+i1], %7
})");
  gen.intLo = 0;
  gen.intHi = 5;
  for (int64_t s0 : {3, 7})
    compare(k,
            {gen.tensor(DType::kF64, 24), gen.tensor(DType::kI32, 4 * s0), HostTensor(DType::kF64, {4 * s0}),
             HostTensor(DType::kI64, {4 * s0})},
            {{"s0", s0}});
}

TEST_F(MinimalBackend, FailingCheckIsOutOfRangeWithItsMessage) {
  kernel::Kernel k = parse(R"(kernel @checked(%i: i64 in, %y: f32 out) grid [4] {
  %0 = load %i[i0] : i64
  %1 = const 3 : i64
  %2 = lt %0, %1 : bool
  check %2, "index out of range in gather"
  %3 = const 1.0 : f32
  store %y[i0], %3
})");
  auto enc = encodeKernel(k);
  ASSERT_TRUE(enc.isOk());
  std::vector<HostTensor> args = {HostTensor::fromInts(DType::kI64, {4}, {0, 1, 3, 2}), HostTensor(DType::kF32, {4})};
  Status s = runOnPlugin((*enc)->get(), args, {}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("launch: kernel @checked: index out of range in gather"), std::string::npos)
      << s.toString();
  EXPECT_EQ(args[1].doubles()[1], 1.0);  // points before the failing one ran
  args = {HostTensor::fromInts(DType::kI64, {4}, {0, 1, 2, 2}), HostTensor(DType::kF32, {4})};
  EXPECT_TRUE(runOnPlugin((*enc)->get(), args, {}, nullptr).isOk());
}

TEST_F(MinimalBackend, OutOfBoundsAccessIsAnErrorNotACrash) {
  kernel::Kernel k = parse(R"(kernel @oob(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[2*i0] : f32
  store %y[i0], %0
})");
  auto enc = encodeKernel(k);
  ASSERT_TRUE(enc.isOk());
  std::vector<HostTensor> args = {HostTensor(DType::kF32, {8}), HostTensor(DType::kF32, {8})};
  EXPECT_TRUE(runOnPlugin((*enc)->get(), args, {{"s0", 4}}, nullptr).isOk());
  Status s = runOnPlugin((*enc)->get(), args, {{"s0", 5}}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("load from %x at element 8, outside its 8 elements"), std::string::npos) << s.toString();
  // A store past the end, and a load before the start through a negative index.
  kernel::Kernel k2 = parse(R"(kernel @oob2(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  store %y[i0+1], %0
})");
  auto enc2 = encodeKernel(k2);
  ASSERT_TRUE(enc2.isOk());
  s = runOnPlugin((*enc2)->get(), args, {{"s0", 8}}, nullptr);
  EXPECT_NE(s.message().find("store to %y at element 8"), std::string::npos) << s.toString();

  // The launch offset shortens the buffer: 8 f32 from byte 8 on leave 6 elements.
  auto x = compile((*enc)->get());
  ASSERT_TRUE(x.isOk());
  plugsdk_buffer_t* b = allocate(32);
  std::vector<uint64_t> offsets = {8, 0};
  s = launch(*x, {b, b}, {4}, &offsets);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("load from %x at element 6, outside its 6 elements"), std::string::npos) << s.toString();
  offsets = {40, 0};
  s = launch(*x, {b, b}, {1}, &offsets);
  EXPECT_NE(s.message().find("offset 40 of argument %x passes the end"), std::string::npos) << s.toString();
  release(b);
  destroy(*x);
}

// f32 kernels with several ops: exact with numerics=float64, within f32 rounding by default.
TEST_F(MinimalBackend, NumericsOptions) {
  Gen gen;
  gen.edges = false;
  kernel::Kernel k = parse(R"(kernel @softmax(%x: f32 in, %y: f32 out) grid [s0] {
  loop [128] {
    %0 = load %x[128*i0+r0] : f32
    %1 = reduce max %0 : f32
  }
  loop [128] {
    %2 = load %x[128*i0+r0] : f32
    %3 = sub %2, %1 : f32
    %4 = exp %3 : f32
    %5 = reduce sum %4 : f32
  }
  loop [128] {
    %6 = load %x[128*i0+r0] : f32
    %7 = sub %6, %1 : f32
    %8 = exp %7 : f32
    %9 = div %8, %5 : f32
    store %y[128*i0+r0], %9
  }
})");
  std::vector<HostTensor> in = {gen.tensor(DType::kF32, 8 * 128), HostTensor(DType::kF32, {8 * 128})};
  compare(k, in, {{"s0", 8}}, "numerics=float64");
  compare(k, in, {{"s0", 8}}, nullptr, 1e-6);
  auto enc = encodeKernel(k);
  ASSERT_TRUE(enc.isOk());
  auto x = compile((*enc)->get(), "numerics=fast");
  EXPECT_EQ(x.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(x.status().message().find("unknown option 'numerics=fast'"), std::string::npos) << x.status().toString();
}

// ---- the ABI surface's bad-argument paths: each is an error naming the function, never a crash ----

TEST_F(MinimalBackend, MemoryFunctionsRejectBadArguments) {
  auto expectError = [](plugsdk_error_t* e, StatusCode code, const std::string& part) {
    Status s = check(e, "call");
    EXPECT_EQ(s.code(), code) << s.toString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
  };
  const auto invalid = StatusCode::kInvalidArgument;
  const auto range = StatusCode::kOutOfRange;

  // allocate
  expectError(api().buffer_allocate(nullptr), invalid, "buffer_allocate: args is NULL");
  plugsdk_buffer_allocate_args_t a{};
  a.struct_size = 16;
  expectError(api().buffer_allocate(&a), invalid, "buffer_allocate: args->struct_size is 16");
  a.struct_size = sizeof(a);
  expectError(api().buffer_allocate(&a), invalid, "buffer_allocate: bad client handle");
  a.client = client_;
  a.memory_kind = PLUGSDK_MEMORY_DEVICE;
  expectError(api().buffer_allocate(&a), invalid, "memory_kind 1 is not HOST or SHARED");
  a.memory_kind = PLUGSDK_MEMORY_SHARED;
  a.device = 3;
  expectError(api().buffer_allocate(&a), invalid, "buffer_allocate: no device 3");
  a.device = 0;
  a.bytes = 0;  // zero bytes is a valid buffer
  ASSERT_TRUE(check(api().buffer_allocate(&a), "buffer_allocate").isOk());
  plugsdk_buffer_t* empty = a.out_buffer;
  plugsdk_buffer_t* b = allocate(64);
  std::vector<uint8_t> sevens(64, 7);
  ASSERT_TRUE(copy(PLUGSDK_COPY_HOST_TO_DEVICE, b, sevens.data(), 64).isOk());

  // copy
  std::vector<uint8_t> host(128, 7);
  plugsdk_buffer_copy_args_t c{};
  c.struct_size = sizeof(c);
  c.client = client_;
  c.kind = PLUGSDK_COPY_HOST_TO_DEVICE;
  c.dst = b;
  c.bytes = 64;
  expectError(api().buffer_copy(&c), invalid, "buffer_copy: HOST_TO_DEVICE with host_src NULL");
  c.host_src = host.data();
  c.dst_offset = 8;
  expectError(api().buffer_copy(&c), range, "buffer_copy: 64 bytes at dst_offset 8 pass the end of the 64-byte dst");
  c.dst_offset = UINT64_MAX;  // no overflow
  c.bytes = 2;
  expectError(api().buffer_copy(&c), range, "pass the end");
  c.dst_offset = 0;
  c.dst = reinterpret_cast<plugsdk_buffer_t*>(client_);  // a handle of another kind
  expectError(api().buffer_copy(&c), invalid, "buffer_copy: bad dst buffer handle");
  c.dst = empty;
  c.bytes = 0;
  EXPECT_TRUE(check(api().buffer_copy(&c), "buffer_copy").isOk());  // zero bytes into a zero-byte buffer
  c.kind = PLUGSDK_COPY_DEVICE_TO_HOST;
  c.src = b;
  c.bytes = 65;
  expectError(api().buffer_copy(&c), invalid, "DEVICE_TO_HOST with host_dst NULL");
  c.host_dst = host.data();
  expectError(api().buffer_copy(&c), range, "65 bytes at src_offset 0 pass the end of the 64-byte src buffer");
  c.kind = PLUGSDK_COPY_DEVICE_TO_DEVICE;
  c.bytes = 32;
  c.src = nullptr;
  expectError(api().buffer_copy(&c), invalid, "bad src buffer handle");
  c.src = b;
  c.dst = b;
  c.dst_offset = 16;
  EXPECT_TRUE(check(api().buffer_copy(&c), "buffer_copy").isOk());  // overlapping is fine
  c.kind = 9;
  expectError(api().buffer_copy(&c), invalid, "unknown copy kind 9");
  c.kind = PLUGSDK_COPY_DEVICE_TO_DEVICE;
  c.stream = reinterpret_cast<plugsdk_stream_t*>(b);
  expectError(api().buffer_copy(&c), invalid, "buffer_copy: bad stream handle");

  // fill
  plugsdk_buffer_fill_args_t f{};
  f.struct_size = PLUGSDK_STRUCT_SIZE(plugsdk_buffer_fill_args_t, pattern);
  expectError(api().buffer_fill(&f), invalid, "buffer_fill: args->struct_size");
  f.struct_size = sizeof(f);
  f.client = client_;
  f.buffer = b;
  f.bytes = 64;
  f.pattern_bytes = 3;
  expectError(api().buffer_fill(&f), invalid, "pattern_bytes is 3, not 1, 2, 4 or 8");
  f.pattern_bytes = 8;
  f.bytes = 12;
  expectError(api().buffer_fill(&f), invalid, "bytes (12) is not a multiple of pattern_bytes (8)");
  f.bytes = 64;
  f.offset = 8;
  expectError(api().buffer_fill(&f), range, "buffer_fill: 64 bytes at offset 8 pass the end of the 64-byte buffer");
  f.offset = 16;
  f.bytes = 48;
  f.pattern_bytes = 2;
  f.pattern[0] = 1;
  f.pattern[1] = 2;
  ASSERT_TRUE(check(api().buffer_fill(&f), "buffer_fill").isOk());
  std::vector<uint8_t> back(64);
  ASSERT_TRUE(copy(PLUGSDK_COPY_DEVICE_TO_HOST, b, back.data(), 64).isOk());
  EXPECT_EQ(back[15], 7);
  EXPECT_EQ(back[16], 1);
  EXPECT_EQ(back[63], 2);

  // free, and the client refuses to go while anything lives
  plugsdk_client_destroy_args_t cd{};
  cd.struct_size = sizeof(cd);
  cd.client = client_;
  expectError(api().client_destroy(&cd), StatusCode::kFailedPrecondition, "client_destroy: 2 buffers");
  plugsdk_buffer_free_args_t fr{};
  fr.struct_size = sizeof(fr);
  fr.client = client_;
  expectError(api().buffer_free(&fr), invalid, "buffer_free: bad buffer handle");
  release(b);
  release(empty);
  expectError(api().error_info(nullptr), invalid, "error_info: args is NULL");
}

TEST_F(MinimalBackend, StreamsAndEventsAreRealHandles) {
  plugsdk_stream_create_args_t sc{};
  sc.struct_size = sizeof(sc);
  sc.client = client_;
  ASSERT_TRUE(check(api().stream_create(&sc), "stream_create").isOk());
  plugsdk_event_args_t e{};
  e.struct_size = sizeof(e);
  e.client = client_;
  ASSERT_TRUE(check(api().event_create(&e), "event_create").isOk());
  e.event = e.out_event;
  e.stream = sc.out_stream;
  EXPECT_TRUE(check(api().event_record(&e), "event_record").isOk());
  EXPECT_TRUE(check(api().event_wait(&e), "event_wait").isOk());
  EXPECT_TRUE(check(api().event_synchronize(&e), "event_synchronize").isOk());
  plugsdk_stream_args_t s{};
  s.struct_size = sizeof(s);
  s.client = client_;
  s.stream = sc.out_stream;
  EXPECT_TRUE(check(api().stream_synchronize(&s), "stream_synchronize").isOk());
  // Handles of the wrong kind are rejected.
  plugsdk_event_args_t bad = e;
  bad.stream = reinterpret_cast<plugsdk_stream_t*>(e.event);
  EXPECT_NE(check(api().event_record(&bad), "").message().find("event_record: bad stream handle"), std::string::npos);
  bad = e;
  bad.event = reinterpret_cast<plugsdk_event_t*>(sc.out_stream);
  EXPECT_NE(check(api().event_destroy(&bad), "").message().find("event_destroy: bad event handle"), std::string::npos);
  EXPECT_TRUE(check(api().event_destroy(&e), "event_destroy").isOk());
  EXPECT_TRUE(check(api().stream_destroy(&s), "stream_destroy").isOk());
  sc.device = 1;
  EXPECT_EQ(check(api().stream_create(&sc), "").code(), StatusCode::kInvalidArgument);
}

TEST_F(MinimalBackend, CompileRejectsBadKernelsAndLibraryOps) {
  kernel::Kernel k = parse(R"(kernel @k(%x: f32 in, %y: f32 out) grid [s0] {
  loop [4] {
    %0 = load %x[4*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
})");
  auto enc = encodeKernel(k);
  ASSERT_TRUE(enc.isOk());
  auto expectBad = [](const plugsdk_kernel_t& bad, const std::string& part) {
    auto x = compile(bad);
    ASSERT_FALSE(x.isOk());
    EXPECT_EQ(x.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(x.status().message().find(part), std::string::npos) << x.status().toString();
  };
  const plugsdk_kernel_t& good = (*enc)->get();
  plugsdk_kernel_t bad = good;
  bad.struct_size = 8;
  expectBad(bad, "compile_kernel: kernel @k: kernel->struct_size is 8, too small");
  bad = good;
  bad.stmt_size = 8;
  expectBad(bad, "stmt_size 8");
  bad = good;
  bad.num_index_insns = 1;
  expectBad(bad, "kernel @k: index expression [0, +3) is outside the 1 index instructions");
  std::vector<plugsdk_stmt_t> stmts(good.stmts, good.stmts + good.num_stmts);
  bad = good;
  bad.stmts = stmts.data();
  stmts[1].operands[0] = 0;  // the load's mask: not a value yet
  stmts[1].num_operands = 1;
  expectBad(bad, "statement 1: uses %0 before it is defined");
  stmts.assign(good.stmts, good.stmts + good.num_stmts);
  stmts[0].body_count = 9;
  expectBad(bad, "statement 0: loop body of 9 statements runs past the kernel's end");
  stmts.assign(good.stmts, good.stmts + good.num_stmts);
  stmts[3].operands[0] = 0;  // the store reads a loop-local value after the loop
  expectBad(bad, "statement 3: uses %0 before it is defined (or outside its loop)");
  stmts.assign(good.stmts, good.stmts + good.num_stmts);
  stmts[2].op = 17;
  expectBad(bad, "statement 2: unknown reduce op 17");
  stmts.assign(good.stmts, good.stmts + good.num_stmts);
  stmts[3].arg = 5;
  expectBad(bad, "statement 3: argument 5 is out of range");
  stmts.assign(good.stmts, good.stmts + good.num_stmts);
  stmts[1].kind = 42;
  expectBad(bad, "statement 1: unknown statement kind 42");
  std::vector<plugsdk_index_insn_t> insns(good.index_insns, good.index_insns + good.num_index_insns);
  bad = good;
  bad.index_insns = insns.data();
  for (auto& in : insns)
    if (in.op == PLUGSDK_INDEX_LOOP_VAR) in.operand = 3;
  expectBad(bad, "index uses r3, which is not in scope");
  insns.assign(good.index_insns, good.index_insns + good.num_index_insns);
  insns[0].op = PLUGSDK_INDEX_ADD;
  expectBad(bad, "index program underflows its stack");

  // A larger statement struct (a newer core): stepped through with stmt_size.
  struct Bigger {
    plugsdk_stmt_t s;
    uint64_t added;
  };
  std::vector<Bigger> big;
  for (size_t i = 0; i < good.num_stmts; ++i) big.push_back({good.stmts[i], 0xdeadbeef});
  bad = good;
  bad.stmts = &big[0].s;
  bad.stmt_size = sizeof(Bigger);
  auto x = compile(bad);
  ASSERT_TRUE(x.isOk()) << x.status().toString();
  plugsdk_executable_log_args_t log{};
  log.struct_size = sizeof(log);
  log.client = client_;
  log.executable = *x;
  ASSERT_TRUE(check(api().executable_log(&log), "executable_log").isOk());
  EXPECT_STREQ(log.out_log, "");
  plugsdk_buffer_t* b = allocate(64);
  EXPECT_NE(launch(*x, {b}, {4}).message().find("launch: kernel @k takes 2 buffers, got 1"), std::string::npos);
  EXPECT_NE(launch(*x, {b, b}, {}).message().find("takes 1 symbol values, got 0"), std::string::npos);
  EXPECT_NE(launch(*x, {b, nullptr}, {1}).message().find("bad buffer handle for argument %y"), std::string::npos);
  EXPECT_TRUE(launch(*x, {b, b}, {4}).isOk());
  release(b);
  destroy(*x);

  plugsdk_compile_library_args_t lib{};
  lib.struct_size = sizeof(lib);
  lib.client = client_;
  lib.op = PLUGSDK_LIBRARY_MATMUL;  // no operands
  Status ls = check(api().compile_library(&lib), "compile_library");
  EXPECT_EQ(ls.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ls.message().find("prims.matmul: takes 2 inputs and 1 outputs, got 0 and 0"), std::string::npos)
      << ls.toString();
}

// ---- kernels from scheduled programs --------------------------------------------------------------

// Softmax, pad, gather (check), cat, scatter_add, dropout (rand), a cast to f16, a symbolic size.
const char* kGraph = R"(graph @mix(%x: DT[s0, 16], %i: i64[s0, 4], %y: DT[4, 16], %t: i64[2, 16]) {
  %sm = aten._softmax(%x) {dim = 1, half_to_float = false}
  %p = aten.constant_pad_nd(%sm) {pad = [1, 1], value = 0.5}
  %g = aten.gather(%x, %i) {dim = 1}
  %c = aten.cat(%x, %x) {dim = 1}
  %s = aten.scatter_add(%y, %t, %y) {dim = 0}
  %d, %m = aten.native_dropout(%x) {p = 0.25, train = true, seed = 3}
  %h = aten._to_copy(%g) {dtype = f16}
  %r = aten.sum.dim_IntList(%x) {dim = [1]}
  %a = aten.argmax(%x) {dim = 1}
  return %p, %h, %c, %s, %d, %r, %a
})";

// Runs every launch of the program in order on both, buffer by buffer.
void MinimalBackend::runProgram(const std::string& dtype, const char* options, double tolerance) {
  std::string text = kGraph;
  for (size_t at; (at = text.find("DT")) != std::string::npos;) text.replace(at, 2, dtype);
  auto ctx = ir::makeDefaultContext();
  auto g = text::parseGraph(*ctx, text);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  auto c = compile::compileGraph(*ctx, *g, {});
  ASSERT_TRUE(c.isOk()) << c.status().toString();
  const sched::Program& p = c->program;
  Gen gen;
  gen.edges = false;
  for (int64_t s0 : {3, 5}) {
    Symbols symbols = {{"s0", s0}};
    std::vector<HostTensor> buffers;
    for (const sched::Buffer& b : p.buffers) {
      auto n = b.numel.evaluate(symbols);
      ASSERT_TRUE(n.has_value());
      gen.intLo = 0;  // valid gather / scatter indices for every index input
      gen.intHi = 3;
      buffers.push_back(b.role == sched::BufferRole::kInput ? gen.tensor(b.dtype, *n) : HostTensor(b.dtype, {*n}));
    }
    int launches = 0;
    for (const sched::Step& st : p.steps) {
      ASSERT_EQ(st.kind, sched::Step::Kind::kLaunch) << "this graph has no library calls";
      const kernel::Kernel& k = p.kernels[static_cast<size_t>(st.launch.kernel)];
      std::vector<HostTensor> args;
      for (int b : st.launch.args) args.push_back(buffers[static_cast<size_t>(b)]);
      auto enc = encodeKernel(k);
      ASSERT_TRUE(enc.isOk());
      std::vector<HostTensor> want = args, got = args;
      ASSERT_TRUE(runOnInterpreter(k, want, symbols).isOk());
      Status s = runOnPlugin((*enc)->get(), got, symbols, options);
      ASSERT_TRUE(s.isOk()) << s.toString();
      expectSame(want, got, k.name + " (s0 = " + std::to_string(s0) + ")", tolerance);
      for (size_t a = 0; a < args.size(); ++a) buffers[static_cast<size_t>(st.launch.args[a])] = want[a];
      ++launches;
    }
    EXPECT_GE(launches, 5);
  }
}

// f64 programs match exactly in both numerics modes; f32 ones exactly with numerics=float64
// (the interpreter's buffers are rounded to f32 after each launch, as memory does) and within
// f32 rounding by default.
TEST_F(MinimalBackend, ScheduledProgramsF64) { runProgram("f64", nullptr, 0); }
TEST_F(MinimalBackend, ScheduledProgramsF32) {
  runProgram("f32", "numerics=float64", 0);
  runProgram("f32", nullptr, 1e-5);
}

// ---- library calls (samples/minimal_backend/library.c) ------------------------------------------------

// A strided operand: `storage` is the whole buffer, the view is `shape` / `strides` / `offset`
// (elements) into it.
struct View {
  HostTensor storage;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

// A view whose dims lie in memory in the order `perm` (outermost first; empty: row-major),
// `offset` elements into its storage and `slack` elements before its end; storage random.
View layout(Gen& gen, DType dt, const std::vector<int64_t>& shape, std::vector<size_t> perm = {}, int64_t offset = 0,
            int64_t slack = 0) {
  if (perm.empty())
    for (size_t i = 0; i < shape.size(); ++i) perm.push_back(i);
  View v;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  v.offset = offset;
  int64_t run = 1;
  for (size_t i = perm.size(); i-- > 0;) {
    v.strides[perm[i]] = run;
    run *= shape[perm[i]];
  }
  v.storage = gen.tensor(dt, offset + run + slack);
  return v;
}

HostTensor materialize(const View& v) {
  HostTensor t(v.storage.dtype(), v.shape);
  exec::forEachIndex(v.shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = v.offset + exec::offsetOf(idx, v.strides);
    if (t.isFloating())
      t.doubles()[static_cast<size_t>(linear)] = v.storage.doubles()[static_cast<size_t>(at)];
    else
      t.setInt(linear, v.storage.getInt(at));
  });
  return t;
}

// The storage `out` must hold after the call: `values` (row-major) inside the view, the old
// elements outside it.
HostTensor expectedStorage(const View& out, const HostTensor& values) {
  HostTensor t = out.storage;
  exec::forEachIndex(out.shape, [&](const std::vector<int64_t>& idx, int64_t linear) {
    const int64_t at = out.offset + exec::offsetOf(idx, out.strides);
    if (t.isFloating())
      t.doubles()[static_cast<size_t>(at)] = values.doubles()[static_cast<size_t>(linear)];
    else
      t.setInt(at, values.getInt(linear));
  });
  return t;
}

// Sizes as size symbols ("n<value>") or constants; strides and offset as constants.
LibraryOperand operandOf(const View& v, bool symbolic, Symbols& symbols) {
  LibraryOperand o;
  o.dtype = v.storage.dtype();
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (symbolic) {
      const std::string n = "n" + std::to_string(v.shape[d]);
      symbols[n] = v.shape[d];
      o.shape.push_back(ir::SymExpr::symbol(n));
    } else {
      o.shape.emplace_back(v.shape[d]);
    }
    o.strides.emplace_back(v.strides[d]);
  }
  o.offset = ir::SymExpr(v.offset);
  return o;
}

ir::AttrMap convAttrs(std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                      int64_t groups = 1, bool transposed = false, std::vector<int64_t> outputPadding = {}) {
  if (outputPadding.empty()) outputPadding.assign(stride.size(), 0);
  return {{"stride", ir::Attribute::fromInts(stride)},
          {"padding", ir::Attribute::fromInts(padding)},
          {"dilation", ir::Attribute::fromInts(dilation)},
          {"transposed", ir::Attribute::fromBool(transposed)},
          {"output_padding", ir::Attribute::fromInts(outputPadding)},
          {"groups", ir::Attribute::fromInt(groups)}};
}

ir::AttrMap sdpaAttrs(bool causal = false, std::optional<double> scale = std::nullopt, double dropout = 0,
                      int64_t seed = 0) {
  return {{"is_causal", ir::Attribute::fromBool(causal)},
          {"scale", scale ? ir::Attribute::fromFloat(*scale) : ir::Attribute::none()},
          {"dropout_p", ir::Attribute::fromFloat(dropout)},
          {"seed", ir::Attribute::fromInt(seed)}};
}

class MinimalLibrary : public MinimalBackend {
 protected:
  static const std::shared_ptr<const ir::Context>& context() {
    static const std::shared_ptr<const ir::Context> ctx = ir::makeDefaultContext();
    return ctx;
  }

  struct Epilogue {
    const kernel::Kernel* kernel = nullptr;
    std::vector<HostTensor>* args = nullptr;  // its arguments but the accumulator, in order (in and out)
    Symbols symbols;                          // its own symbols' values
  };

  // Compiles `op` on the views and launches it on the plugin: the outputs' storages (and the
  // epilogue's arguments) are uploaded as they are and read back.
  static StatusOr<std::vector<HostTensor>> runLibrary(const std::string& op, const ir::AttrMap& attrs,
                                                      const std::vector<std::optional<View>>& ins,
                                                      const std::vector<View>& outs, bool symbolic,
                                                      const Epilogue* epilogue = nullptr) {
    const Epilogue none;
    const Epilogue& ep = epilogue ? *epilogue : none;
    Symbols symbols;
    std::vector<LibraryOperand> li, lo;
    for (const auto& v : ins) li.push_back(v ? operandOf(*v, symbolic, symbols) : LibraryOperand{});
    for (const View& v : outs) lo.push_back(operandOf(v, symbolic, symbols));
    ASSIGN_OR_RETURN(std::unique_ptr<EncodedLibraryCall> call, encodeLibraryCall(op, attrs, li, lo));
    std::unique_ptr<EncodedKernel> enc;
    if (ep.kernel) {
      ASSIGN_OR_RETURN(enc, encodeKernel(*ep.kernel));
    }
    plugsdk_compile_library_args_t a{};
    a.struct_size = sizeof(a);
    a.client = client_;
    a.op = call->op;
    a.attributes = call->attributes.c_str();
    a.num_inputs = call->inputs.size();
    a.inputs = call->inputs.data();
    a.num_outputs = call->outputs.size();
    a.outputs = call->outputs.data();
    a.index_insns = call->insns.data();
    a.num_index_insns = call->insns.size();
    a.symbols = call->symbolPtrs.data();
    a.num_symbols = call->symbolPtrs.size();
    a.epilogue = enc ? &enc->get() : nullptr;
    RETURN_IF_ERROR(check(api().compile_library(&a), "compile_library"));
    // The call's symbols, then the epilogue's own.
    std::vector<int64_t> values;
    for (const std::string& n : call->symbols) values.push_back(symbols.at(n));
    if (enc)
      for (size_t i = 0; i < enc->get().num_symbols; ++i) values.push_back(ep.symbols.at(enc->get().symbols[i]));

    std::vector<HostTensor> results;
    for (const View& v : outs) results.push_back(v.storage);
    std::vector<HostTensor> inputs;
    inputs.reserve(ins.size());
    std::vector<HostTensor*> hosts;  // per buffer: what it holds, nullptr for a NULL buffer
    for (const auto& v : ins) {
      inputs.push_back(v ? v->storage : HostTensor(DType::kF32, {0}));
      hosts.push_back(v ? &inputs.back() : nullptr);
    }
    for (size_t i = 0; i < results.size(); ++i) hosts.push_back(i == 0 && enc ? nullptr : &results[i]);
    if (enc)
      for (HostTensor& t : *ep.args) hosts.push_back(&t);
    std::vector<plugsdk_buffer_t*> bufs;
    for (HostTensor* t : hosts) {
      if (!t) {
        bufs.push_back(nullptr);
        continue;
      }
      std::vector<uint8_t> bytes = toBytes(*t);
      bufs.push_back(allocate(bytes.size()));
      if (!bytes.empty()) {
        EXPECT_TRUE(copy(PLUGSDK_COPY_HOST_TO_DEVICE, bufs.back(), bytes.data(), bytes.size()).isOk());
      }
    }
    Status s = launch(a.out_executable, bufs, values);
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (!hosts[i]) continue;
      std::vector<uint8_t> bytes(toBytes(*hosts[i]).size());
      if (!bytes.empty()) {
        EXPECT_TRUE(copy(PLUGSDK_COPY_DEVICE_TO_HOST, bufs[i], bytes.data(), bytes.size()).isOk());
      }
      *hosts[i] = fromBytes(hosts[i]->dtype(), bytes);
      release(bufs[i]);
    }
    destroy(a.out_executable);
    RETURN_IF_ERROR(s);
    return results;
  }

  // The prim's reference kernel on the materialized views, floats rounded to their dtype as
  // memory holds them (the reference executor keeps float64).
  static StatusOr<std::vector<HostTensor>> reference(const std::string& op, const ir::AttrMap& attrs,
                                                     const std::vector<std::optional<View>>& ins) {
    std::vector<HostTensor> dense;
    dense.reserve(ins.size());
    std::vector<const HostTensor*> ptrs;
    for (const auto& v : ins) {
      if (v) dense.push_back(materialize(*v));
      ptrs.push_back(v ? &dense.back() : nullptr);
    }
    ASSIGN_OR_RETURN(std::vector<HostTensor> outs, exec::runOp(context(), op, ptrs, attrs));
    for (HostTensor& t : outs)
      if (t.isFloating())
        for (double& v : t.doubles()) v = exec::roundToFloatType(v, t.dtype());
    return outs;
  }

  // The call on the plugin, with constant and with symbolic sizes, against the reference:
  // every element of every output's storage must be the reference's (inside the view, bit
  // for bit, NaN == NaN) or untouched (outside). Output 0 is a strided view when `strided`.
  static void checkCall(const std::string& what, const std::string& op, const ir::AttrMap& attrs,
                        const std::vector<std::optional<View>>& ins, bool strided = false) {
    auto want = reference(op, attrs, ins);
    ASSERT_TRUE(want.isOk()) << what << ": " << want.status().toString();
    Gen gen;
    std::vector<View> outs;
    for (size_t i = 0; i < want->size(); ++i) {
      const HostTensor& w = (*want)[i];
      std::vector<size_t> perm;
      if (strided && i == 0 && w.rank() >= 2) {  // the last two dims swapped, after 3 elements
        for (size_t d = 0; d < static_cast<size_t>(w.rank()); ++d) perm.push_back(d);
        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      }
      outs.push_back(layout(gen, w.dtype(), w.shape(), perm, strided ? 3 : 0, strided ? 2 : 0));
    }
    for (bool symbolic : {false, true}) {
      auto got = runLibrary(op, attrs, ins, outs, symbolic);
      ASSERT_TRUE(got.isOk()) << what << ": " << got.status().toString();
      std::vector<HostTensor> expected;
      for (size_t i = 0; i < outs.size(); ++i) expected.push_back(expectedStorage(outs[i], (*want)[i]));
      expectSame(expected, *got, what + (symbolic ? " (symbolic sizes)" : ""));
    }
  }

  // compile_library on a call whose descriptors or attributes were tampered with.
  static Status compileRaw(plugsdk_compile_library_args_t a) {
    a.struct_size = sizeof(a);
    a.client = client_;
    Status s = check(api().compile_library(&a), "compile_library");
    if (s.isOk()) destroy(a.out_executable);
    return s;
  }
};

TEST_F(MinimalLibrary, MatmulMatchesTheReference) {
  Gen gen;
  checkCall("f64", "prims.matmul", {}, {layout(gen, DType::kF64, {3, 4}), layout(gen, DType::kF64, {4, 5})});
  checkCall("f64 batched", "prims.matmul", {},
            {layout(gen, DType::kF64, {2, 3, 4}), layout(gen, DType::kF64, {2, 4, 5})}, true);
  // Transposed operands through strides, with offsets: a is [2, 3, 4] stored as [2, 4, 3]
  // after 5 elements; b is [2, 4, 5] stored as [5, 2, 4].
  checkCall("transposed views", "prims.matmul", {},
            {layout(gen, DType::kF64, {2, 3, 4}, {0, 2, 1}, 5, 1), layout(gen, DType::kF64, {2, 4, 5}, {2, 0, 1}, 1)},
            true);
  checkCall("rank 4", "prims.matmul", {},
            {layout(gen, DType::kF32, {2, 1, 3, 4}, {1, 0, 3, 2}), layout(gen, DType::kF32, {2, 1, 4, 3})});
  checkCall("K = 0", "prims.matmul", {}, {layout(gen, DType::kF64, {3, 0}), layout(gen, DType::kF64, {0, 2})});
  checkCall("M = 0", "prims.matmul", {}, {layout(gen, DType::kF64, {0, 3}), layout(gen, DType::kF64, {3, 2})});
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI16, DType::kU8})
    checkCall(dt(t) + " with edge values", "prims.matmul", {},
              {layout(gen, t, {2, 4, 16}), layout(gen, t, {2, 16, 3}, {0, 2, 1})});
}

TEST_F(MinimalLibrary, ConvolutionMatchesTheReference) {
  Gen gen;
  gen.edges = false;
  const DType F = DType::kF64;
  checkCall("2d", "prims.convolution", convAttrs({1, 1}, {0, 0}, {1, 1}),
            {layout(gen, F, {2, 3, 6, 7}), layout(gen, F, {4, 3, 3, 2})});
  checkCall("2d stride padding", "prims.convolution", convAttrs({2, 3}, {1, 2}, {1, 1}),
            {layout(gen, F, {1, 2, 9, 8}), layout(gen, F, {4, 2, 3, 3})}, true);
  checkCall("2d dilation groups", "prims.convolution", convAttrs({1, 1}, {2, 2}, {2, 2}, 2),
            {layout(gen, F, {1, 4, 9, 9}), layout(gen, F, {6, 2, 3, 3})});
  checkCall("1d depthwise", "prims.convolution", convAttrs({2}, {1}, {1}, 3),
            {layout(gen, F, {2, 3, 10}), layout(gen, F, {6, 1, 4})});
  checkCall("1d single values", "prims.convolution", convAttrs({2}, {3}, {2}),
            {layout(gen, F, {2, 3, 10}), layout(gen, F, {2, 3, 3})});
  checkCall("3d", "prims.convolution", convAttrs({1, 2, 1}, {1, 0, 0}, {1, 1, 2}),
            {layout(gen, F, {1, 2, 4, 5, 3}), layout(gen, F, {3, 2, 2, 3, 1})});
  checkCall("3d one value for every dim", "prims.convolution", convAttrs({2}, {1}, {1}),
            {layout(gen, F, {1, 2, 5, 4, 4}), layout(gen, F, {2, 2, 3, 2, 2})});
  checkCall("transposed 2d", "prims.convolution", convAttrs({2, 2}, {1, 0}, {1, 1}, 1, true, {1, 0}),
            {layout(gen, F, {2, 4, 3, 4}), layout(gen, F, {4, 3, 3, 3})}, true);
  checkCall("transposed 1d groups dilation", "prims.convolution", convAttrs({3}, {1}, {2}, 2, true, {2}),
            {layout(gen, F, {1, 4, 5}), layout(gen, F, {4, 1, 3})});
  checkCall("transposed 3d", "prims.convolution", convAttrs({2, 1, 2}, {0, 1, 1}, {1, 2, 1}, 1, true, {1, 0, 0}),
            {layout(gen, F, {1, 2, 3, 4, 3}), layout(gen, F, {2, 3, 2, 2, 3})});
  // Channels-last input and a permuted weight, through strides.
  checkCall("channels-last views", "prims.convolution", convAttrs({2, 1}, {1, 1}, {1, 2}, 2),
            {layout(gen, F, {2, 4, 7, 6}, {0, 2, 3, 1}, 7), layout(gen, F, {6, 2, 3, 2}, {2, 3, 1, 0}, 1)}, true);
  gen.edges = true;  // NaN / inf weights poison the outputs whose window touches padding, as PyTorch
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64})
    checkCall(dt(t) + " with edge values", "prims.convolution", convAttrs({1, 2}, {1, 1}, {1, 1}),
              {layout(gen, t, {1, 3, 5, 6}), layout(gen, t, {4, 3, 3, 3})});
  checkCall("f32 transposed with edge values", "prims.convolution", convAttrs({2, 2}, {1, 1}, {1, 1}, 1, true, {1, 1}),
            {layout(gen, DType::kF32, {1, 2, 4, 3}), layout(gen, DType::kF32, {2, 3, 3, 3})});
}

TEST_F(MinimalLibrary, SdpaMatchesTheReference) {
  Gen gen;
  gen.edges = false;
  const DType F = DType::kF64;
  checkCall("basic", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 3, 5, 8}), layout(gen, F, {2, 3, 6, 8}), layout(gen, F, {2, 3, 6, 4}), std::nullopt},
            true);
  checkCall("rank 2, scale", "prims.sdpa", sdpaAttrs(false, 0.3),
            {layout(gen, F, {4, 3}), layout(gen, F, {6, 3}), layout(gen, F, {6, 2}), std::nullopt});
  checkCall("causal", "prims.sdpa", sdpaAttrs(true),
            {layout(gen, F, {2, 5, 4}), layout(gen, F, {2, 5, 4}), layout(gen, F, {2, 5, 4}), std::nullopt});
  checkCall("causal L > S (top-left: rows past S see every key)", "prims.sdpa", sdpaAttrs(true),
            {layout(gen, F, {1, 6, 4}), layout(gen, F, {1, 3, 4}), layout(gen, F, {1, 3, 2}), std::nullopt});
  // Heads in [B, L, H, E] memory viewed as [B, H, L, E], as attention after a transpose.
  checkCall("head-transposed views", "prims.sdpa", sdpaAttrs(true, 0.5),
            {layout(gen, F, {2, 2, 4, 3}, {0, 2, 1, 3}, 2), layout(gen, F, {2, 2, 4, 3}, {0, 2, 1, 3}),
             layout(gen, F, {2, 2, 4, 5}, {0, 2, 1, 3}, 1), std::nullopt});
  Gen maskGen;
  maskGen.intLo = 0;
  maskGen.intHi = 1;
  checkCall("bool mask", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}),
             layout(maskGen, DType::kBool, {2, 4, 5})});
  // A broadcast mask: [4, 5] stored once, batch stride 0 (prims.broadcast_in_dim as a view).
  View broadcast = layout(maskGen, DType::kBool, {2, 4, 5});
  broadcast.strides[0] = 0;
  checkCall("bool mask broadcast through a 0 stride", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}), broadcast});
  View rows = layout(maskGen, DType::kBool, {1, 3, 3});
  for (int64_t i = 0; i < 9; ++i) rows.storage.setInt(i, i / 3 != 1);  // row 1 fully masked: 0, lse 0
  checkCall("fully masked row", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {1, 3, 2}), layout(gen, F, {1, 3, 2}), layout(gen, F, {1, 3, 2}), rows});
  View floatMask = layout(gen, F, {2, 4, 5});
  floatMask.storage.doubles()[3] = -INFINITY;
  checkCall("float mask", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 3}), floatMask}, true);
  checkCall("dropout", "prims.sdpa", sdpaAttrs(false, std::nullopt, 0.4, 11),
            {layout(gen, F, {2, 4, 3}), layout(gen, F, {2, 5, 3}), layout(gen, F, {2, 5, 2}), std::nullopt});
  checkCall("dropout causal", "prims.sdpa", sdpaAttrs(true, 0.7, 0.25, -5),
            {layout(gen, F, {2, 2, 4, 3}), layout(gen, F, {2, 2, 4, 3}), layout(gen, F, {2, 2, 4, 2}), std::nullopt});
  checkCall("S = 0 (every row fully masked)", "prims.sdpa", sdpaAttrs(),
            {layout(gen, F, {2, 3, 4}), layout(gen, F, {2, 0, 4}), layout(gen, F, {2, 0, 2}), std::nullopt});
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16})
    checkCall(
        dt(t), "prims.sdpa", sdpaAttrs(),
        {layout(gen, t, {2, 4, 8}), layout(gen, t, {2, 6, 8}), layout(gen, t, {2, 6, 8}), layout(gen, t, {2, 4, 6})});
  gen.edges = true;
  checkCall("f32 with edge values", "prims.sdpa", sdpaAttrs(),
            {layout(gen, DType::kF32, {2, 4, 8}), layout(gen, DType::kF32, {2, 6, 8}),
             layout(gen, DType::kF32, {2, 6, 8}), std::nullopt});
}

// With an epilogue, output 0 is not stored: the epilogue reads it through its accumulator
// and writes the real outputs; its other arguments follow the call's buffers in order, and
// its symbols follow the call's.
TEST_F(MinimalLibrary, EpiloguesReadTheResultThroughTheAccumulator) {
  Gen gen;
  gen.edges = false;
  // relu(matmul + bias); the grid's rows are the epilogue's own symbol.
  kernel::Kernel relu = parse(R"(kernel @bias_relu(%bias: f64 in, %acc: f64 acc, %y: f64 out) grid [m, 5] {
  %0 = load %acc[5*i0+i1] : f64
  %1 = load %bias[i1] : f64
  %2 = add %0, %1 : f64
  %3 = const 0.0 : f64
  %4 = maximum %2, %3 : f64
  store %y[5*i0+i1], %4
})");
  const View a = layout(gen, DType::kF64, {6, 4}, {1, 0}, 2), b = layout(gen, DType::kF64, {4, 5});
  auto want = reference("prims.matmul", {}, {a, b});
  ASSERT_TRUE(want.isOk());
  const HostTensor bias = gen.tensor(DType::kF64, 5);
  for (bool symbolic : {false, true}) {
    std::vector<HostTensor> args = {bias, HostTensor(DType::kF64, {30})};
    View out = layout(gen, DType::kF64, {6, 5});
    const Epilogue ep{&relu, &args, {{"m", 6}}};
    auto got = runLibrary("prims.matmul", {}, {a, b}, {out}, symbolic, &ep);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    expectSame({out.storage}, {(*got)[0]}, "output 0 is not written");
    HostTensor y(DType::kF64, {30});
    for (int64_t i = 0; i < 30; ++i) y.doubles()[i] = std::max(want->front().doubles()[i] + bias.doubles()[i % 5], 0.0);
    expectSame({bias, y}, args, "bias_relu epilogue");
  }

  // An f32 convolution whose epilogue writes two outputs, one of another dtype.
  kernel::Kernel two = parse(R"(kernel @two(%acc: f32 acc, %y: f32 out, %s: f32 in, %z: f64 out) grid [n] {
  %0 = load %acc[i0] : f32
  %1 = load %s[0] : f32
  %2 = mul %0, %1 : f32
  store %y[i0], %2
  %3 = cast %0 : f64
  store %z[i0], %3
})");
  const View x = layout(gen, DType::kF32, {1, 2, 5, 5}), w = layout(gen, DType::kF32, {3, 2, 3, 3});
  const ir::AttrMap attrs = convAttrs({2, 2}, {1, 1}, {1, 1});
  want = reference("prims.convolution", attrs, {x, w});
  ASSERT_TRUE(want.isOk());
  const int64_t n = want->front().numel();  // 1 * 3 * 3 * 3
  HostTensor scale(DType::kF32, {1});
  scale.doubles()[0] = 3.0;
  std::vector<HostTensor> args = {HostTensor(DType::kF32, {n}), scale, HostTensor(DType::kF64, {n})};
  const Epilogue ep{&two, &args, {{"n", n}}};
  auto got =
      runLibrary("prims.convolution", attrs, {x, w}, {layout(gen, DType::kF32, want->front().shape())}, true, &ep);
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  HostTensor y(DType::kF32, {n}), z(DType::kF64, {n});
  for (int64_t i = 0; i < n; ++i) {
    z.doubles()[i] = want->front().doubles()[i];  // rounded to f32, the accumulator's dtype
    y.doubles()[i] = exec::roundToFloatType(z.doubles()[i] * 3.0, DType::kF32);
  }
  expectSame({y, scale, z}, args, "two-output epilogue");
}

TEST_F(MinimalLibrary, BadAttributesAreErrorsNamingTheAttribute) {
  Gen gen;
  Symbols symbols;
  std::vector<LibraryOperand> ins = {operandOf(layout(gen, DType::kF32, {1, 2, 5, 5}), false, symbols),
                                     operandOf(layout(gen, DType::kF32, {3, 2, 3, 3}), false, symbols)};
  std::vector<LibraryOperand> outs = {operandOf(layout(gen, DType::kF32, {1, 3, 3, 3}), false, symbols)};
  auto call = encodeLibraryCall("prims.convolution", convAttrs({2, 2}, {1, 1}, {1, 1}), ins, outs);
  ASSERT_TRUE(call.isOk());
  // The text exactly as the core prints it.
  EXPECT_EQ((*call)->attributes,
            "dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], "
            "transposed = false");
  plugsdk_compile_library_args_t a{};
  a.op = (*call)->op;
  a.num_inputs = 2;
  a.inputs = (*call)->inputs.data();
  a.num_outputs = 1;
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  a.attributes = (*call)->attributes.c_str();
  EXPECT_TRUE(compileRaw(a).isOk());
  const std::string good = "dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], ";
  const std::pair<std::string, std::string> cases[] = {
      {good + "stride = [2, 2]", "missing attribute 'transposed'"},
      {"", "missing attribute 'stride'"},
      {good + "stride = [2, 2], transposed = false, alpha = 1", "unknown attribute 'alpha'"},
      {good + "stride = [a, 2], transposed = false", "attribute 'stride' = '[a, 2]' is not a list of up to 3 integers"},
      {good + "stride = [1, 1, 1, 1], transposed = false", "attribute 'stride' = '[1, 1, 1, 1]' is not"},
      {good + "stride = [1, 1, 1], transposed = false",
       "attribute 'stride' = '[1, 1, 1]' is not a list of 1 or 2 integers (the spatial dims)"},
      {good + "stride = [0, 1], transposed = false", "attribute 'stride' = '[0, 1]' is not a list of positive"},
      {good + "stride = 2, transposed = false", "attribute 'stride' = '2' is not"},
      {good + "stride = [2, 2], transposed = maybe", "attribute 'transposed' = 'maybe' is not true or false"},
      {"dilation = [1, 1], groups = 0, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false",
       "attribute 'groups' = '0' is not a positive integer"},
      {"dilation = [1, 1], groups = 99999999999999999999, output_padding = [0, 0], padding = [1, 1], stride = [2, "
       "2], transposed = false",
       "attribute 'groups'"},
      {"dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [s0, 1], stride = [2, 2], transposed = false",
       "attribute 'padding' = '[s0, 1]' is not"},
      {good + "stride = [2, 2], transposed = false, stride = [1, 1]", "attribute 'stride' is given twice"},
      {good + "stride [2, 2], transposed = false", "attribute 'stride' has no '= value'"},
      {good + "stride = [2, 2, transposed = false", "the value of attribute 'stride' is unbalanced"},
      {good + "stride = [2, 2]], transposed = false", "the value of attribute 'stride' is unbalanced"},
      {good + "stride = [2, 2], transposed = false,", "attributes end with a ','"},
      {good + "stride = , transposed = false", "attribute 'stride' has no value"},
      {"= 3", "cannot parse the attributes at '= 3'"},
  };
  for (const auto& [text, message] : cases) {
    a.attributes = text.c_str();
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("compile_library: prims.convolution: " + message), std::string::npos)
        << text << ": " << s.toString();
  }
  // matmul takes none; sdpa's are optional with the schema's defaults, and checked.
  a.op = PLUGSDK_LIBRARY_MATMUL;
  std::vector<LibraryOperand> mm = {operandOf(layout(gen, DType::kF32, {2, 3}), false, symbols),
                                    operandOf(layout(gen, DType::kF32, {3, 4}), false, symbols),
                                    operandOf(layout(gen, DType::kF32, {2, 4}), false, symbols)};
  call = encodeLibraryCall("prims.matmul", {}, {mm[0], mm[1]}, {mm[2]});
  ASSERT_TRUE(call.isOk());
  EXPECT_EQ((*call)->attributes, "");
  a.inputs = (*call)->inputs.data();
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  a.attributes = nullptr;
  EXPECT_TRUE(compileRaw(a).isOk());
  a.attributes = "alpha = 1.0";
  EXPECT_NE(compileRaw(a).message().find("prims.matmul: unknown attribute 'alpha' (it takes: none)"),
            std::string::npos);

  const View q = layout(gen, DType::kF32, {2, 3, 4});
  std::vector<LibraryOperand> sd = {
      operandOf(q, false, symbols), operandOf(q, false, symbols),
      operandOf(q, false, symbols), LibraryOperand{},
      operandOf(q, false, symbols), operandOf(layout(gen, DType::kF32, {2, 3}), false, symbols)};
  call = encodeLibraryCall("prims.sdpa", sdpaAttrs(true, 0.25, 0.5, 7), {sd[0], sd[1], sd[2], sd[3]}, {sd[4], sd[5]});
  ASSERT_TRUE(call.isOk());
  EXPECT_EQ((*call)->attributes, "dropout_p = 0.5, is_causal = true, scale = 0.25, seed = 7");
  a.op = PLUGSDK_LIBRARY_SDPA;
  a.num_inputs = 4;
  a.inputs = (*call)->inputs.data();
  a.num_outputs = 2;
  a.outputs = (*call)->outputs.data();
  a.index_insns = (*call)->insns.data();
  a.num_index_insns = (*call)->insns.size();
  for (const char* ok : {"", "scale = none", "dropout_p = 1e-05, seed = -3", "scale = inf", "is_causal = false"}) {
    a.attributes = ok;
    EXPECT_TRUE(compileRaw(a).isOk()) << ok;
  }
  const std::pair<const char*, const char*> sdpaCases[] = {
      {"dropout_p = 1.5", "attribute 'dropout_p' = '1.5' is not a probability in [0, 1]"},
      {"dropout_p = nan", "attribute 'dropout_p' = 'nan' is not a probability"},
      {"scale = big", "attribute 'scale' = 'big' is not a float or none"},
      {"seed = 1.5", "attribute 'seed' = '1.5' is not an integer"},
      {"is_causal = 1", "attribute 'is_causal' = '1' is not true or false"},
      {"causal = true", "unknown attribute 'causal' (it takes: dropout_p, is_causal, scale, seed)"},
  };
  for (const auto& [text, message] : sdpaCases) {
    a.attributes = text;
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find(std::string("prims.sdpa: ") + message), std::string::npos) << s.toString();
  }
}

TEST_F(MinimalLibrary, BadDescriptorsAreErrorsNotCrashes) {
  Gen gen;
  Symbols symbols;
  const View av = layout(gen, DType::kF64, {2, 3}), bv = layout(gen, DType::kF64, {3, 4});
  const View ov = layout(gen, DType::kF64, {2, 4});
  std::vector<LibraryOperand> ins = {operandOf(av, true, symbols), operandOf(bv, true, symbols)};
  std::vector<LibraryOperand> outs = {operandOf(ov, true, symbols)};
  auto call = encodeLibraryCall("prims.matmul", {}, ins, outs);
  ASSERT_TRUE(call.isOk());
  const EncodedLibraryCall& c = **call;
  plugsdk_compile_library_args_t good{};
  good.op = c.op;
  good.num_inputs = 2;
  good.inputs = c.inputs.data();
  good.num_outputs = 1;
  good.outputs = c.outputs.data();
  good.index_insns = c.insns.data();
  good.num_index_insns = c.insns.size();
  good.symbols = c.symbolPtrs.data();
  good.num_symbols = c.symbolPtrs.size();
  EXPECT_TRUE(compileRaw(good).isOk());

  auto expectBad = [](const plugsdk_compile_library_args_t& a, StatusCode code, const std::string& part) {
    Status s = compileRaw(a);
    EXPECT_EQ(s.code(), code) << s.toString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
  };
  plugsdk_compile_library_args_t a = good;
  a.op = 8;
  expectBad(a, StatusCode::kInvalidArgument, "compile_library: op 8 is not one library op bit");
  a = good;
  a.num_inputs = 1;
  expectBad(a, StatusCode::kInvalidArgument, "prims.matmul: takes 2 inputs and 1 outputs, got 1 and 1");
  a = good;
  a.outputs = nullptr;
  expectBad(a, StatusCode::kInvalidArgument, "inputs, outputs or index_insns is NULL");
  std::vector<plugsdk_tensor_desc_t> descs(c.inputs);
  a = good;
  a.inputs = descs.data();
  descs[1].dtype = 42;
  expectBad(a, StatusCode::kInvalidArgument, "prims.matmul: b has unknown dtype 42");
  descs = c.inputs;
  descs[1].dtype = UINT32_MAX;
  expectBad(a, StatusCode::kInvalidArgument, "b is absent, and it is not optional");
  descs = c.inputs;
  descs[0].rank = 1;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 1 (needs at least 2)");
  descs = c.inputs;
  descs[0].rank = 99;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 99 (at most 16)");
  descs = c.inputs;
  descs[1].dtype = static_cast<uint32_t>(DType::kI64);
  expectBad(a, StatusCode::kInvalidArgument, "b and a are not both floating or both integral");
  descs = c.inputs;
  std::vector<plugsdk_index_expr_t> exprs(descs[0].sizes, descs[0].sizes + 4);  // sizes, then strides
  descs[0].sizes = exprs.data();
  descs[0].strides = exprs.data() + 2;
  exprs[1] = {static_cast<uint32_t>(c.insns.size()), 1};
  expectBad(a, StatusCode::kInvalidArgument, "a size of a: index expression");
  exprs[1] = {0, 0};
  expectBad(a, StatusCode::kInvalidArgument, "outside the");
  descs[0].sizes = nullptr;
  expectBad(a, StatusCode::kInvalidArgument, "a has rank 2 and NULL sizes or strides");
  std::vector<plugsdk_index_insn_t> insns(c.insns);
  a = good;
  a.index_insns = insns.data();
  for (auto& in : insns)
    if (in.op == PLUGSDK_INDEX_SYMBOL) in.operand = 17;
  expectBad(a, StatusCode::kInvalidArgument, "uses symbol 17 of 3");
  insns = c.insns;
  insns[0].op = PLUGSDK_INDEX_GRID_VAR;
  expectBad(a, StatusCode::kInvalidArgument, "index op 1 is not allowed in a descriptor");
  insns = c.insns;
  insns[0].op = PLUGSDK_INDEX_MUL;
  expectBad(a, StatusCode::kInvalidArgument, "index program underflows its stack");
  insns[0].op = 99;
  expectBad(a, StatusCode::kInvalidArgument, "index op 99");

  // Epilogues: exactly one accumulator of the result's dtype; none on sdpa.
  kernel::Kernel noAcc = parse(R"(kernel @e(%x: f64 in, %y: f64 out) grid [8] {
  %0 = load %x[i0] : f64
  store %y[i0], %0
})");
  auto enc = encodeKernel(noAcc);
  ASSERT_TRUE(enc.isOk());
  a = good;
  a.epilogue = &(*enc)->get();
  expectBad(a, StatusCode::kInvalidArgument, "the epilogue kernel @e has 0 ACCUMULATOR arguments, needs 1");
  kernel::Kernel f32Acc = parse(R"(kernel @e(%acc: f32 acc, %y: f32 out) grid [8] {
  %0 = load %acc[i0] : f32
  store %y[i0], %0
})");
  auto enc2 = encodeKernel(f32Acc);
  ASSERT_TRUE(enc2.isOk());
  a.epilogue = &(*enc2)->get();
  expectBad(a, StatusCode::kInvalidArgument,
            "the epilogue's accumulator %acc has dtype 8, the result (output 0) dtype 9");
  plugsdk_kernel_t broken = (*enc2)->get();
  broken.num_index_insns = 0;
  a.epilogue = &broken;
  expectBad(a, StatusCode::kInvalidArgument, "compile_kernel: kernel @e");

  // Launch-time checks: symbol values give the sizes; every reachable element is checked.
  auto x = [&]() {
    plugsdk_compile_library_args_t ok = good;
    ok.struct_size = sizeof(ok);
    ok.client = client_;
    EXPECT_TRUE(check(api().compile_library(&ok), "compile_library").isOk());
    return ok.out_executable;
  }();
  std::vector<int64_t> values;  // n2, n3, n4 in the call's order
  for (const std::string& n : c.symbols) values.push_back(std::stoll(n.substr(1)));
  plugsdk_buffer_t* big = allocate(8 * 64);
  plugsdk_buffer_t* small = allocate(8 * 5);
  EXPECT_TRUE(launch(x, {big, big, big}, values).isOk());
  auto expectLaunch = [&](const std::vector<plugsdk_buffer_t*>& bufs, const std::vector<int64_t>& v, StatusCode code,
                          const std::string& part, const std::vector<uint64_t>* offsets = nullptr) {
    Status s = launch(x, bufs, v, offsets);
    EXPECT_EQ(s.code(), code) << s.toString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.toString();
  };
  expectLaunch({big, big}, values, StatusCode::kInvalidArgument, "library call prims.matmul takes 3 buffers, got 2");
  expectLaunch({big, big, big}, {1}, StatusCode::kInvalidArgument, "takes 3 symbol values, got 1");
  expectLaunch({big, small, big}, values, StatusCode::kOutOfRange,
               "prims.matmul: b reaches elements [0, 11], outside its buffer's 5 elements");
  const std::vector<uint64_t> offsets = {0, 0, 8 * 60};
  expectLaunch({big, big, big}, values, StatusCode::kOutOfRange, "out reaches elements [0, 7], outside its buffer's 4",
               &offsets);
  const std::vector<uint64_t> past = {8 * 65, 0, 0};
  expectLaunch({big, big, big}, values, StatusCode::kOutOfRange, "offset 520 of buffer 0 passes the end", &past);
  expectLaunch({nullptr, big, big}, values, StatusCode::kInvalidArgument, "the buffer of a is NULL");
  expectLaunch({big, reinterpret_cast<plugsdk_buffer_t*>(x), big}, values, StatusCode::kInvalidArgument,
               "bad buffer handle for buffer 1");
  std::vector<int64_t> negative = values;
  negative[0] = -1;
  expectLaunch({big, big, big}, negative, StatusCode::kInvalidArgument, "has size -1");
  std::vector<int64_t> huge = values;
  huge[0] = int64_t{1} << 62;
  expectLaunch({big, big, big}, huge, StatusCode::kOutOfRange, "");
  release(big);
  release(small);
  destroy(x);

  // Shapes that do not fit the op are launch errors (sizes are only known then).
  std::vector<LibraryOperand> mismatched = {operandOf(layout(gen, DType::kF64, {2, 3}), false, symbols),
                                            operandOf(layout(gen, DType::kF64, {4, 4}), false, symbols),
                                            operandOf(layout(gen, DType::kF64, {2, 4}), false, symbols)};
  auto bad = encodeLibraryCall("prims.matmul", {}, {mismatched[0], mismatched[1]}, {mismatched[2]});
  ASSERT_TRUE(bad.isOk());
  plugsdk_compile_library_args_t m = good;
  m.struct_size = sizeof(m);
  m.client = client_;
  m.inputs = (*bad)->inputs.data();
  m.outputs = (*bad)->outputs.data();
  m.index_insns = (*bad)->insns.data();
  m.num_index_insns = (*bad)->insns.size();
  m.num_symbols = 0;
  ASSERT_TRUE(check(api().compile_library(&m), "compile_library").isOk());
  big = allocate(8 * 64);
  Status s = launch(m.out_executable, {big, big, big}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2, 3] x [4, 4] -> [2, 4]: the shapes do not match"), std::string::npos) << s.toString();
  release(big);
  destroy(m.out_executable);

  auto conv = encodeLibraryCall("prims.convolution", convAttrs({1, 1}, {0, 0}, {1, 1}),
                                {operandOf(layout(gen, DType::kF64, {1, 2, 5, 5}), false, symbols),
                                 operandOf(layout(gen, DType::kF64, {3, 2, 3, 3}), false, symbols)},
                                {operandOf(layout(gen, DType::kF64, {1, 3, 4, 3}), false, symbols)});
  ASSERT_TRUE(conv.isOk());
  plugsdk_compile_library_args_t cv{};
  cv.struct_size = sizeof(cv);
  cv.client = client_;
  cv.op = PLUGSDK_LIBRARY_CONVOLUTION;
  cv.attributes = (*conv)->attributes.c_str();
  cv.num_inputs = 2;
  cv.inputs = (*conv)->inputs.data();
  cv.num_outputs = 1;
  cv.outputs = (*conv)->outputs.data();
  cv.index_insns = (*conv)->insns.data();
  cv.num_index_insns = (*conv)->insns.size();
  ASSERT_TRUE(check(api().compile_library(&cv), "compile_library").isOk());
  big = allocate(8 * 64);
  s = launch(cv.out_executable, {big, big, big}, {});
  EXPECT_NE(s.message().find("spatial dim 0: out has size 4, the attributes give 3"), std::string::npos)
      << s.toString();
  release(big);
  destroy(cv.out_executable);
  cv.op = PLUGSDK_LIBRARY_SDPA;
  Status ss = check(api().compile_library(&cv), "compile_library");
  EXPECT_NE(ss.message().find("prims.sdpa: takes 4 inputs and 2 outputs, got 2 and 1"), std::string::npos);
}

TEST_F(MinimalLibrary, ClientOptionsChooseTheLibraryOps) {
  auto infoWith = [](const char* options, plugsdk_device_info_t& info) -> Status {
    plugsdk_client_create_args_t c{};
    c.struct_size = sizeof(c);
    c.options = options;
    RETURN_IF_ERROR(check(api().client_create(&c), "client_create"));
    info = plugsdk_device_info_t{};
    info.struct_size = sizeof(info);
    plugsdk_device_info_args_t d{};
    d.struct_size = sizeof(d);
    d.client = c.out_client;
    d.info = &info;
    Status s = check(api().device_info(&d), "device_info");
    if (s.isOk()) {  // library ops the client leaves out are UNIMPLEMENTED at compile time
      plugsdk_compile_library_args_t lib{};
      lib.struct_size = sizeof(lib);
      lib.client = c.out_client;
      lib.op = PLUGSDK_LIBRARY_CONVOLUTION;
      Status ls = check(api().compile_library(&lib), "compile_library");
      EXPECT_EQ(ls.code(), info.library_ops & PLUGSDK_LIBRARY_CONVOLUTION ? StatusCode::kInvalidArgument
                                                                          : StatusCode::kUnimplemented)
          << ls.toString();
    }
    plugsdk_client_destroy_args_t x{};
    x.struct_size = sizeof(x);
    x.client = c.out_client;
    EXPECT_TRUE(check(api().client_destroy(&x), "client_destroy").isOk());
    return s;
  };
  const uint32_t all = PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION | PLUGSDK_LIBRARY_SDPA;
  const struct {
    const char* options;
    uint32_t library, epilogue;
  } good[] = {
      {nullptr, all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"", all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"library=none", 0, 0},
      {" ; library = all ;", all, PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_CONVOLUTION},
      {"library=matmul, sdpa", PLUGSDK_LIBRARY_MATMUL | PLUGSDK_LIBRARY_SDPA, PLUGSDK_LIBRARY_MATMUL},
      {"library=sdpa", PLUGSDK_LIBRARY_SDPA, 0},
      {"library=none;library=convolution", PLUGSDK_LIBRARY_CONVOLUTION, PLUGSDK_LIBRARY_CONVOLUTION},
  };
  for (const auto& g : good) {
    plugsdk_device_info_t info;
    Status s = infoWith(g.options, info);
    ASSERT_TRUE(s.isOk()) << (g.options ? g.options : "NULL") << ": " << s.toString();
    EXPECT_EQ(info.library_ops, g.library) << g.options;
    EXPECT_EQ(info.epilogue_ops, g.epilogue) << g.options;
  }
  const std::pair<const char*, const char*> bad[] = {
      {"librar=none", "client_create: unknown option 'librar' (known: library)"},
      {"library=none;numerics=float64", "unknown option 'numerics'"},
      {"library=gemm", "client_create: option library: unknown value 'gemm'"},
      {"library=matmul,,sdpa", "unknown value ''"},
      {"library", "client_create: option 'library' is not key=value"},
      {"=none", "unknown option ''"},
  };
  for (const auto& [options, message] : bad) {
    plugsdk_device_info_t info;
    Status s = infoWith(options, info);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << options;
    EXPECT_NE(s.message().find(message), std::string::npos) << options << ": " << s.toString();
  }
}

// A graph with every library op, compiled for the plugin's capabilities and run through
// DeviceProgram: library calls (matmul and convolution with fused epilogues) or loop kernels,
// always the reference executor's result.
const char* kLibraryGraph =
    R"(graph @lib(%x: f64[4, 6], %w: f64[5, 6], %b: f64[5], %img: f64[2, 2, 6, 6], %cw: f64[3, 2, 3, 3], %cb: f64[3], %q: f64[2, 2, 4, 8], %k: f64[2, 2, 5, 8], %v: f64[2, 2, 5, 8]) {
  %t = aten.t(%w) : f64[6, 5]
  %mm = aten.addmm(%b, %x, %t) : f64[4, 5]
  %r = aten.relu(%mm) : f64[4, 5]
  %c = aten.convolution(%img, %cw, %cb) {dilation = [1, 1], groups = 1, output_padding = [0, 0], padding = [1, 1], stride = [2, 2], transposed = false} : f64[2, 3, 3, 3]
  %cr = aten.relu(%c) : f64[2, 3, 3, 3]
  %a, %lse = aten._scaled_dot_product_flash_attention_for_cpu(%q, %k, %v, none) {is_causal = true} : f64[2, 2, 4, 8], f64[2, 2, 4]
  return %r, %cr, %a
})";

TEST_F(MinimalLibrary, ProgramsRunThroughDeviceProgramWithAndWithoutLibraryOps) {
  auto ctx = context();
  auto g = text::parseGraph(*ctx, kLibraryGraph);
  ASSERT_TRUE(g.isOk()) << g.status().toString();
  Gen gen;
  gen.edges = false;
  std::vector<HostTensor> inputs;
  for (const ir::Value* v : g->inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : v->type().shape) shape.push_back(*d.evaluate({}));
    HostTensor t = gen.tensor(v->type().dtype, exec::shapeNumel(shape));
    inputs.push_back(HostTensor(t.dtype(), shape));
    inputs.back().doubles() = t.doubles();
  }
  auto want = exec::ReferenceExecutor(ctx).run(*g, inputs);
  ASSERT_TRUE(want.isOk()) << want.status().toString();
  const struct {
    const char* options;
    int calls, epilogues;
  } cases[] = {{"", 3, 2},
               {"library=none", 0, 0},
               {"library=matmul,convolution", 4, 2},  // sdpa as loops around two matmuls
               {"library=sdpa", 1, 0}};
  for (const auto& c : cases) {
    auto device = Device::open(plugin_, 0, c.options);
    ASSERT_TRUE(device.isOk()) << device.status().toString();
    auto compiled = compile::compileGraph(*ctx, *g, optionsFor((*device)->caps(), {}));
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    const sched::Program& p = compiled->program;
    int epilogues = 0;
    for (const sched::Step& s : p.steps) epilogues += s.kind == sched::Step::Kind::kCall && s.call.epilogue >= 0;
    EXPECT_EQ(p.numCalls(), c.calls) << c.options;
    EXPECT_EQ(epilogues, c.epilogues) << c.options << "\n" << sched::printProgram(p);
    auto dp = DeviceProgram::compile(**device, p);
    ASSERT_TRUE(dp.isOk()) << dp.status().toString();
    auto got = (*dp)->run(inputs);
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i)
      expectSame({(*want)[i]}, {(*got)[i]}, std::string(c.options) + " output " + std::to_string(i), 1e-12);
  }
}

}  // namespace
}  // namespace plugsdk::plugin
