// The reference plugin's internals shared by plugin.cc (the ABI surface) and library.cc
// (library calls): running a decoded kernel over buffer bytes, and library calls planned at
// compile time and run at launch with the core's reference kernels. Core types and core
// Status inside; plugin.cc converts to the SDK's Status at the boundary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/exec/host_tensor.h"
#include "core/exec/reference_executor.h"
#include "core/ir/context.h"
#include "core/kernel/kernel_ir.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::reference {

/// A launch argument's memory: a buffer's bytes from the launch offset to its end, or none
/// (an absent library input, output 0 under an epilogue).
struct Bytes {
  bool present = false;
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

/// Runs `k` with argument i over args[i] (each element decoded to float64 / int64, written
/// back rounded to the argument's dtype where the kernel changed it), except its
/// accumulator argument `accArg` (when given), which is bound to *acc: a library call's
/// result. Errors at run time (an access out of range, a failed CHECK) are OUT_OF_RANGE.
Status runKernelOn(const kernel::Kernel& k, const std::vector<Bytes>& args, std::optional<size_t> accArg,
                   exec::HostTensor* acc, const std::map<std::string, int64_t>& symbols);

/// Writes the elements of `now` that differ from `was` in any bit to `base` (encoded in
/// their dtype). Arguments often share one buffer (the memory plan's arena): writing whole
/// tails back would undo a neighbour's stores, and untouched bytes keep their exact pattern.
void writeChanged(const exec::HostTensor& now, const exec::HostTensor& was, uint8_t* base);

/// A tensor descriptor of a library call, copied out of the borrowed call.
struct Descriptor {
  std::optional<ir::DType> dtype;  ///< nullopt: an absent optional input
  std::vector<plugsdk_index_expr_t> sizes, strides;
  plugsdk_index_expr_t offset{};
};

/// What compile_library keeps: the op, its parsed attributes, its descriptors over their own
/// copy of the index pool, and the decoded epilogue.
struct LibraryPlan {
  std::string op;  ///< "prims.matmul", ...
  ir::AttrMap attrs;
  std::vector<Descriptor> inputs, outputs;
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<std::string> symbols;  ///< the call's; launch values: these, then the epilogue's
  std::optional<kernel::Kernel> epilogue;
  std::vector<std::string> epilogueSymbols;
  size_t accumulator = 0;  ///< the epilogue's ACCUMULATOR argument
};

/// Parses a library call's attribute text ("stride = [2, 2], transposed = false, scale = none").
StatusOr<ir::AttrMap> parseAttributes(const std::string& text);

/// Checks and copies a borrowed compile_library call (the SDK layer has checked its shape).
StatusOr<LibraryPlan> planLibrary(const ir::Context& ctx, uint32_t op, const std::string& attributes,
                                  const std::vector<plugsdk_tensor_desc_t>& inputs,
                                  const std::vector<plugsdk_tensor_desc_t>& outputs,
                                  const std::vector<plugsdk_index_insn_t>& pool,
                                  const std::vector<std::string>& symbols, const plugsdk_kernel_t* epilogue);

/// Runs a planned call: buffers in launch order (inputs, outputs, then the epilogue's
/// non-accumulator arguments; data NULL for an absent input and, under an epilogue, output 0).
Status runLibrary(const ir::Context& ctx, const exec::RefKernelTable& kernels, const LibraryPlan& plan,
                  const std::vector<Bytes>& buffers, const std::vector<int64_t>& symbolValues);

}  // namespace plugsdk::reference
