// Reference kernels for the creation ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerCreationKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
