// dlopen of the OpenCL ICD loader, once per library name and process.
#include "backends/level_zero/opencl/opencl_api.h"

#include <dlfcn.h>

#include <map>

#include "backends/level_zero/common/runtime.h"

namespace plugsdk::level_zero::opencl {

std::string errorName(cl_int r) {
  static const std::map<cl_int, const char*> kNames = {
      {0, "CL_SUCCESS"},
      {-1, "CL_DEVICE_NOT_FOUND"},
      {-2, "CL_DEVICE_NOT_AVAILABLE"},
      {-3, "CL_COMPILER_NOT_AVAILABLE"},
      {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {-5, "CL_OUT_OF_RESOURCES"},
      {-6, "CL_OUT_OF_HOST_MEMORY"},
      {-11, "CL_BUILD_PROGRAM_FAILURE"},
      {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
      {-30, "CL_INVALID_VALUE"},
      {-32, "CL_INVALID_PLATFORM"},
      {-33, "CL_INVALID_DEVICE"},
      {-34, "CL_INVALID_CONTEXT"},
      {-36, "CL_INVALID_COMMAND_QUEUE"},
      {-38, "CL_INVALID_MEM_OBJECT"},
      {-42, "CL_INVALID_BINARY"},
      {-43, "CL_INVALID_BUILD_OPTIONS"},
      {-44, "CL_INVALID_PROGRAM"},
      {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {-46, "CL_INVALID_KERNEL_NAME"},
      {-48, "CL_INVALID_KERNEL"},
      {-49, "CL_INVALID_ARG_INDEX"},
      {-50, "CL_INVALID_ARG_VALUE"},
      {-51, "CL_INVALID_ARG_SIZE"},
      {-52, "CL_INVALID_KERNEL_ARGS"},
      {-53, "CL_INVALID_WORK_DIMENSION"},
      {-54, "CL_INVALID_WORK_GROUP_SIZE"},
      {-55, "CL_INVALID_WORK_ITEM_SIZE"},
      {-56, "CL_INVALID_GLOBAL_OFFSET"},
      {-58, "CL_INVALID_EVENT"},
      {-59, "CL_INVALID_OPERATION"},
      {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  const auto it = kNames.find(r);
  return std::string(it == kNames.end() ? "CL error" : it->second) + " (" + std::to_string(r) + ")";
}

sdk::Status Api::check(cl_int r, const std::string& what) const {
  if (r == CL_SUCCESS) return sdk::Status::ok();
  const std::string msg = what + ": " + errorName(r);
  if (r == CL_MEM_OBJECT_ALLOCATION_FAILURE || r == CL_OUT_OF_RESOURCES || r == CL_OUT_OF_HOST_MEMORY)
    return sdk::resourceExhausted(msg);
  return sdk::internalError(msg);
}

namespace {

sdk::StatusOr<std::shared_ptr<const Api>> load(const std::string& library) {
  const std::string file = library.empty() ? "libOpenCL.so.1" : library;
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    return sdk::failedPrecondition("no OpenCL: cannot load " + file + " (" + (why ? why : "unknown") +
                                   "); install an ICD loader and a platform (Debian: ocl-icd-libopencl1 and "
                                   "pocl-opencl-icd)");
  }
  auto api = std::make_shared<Api>();
  api->library = file;
#define PLUGSDK_OPENCL_RESOLVE(name, symbol, type)                          \
  api->name = reinterpret_cast<std::add_pointer_t<type>>(dlsym(h, symbol)); \
  if (!api->name)                                                           \
    return sdk::failedPrecondition("the OpenCL library " + file + " lacks " + symbol + " (older than OpenCL 2.1?)");
  PLUGSDK_OPENCL_FUNCTIONS(PLUGSDK_OPENCL_RESOLVE)
#undef PLUGSDK_OPENCL_RESOLVE
  return std::shared_ptr<const Api>(std::move(api));
}

}  // namespace

sdk::StatusOr<std::shared_ptr<const Api>> loadApi(const std::string& library) { return loadOnce<Api>(library, &load); }

}  // namespace plugsdk::level_zero::opencl
