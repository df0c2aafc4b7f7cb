// Kernel IR -> SPIR-V: kernels from the text form lower to modules that SPIRV-Tools validates
// (OpenCL 2.0); two tiny ones against golden disassembly; every statement kind, every dtype's
// storage, every elementwise op on every dtype it takes, and UNIMPLEMENTED (never wrong
// code) for what the mapping does not do.
#include <cstdio>
#include <string>
#include <vector>

#include "backends/level_zero/tests/spirv_test_util.h"

namespace plugsdk::level_zero::spirv {
namespace {

using testing::count;
using testing::spirvOf;
using testing::textOf;

TEST(SpirvLowering, PointwiseGolden) {
  sdk::StatusOr<SpirvKernel> k = spirvOf(R"(kernel @scale(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = const 2 : f32
  %2 = mul %0, %1 : f32
  store %y[i0], %2
}
)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  EXPECT_EQ(k->entry, "scale");
  EXPECT_EQ(k->numArgs, 2u);
  EXPECT_EQ(k->numSymbols, 1u);
  testing::expectGolden("scale.spvasm", textOf(*k));
}

TEST(SpirvLowering, RowSumGolden) {
  sdk::StatusOr<SpirvKernel> k = spirvOf(R"(kernel @rowsum(%x: f32 in, %y: f32 out) grid [4] {
  loop [8] {
    %0 = load %x[8*i0+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %1
}
)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  testing::expectGolden("rowsum.spvasm", textOf(*k));
}

const char* kSoftmax = R"(kernel @softmax(%x: f32 in, %y: f32 out) grid [s0] {
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
}
)";

TEST(SpirvLowering, SoftmaxIsThreeStructuredLoops) {
  sdk::StatusOr<SpirvKernel> k = spirvOf(kSoftmax);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  const std::string t = textOf(*k);
  EXPECT_EQ(count(t, "OpLoopMerge"), 3u) << t;
  EXPECT_EQ(count(t, "OpExtInst %float %1 exp"), 2u) << t;
  // max over a loop reports an empty domain; a 128-wide one is known not to be empty, but the
  // check is there (folded by the consumer).
  EXPECT_GE(count(t, "OpAtomicCompareExchange %uint %status"), 1u) << t;
  EXPECT_NE(t.find("OpExecutionMode %softmax ContractionOff"), std::string::npos) << t;
}

// Every statement kind: indirect loads, combining stores, masks, rand, a CHECK, integer
// division (which reports a division by zero), f16 and bf16 storage.
const char* kEveryKind = R"(kernel @all(%a: i64 in, %b: f64 inout, %h: f16 inout, %g: bf16 out) grid [4, s1] {
  %0 = load %a[i0] : i64
  %1 = index i0*s1+i1 : i64
  %2 = const -2.5 : f64
  %3 = const 3 : i64
  %4 = div %0, %3 : i64
  %5 = load %b[3*%4+i1 % 2] : f64
  %6 = lt %5, %2 : bool
  %7 = where %6, %2, %5 : f64
  %8 = cast %1 : f64
  %9 = rand 42, i0*s1+i1 : f32
  %10 = load %h[i1] if %6 : f16
  %11 = cast %10 : f64
  %12 = add %7, %11 : f64
  store.sum %b[%0], %12
  store.max %b[%0+1], %8
  %13 = cast %9 : f16
  store.sum %h[i1], %13
  %14 = cast %12 : bf16
  store %g[i0*s1+i1], %14
  check %6, "index out of range"
}
)";

TEST(SpirvLowering, EveryStatementKind) {
  sdk::StatusOr<SpirvKernel> k = spirvOf(kEveryKind);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  const std::string t = textOf(*k);
  ASSERT_EQ(k->checkMessages.size(), 1u);
  EXPECT_EQ(k->checkMessages[0], "index out of range");
  for (const char* cap : {"Float16Buffer", "Float64", "Int16", "Int64Atomics"})
    EXPECT_NE(t.find(std::string("OpCapability ") + cap + "\n"), std::string::npos) << cap << "\n" << t;
  // f64 sum and max: CAS loops on the 64-bit bits; the f16 sum: a CAS on its 32-bit word.
  EXPECT_EQ(count(t, "OpAtomicCompareExchange %ulong"), 2u) << t;
  EXPECT_GE(count(t, "OpConvertPtrToU"), 1u) << t;
  // The status word: division by zero (1) and the CHECK (16).
  EXPECT_NE(t.find("%uint_16"), std::string::npos) << t;
  EXPECT_EQ(count(t, "OpPhi"), 1u) << "the masked load\n" << t;
}

