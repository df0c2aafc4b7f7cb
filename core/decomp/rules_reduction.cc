// Decompositions of the ATen-level reduction ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addReductionRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
