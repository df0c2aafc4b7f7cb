// Reference kernels for the shape ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerShapeKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
