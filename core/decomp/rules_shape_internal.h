// Internal to the shape-family rule files (rules_shape*.cc).
#pragma once

#include "core/decomp/rules_util.h"

namespace plugsdk::decomp {

/// cat, stack, slice, select, narrow, split, split_with_sizes, chunk, unbind (rules_shape_split.cc).
void addShapeSplitRules(DecompTable& t);

}  // namespace plugsdk::decomp
