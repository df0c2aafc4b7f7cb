// Decompositions of the ATen-level backward ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addBackwardRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
