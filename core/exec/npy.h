// Reading and writing HostTensors as NumPy .npy files (format 1.0), for the CLI and the
// torch-oracle tests. bf16 has no NumPy dtype: it is written and read as float32.
#pragma once

#include <string>

#include "core/exec/host_tensor.h"
#include "core/support/status.h"

namespace plugsdk::exec {

/// Reads a .npy file (little-endian f8 f4 f2 i8 i4 i2 i1 u1 b1, C order).
StatusOr<HostTensor> readNpy(const std::string& path);
Status writeNpy(const std::string& path, const HostTensor& t);

}  // namespace plugsdk::exec
