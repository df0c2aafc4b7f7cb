// The kernel function the driver launches, around the lowering's entry (frame.h): its
// parameters are the kernel's argument pointers, its symbols' values, the grid's extents
// (evaluated at launch) and the status word; each thread builds the CallFrame in registers
// and runs its grid points through the entry, which is inlined.
//
// Thread mapping (this version): one grid point per thread, threads numbered over the
// flattened grid (outer x inner) in blocks of kBlockThreads, so consecutive threads take
// consecutive inner points and their accesses coalesce.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cuda {

constexpr unsigned kBlockThreads = 256;

/// Adds kernel `name` to `m`, calling `entry` (which becomes internal and always inlined).
void addKernelWrapper(llvm::Module& m, const sdk::KernelView& k, const std::string& entry, const std::string& name);

}  // namespace plugsdk::cuda
