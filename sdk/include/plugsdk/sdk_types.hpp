// plugsdk/sdk_types.hpp -- the C++ layer's value types and handle classes: Options, the
// handle bases a plugin derives from (Buffer, Stream, Event, Recording, Executable),
// DeviceCount, DeviceInfo and the checked requests its methods receive. Part of
// plugsdk.hpp (include that one; see its comment for the layer as a whole).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "plugsdk/kernel_view.hpp"
#include "plugsdk/plugsdk.h"
#include "plugsdk/status.hpp"

namespace plugsdk::sdk {

namespace detail {
template <typename B>
struct Plugin;
class ClientBase;
}  // namespace detail

/// The "key=value;..." options string of client_create, parsed. Entries are separated by
/// ';', empty entries are skipped, a later key overrides an earlier one.
class Options {
 public:
  /// Parses `text`; an entry without '=' or with an empty key is INVALID_ARGUMENT.
  static StatusOr<Options> parse(std::string_view text) {
    Options o;
    o.raw_ = std::string(text);
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find(';', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view entry = text.substr(start, end - start);
      start = end + 1;
      if (entry.empty()) continue;
      const size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0)
        return invalidArgument("option '" + std::string(entry) + "' is not key=value");
      o.entries_.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
    return o;
  }
  /// The text as given ("" for NULL).
  const std::string& raw() const { return raw_; }
  /// Whether `key` was given.
  bool has(std::string_view key) const { return find(key) != nullptr; }
  /// The value of `key`, or `fallback`.
  std::string get(std::string_view key, std::string_view fallback = "") const {
    const std::string* v = find(key);
    return v ? *v : std::string(fallback);
  }
  /// Every entry in order (duplicates included).
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  const std::string* find(std::string_view key) const {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (it->first == key) return &it->second;
    return nullptr;
  }
  std::string raw_;
  std::vector<std::pair<std::string, std::string>> entries_;
};

/// The kinds of object behind the ABI's opaque handles.
enum class HandleKind : uint32_t { kClient = 1, kBuffer, kStream, kEvent, kExecutable, kRecording };

/// The base of every object handed to the core as an opaque handle. It records its kind and
/// the client that made it, which the trampolines check before casting a handle back.
class Handle {
 public:
  virtual ~Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  HandleKind kind() const { return static_cast<HandleKind>(magic_ - kMagic); }

 protected:
  explicit Handle(HandleKind kind) : magic_(kMagic + static_cast<uint64_t>(kind)) {}

 private:
  template <typename B>
  friend struct detail::Plugin;
  static constexpr uint64_t kMagic = 0x706c756773646b00ull;  // "plugsdk\0"
  uint64_t magic_;
  const void* owner_ = nullptr;  // the client that made it
};

/// Device memory (plugsdk_buffer_t). Derive your buffer from it; device(), memoryKind() and
/// bytes() are set by the layer from buffer_allocate's arguments before any method sees it.
class Buffer : public Handle {
 public:
  Buffer() : Handle(HandleKind::kBuffer) {}
  uint32_t device() const { return device_; }
  uint32_t memoryKind() const { return memoryKind_; }
  uint64_t bytes() const { return bytes_; }

 private:
  template <typename B>
  friend struct detail::Plugin;
  uint32_t device_ = 0, memoryKind_ = 0;
  uint64_t bytes_ = 0;
};

/// An in-order queue of work on one device (plugsdk_stream_t). device() is set by the layer.
class Stream : public Handle {
 public:
  Stream() : Handle(HandleKind::kStream) {}
  uint32_t device() const { return device_; }

 private:
  template <typename B>
  friend struct detail::Plugin;
  uint32_t device_ = 0;
};

/// A point in a stream (plugsdk_event_t).
class Event : public Handle {
 public:
  Event() : Handle(HandleKind::kEvent) {}
};

/// Work recorded from a stream (plugsdk_recording_t, ABI 1.9). Derive your recording from it;
/// device() is the recorded stream's, set by the layer.
class Recording : public Handle {
 public:
  Recording() : Handle(HandleKind::kRecording) {}
  uint32_t device() const { return device_; }

 private:
  template <typename B>
  friend struct detail::Plugin;
  uint32_t device_ = 0;
};

/// A compiled kernel, library call or subgraph (plugsdk_executable_t). The layer records
/// what it was compiled from, to check launch's arity.
class Executable : public Handle {
 public:
  /// What launch's buffer count is not checked against.
  static constexpr size_t kUnknown = SIZE_MAX;
  enum class Origin { kKernel, kLibrary, kSubgraph };

  Executable() : Handle(HandleKind::kExecutable) {}
  uint32_t device() const { return device_; }
  Origin origin() const { return origin_; }
  /// The buffers and symbol values a launch must pass (kUnknown when the layer cannot tell).
  size_t numBuffers() const { return numBuffers_; }
  size_t numSymbols() const { return numSymbols_; }
  /// Compiler messages, returned by executable_log. Set it while compiling: the pointer the
  /// core receives must stay valid until the executable is destroyed.
  void setLog(std::string log) { log_ = std::move(log); }
  const std::string& log() const { return log_; }

