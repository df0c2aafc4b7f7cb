// dlopen of cuBLASLt, once per library name and process.
#include "backends/cuda/library/cublaslt_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace plugsdk::cuda::lt {

sdk::Status Api::check(Status s, const std::string& what) const {
  if (s == kSuccess) return sdk::Status::ok();
  static const std::map<int, const char*> names = {
      {1, "NOT_INITIALIZED"}, {3, "ALLOC_FAILED"},      {7, "INVALID_VALUE"},   {8, "ARCH_MISMATCH"},
      {11, "MAPPING_ERROR"},  {13, "EXECUTION_FAILED"}, {14, "INTERNAL_ERROR"}, {15, "NOT_SUPPORTED"}};
  auto it = names.find(s);
  return sdk::internalError(what + ": cuBLASLt status " + std::to_string(s) + " (CUBLAS_STATUS_" +
                            (it != names.end() ? it->second : "?") + ")");
}

namespace {

sdk::StatusOr<std::shared_ptr<const Api>> loadFrom(const std::string& library) {
  std::vector<std::string> tries;
  if (!library.empty()) {
    tries.push_back(library);
  } else {
    for (const char* v : {"13", "12", "11"}) tries.push_back(std::string("libcublasLt.so.") + v);
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(env)) tries.push_back(std::string(root) + "/lib64/libcublasLt.so");
    tries.push_back("/usr/local/cuda/lib64/libcublasLt.so");
  }
  std::string why;
  for (const std::string& file : tries) {
    // Never closed: kernels it loaded into contexts outlive any one client.
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      why += "\n  " + file + ": " + (e ? e : "cannot load");
      continue;
    }
    auto api = std::make_shared<Api>();
    api->path = file;
#define PLUGSDK_CUBLASLT_RESOLVE(name, symbol, type)                        \
  api->name = reinterpret_cast<std::add_pointer_t<type>>(dlsym(h, symbol)); \
  if (!api->name) return sdk::notFound("cuBLASLt " + file + " lacks " + symbol);
    PLUGSDK_CUBLASLT_FUNCTIONS(PLUGSDK_CUBLASLT_RESOLVE)
#undef PLUGSDK_CUBLASLT_RESOLVE
    return std::shared_ptr<const Api>(std::move(api));
  }
  return sdk::notFound("no cuBLASLt library could be loaded; tried:" + why);
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

}  // namespace plugsdk::cuda::lt
