// The shared harness of the minimal backend's tests (minimal_backend_test.cc: kernels and
// the ABI surface; minimal_library_test.cc: library calls): the loaded plugin as a gtest
// fixture, element bytes, and random data with edge values.
#pragma once
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
#include "core/exec/tensor_bytes.h"
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

// ---- bytes <-> HostTensor: the core's element encoding (core/exec/tensor_bytes.h) ----------

inline std::vector<uint8_t> toBytes(const HostTensor& t) {
  std::vector<uint8_t> out(static_cast<size_t>(t.numel() * ir::dtypeSize(t.dtype())));
  exec::encodeElements(t, out.data());
  return out;
}

inline HostTensor fromBytes(DType dt, const std::vector<uint8_t>& bytes) {
  return exec::decodeElements(dt, {static_cast<int64_t>(bytes.size()) / ir::dtypeSize(dt)}, bytes.data());
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

}  // namespace
}  // namespace plugsdk::plugin
