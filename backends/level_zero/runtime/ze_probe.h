// The Level Zero runtime's first call, for the no-device reason until the runtime itself
// exists (docs/level-zero-backend.md, step 3): dlopen of the loader, zeInit, zeDriverGet.
// On these machines there is no Intel GPU driver and zeInit answers 0x78000001.
#pragma once

#include <string>

namespace plugsdk::level_zero {

/// Why runtime=level_zero has no device: "Level Zero: zeInit returned 0x78000001
/// (ZE_RESULT_ERROR_UNINITIALIZED: no driver)", "Level Zero: cannot load ...", or, where a
/// driver answers, that the runtime is not built yet. `library`: "" for libze_loader.so.1.
std::string levelZeroNoDeviceReason(const std::string& library);

}  // namespace plugsdk::level_zero