 private:
  template <typename B>
  friend struct detail::Plugin;
  uint32_t device_ = 0;
  Origin origin_ = Origin::kKernel;
  size_t numBuffers_ = kUnknown, numSymbols_ = kUnknown;
  std::string log_;
};

/// device_count's answer: 0 devices is valid (with a reason, e.g. "no driver").
struct DeviceCount {
  uint32_t count = 0;
  std::string reason;  ///< "" for none
};

/// plugsdk_device_info_t in C++ types (same meaning, field by field; see docs/abi/reference.md).
struct DeviceInfo {
  std::string name;  ///< kept by the layer while the client lives
  uint32_t dtypes = 0;
  uint32_t vectorBits = 0;
  uint32_t memoryKinds = 0;
  uint64_t memoryBytes = 0;
  uint64_t maxBufferBytes = 0;
  uint32_t libraryOps = 0;
  uint32_t epilogueOps = 0;
  uint32_t maxKernelStmts = 0;
  bool fusesHorizontal = false;
  bool fusesReductionEpilogue = false;
  bool fusesMultiReduction = false;
  bool takesSubgraphs = false;  ///< only with Backend::kTakesSubgraphs
  /// ABI 1.3: failures of launches on imported streams are raised by the native runtime.
  bool asyncStreamFailures = false;
  /// ABI 1.4: the forms of prims.convolution taken when libraryOps has it: dtypeBits() of the
  /// input dtypes (0: every dtype), and whether transposed convolutions are left out. The
  /// core expands the other calls into loops.
  uint32_t convolutionDtypes = 0;
  bool convolutionSkipsTransposed = false;
  /// ABI 1.5: split reductions. A reduction over the innermost dim that keeps fewer rows than
  /// splitRowReductions is computed in two stages (partials over slices of its outermost
  /// reduced dims, then their reduction) so that rows x slices reaches it;
  /// splitColumnReductions the same for a column sum (columns x slices). 0: never.
  uint32_t splitRowReductions = 0;
  uint32_t splitColumnReductions = 0;
  /// ABI 1.6: the forms of prims.matmul taken when libraryOps has it: dtypeBits() of the
  /// operand dtypes (0: every dtype). The core expands the other calls into loops.
  uint32_t matmulDtypes = 0;
  /// ABI 1.7: the forms of prims.sdpa taken when libraryOps has it: dtypeBits() of the query
  /// dtypes (0: every dtype), plugsdk_sdpa_skip_t bits of the forms left to the core, and the
  /// head dims taken (E and Ev at most sdpaHeadDimMax, multiples of sdpaHeadDimMultiple; 0: any).
  uint32_t sdpaDtypes = 0;
  uint32_t sdpaSkips = 0;
  uint16_t sdpaHeadDimMax = 0;
  uint16_t sdpaHeadDimMultiple = 0;
};

/// PLUGSDK_DTYPE_BIT of each dtype, or-ed: `dtypeBits({PLUGSDK_DTYPE_F32, PLUGSDK_DTYPE_I64})`.
inline uint32_t dtypeBits(std::initializer_list<plugsdk_dtype_t> dtypes) {
  uint32_t bits = 0;
  for (plugsdk_dtype_t d : dtypes) bits |= PLUGSDK_DTYPE_BIT(d);
  return bits;
}

/// buffer_copy, checked: the buffers the kind needs are present and the ranges lie within
/// them; the others are NULL.
template <typename BufferT, typename StreamT>
struct CopyRequest {
  StreamT* stream;  ///< NULL: synchronous
  plugsdk_copy_kind_t kind;
  BufferT* src;  ///< DEVICE_TO_HOST, DEVICE_TO_DEVICE
  uint64_t srcOffset;
  BufferT* dst;  ///< HOST_TO_DEVICE, DEVICE_TO_DEVICE
  uint64_t dstOffset;
  const void* hostSrc;  ///< HOST_TO_DEVICE: borrowed until the copy completes
  void* hostDst;        ///< DEVICE_TO_HOST: written when the copy completes
  uint64_t bytes;
};

/// buffer_fill, checked: patternBytes is 1, 2, 4 or 8, bytes a multiple of it, the range
/// within the buffer.
template <typename BufferT, typename StreamT>
struct FillRequest {
  StreamT* stream;  ///< NULL: synchronous
  BufferT& buffer;
  uint64_t offset;
  uint64_t bytes;
  const uint8_t* pattern;
  uint32_t patternBytes;
};

/// launch, checked: every buffer belongs to this client (NULL only for an absent input of a
/// library call), offsets lie within their buffers, counts match what was compiled (where
/// the layer can tell: Executable::numBuffers / numSymbols).
template <typename BufferT, typename StreamT, typename ExecutableT>
struct LaunchRequest {
  StreamT* stream;  ///< NULL: synchronous
  const ExecutableT& executable;
  Span<BufferT* const> buffers;
  Span<const uint64_t> offsets;  ///< bytes, one per buffer
  Span<const int64_t> symbolValues;
};

/// compile_library, checked: op is one library op bit, arrays are present, every
/// descriptor's index programs are well formed over `symbols`, the epilogue is valid.
struct LibraryCall {
  uint32_t device;
  plugsdk_library_op_t op;
  std::string_view attributes;  ///< the prim's attributes in .pgraph syntax
  Span<const plugsdk_tensor_desc_t> inputs;
  Span<const plugsdk_tensor_desc_t> outputs;
  Span<const plugsdk_index_insn_t> indexPool;  ///< evaluate descriptors with evalIndex over it
  Span<const char* const> symbols;             ///< launch values: these, then the epilogue's own symbols
  const KernelView* epilogue;                  ///< NULL: none
};

/// compile_subgraph: a verified prim graph in the .pgraph text form.
struct SubgraphCall {
  uint32_t device;
  std::string_view graphText;
  Span<const char* const> symbols;
  std::string_view options;
};

}  // namespace plugsdk::sdk
