// Shared by the SPIR-V tests: kernels from the kernel-IR text form through the core's encoder
// into the lowering, substring counts, and golden files (PLUGSDK_UPDATE_GOLDENS=1 rewrites them).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "backends/level_zero/spirv/lower_kernel.h"
#include "core/kernel/kernel_text.h"
#include "core/plugin/kernel_encoding.h"

namespace plugsdk::level_zero::spirv::testing {

/// z = 3 x + y over s0 points (the runtimes' tests launch it).
constexpr const char* kAxpyKernel = R"(kernel @axpy(%x: f32 in, %y: f32 in, %z: f32 out) grid [s0] {
  %0 = load %x[i0] : f32
  %1 = load %y[i0] : f32
  %2 = const 3 : f32
  %3 = mul %0, %2 : f32
  %4 = add %3, %1 : f32
  store %z[i0], %4
}
)";
/// y = x[i] with a CHECK that i is in [0, 4) (the status word's tests).
constexpr const char* kGatherKernel = R"(kernel @gather(%i: i64 in, %x: f32 in, %y: f32 out) grid [4] {
  %0 = load %i[i0] : i64
  %1 = const 0 : i64
  %2 = ge %0, %1 : bool
  %3 = const 4 : i64
  %4 = lt %0, %3 : bool
  %5 = bitwise_and %2, %4 : bool
  check %5, "index out of bounds for dimension 0 with size 4"
  %6 = load %x[%0] : f32
  store %y[i0], %6
}
)";

inline std::unique_ptr<plugin::EncodedKernel> encode(const std::string& text) {
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().message() << "\n" << text;
  if (!k.isOk()) return nullptr;
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  if (!e.isOk()) return nullptr;
  return std::move(*e);
}

/// The kernel in `text`, lowered and validated (OpenCL 2.0), not optimized (the lowering's
/// own output, which the goldens show).
inline sdk::StatusOr<SpirvKernel> spirvOf(const std::string& text, TargetEnv env = TargetEnv::kOpenCL2_0,
                                          uint32_t maxGroupSize = kDefaultGroupSize) {
  std::unique_ptr<plugin::EncodedKernel> e = encode(text);
  if (!e) return sdk::invalidArgument("the kernel text does not parse");
  const sdk::KernelView view(e->get());
  sdk::Status valid = sdk::KernelView::validate(e->get());
  if (!valid.isOk()) return valid;
  return compileKernel(view, std::string(view.name()), CompileOptions{env, false, maxGroupSize});
}

inline std::string textOf(const SpirvKernel& k) {
  sdk::StatusOr<std::string> t = disassemble(k.words);
  EXPECT_TRUE(t.isOk()) << t.status().message();
  return t.isOk() ? *t : "";
}

inline size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

inline std::string goldenPath(const std::string& name) {
  return std::string(PLUGSDK_SOURCE_DIR) + "/backends/level_zero/tests/golden/" + name;
}

/// Compares `actual` with the golden file `name` (rewritten when PLUGSDK_UPDATE_GOLDENS is set).
inline void expectGolden(const std::string& name, const std::string& actual) {
  const std::string path = goldenPath(name);
  if (std::getenv("PLUGSDK_UPDATE_GOLDENS")) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "no golden " << path << " (PLUGSDK_UPDATE_GOLDENS=1 writes it); actual:\n" << actual;
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), actual) << "golden " << path << " differs (PLUGSDK_UPDATE_GOLDENS=1 rewrites it)";
}

}  // namespace plugsdk::level_zero::spirv::testing
