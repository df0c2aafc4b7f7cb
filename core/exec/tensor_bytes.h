// HostTensor elements as the bytes a device stores: little-endian, one element after the
// other in the dtype's native size (f16 and bf16 as their 16-bit patterns, bool as one
// byte 0/1). The device path and the .npy files share these conversions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/exec/host_tensor.h"

namespace plugsdk::exec {

/// Writes t's elements (row-major) to dst, which holds numel * dtypeSize bytes.
void encodeElements(const HostTensor& t, void* dst);
/// A tensor of `shape` whose elements are read from src (numel * dtypeSize bytes).
HostTensor decodeElements(DType dtype, const std::vector<int64_t>& shape, const void* src);

}  // namespace plugsdk::exec
