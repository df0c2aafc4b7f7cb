// Reference kernels for the nn ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerNNKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
