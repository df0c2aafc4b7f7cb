// plugsdk/status.hpp -- errors as values and a read-only span for C++ plugin code (part of
// the header-only C++17 layer over plugsdk.h; see plugsdk.hpp). Nothing here is ABI: it is
// compiled into the plugin and never crosses the C boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "plugsdk/plugsdk.h"

namespace plugsdk::sdk {

/// The canonical codes of plugsdk_code_t, as a C++ enum (same values).
enum class Code : uint32_t {
  kOk = PLUGSDK_CODE_OK,
  kInvalidArgument = PLUGSDK_CODE_INVALID_ARGUMENT,
  kNotFound = PLUGSDK_CODE_NOT_FOUND,
  kUnimplemented = PLUGSDK_CODE_UNIMPLEMENTED,
  kFailedPrecondition = PLUGSDK_CODE_FAILED_PRECONDITION,
  kOutOfRange = PLUGSDK_CODE_OUT_OF_RANGE,
  kInternal = PLUGSDK_CODE_INTERNAL,
  kUnavailable = PLUGSDK_CODE_UNAVAILABLE,
  kResourceExhausted = PLUGSDK_CODE_RESOURCE_EXHAUSTED,
};

/// Success, or an error code with a message. What plugin methods return; the layer turns a
/// non-ok Status into a plugsdk_error_t at the C boundary.
class [[nodiscard]] Status {
 public:
  /// Success.
  Status() = default;
  /// An error (or success when `code` is kOk; the message is then ignored).
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  /// Success, spelled out.
  static Status ok() { return Status(); }
  /// Whether this is success.
  bool isOk() const { return code_ == Code::kOk; }
  /// The code (kOk on success).
  Code code() const { return code_; }
  /// The message ("" on success).
  const std::string& message() const { return message_; }
  /// A copy whose message is prefixed with "context: " (success stays success).
  Status withContext(const std::string& context) const {
    return isOk() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

/// Error factories, one per code.
inline Status invalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status notFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status unimplemented(std::string m) { return Status(Code::kUnimplemented, std::move(m)); }
inline Status failedPrecondition(std::string m) { return Status(Code::kFailedPrecondition, std::move(m)); }
inline Status outOfRange(std::string m) { return Status(Code::kOutOfRange, std::move(m)); }
inline Status internalError(std::string m) { return Status(Code::kInternal, std::move(m)); }
inline Status unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
inline Status resourceExhausted(std::string m) { return Status(Code::kResourceExhausted, std::move(m)); }

/// A value or an error. Implicit from both, so `return value;` and `return notFound(...);`
/// both work in a function returning StatusOr<T>.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  /// An error. An ok Status without a value is turned into an INTERNAL error.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.isOk()) status_ = internalError("StatusOr built from an ok Status without a value");
  }
  /// A value (two overloads, so that `return local;` moves in C++17).
  StatusOr(const T& value) : value_(value) {}        // NOLINT: implicit by design
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  /// A value convertible to T (e.g. std::unique_ptr<Derived> for std::unique_ptr<Base>).
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status>>>
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT: implicit by design

  /// Whether it holds a value.
  bool isOk() const { return value_.has_value(); }
  /// Success, or the error.
  const Status& status() const { return status_; }
  /// The value; only valid when isOk().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

/// A read-only view of `size` contiguous elements (std::span is C++20; this layer is C++17).
/// It does not own the elements: keep what it views alive while it is used.
template <typename T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  /// Any contiguous container with data() and size() (std::vector, std::array, std::string).
  template <typename C, typename = std::enable_if_t<std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>>
  constexpr Span(C& c) : data_(c.data()), size_(c.size()) {}  // NOLINT: implicit by design

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace plugsdk::sdk

/// PLUGSDK_STRUCT_SIZE without its C cast (so that -Wold-style-cast stays quiet in C++):
/// the bytes of `type` up to and including `field`.
#define PLUGSDK_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(decltype(type::field)))

/// Returns from the enclosing function when `expr` (a Status) is an error.
#define PLUGSDK_RETURN_IF_ERROR(expr)                    \
  do {                                                   \
    ::plugsdk::sdk::Status plugsdk_status_ = (expr);     \
    if (!plugsdk_status_.isOk()) return plugsdk_status_; \
  } while (false)
