// dlopen of libcuda.so.1 and cuInit, once per process.
#include "backends/cuda/driver/cuda_api.h"

#include <dlfcn.h>

#include <mutex>

namespace plugsdk::cuda {

std::string DriverApi::errorText(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (getErrorName) getErrorName(r, &name);
  if (getErrorString) getErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

sdk::Status DriverApi::check(CUresult r, const std::string& what) const {
  if (r == CUDA_SUCCESS) return sdk::Status::ok();
  const std::string msg = what + ": " + errorText(r);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return sdk::resourceExhausted(msg);
  return sdk::internalError(msg);
}

namespace {

sdk::StatusOr<std::shared_ptr<const DriverApi>> load(const std::string& library) {
  const std::string file = library.empty() ? "libcuda.so.1" : library;
  // Never closed: the driver keeps threads and contexts that outlive any one client.
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    return sdk::failedPrecondition("no CUDA driver: cannot load " + file + " (" + (why ? why : "unknown") +
                                   "); is the NVIDIA driver installed?");
  }
  auto api = std::make_shared<DriverApi>();
#define PLUGSDK_CUDA_RESOLVE(name, symbol, type)                            \
  api->name = reinterpret_cast<std::add_pointer_t<type>>(dlsym(h, symbol)); \
  if (!api->name) return sdk::failedPrecondition("the CUDA driver " + file + " lacks " + symbol + " (driver too old?)");
  PLUGSDK_CUDA_DRIVER_FUNCTIONS(PLUGSDK_CUDA_RESOLVE)
#undef PLUGSDK_CUDA_RESOLVE
  const CUresult r = api->init(0);
  if (r != CUDA_SUCCESS)
    return sdk::failedPrecondition("cuInit failed: " + api->errorText(r) +
                                   (r == CUDA_ERROR_NO_DEVICE ? "; no CUDA GPU is visible" : ""));
  api->driverGetVersion(&api->version);
  return std::shared_ptr<const DriverApi>(std::move(api));
}

}  // namespace

sdk::StatusOr<std::shared_ptr<const DriverApi>> loadDriver(const std::string& library) {
  // One attempt per library name and process: cuInit is not repeated per client.
  static std::mutex mu;
  static std::string loadedName;
  static sdk::StatusOr<std::shared_ptr<const DriverApi>> loaded = sdk::failedPrecondition("not loaded");
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried || loadedName != library) {
    loaded = load(library);
    loadedName = library;
    tried = true;
  }
  return loaded;
}

}  // namespace plugsdk::cuda
