// SPIRV-Tools' optimizer over the lowering's modules (spvtools::Optimizer). Most of
// SPIRV-Tools' "-O" recipe is written for Vulkan shaders: several passes return at once
// (changing nothing) on a module without the Shader capability, so the Kernel modules get an
// explicit list (kernelPasses) of those measured to do something here and to keep every
// module of the sweep valid; the measurement is docs/level-zero-backend.md's and can be
// repeated with the sweep test's PLUGSDK_SPIRV_OPT_SURVEY=1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/level_zero/spirv/validate.h"

namespace plugsdk::level_zero::spirv {

/// The passes run on every module, as spirv-opt flags ("--ccp", "--ssa-rewrite", ...), in order.
const std::vector<std::string>& kernelPasses();

/// `words` through `passes` (flags as spirv-opt takes them), then validated again in `env`
/// (effectiveEnv): INTERNAL naming `what`, the passes and the validator's message when the
/// optimizer fails or leaves an invalid module (a defect of a pass or of this list, never
/// of the kernel). The input is not validated again (the lowering did).
sdk::StatusOr<std::vector<uint32_t>> optimize(const std::vector<uint32_t>& words, const std::string& what,
                                              const std::vector<std::string>& passes = kernelPasses(),
                                              TargetEnv env = TargetEnv::kOpenCL2_0);

}  // namespace plugsdk::level_zero::spirv
