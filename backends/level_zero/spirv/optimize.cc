// spvtools::Optimizer with an explicit pass list (optimize.h).
#include "backends/level_zero/spirv/optimize.h"

#include <spirv-tools/optimizer.hpp>

namespace plugsdk::level_zero::spirv {

const std::vector<std::string>& kernelPasses() {
  // Measured over the sweep's 1606 modules (docs/level-zero-backend.md): merge-return gives
  // each function one return (ssa-rewrite skips a function with several: 307 of 1606 changed
  // without it), ssa-rewrite turns the accumulators' Function variables into phis (their
  // stores stay: the dead-store and DCE passes return at once on a module with Addresses or
  // without Shader), merge-blocks joins the straight-line blocks left. ccp,
  // redundancy-elimination, loop-invariant-code-motion, eliminate-dead-branches changed
  // nothing after them; simplify-instructions added instructions.
  static const std::vector<std::string> passes = {"--merge-return", "--ssa-rewrite", "--merge-blocks"};
  return passes;
}

sdk::StatusOr<std::vector<uint32_t>> optimize(const std::vector<uint32_t>& words, const std::string& what,
                                              const std::vector<std::string>& passes, TargetEnv env) {
  // The optimizer's own environment only decides what it may assume; universal 1.0 holds
  // for every module the lowering writes (the OpenCL ones reject Int64Atomics).
  spvtools::Optimizer opt(SPV_ENV_UNIVERSAL_1_0);
  std::string messages;
  opt.SetMessageConsumer([&](spv_message_level_t level, const char*, const spv_position_t&, const char* m) {
    if (level > SPV_MSG_WARNING) return;
    if (!messages.empty()) messages += "\n";
    messages += m;
  });
  std::string list;
  for (const std::string& p : passes) {
    list += (list.empty() ? "" : " ") + p;
    if (!opt.RegisterPassFromFlag(p)) return sdk::internalError(what + ": spirv-opt has no pass " + p);
  }
  spvtools::OptimizerOptions options;
  options.set_run_validator(false);
  std::vector<uint32_t> out;
  if (!opt.Run(words.data(), words.size(), &out, options))
    return sdk::internalError(what + ": spirv-opt failed (" + list + "): " + messages +
                              "\n(reproduce: the unoptimized module (dump=DIR, spirv_opt=off) through spirv-opt " +
                              list + ")");
  sdk::Status st = validate(out, what + " after spirv-opt " + list, env);
  if (!st.isOk()) return st;
  return out;
}

}  // namespace plugsdk::level_zero::spirv
