// A fused epilogue run as its own kernel after the library op (what cuBLASLt's epilogues,
// epilogue_match.h, do not cover, and every epilogue of a convolution): the op computes its
// result into a row-major temporary of the ACCUMULATOR argument's dtype (as the ABI lays it
// out), then the epilogue kernel, compiled like any other, reads it there. Its other
// arguments are the launch's buffers after the op's inputs and outputs; its symbols follow
// the op's. An epilogue that also stores the result itself (the op's value is needed
// elsewhere: saved for a backward, read by a later kernel) has that store taken out: the op
// then computes straight into that buffer and the kernel reads it there, which spares the
// temporary's write and the copy.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "backends/cuda/library/matmul_plan.h"
#include "backends/cuda/runtime/module.h"

namespace plugsdk::cuda {

using CompileKernel = std::function<sdk::StatusOr<std::unique_ptr<LoadedKernel>>(const sdk::KernelView&)>;

class EpilogueKernel {
 public:
  /// Compiles `k`; INVALID_ARGUMENT when it has no ACCUMULATOR argument.
  static sdk::StatusOr<std::unique_ptr<EpilogueKernel>> create(const sdk::KernelView& k, size_t numCallSymbols,
                                                               const CompileKernel& compile);
  uint32_t accumulatorDtype() const { return accDtype_; }
  size_t accumulator() const { return accumulator_; }  ///< the ACCUMULATOR argument's index
  size_t numExtraBuffers() const { return numArgs_ - 1; }
  /// The argument the result is stored to unchanged (its store taken out of the kernel), or
  /// -1: the op computes into that buffer, and launch() is given it as `temp`.
  int resultArg() const { return resultArg_; }
  /// The launch's buffer for epilogue argument `arg`: `extra` are the buffers after the op's
  /// outputs, the accumulator skipped.
  CUdeviceptr bufferOf(const CUdeviceptr* extra, int arg) const;
  /// Runs it over `temp` (the op's result); `extra` the launch's buffers after the op's
  /// outputs; `symbols` the launch's (the op's, then the epilogue's).
  sdk::Status launch(CUdeviceptr temp, const CUdeviceptr* extra, const std::vector<int64_t>& symbols,
                     CUstream stream) const;

 private:
  std::unique_ptr<LoadedKernel> kernel_;
  size_t accumulator_ = 0, numArgs_ = 0, numCallSymbols_ = 0;
  // A launch's arguments and symbols, kept to spare each launch its allocations.
  mutable std::vector<CUdeviceptr> args_;
  mutable std::vector<int64_t> symbols_;
  uint32_t accDtype_ = 0;
  int resultArg_ = -1;
};

/// Rewrites `d` as row-major with no gaps at offset 0 (its stride expressions appended to
/// `pool`): the layout of the accumulator temporary, and of a result an epilogue stores.
void makeRowMajor(OperandDesc& d, std::vector<plugsdk_index_insn_t>& pool);

}  // namespace plugsdk::cuda
