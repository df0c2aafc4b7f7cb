// The OpenCL runtime of the plugin (common/runtime.h, option runtime=opencl): the device that
// takes SPIR-V and SVM (PoCL's CPU device in CI), SVM allocations, in-order queues, markers
// as events, programs built with clBuildProgram.
#pragma once

#include <memory>
#include <string>

#include "backends/level_zero/common/runtime.h"

namespace plugsdk::level_zero::opencl {

/// Opens the runtime on `library` ("" for libOpenCL.so.1). FAILED_PRECONDITION, saying why,
/// where there is no OpenCL or no device that takes SPIR-V and SVM (the plugin has no
/// device then); other errors are errors.
sdk::StatusOr<std::unique_ptr<Runtime>> openRuntime(const std::string& library);

}  // namespace plugsdk::level_zero::opencl