TEST(SpirvLowering, IntegerCombiningStoresAreAtomics) {
  sdk::StatusOr<SpirvKernel> k =
      spirvOf(R"(kernel @scat(%i: i64 in, %v: i32 in, %w: i64 in, %y: i32 inout, %z: i64 inout) grid [16] {
  %0 = load %i[i0] : i64
  %1 = load %v[i0] : i32
  %2 = load %w[i0] : i64
  store.sum %y[%0], %1
  store.max %y[%0+1], %1
  store.min %z[%0], %2
  store.prod %z[%0+1], %2
}
)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
  const std::string t = textOf(*k);
  EXPECT_EQ(count(t, "OpAtomicIAdd %uint"), 1u) << t;
  EXPECT_EQ(count(t, "OpAtomicSMax %uint"), 1u) << t;
  EXPECT_EQ(count(t, "OpAtomicSMin %ulong"), 1u) << t;
  EXPECT_EQ(count(t, "OpAtomicCompareExchange %ulong"), 1u) << "prod\n" << t;
}

// Every dtype through memory: loads, stores, casts both ways, and each combining store.
TEST(SpirvLowering, EveryDtypeLoadsStoresCastsAndCombines) {
  const std::vector<std::string> dtypes = {"bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"};
  int validated = 0;
  for (const std::string& d : dtypes) {
    for (const std::string& to : dtypes) {
      const std::string text = "kernel @c(%x: " + d + " in, %y: " + to +
                               " out) grid [s0] {\n  %0 = load %x[i0] : " + d + "\n  %1 = cast %0 : " + to +
                               "\n  store %y[i0], %1\n}\n";
      sdk::StatusOr<SpirvKernel> k = spirvOf(text);
      EXPECT_TRUE(k.isOk()) << d << " -> " << to << ": " << k.status().message();
      validated += k.isOk();
    }
    for (const char* combine : {"sum", "prod", "max", "min"}) {
      const std::string text = "kernel @s(%i: i64 in, %x: " + d + " in, %y: " + d + " inout) grid [s0] {\n" +
                               "  %0 = load %i[i0] : i64\n  %1 = load %x[i0] : " + d + "\n  store." + combine +
                               " %y[%0], %1\n}\n";
      sdk::StatusOr<SpirvKernel> k = spirvOf(text);
      EXPECT_TRUE(k.isOk()) << d << " store." << combine << ": " << k.status().message();
      validated += k.isOk();
    }
  }
  EXPECT_EQ(validated, 10 * 10 + 10 * 4);
}

// Every elementwise op on every dtype the text form takes it with: a valid module, or
// UNIMPLEMENTED naming the statement (transcendentals of integers, which the scheduler never
// emits).
TEST(SpirvLowering, EveryElementwiseOpOnEveryDtype) {
  const std::vector<std::string> unary = {"abs",         "neg",  "sign",  "floor", "ceil",  "round", "trunc",
                                          "bitwise_not", "exp",  "expm1", "log",   "log1p", "log2",  "sqrt",
                                          "rsqrt",       "sin",  "cos",   "tan",   "asin",  "acos",  "atan",
                                          "sinh",        "cosh", "tanh",  "asinh", "acosh", "atanh", "erf"};
  const std::vector<std::string> binary = {
      "add",         "sub",        "mul",         "div", "remainder", "fmod", "pow", "atan2", "maximum", "minimum",
      "bitwise_and", "bitwise_or", "bitwise_xor", "eq",  "ne",        "lt",   "le",  "gt",    "ge"};
  const std::vector<std::string> dtypes = {"bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"};
  int validated = 0, unimplemented = 0, rejectedByParser = 0;
  for (const std::string& d : dtypes) {
    auto run = [&](const std::string& op, int arity) {
      const bool cmp = op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
      const std::string out = cmp ? "bool" : d;
      const std::string text = "kernel @e(%x: " + d + " in, %z: " + d + " in, %y: " + out +
                               " out) grid [s0] {\n  %0 = load %x[i0] : " + d + "\n  %1 = load %z[i0] : " + d +
                               "\n  %2 = " + op + " %0" + (arity == 2 ? ", %1" : "") + " : " + out +
                               "\n  store %y[i0], %2\n}\n";
      StatusOr<kernel::Kernel> parsed = kernel::parseKernel(text);
      if (!parsed.isOk()) {
        ++rejectedByParser;
        return;
      }
      sdk::StatusOr<SpirvKernel> k = spirvOf(text);
      if (k.isOk()) {
        ++validated;
      } else {
        EXPECT_EQ(k.status().code(), sdk::Code::kUnimplemented) << op << " " << d << ": " << k.status().message();
        EXPECT_NE(k.status().message().find("kernel @e, statement 2"), std::string::npos) << k.status().message();
        ++unimplemented;
      }
    };
    for (const std::string& op : unary) run(op, 1);
    for (const std::string& op : binary) run(op, 2);
  }
  std::printf("elementwise: %d validated, %d UNIMPLEMENTED, %d not kernels the text form takes\n", validated,
              unimplemented, rejectedByParser);
  EXPECT_GE(validated, 300);
}

