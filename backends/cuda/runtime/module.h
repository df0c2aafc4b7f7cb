// A PTX module loaded by the driver (its JIT compiles the PTX for the device; the driver
// keeps its own cache of the results), and the launch of a generated kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/codegen/nvptx.h"
#include "backends/cuda/driver/cuda_api.h"
#include "backends/cuda/runtime/kernel_status.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::cuda {

/// A kernel ready to launch: its module, function, and copies of what a launch evaluates.
struct LoadedKernel {
  const DriverApi* api = nullptr;
  CUcontext context = nullptr;  ///< the module's (made current to unload it)
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string name;
  ThreadMapping mapping;
  std::vector<plugsdk_index_insn_t> pool;
  std::vector<plugsdk_index_expr_t> grid;
  KernelStatus* status = nullptr;  ///< the client's, which outlives its executables
  uint32_t statusSlot = 0;
  int multiprocessors = 1;        ///< the device's, for the split of reductions
  CUdeviceptr splitCounters = 0;  ///< the module's split arrival counters (block_group.h)
  ~LoadedKernel();
};

/// Loads `ptx` in the current context. When the driver rejects it, the error carries its
/// log, and the PTX is written to `keepDir` (or the temporary directory) with the ptxas
/// command that reproduces the failure.
sdk::StatusOr<std::unique_ptr<LoadedKernel>> loadKernel(const DriverApi& api, const sdk::KernelView& k,
                                                        const PtxKernel& ptx, const GpuArch& arch,
                                                        const std::string& keepDir);

/// Launches `k` on `stream` with the buffers' device addresses and the symbols' values, its
/// blocks laid out by its thread mapping (codegen/kernel_wrapper.h).
sdk::Status launchKernel(const LoadedKernel& k, const std::vector<CUdeviceptr>& args,
                         const std::vector<int64_t>& symbols, CUdeviceptr status, CUstream stream);

}  // namespace plugsdk::cuda
