// Decompositions of the ATen-level creation ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addCreationRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
