// Reference kernels for the backward ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerBackwardKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
