// The compile context passed explicitly through the core: the op registry and what is
// assumed about size symbols. No ambient globals: whoever needs ops gets a Context.
#pragma once

#include <memory>

#include "core/ir/op_registry.h"

namespace plugsdk::ir {

struct Context {
  OpRegistry ops;
  SymAssumptions assumptions;
};

/// A context with every ATen-level op of core/ops and every prim of core/prims registered.
std::shared_ptr<const Context> makeDefaultContext();

}  // namespace plugsdk::ir
