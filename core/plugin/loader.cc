// Loader: search, crash probe (fork), dlopen, version negotiation, table validation.
#include "core/plugin/loader.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace plugsdk::plugin {

namespace fs = std::filesystem;

#ifndef PLUGSDK_INSTALL_PLUGIN_DIR
#define PLUGSDK_INSTALL_PLUGIN_DIR "/usr/local/lib/plugsdk/plugins"
#endif

namespace {

constexpr const char* kPrefix = "libplugsdk_";

/// The table's required functions, by name (all of ABI 1.0 except compile_subgraph).
struct Required {
  const char* name;
  const void* fn;
};
std::vector<Required> requiredFunctions(const plugsdk_api_t& a) {
  auto p = [](auto f) { return reinterpret_cast<const void*>(f); };
  return {{"error_destroy", p(a.error_destroy)},
          {"error_info", p(a.error_info)},
          {"client_create", p(a.client_create)},
          {"client_destroy", p(a.client_destroy)},
          {"device_count", p(a.device_count)},
          {"device_info", p(a.device_info)},
          {"buffer_allocate", p(a.buffer_allocate)},
          {"buffer_free", p(a.buffer_free)},
          {"buffer_copy", p(a.buffer_copy)},
          {"buffer_fill", p(a.buffer_fill)},
          {"stream_create", p(a.stream_create)},
          {"stream_destroy", p(a.stream_destroy)},
          {"stream_synchronize", p(a.stream_synchronize)},
          {"event_create", p(a.event_create)},
          {"event_record", p(a.event_record)},
          {"event_wait", p(a.event_wait)},
          {"event_synchronize", p(a.event_synchronize)},
          {"event_destroy", p(a.event_destroy)},
          {"compile_kernel", p(a.compile_kernel)},
          {"compile_library", p(a.compile_library)},
          {"executable_destroy", p(a.executable_destroy)},
          {"executable_log", p(a.executable_log)},
          {"launch", p(a.launch)}};
}

/// dlopen + entry + init. Returns the table or an error (the handle is closed on error).
StatusOr<const plugsdk_api_t*> openAndInit(const std::string& path, void** handleOut) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return unavailable("plugin " + path + ": cannot load: " + (e ? e : "unknown dlopen error"));
  }
  dlerror();
  void* sym = dlsym(h, PLUGSDK_ENTRY_SYMBOL);
  if (!sym) {
    dlclose(h);
    return invalidArgument("plugin " + path + " does not export " + PLUGSDK_ENTRY_SYMBOL +
                           " (is it a plugsdk plugin? see backends/null/README.md)");
  }
  plugsdk_init_args_t args{};
  args.struct_size = sizeof(args);
  args.core_abi_major = PLUGSDK_ABI_VERSION_MAJOR;
  args.core_abi_minor = PLUGSDK_ABI_VERSION_MINOR;
  auto init = reinterpret_cast<plugsdk_plugin_init_fn>(sym);
  const plugsdk_api_t* api = init(&args);
  if (!api) {
    // Copy the reason first: it lives in the plugin's memory, gone after dlclose.
    const std::string reason = args.out_refusal ? args.out_refusal : "no reason given";
    dlclose(h);
    return failedPrecondition("plugin " + path + " refused this core (ABI " +
                              std::to_string(PLUGSDK_ABI_VERSION_MAJOR) + "." +
                              std::to_string(PLUGSDK_ABI_VERSION_MINOR) + "): " + reason);
  }
  *handleOut = h;
  return api;
}

Status validate(const std::string& path, const plugsdk_api_t& api) {
  const std::string core = std::to_string(PLUGSDK_ABI_VERSION_MAJOR) + "." + std::to_string(PLUGSDK_ABI_VERSION_MINOR);
  if (api.struct_size < sizeof(size_t) + sizeof(void*) + 2 * sizeof(uint32_t))
    return invalidArgument("plugin " + path + " returned a function table of " + std::to_string(api.struct_size) +
                           " bytes: too small to hold its version");
  if (api.abi_major != PLUGSDK_ABI_VERSION_MAJOR)
    return failedPrecondition("plugin " + path + " implements ABI " + std::to_string(api.abi_major) + "." +
                              std::to_string(api.abi_minor) + "; this core implements ABI " + core +
                              " (major versions are not compatible: rebuild the plugin against this SDK)");
  if (api.struct_size < PLUGSDK_API_SIZE_V1_0)
    return invalidArgument("plugin " + path + " returned a function table of " + std::to_string(api.struct_size) +
                           " bytes; ABI 1.0 needs at least " + std::to_string(PLUGSDK_API_SIZE_V1_0));
  for (const Required& r : requiredFunctions(api))
    if (!r.fn) return invalidArgument("plugin " + path + ": the function table has no " + r.name + " (NULL)");
  return Status::ok();
}

}  // namespace

