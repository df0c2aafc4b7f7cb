// The kernel status words (common/kernel_status.h) of the OpenCL path: one SVM array per
// client, read and cleared through a queue of its own.
#pragma once

#include <memory>

#include "backends/level_zero/common/kernel_status.h"
#include "backends/level_zero/opencl/device.h"

namespace plugsdk::level_zero::opencl {

using level_zero::KernelStatus;

/// Allocates and zeroes the words on `device` (which outlives them).
sdk::StatusOr<std::unique_ptr<KernelStatus>> createKernelStatus(const Device& device);

}  // namespace plugsdk::level_zero::opencl
