// Compiling a training artifact: the specialized graph's training graphs (core/autograd)
// compiled into a forward and a backward device program.
#pragma once

#include <vector>

#include "core/cache/compiled_function.h"

namespace plugsdk::cache {

/// Fills a->program (the forward), a->backward, the stage times and the kernel counts.
Status compileTraining(const ir::Context& ctx, const plugin::Device& device, const ir::Graph& specialized,
                       const std::vector<guard::TensorSignature>& inputs,
                       const std::vector<bool>& differentiableOutputs, const compile::CompileOptions& options,
                       Artifact* a);

}  // namespace plugsdk::cache