TEST(SpirvLowering, ReductionsOfEveryKindAndRank) {
  for (const char* op : {"sum", "prod", "max", "min", "argmax", "argmin"}) {
    for (const char* d : {"bool", "u8", "i32", "i64", "f16", "bf16", "f32", "f64"}) {
      const bool arg = std::string(op).rfind("arg", 0) == 0;
      const std::string out = arg ? "i64" : d;
      const std::string text = std::string("kernel @r(%x: ") + d + " in, %y: " + out +
                               " out) grid [s0, 3] {\n  loop [s1, 5] {\n    %0 = load %x[5*s1*i1+5*r0+r1+i0] : " + d +
                               "\n    %1 = reduce " + op + " %0 : " + out + "\n  }\n  store %y[3*i0+i1], %1\n}\n";
      // One work-item per point: a loop per dim.
      sdk::StatusOr<SpirvKernel> k = spirvOf(text, TargetEnv::kOpenCL2_0, 0);
      ASSERT_TRUE(k.isOk()) << op << " " << d << ": " << k.status().message();
      EXPECT_EQ(k->groupSize, 0u);
      EXPECT_EQ(count(textOf(*k), "OpLoopMerge"), 2u) << "a loop per dim";
      // A work-group per point (the loop reads rows): one loop over the flattened domain
      // spread over 64 work-items, then a combine in 6 levels (a barrier before each, and
      // two after: the result read, the slots free).
      k = spirvOf(text, TargetEnv::kOpenCL2_0, 64);
      ASSERT_TRUE(k.isOk()) << op << " " << d << ": " << k.status().message();
      EXPECT_EQ(k->groupSize, 64u);
      const std::string t = textOf(*k);
      EXPECT_EQ(count(t, "OpLoopMerge"), 1u) << t;
      EXPECT_EQ(count(t, "OpControlBarrier"), 8u) << t;
      EXPECT_EQ(count(t, "OpExecutionMode %r LocalSize 64 1 1"), 1u) << t;
      EXPECT_EQ(count(t, " Workgroup\n"), arg ? 2u : 1u) << "one array per field: " << t;
    }
  }
  // A grid of rank 0 and a loop of rank 0 (one iteration).
  sdk::StatusOr<SpirvKernel> k = spirvOf(R"(kernel @scalar(%x: f32 in, %y: f32 out) grid [] {
  loop [] {
    %0 = load %x[0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[0], %1
}
)");
  ASSERT_TRUE(k.isOk()) << k.status().message();
}

// A kernel the mapping cannot do is UNIMPLEMENTED naming the kernel and statement, never a
// module: here an elementwise op the ABI does not know (a newer core's, say).
TEST(SpirvLowering, UnknownOpIsUnimplementedNamingTheStatement) {
  std::unique_ptr<plugin::EncodedKernel> e = testing::encode(R"(kernel @k(%x: f32 in, %y: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = exp %0 : f32
  store %y[i0], %1
}
)");
  ASSERT_TRUE(e);
  plugsdk_kernel_t raw = e->get();
  std::vector<plugsdk_stmt_t> stmts(raw.stmts, raw.stmts + raw.num_stmts);
  ASSERT_EQ(stmts[1].kind, PLUGSDK_STMT_SCALAR);
  stmts[1].op = 999;
  raw.stmts = stmts.data();
  sdk::StatusOr<SpirvKernel> k = lowerKernel(sdk::KernelView(raw), "k");
  ASSERT_FALSE(k.isOk());
  EXPECT_EQ(k.status().code(), sdk::Code::kUnimplemented);
  EXPECT_NE(k.status().message().find("kernel @k, statement 1: elementwise op 999"), std::string::npos)
      << k.status().message();
}

}  // namespace
}  // namespace plugsdk::level_zero::spirv
