// Kernels in text form encoded by the core's encoder, for the C++ layer's tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::plugin {

/// `text` parsed and encoded; null (with a test failure) when either fails.
inline std::unique_ptr<EncodedKernel> encode(const char* text) {
  auto k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().toString();
  if (!k.isOk()) return nullptr;
  auto e = encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().toString();
  return e.isOk() ? std::move(*e) : nullptr;
}

// The example of docs/kernel-ir.md: two loops (the test plugin compiles it, cannot run it).
inline const char* kLoops = R"(kernel @k0(%x: f32 in, %w: f32 in, %b: f32 in, %y: f32 out) grid [s0] {
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

}  // namespace plugsdk::plugin
