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

inline std::unique_ptr<plugin::EncodedKernel> encode(const std::string& text) {
  StatusOr<kernel::Kernel> k = kernel::parseKernel(text);
  EXPECT_TRUE(k.isOk()) << k.status().message() << "\n" << text;
  if (!k.isOk()) return nullptr;
  StatusOr<std::unique_ptr<plugin::EncodedKernel>> e = plugin::encodeKernel(*k);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  if (!e.isOk()) return nullptr;
  return std::move(*e);
}

/// The kernel in `text`, lowered and validated (OpenCL 2.0).
inline sdk::StatusOr<SpirvKernel> spirvOf(const std::string& text, TargetEnv env = TargetEnv::kOpenCL2_0) {
  std::unique_ptr<plugin::EncodedKernel> e = encode(text);
  if (!e) return sdk::invalidArgument("the kernel text does not parse");
  const sdk::KernelView view(e->get());
  sdk::Status valid = sdk::KernelView::validate(e->get());
  if (!valid.isOk()) return valid;
  return compileKernel(view, std::string(view.name()), env);
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
