// Decompositions of the ATen-level shape ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addShapeRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
