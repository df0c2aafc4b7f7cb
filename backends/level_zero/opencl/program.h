// SPIR-V modules built for the OpenCL device (clCreateProgramWithIL + clBuildProgram), and
// the kernels in them launched over the flattened grid: one work-item per grid point, as
// spirv/lower_kernel.h's entry points expect, their parameters set as that header orders
// them (argument pointers, the status word, the size symbols).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/level_zero/common/runtime.h"
#include "backends/level_zero/opencl/device.h"
#include "backends/level_zero/opencl/kernel_status.h"
#include "plugsdk/kernel_view.hpp"

namespace plugsdk::level_zero::opencl {

/// A built program (released with the last kernel that uses it).
struct Program : RuntimeModule {
  const Api* api = nullptr;
  cl_program program = nullptr;
  ~Program() override;
};

/// The command that reproduces a build of `file` outside plugsdk (the build tool of
/// build_main.cc, which runs buildProgram on the same device).
std::string reproduceCommand(const std::string& file);

/// Builds `words` for `device`. When the consumer rejects the module, INTERNAL with its
/// build log, the module written to `keepDir` (or $TMPDIR, or /tmp) as `stem`.spv, and the
/// command that reproduces the build (`what` names the module in the message).
sdk::StatusOr<std::shared_ptr<Program>> buildProgram(const Device& device, const std::vector<uint32_t>& words,
                                                     const std::string& what, const std::string& stem,
                                                     const std::string& keepDir);

/// A kernel ready to launch (common/runtime.h): its program's kernel object.
struct Kernel : RuntimeKernel {
  const Api* api = nullptr;
  std::shared_ptr<Program> program;
  cl_kernel kernel = nullptr;
  ~Kernel() override;
};

/// The kernel `entry` of `program`, for launches of a kernel of this shape (a library
/// kernel's names only itself).
sdk::StatusOr<std::unique_ptr<Kernel>> createKernel(const Api& api, std::shared_ptr<Program> program,
                                                    const std::string& entry, LaunchShape shape);

/// Enqueues `k` on `queue` over groups[0] x groups[1] x groups[2] work-groups of local[]
/// work-items (the module's LocalSize), with these parameters (a library kernel).
sdk::Status launchGroups(Kernel& k, const std::vector<KernelParam>& params, const std::array<uint32_t, 3>& local,
                         const std::array<uint64_t, 3>& groups, cl_command_queue queue);

/// Enqueues `k` on `queue` (not waited for): one work-item per grid point, the buffers'
/// addresses (launch offsets applied) and the symbols' values as its parameters.
sdk::Status launchKernel(Kernel& k, const std::vector<void*>& args, const std::vector<int64_t>& symbols,
                         cl_command_queue queue);

}  // namespace plugsdk::level_zero::opencl
