// Reference kernels for the reduction ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerReductionKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
