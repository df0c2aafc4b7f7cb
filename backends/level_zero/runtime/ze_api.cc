// dlopen of the Level Zero loader, once per library name and process; result names.
#include "backends/level_zero/runtime/ze_api.h"

#include <dlfcn.h>

#include <cstdio>
#include <map>

#include "backends/level_zero/common/runtime.h"

namespace plugsdk::level_zero::ze {

std::string resultName(ze_result_t r) {
#define PLUGSDK_ZE_RESULT(name) {name, #name}
  static const std::map<ze_result_t, const char*> kNames = {
      PLUGSDK_ZE_RESULT(ZE_RESULT_SUCCESS),
      PLUGSDK_ZE_RESULT(ZE_RESULT_NOT_READY),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_DEVICE_LOST),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_MODULE_LINK_FAILURE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_WARNING_DROPPED_DATA),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNINITIALIZED),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_VERSION),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_SIZE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_OVERLAPPING_REGIONS),
      PLUGSDK_ZE_RESULT(ZE_RESULT_WARNING_ACTION_REQUIRED),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_HANDLE),
      PLUGSDK_ZE_RESULT(ZE_RESULT_ERROR_UNKNOWN),
  };
#undef PLUGSDK_ZE_RESULT
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", static_cast<unsigned>(r));
  const auto it = kNames.find(r);
  return std::string(hex) + " (" + (it == kNames.end() ? "an unknown ze_result_t" : it->second) + ")";
}

sdk::Status Api::check(ze_result_t r, const std::string& what) const {
  if (r == ZE_RESULT_SUCCESS) return sdk::Status::ok();
  const std::string msg = what + ": " + resultName(r);
  switch (r) {
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return sdk::resourceExhausted(msg);
    case ZE_RESULT_ERROR_UNINITIALIZED:
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET:
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: return sdk::failedPrecondition(msg);
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: return sdk::invalidArgument(msg);
    default: return sdk::internalError(msg);
  }
}

namespace {

sdk::StatusOr<std::shared_ptr<const Api>> load(const std::string& library) {
  const std::string file = library.empty() ? "libze_loader.so.1" : library;
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    return sdk::failedPrecondition("Level Zero: cannot load " + file + " (" + (why ? why : "unknown") +
                                   "); install the Level Zero loader (Debian: libze1)");
  }
  auto api = std::make_shared<Api>();
  api->library = file;
#define PLUGSDK_ZE_RESOLVE(name, symbol)                                \
  api->name = reinterpret_cast<decltype(&::symbol)>(dlsym(h, #symbol)); \
  if (!api->name)                                                       \
    return sdk::failedPrecondition("Level Zero: " + file +              \
                                   " lacks " #symbol                    \
                                   " (a loader older than Level Zero 1.6, or not a Level Zero loader)");
  PLUGSDK_ZE_FUNCTIONS(PLUGSDK_ZE_RESOLVE)
#undef PLUGSDK_ZE_RESOLVE
  api->initDrivers = reinterpret_cast<decltype(&::zeInitDrivers)>(dlsym(h, "zeInitDrivers"));
  return std::shared_ptr<const Api>(std::move(api));
}

}  // namespace

sdk::StatusOr<std::shared_ptr<const Api>> loadApi(const std::string& library) { return loadOnce<Api>(library, &load); }

}  // namespace plugsdk::level_zero::ze
