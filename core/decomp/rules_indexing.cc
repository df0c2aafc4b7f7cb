// Decompositions of the ATen-level indexing ops into prims.
#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

using namespace rules;

void addIndexingRules(DecompTable& t) { (void)t; }

}  // namespace plugsdk::decomp
