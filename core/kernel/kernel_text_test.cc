// Kernel IR text form: round trips, the verifier's scoping rules, and parse errors.
#include <gtest/gtest.h>

#include "core/kernel/kernel_text.h"

namespace plugsdk::kernel {
namespace {

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

TEST(KernelText, SoftmaxRoundTrips) {
  auto k = parseKernel(kSoftmax);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  EXPECT_EQ(printKernel(*k), kSoftmax);
  EXPECT_EQ(k->numValues, 10);
  EXPECT_EQ(k->sizeSymbols(), std::vector<std::string>{"s0"});
  auto again = parseKernel(printKernel(*k));
  ASSERT_TRUE(again.isOk());
  std::string why;
  EXPECT_TRUE(kernelsEqual(*k, *again, &why)) << why;
}

TEST(KernelText, EveryStatementKindRoundTrips) {
  const char* text = R"(kernel @all(%a: i64 in, %b: f64 inout, %acc: f64 acc) grid [4, s1] {
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
  %11 = load %acc[i0*s1+i1] if %7 : f64
  %12 = add %8, %11 : f64
  store.sum %b[%0], %12
  store %b[(i0+1)//2], %9
  check %7, "a \"quoted\" message"
}
)";
  auto k = parseKernel(text);
  ASSERT_TRUE(k.isOk()) << k.status().toString();
  EXPECT_EQ(printKernel(*k), text);
}

TEST(KernelText, VerifierRejectsLoopValuesUsedOutsideTheLoop) {
  auto k = parseKernel(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4] {
  loop [8] {
    %0 = load %x[i0*8+r0] : f32
    %1 = reduce sum %0 : f32
  }
  store %y[i0], %0
})");
  ASSERT_FALSE(k.isOk());
  EXPECT_NE(k.status().message().find("%0 before it is defined"), std::string::npos) << k.status().toString();
}

TEST(KernelText, VerifierRejectsLoopVariableOutsideItsLoop) {
  auto k = parseKernel(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4] {
  %0 = load %x[r0] : f32
  store %y[i0], %0
})");
  ASSERT_FALSE(k.isOk());
  EXPECT_NE(k.status().message().find("r0 is not in scope"), std::string::npos) << k.status().toString();
}

TEST(KernelText, VerifierRejectsMixedDTypesAndBadStores) {
  EXPECT_FALSE(parseKernel(R"(kernel @k(%x: f32 in, %y: f64 out) grid [4] {
  %0 = load %x[i0] : f32
  store %y[i0], %0
})")
                   .isOk());
  EXPECT_FALSE(parseKernel(R"(kernel @k(%x: f32 in, %y: f32 out) grid [4] {
  %0 = load %x[i0] : f32
  %1 = const 1 : f64
  %2 = add %0, %1 : f32
  store %y[i0], %2
})")
                   .isOk());
  EXPECT_FALSE(parseKernel(R"(kernel @k(%x: f32 in) grid [4] {
  %0 = load %x[i0] : f32
  store %x[i0], %0
})")
                   .isOk());
}

TEST(KernelText, ParseErrorsNameLineAndColumn) {
  auto k = parseKernel("kernel @k(%x: f32 in) grid [4] {\n  %0 = frobnicate %x : f32\n}");
  ASSERT_FALSE(k.isOk());
  EXPECT_NE(k.status().message().find("2:8"), std::string::npos) << k.status().toString();
  EXPECT_NE(k.status().message().find("unknown operation 'frobnicate'"), std::string::npos);
}

}  // namespace
}  // namespace plugsdk::kernel
