// The minimal backend (samples/minimal_backend) against the core's kernel interpreter: kernels
// written in the text form and kernels from scheduled programs are encoded, compiled and
// launched through the loaded plugin on random inputs with edge values, and every buffer must
// equal the interpreter's result exactly (NaN == NaN; floats compared after the rounding a
// store to memory of the argument's dtype does). Also: the ABI surface's bad-argument paths.
#include "core/plugin/minimal_backend_fixture.h"

namespace plugsdk::plugin {
namespace {

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

}  // namespace
}  // namespace plugsdk::plugin
