// dlopen of cuDNN, once per library name and process.
#include "backends/cuda/library/cudnn_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace plugsdk::cuda::dnn {

sdk::Status Api::check(Status s, const std::string& what) const {
  if (s == kSuccess) return sdk::Status::ok();
  const char* msg = errorString ? errorString(s) : nullptr;
  return sdk::internalError(what + ": cuDNN status " + std::to_string(s) + " (" + (msg ? msg : "?") + ")");
}

namespace {

sdk::StatusOr<std::shared_ptr<const Api>> loadFrom(const std::string& library) {
  std::vector<std::string> tries;
  if (!library.empty()) {
    tries.push_back(library);
  } else {
    for (const char* v : {"9", "8"}) tries.push_back(std::string("libcudnn.so.") + v);
    for (const char* env : {"CUDNN_HOME", "CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(env)) tries.push_back(std::string(root) + "/lib64/libcudnn.so");
    tries.push_back("/usr/local/cuda/lib64/libcudnn.so");
  }
  std::string why;
  for (const std::string& file : tries) {
    // Never closed: its kernels outlive any one client.
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      why += "\n  " + file + ": " + (e ? e : "cannot load");
      continue;
    }
    auto api = std::make_shared<Api>();
    api->path = file;
#define PLUGSDK_CUDNN_RESOLVE(name, symbol, type)                           \
  api->name = reinterpret_cast<std::add_pointer_t<type>>(dlsym(h, symbol)); \
  if (!api->name) return sdk::notFound("cuDNN " + file + " lacks " + symbol);
    PLUGSDK_CUDNN_FUNCTIONS(PLUGSDK_CUDNN_RESOLVE)
#undef PLUGSDK_CUDNN_RESOLVE
    return std::shared_ptr<const Api>(std::move(api));
  }
  return sdk::notFound("no cuDNN library could be loaded; tried:" + why);
}

}  // namespace

sdk::StatusOr<std::shared_ptr<const Api>> load(const std::string& library) {
  static std::mutex mu;
  static std::map<std::string, sdk::StatusOr<std::shared_ptr<const Api>>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(library);
  if (it == loaded.end()) it = loaded.emplace(library, loadFrom(library)).first;
  return it->second;
}

}  // namespace plugsdk::cuda::dnn
