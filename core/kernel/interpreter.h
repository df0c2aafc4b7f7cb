// Runs a kernel on the host with the reference's numerics (floats in float64, integers exact
// with wrapping), so every scheduling stage can be checked against the reference executor.
// Every load and store is bounds-checked: an out-of-range access is an error naming the
// kernel, argument and element, never a silent wrong number.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/kernel/kernel_ir.h"

namespace plugsdk::kernel {

/// Runs `k` over its whole grid. args[i] is the flat (1-D) storage bound to argument i.
Status runKernel(const Kernel& k, const std::vector<exec::HostTensor*>& args,
                 const std::map<std::string, int64_t>& symbols);

}  // namespace plugsdk::kernel
