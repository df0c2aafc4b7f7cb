// SPIRV-Tools around the module writer: validation of every emitted module and disassembly
// for errors and dumps. The OpenCL 2.0 environment by default; SPIRV-Tools' OpenCL
// environments do not model the device extensions behind some capabilities (measured:
// Float16 and Int64Atomics are rejected in opencl1.2, 2.0 and 2.2 alike), so a module that
// declares Int64Atomics (64-bit atomics: cl_khr_int64_base_atomics) is validated in the
// universal 1.0 environment instead (docs/level-zero-backend.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugsdk/status.hpp"

namespace plugsdk::level_zero::spirv {

/// The SPIRV-Tools target environment a module is validated for.
enum class TargetEnv { kOpenCL1_2, kOpenCL2_0, kUniversal1_0 };

/// spirv-val's name for the environment (its --target-env argument).
const char* targetEnvName(TargetEnv env);

/// The environment `words` is validated in when `env` is asked for (see above).
TargetEnv effectiveEnv(const std::vector<uint32_t>& words, TargetEnv env);

/// Validates `words` (in effectiveEnv(words, env)). On failure INTERNAL with the validator's message, the command that
/// reproduces it, and the module's disassembly (`what` names the module, e.g. the kernel).
sdk::Status validate(const std::vector<uint32_t>& words, const std::string& what,
                     TargetEnv env = TargetEnv::kOpenCL2_0);

/// The validator's message alone, in exactly `env` (empty when the module is valid).
std::string validatorMessage(const std::vector<uint32_t>& words, TargetEnv env = TargetEnv::kOpenCL2_0);

/// The text form of `words` (spirv-dis; ids named from OpName and types when `friendlyNames`).
/// An error when the words are not even a module the disassembler can walk.
sdk::StatusOr<std::string> disassemble(const std::vector<uint32_t>& words, bool friendlyNames = true);

}  // namespace plugsdk::level_zero::spirv
