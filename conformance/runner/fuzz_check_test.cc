// Failure::cause(): the part of a device error that must stay the same while minimizing,
// with value names, kernel names and plain numbers masked (and nothing else).
#include "conformance/runner/fuzz_check.h"

#include <gtest/gtest.h>

namespace plugsdk::conformance {
namespace {

std::string causeOf(const std::string& text) {
  Failure f;
  f.kind = Failure::Kind::kError;
  f.text = text;
  return f.cause();
}

TEST(FailureCause, MasksNamesKernelsAndNumbers) {
  EXPECT_EQ(causeOf("step 4 (%relu_3.out) of program @fuzz: launch of kernel k12: the kernel hit a fault"),
            "step # (#) of program @fuzz: launch of kernel #: the kernel hit a fault");
  EXPECT_EQ(causeOf("k7 uses dtype i64 on device fault:0"), "# uses dtype i64 on device fault:#");
}

TEST(FailureCause, KeepsWordsThatHoldDigits) {
  // i64, f32, bf16, sm_90, k12x and x2 are words, not numbers: they say what went wrong
  EXPECT_EQ(causeOf("f32 bf16 i64 sm_90 k12x x2 %"), "f32 bf16 i64 sm_90 k12x x2 %");
}

TEST(FailureCause, TwoErrorsDifferingOnlyInNamesAreOneClass) {
  EXPECT_EQ(causeOf("launch of kernel k3 (%v17): out of memory"), causeOf("launch of kernel k0 (%x): out of memory"));
  EXPECT_NE(causeOf("launch of kernel k3: out of memory"), causeOf("launch of kernel k3: illegal address"));
  Failure mismatch;
  mismatch.kind = Failure::Kind::kMismatch;
  mismatch.text = "output 0 element 3";
  EXPECT_EQ(mismatch.cause(), "");
}

}  // namespace
}  // namespace plugsdk::conformance
