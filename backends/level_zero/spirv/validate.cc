// SPIRV-Tools' validator and disassembler through its C++ API (libSPIRV-Tools).
#include "backends/level_zero/spirv/validate.h"

#include <spirv-tools/libspirv.hpp>

namespace plugsdk::level_zero::spirv {

namespace {

spv_target_env toolsEnv(TargetEnv env) {
  switch (env) {
    case TargetEnv::kOpenCL1_2: return SPV_ENV_OPENCL_1_2;
    case TargetEnv::kOpenCL2_0: return SPV_ENV_OPENCL_2_0;
    case TargetEnv::kUniversal1_0: return SPV_ENV_UNIVERSAL_1_0;
  }
  return SPV_ENV_OPENCL_2_0;
}

}  // namespace

const char* targetEnvName(TargetEnv env) {
  switch (env) {
    case TargetEnv::kOpenCL1_2: return "opencl1.2";
    case TargetEnv::kOpenCL2_0: return "opencl2.0";
    case TargetEnv::kUniversal1_0: return "spv1.0";
  }
  return "?";
}

std::string validatorMessage(const std::vector<uint32_t>& words, TargetEnv env) {
  spvtools::SpirvTools tools(toolsEnv(env));
  std::string message;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& pos, const char* m) {
    if (!message.empty()) message += "\n";
    message += "word " + std::to_string(pos.index) + ": " + m;
  });
  if (tools.Validate(words)) return "";
  return message.empty() ? "invalid (no message)" : message;
}

TargetEnv effectiveEnv(const std::vector<uint32_t>& words, TargetEnv env) {
  if (env == TargetEnv::kUniversal1_0) return env;
  constexpr uint32_t kOpCapability = (2u << 16) | 17u, kInt64Atomics = 12;
  for (size_t at = 5; at + 1 < words.size() && (words[at] >> 16) > 0; at += words[at] >> 16)
    if (words[at] == kOpCapability && words[at + 1] == kInt64Atomics) return TargetEnv::kUniversal1_0;
  return env;
}

sdk::Status validate(const std::vector<uint32_t>& words, const std::string& what, TargetEnv asked) {
  const TargetEnv env = effectiveEnv(words, asked);
  const std::string message = validatorMessage(words, env);
  if (message.empty()) return sdk::Status::ok();
  sdk::StatusOr<std::string> text = disassemble(words);
  return sdk::internalError(what + ": the SPIR-V module is invalid (" + targetEnvName(env) + "): " + message +
                            "\n(reproduce: the module's words written to m.spv, spirv-val --target-env " +
                            targetEnvName(env) + " m.spv)\n" +
                            (text.isOk() ? *text : "(no disassembly: " + text.status().message() + ")"));
}

sdk::StatusOr<std::string> disassemble(const std::vector<uint32_t>& words, bool friendlyNames) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_0);
  std::string message;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t&, const char* m) {
    if (!message.empty()) message += "\n";
    message += m;
  });
  std::string text;
  uint32_t options = SPV_BINARY_TO_TEXT_OPTION_NO_HEADER | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  if (friendlyNames) options |= SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES;
  if (!tools.Disassemble(words, &text, options))
    return sdk::internalError("spirv-dis cannot read the module: " + message);
  return text;
}

}  // namespace plugsdk::level_zero::spirv
