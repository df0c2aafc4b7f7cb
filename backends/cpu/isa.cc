// CPUID feature detection and the choice of code-generation target (see isa.h).
#include "backends/cpu/isa.h"

#include <cpuid.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

namespace plugsdk::cpu {

namespace {

uint64_t xgetbv0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  f.fma = (c >> 12) & 1;
  f.f16c = (c >> 29) & 1;
  // The OS saves YMM state (XCR0 bits 1, 2) and ZMM state (bits 5, 6, 7).
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = ymm && ((b >> 5) & 1);
    f.bmi2 = (b >> 8) & 1;
    f.avx512f = zmm && ((b >> 16) & 1);
    f.avx512dq = zmm && ((b >> 17) & 1);
    f.avx512bw = zmm && ((b >> 30) & 1);
    f.avx512vl = zmm && ((b >> 31) & 1);
    f.avx512fp16 = zmm && ((d >> 23) & 1);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = f.avx512f && ((a >> 5) & 1);
  f.llvmCpu = llvm::sys::getHostCPUName().str();
  return f;
}

/// The host's LLVM feature string, with every AVX-512 feature off unless `keep512`.
std::string featureString(bool keep512) {
  std::string out;
  for (const auto& kv : llvm::sys::getHostCPUFeatures()) {
    const std::string name = kv.getKey().str();
    bool on = kv.getValue();
    if (!keep512 && (name.rfind("avx512", 0) == 0 || name == "evex512" || name.rfind("avx10", 0) == 0)) on = false;
    out += (out.empty() ? "" : ",") + std::string(on ? "+" : "-") + name;
  }
  return out;
}

}  // namespace

std::string_view Isa::name() const {
  switch (level) {
    case IsaLevel::kAvx512: return "avx512";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kScalar: return "scalar";
  }
  return "?";
}

uint32_t Isa::vectorBytes() const {
  switch (level) {
    case IsaLevel::kAvx512: return 64;
    case IsaLevel::kAvx2: return 32;
    case IsaLevel::kScalar: return 0;
  }
  return 0;
}

const CpuFeatures& hostFeatures() {
  static const CpuFeatures f = detect();
  return f;
}

sdk::StatusOr<IsaLevel> parseIsaLevel(std::string_view name) {
  if (name == "avx512") return IsaLevel::kAvx512;
  if (name == "avx2") return IsaLevel::kAvx2;
  if (name == "scalar") return IsaLevel::kScalar;
  return sdk::invalidArgument("ISA '" + std::string(name) + "' is not one of avx512, avx2, scalar (or auto)");
}

sdk::StatusOr<Isa> selectIsa(const CpuFeatures& cpu, std::string_view requested) {
  const bool has512 = cpu.avx512f && cpu.avx512vl && cpu.avx512bw && cpu.avx512dq;
  const bool has2 = cpu.avx2 && cpu.fma && cpu.f16c;
  Isa isa;
  if (requested.empty() || requested == "auto") {
    isa.level = has512 ? IsaLevel::kAvx512 : has2 ? IsaLevel::kAvx2 : IsaLevel::kScalar;
  } else {
    sdk::StatusOr<IsaLevel> level = parseIsaLevel(requested);
    if (!level.isOk()) return level.status();
    isa.level = *level;
    if (isa.level == IsaLevel::kAvx512 && !has512)
      return sdk::failedPrecondition("ISA avx512 was requested, but this CPU (" + cpu.llvmCpu +
                                     ") lacks AVX-512 F/VL/BW/DQ or the OS does not enable ZMM state");
    if (isa.level == IsaLevel::kAvx2 && !has2)
      return sdk::failedPrecondition("ISA avx2 was requested, but this CPU (" + cpu.llvmCpu +
                                     ") lacks AVX2, FMA or F16C, or the OS does not enable YMM state");
  }
  isa.llvmCpu = cpu.llvmCpu;
  isa.llvmFeatures = featureString(isa.level == IsaLevel::kAvx512);
  return isa;
}

lowering::Target Isa::loweringTarget() const {
  lowering::Target t;
  t.cpu = llvmCpu;
  t.features = llvmFeatures;
  t.f32Lanes = f32Lanes();
  t.wideVectors = vectorBytes() == 64;
  return t;
}

}  // namespace plugsdk::cpu
