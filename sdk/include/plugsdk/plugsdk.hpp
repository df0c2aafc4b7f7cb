// plugsdk/plugsdk.hpp -- the C++17 convenience layer for plugin authors, header-only, over
// the C ABI in plugsdk.h. It adds nothing to the ABI: a plugin written with it exports the
// same plugsdk_plugin_init and the same plugsdk_api_t as a C plugin. What it gives a vendor:
//
//  - a class per client (derived from plugsdk::sdk::Backend<...>) whose virtual methods take
//    and return C++ types; every method not overridden answers UNIMPLEMENTED;
//  - handles that are the vendor's own classes (derived from Buffer, Stream, Event,
//    Executable), checked at the boundary: a NULL handle, a handle of another kind or of
//    another client is INVALID_ARGUMENT, never a crash;
//  - argument checking done once: args != NULL, args->struct_size large enough, required
//    pointers present, devices, memory kinds, copy and fill ranges within their buffers,
//    kernels well formed (KernelView::validate), launch arities; each error names the C
//    function ("buffer_copy: args->dst is NULL");
//  - no exception crosses the C boundary: std::bad_alloc becomes RESOURCE_EXHAUSTED and any
//    other exception INTERNAL with its what();
//  - errors (struct plugsdk_error is defined here, so a plugin using this header must not
//    define it), error_info and error_destroy, and the version negotiation of the entry point.
//
// Example: a complete plugin with one host device and host buffers (everything else answers
// UNIMPLEMENTED). Build it as a shared library with hidden visibility (-fvisibility=hidden;
// the entry point is exported explicitly), so that two plugins never share inline symbols.
//
//   #include "plugsdk/plugsdk.hpp"
//   namespace sdk = plugsdk::sdk;
//
//   struct HostBuffer : sdk::Buffer {
//     std::vector<uint8_t> bytes;
//   };
//
//   class HostBackend : public sdk::Backend<HostBuffer> {
//    public:
//     sdk::StatusOr<sdk::DeviceCount> deviceCount() override { return sdk::DeviceCount{1, ""}; }
//     sdk::StatusOr<sdk::DeviceInfo> deviceInfo(uint32_t) override {
//       sdk::DeviceInfo d;
//       d.name = "host0";
//       d.memoryKinds = PLUGSDK_MEMORY_HOST;
//       return d;
//     }
//     sdk::StatusOr<std::unique_ptr<HostBuffer>> allocate(uint32_t, uint32_t, uint64_t bytes) override {
//       auto b = std::make_unique<HostBuffer>();
//       b->bytes.resize(bytes);  // std::bad_alloc becomes RESOURCE_EXHAUSTED
//       return b;
//     }
//   };
//
//   PLUGSDK_DEFINE_PLUGIN(HostBackend, "host", "0.1.0")
//
// Everything is in namespace plugsdk::sdk; plugsdk/status.hpp (Status, StatusOr, Span) and
// plugsdk/kernel_view.hpp (KernelView, evalIndex) are included. The layer lives in three
// headers this one includes: sdk_types.hpp (options, handle classes, device info, checked
// requests), sdk_backend.hpp (the Backend template) and sdk_trampolines.hpp (the C table).
#pragma once

#include "plugsdk/sdk_trampolines.hpp"  // sdk_types.hpp, sdk_backend.hpp

/// Defines the plugin's exported entry point, plugsdk_plugin_init, for the Backend-derived
/// class `Class` ("name" and "version" are string literals: the table's plugin_name and
/// plugin_version). Use it once, at namespace scope, in one source file of the plugin.
#define PLUGSDK_DEFINE_PLUGIN(Class, name, version)                                                    \
  extern "C" PLUGSDK_EXPORT const plugsdk_api_t* plugsdk_plugin_init(plugsdk_init_args_t* args) {      \
    static_assert(sizeof(name) > 1 && sizeof(version) > 1, "name and version are non-empty literals"); \
    return ::plugsdk::sdk::detail::Plugin<Class>::init(args, name, version);                           \
  }
