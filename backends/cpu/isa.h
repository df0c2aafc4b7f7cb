// The instruction sets the CPU backend generates code for, what this CPU has (CPUID), and
// the PLUGSDK_CPU_ISA override that forces a narrower path (so the AVX2 and scalar code
// paths are tested on an AVX-512 machine). An Isa is plain data: the code generators read
// its vector width and register count, the JIT its LLVM CPU name and feature string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "backends/llvm_lowering/target.h"
#include "plugsdk/status.hpp"

namespace plugsdk::cpu {

enum class IsaLevel {
  kScalar,  ///< one element per operation (the host's other features still used)
  kAvx2,    ///< 256-bit vectors: AVX2, FMA, F16C (x86-64-v3)
  kAvx512,  ///< 512-bit vectors: AVX-512 F, VL, BW, DQ (x86-64-v4)
};

/// What the host CPU reports (CPUID and XGETBV: the OS must save the vector state too).
struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false, bmi2 = false;
  bool avx512f = false, avx512vl = false, avx512bw = false, avx512dq = false;
  bool avx512bf16 = false, avx512fp16 = false;
  std::string llvmCpu;  ///< LLVM's name for the host ("znver4", "skylake-avx512", ...)
};

/// The code-generation target of one client.
struct Isa {
  IsaLevel level = IsaLevel::kScalar;
  std::string_view name() const;  ///< "avx512", "avx2" or "scalar"
  /// Bytes per vector register (64, 32; 0 for scalar) and f32 lanes (16, 8, 1).
  uint32_t vectorBytes() const;
  uint32_t f32Lanes() const { return vectorBytes() ? vectorBytes() / 4 : 1; }
  /// Vector registers the register allocator has (32 with AVX-512, 16 otherwise).
  uint32_t vectorRegisters() const { return level == IsaLevel::kAvx512 ? 32 : 16; }
  /// LLVM target CPU and features: the host CPU, with AVX-512 switched off below kAvx512
  /// (so an AVX2 path never emits an AVX-512 instruction, even through LLVM's own choices).
  std::string llvmCpu;
  std::string llvmFeatures;
  /// What the kernel lowering (backends/llvm_lowering) generates for this ISA.
  lowering::Target loweringTarget() const;
};

/// Reads CPUID once.
const CpuFeatures& hostFeatures();

/// Parses "avx512" | "avx2" | "scalar"; an error naming the accepted values otherwise.
sdk::StatusOr<IsaLevel> parseIsaLevel(std::string_view name);

/// The best level this CPU runs ("" or "auto"), or `requested` when the CPU can run it;
/// FAILED_PRECONDITION naming the missing features when it cannot (a forced AVX-512 path
/// on an AVX2 machine).
sdk::StatusOr<Isa> selectIsa(const CpuFeatures& cpu, std::string_view requested);

}  // namespace plugsdk::cpu
