// The prim set: a closed set of about 70 ops that every ATen-level op decomposes into, and
// the only ops the scheduler lowers to loop-level kernels and library calls. Prims are
// strict where ATen is lenient: no implicit broadcasting, no type promotion and no scalar
// arguments (broadcast_in_dim, convert_element_type and full make those explicit), so a
// backend never has to re-derive PyTorch's rules. docs/prims.md gives each prim's semantics.
#pragma once

#include <array>
#include <string_view>

#include "core/ir/op_registry.h"

namespace plugsdk::prims {

/// Registers every prim ("prims.*") into `reg`.
Status registerPrims(ir::OpRegistry& reg);

Status registerElementwisePrims(ir::OpRegistry& reg);  // elementwise.cc: math, comparisons, where, casts
Status registerStructurePrims(ir::OpRegistry& reg);    // structure.cc: broadcast, reshape, permute, slice, pad, ...
Status registerDataPrims(ir::OpRegistry& reg);         // data.cc: reductions, gather, scatter, iota, full, rand
Status registerLibraryPrims(ir::OpRegistry& reg);      // library.cc: matmul, convolution, sdpa, sdpa_backward

/// True for an op of the prim set ("prims.add").
inline bool isPrim(std::string_view op) { return op.substr(0, 6) == "prims."; }

/// The library prims: the ops a backend may take whole as library calls (the ABI's
/// plugsdk_library_op_t bits, in bit order) instead of loop kernels.
inline constexpr std::array<std::string_view, 4> kLibraryPrims = {"prims.matmul", "prims.convolution", "prims.sdpa",
                                                                  "prims.sdpa_backward"};
inline bool isLibraryPrim(std::string_view op) {
  for (std::string_view l : kLibraryPrims)
    if (op == l) return true;
  return false;
}

}  // namespace plugsdk::prims
