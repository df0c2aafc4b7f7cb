// The Level Zero runtime of the plugin (common/runtime.h, option runtime=level_zero, the
// default): the first GPU of the loader's drivers (ze_device.h), USM allocations, one
// in-order immediate command list per queue, events from one-event pools, modules from the
// lowering's SPIR-V (zeModuleCreate, ZE_MODULE_FORMAT_IL_SPIRV; a rejected module's build
// log, kept .spv and reproducing command in the error), kernels launched over the flattened
// grid with the group size the driver suggests, and the status words in USM host memory,
// which the host reads once the work that wrote them has finished.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/level_zero/common/runtime.h"
#include "backends/level_zero/runtime/ze_device.h"

namespace plugsdk::level_zero::ze {

/// Opens the runtime on the loader `library` ("" for libze_loader.so.1). FAILED_PRECONDITION,
/// saying why, where there is no loader, driver or GPU (the plugin has no device then).
sdk::StatusOr<std::unique_ptr<Runtime>> openRuntime(const std::string& library);

/// The command that reproduces the build of `file` for the device named `device` outside
/// plugsdk (Intel's offline compiler, which runs the same IGC the driver does).
std::string reproduceCommand(const std::string& file, const std::string& device);

/// The group size for `points` work-items, from the size the driver suggests for
/// `suggestedFor` (the points rounded up to a multiple of 64, so that a prime count does not
/// get groups of 1), and the number of groups. INVALID_ARGUMENT when the groups exceed
/// `maxGroupCountX`.
struct Groups {
  uint32_t size = 0, count = 0;
};
uint64_t suggestedFor(uint64_t points);
sdk::StatusOr<Groups> groupsFor(uint64_t points, uint32_t suggested, uint32_t maxGroupCountX,
                                const std::string& kernel);

}  // namespace plugsdk::level_zero::ze
