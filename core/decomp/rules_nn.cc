// Decompositions of the ATen-level nn ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addNNRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
