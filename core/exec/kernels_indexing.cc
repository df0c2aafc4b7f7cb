// Reference kernels for the indexing ops (float64 / exact integers).
#include "core/exec/kernels.h"

namespace plugsdk::exec {

void registerIndexingKernels(RefKernelTable& t) { (void)t; }

}  // namespace plugsdk::exec
