// The plugin loader: finds backend plugins by name on a search path, loads them, negotiates
// the ABI version and validates the function table. Every failure -- a missing file or
// entry symbol, a refusal, a major version it does not speak, a table too small or with
// missing functions, a crash during load -- is an error naming the plugin file and the
// cause; the core keeps working with its other backends.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/support/status.h"
#include "plugsdk/plugsdk.h"

namespace plugsdk::plugin {

/// A loaded plugin: its library stays loaded while this object lives.
class Plugin {
 public:
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& path() const { return path_; }
  const plugsdk_api_t& api() const { return *api_; }
  uint32_t abiMajor() const { return api_->abi_major; }
  uint32_t abiMinor() const { return api_->abi_minor; }
  std::string name() const;
  /// buffer_import (ABI 1.1), or null: the plugin's table is a 1.0 one (it ends before the
  /// entry) or leaves it NULL.
  decltype(plugsdk_api_t::buffer_import) bufferImportFn() const {
    return api_->struct_size >= PLUGSDK_API_SIZE_V1_1 ? api_->buffer_import : nullptr;
  }
  /// stream_import (ABI 1.2), or null: an older table, or the entry left NULL.
  decltype(plugsdk_api_t::stream_import) streamImportFn() const {
    return api_->struct_size >= PLUGSDK_API_SIZE_V1_2 ? api_->stream_import : nullptr;
  }
  /// Whether the plugin records streams (ABI 1.9): a table that large with all four
  /// recording entries set.
  bool records() const {
    return api_->struct_size >= PLUGSDK_API_SIZE_V1_9 && api_->recording_begin && api_->recording_end &&
           api_->recording_launch && api_->recording_destroy;
  }
  /// Converts a plugin error (and destroys it) into a Status naming the plugin and call.
  Status check(plugsdk_error_t* err, const std::string& call) const;

 private:
  friend class Loader;
  Plugin() = default;
  std::string path_;
  void* handle_ = nullptr;
  const plugsdk_api_t* api_ = nullptr;
};

class Loader {
 public:
  /// Directories searched in order for lib<plugsdk_NAME>.so.
  explicit Loader(std::vector<std::string> searchPath) : searchPath_(std::move(searchPath)) {}
  /// PLUGSDK_PLUGIN_PATH (colon-separated), the install directory, then the plugin
  /// directories beside the running executable (a build tree's or a relocated install's).
  static std::vector<std::string> defaultSearchPath();

  /// The file for `name` ("null" -> <dir>/libplugsdk_null.so); a name containing '/' is a path.
  StatusOr<std::string> find(const std::string& name) const;
  /// Loads and validates. `probe` first loads the plugin in a child process, so that a
  /// plugin that crashes while loading is reported instead of taking the core down.
  StatusOr<std::shared_ptr<Plugin>> load(const std::string& name, bool probe = true) const;
  /// Plugin names found on the search path.
  std::vector<std::string> available() const;
  const std::vector<std::string>& searchPath() const { return searchPath_; }

 private:
  std::vector<std::string> searchPath_;
};

}  // namespace plugsdk::plugin