Plugin::~Plugin() {
  if (handle_) dlclose(handle_);
}

std::string Plugin::name() const {
  return api_ && api_->plugin_name ? api_->plugin_name : fs::path(path_).filename().string();
}

Status Plugin::check(plugsdk_error_t* err, const std::string& call) const {
  if (!err) return Status::ok();
  plugsdk_error_info_args_t info{};
  info.struct_size = sizeof(info);
  info.error = err;
  std::string message = "(no message)";
  uint32_t code = PLUGSDK_CODE_INTERNAL;
  plugsdk_error_t* infoErr = api_->error_info(&info);
  if (!infoErr) {
    code = info.out_code;
    if (info.out_message) message = info.out_message;
  }
  for (plugsdk_error_t* e : {infoErr, err}) {
    if (!e) continue;
    plugsdk_error_destroy_args_t d{};
    d.struct_size = sizeof(d);
    d.error = e;
    api_->error_destroy(&d);
  }
  // Plugins often start messages with the function's name; say it once.
  const std::string fn = call.substr(0, call.find_first_of(" ("));
  if (message.rfind(fn + ": ", 0) == 0) message = message.substr(fn.size() + 2);
  const StatusCode sc =
      code >= 1 && code <= PLUGSDK_CODE_RESOURCE_EXHAUSTED ? static_cast<StatusCode>(code) : StatusCode::kInternal;
  return Status(sc, "plugin " + name() + " (" + path_ + "): " + call + ": " + message);
}

std::vector<std::string> Loader::defaultSearchPath() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("PLUGSDK_PLUGIN_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  out.push_back(PLUGSDK_INSTALL_PLUGIN_DIR);
  // Beside the running program: build/bin/../plugins in a build tree,
  // <prefix>/bin/../lib/plugsdk/plugins in an install moved from where it was configured.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const char* rel : {"../plugins", "../lib/plugsdk/plugins"}) {
      const std::string dir = (exe.parent_path() / rel).lexically_normal().string();
      if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
    }
  return out;
}

StatusOr<std::string> Loader::find(const std::string& name) const {
  if (name.find('/') != std::string::npos) {
    if (!fs::exists(name)) return notFound("plugin file " + name + " does not exist");
    return name;
  }
  std::string tried;
  for (const std::string& dir : searchPath_) {
    const fs::path p = fs::path(dir) / (kPrefix + name + ".so");
    std::error_code ec;
    if (fs::exists(p, ec)) return p.string();
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  return notFound("no plugin named '" + name + "' (looked for " + tried +
                  "; set PLUGSDK_PLUGIN_PATH to the directory that holds it)");
}

StatusOr<std::shared_ptr<Plugin>> Loader::load(const std::string& name, bool probe) const {
  ASSIGN_OR_RETURN(std::string path, find(name));
  if (probe) {
    // Load and validate in a child first: a crash there is reported, not suffered.
    const pid_t pid = fork();
    if (pid < 0) return unavailable("plugin " + path + ": cannot fork a probe process: " + std::strerror(errno));
    if (pid == 0) {
      void* h = nullptr;
      auto api = openAndInit(path, &h);
      _exit(api.isOk() ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
      return internalError("plugin " + path + " crashed while loading (signal " + std::to_string(WTERMSIG(status)) +
                           ", " + strsignal(WTERMSIG(status)) + "); it was not loaded into this process");
    // The probe exits 0 or 3 by itself; any other exit is the plugin's (an exit() in its init,
    // or a sanitizer that turned its crash into exit 1): as bad as a crash in this process.
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3)
      return internalError("plugin " + path + " ended the process while loading (exit status " +
                           std::to_string(WEXITSTATUS(status)) + "); it was not loaded into this process");
  }
  void* handle = nullptr;
  ASSIGN_OR_RETURN(const plugsdk_api_t* api, openAndInit(path, &handle));
  std::shared_ptr<Plugin> plugin(new Plugin());
  plugin->path_ = path;
  plugin->handle_ = handle;
  plugin->api_ = api;
  RETURN_IF_ERROR(validate(path, *api));
  return plugin;
}

std::vector<std::string> Loader::available() const {
  std::vector<std::string> out;
  for (const std::string& dir : searchPath_) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (f.rfind(kPrefix, 0) == 0 && f.size() > 3 && f.substr(f.size() - 3) == ".so") {
        const std::string n = f.substr(std::strlen(kPrefix), f.size() - std::strlen(kPrefix) - 3);
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace plugsdk::plugin
