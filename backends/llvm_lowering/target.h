// What the kernel lowering needs to know about the machine it generates code for: plain
// data, filled by each backend (the CPU backend from its ISA, the CUDA backend for NVPTX).
#pragma once

#include <cstdint>
#include <string>

namespace plugsdk::lowering {

struct Target {
  std::string cpu;       ///< LLVM "target-cpu" of the entry function ("znver4", "sm_90"); empty: none
  std::string features;  ///< LLVM "target-features"
  /// f32 elements per vector operation; 1 lowers every kernel to scalar code.
  uint32_t f32Lanes = 1;
  bool wideVectors = false;  ///< prefer 512-bit vectors (LLVM's "prefer-vector-width")
  /// Math without an inline polynomial (vector_math.h) becomes a call to prefix + libm's
  /// name ("" on the host: libm; "__nv_" on NVPTX: libdevice, linked by the backend).
  std::string mathPrefix;
};

}  // namespace plugsdk::lowering
