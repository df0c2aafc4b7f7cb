// Reference kernels for the pointwise ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerPointwiseKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
