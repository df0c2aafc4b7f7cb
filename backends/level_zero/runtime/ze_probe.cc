// zeInit through dlopen, once per library name and process (see ze_probe.h).
#include "backends/level_zero/runtime/ze_probe.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>

namespace plugsdk::level_zero {

namespace {

using ze_result_t = uint32_t;
constexpr ze_result_t ZE_RESULT_SUCCESS = 0;
constexpr ze_result_t ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string probe(const std::string& library) {
  const std::string file = library.empty() ? "libze_loader.so.1" : library;
  // Never closed: a loaded driver keeps threads.
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    return "Level Zero: cannot load " + file + " (" + (why ? why : "unknown") +
           "); install the Level Zero loader (Debian: libze1)";
  }
  using InitFn = ze_result_t (*)(uint32_t);
  using DriverGetFn = ze_result_t (*)(uint32_t*, void**);
  auto init = reinterpret_cast<InitFn>(dlsym(h, "zeInit"));
  auto driverGet = reinterpret_cast<DriverGetFn>(dlsym(h, "zeDriverGet"));
  if (!init || !driverGet) return "Level Zero: " + file + " lacks zeInit or zeDriverGet";
  const ze_result_t r = init(0);
  if (r == ZE_RESULT_ERROR_UNINITIALIZED)
    return "Level Zero: zeInit returned " + hex(r) + " (ZE_RESULT_ERROR_UNINITIALIZED: no Level Zero driver)";
  if (r != ZE_RESULT_SUCCESS) return "Level Zero: zeInit returned " + hex(r);
  uint32_t drivers = 0;
  const ze_result_t d = driverGet(&drivers, nullptr);
  if (d != ZE_RESULT_SUCCESS) return "Level Zero: zeDriverGet returned " + hex(d);
  if (drivers == 0) return "Level Zero: zeInit succeeded but no driver is present";
  return "Level Zero: " + std::to_string(drivers) +
         " driver(s) present, but this plugin's Level Zero runtime is not built yet "
         "(docs/level-zero-backend.md, step 3); runtime=opencl runs the same SPIR-V through OpenCL";
}

}  // namespace

std::string levelZeroNoDeviceReason(const std::string& library) {
  static std::mutex mu;
  static std::map<std::string, std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  auto it = seen.find(library);
  if (it == seen.end()) it = seen.emplace(library, probe(library)).first;
  return it->second;
}

}  // namespace plugsdk::level_zero
