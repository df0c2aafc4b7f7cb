// Errors as values inside the core: Status and StatusOr<T>, plus the RETURN_IF_ERROR /
// ASSIGN_OR_RETURN macros. Turned into exceptions only at the Python boundary, and into
// ABI error objects only at the C ABI boundary.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace plugsdk {

/// Canonical error codes (the same set the C ABI exposes).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  ///< bad input: malformed text, wrong arity, shape mismatch
  kNotFound,         ///< unknown op, missing file or symbol
  kUnimplemented,    ///< valid request that this component does not support
  kFailedPrecondition,
  kOutOfRange,
  kInternal,     ///< a bug in plugsdk
  kUnavailable,  ///< a device or driver is not there
  kResourceExhausted,
};

const char* statusCodeName(StatusCode code);

/// A success or an error with a code and a human-readable message naming the problem.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool isOk() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "invalid_argument: message" (or "ok").
  std::string toString() const;

  /// Returns a copy whose message is prefixed with `context: `.
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
inline Status notFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
inline Status unimplemented(std::string msg) { return {StatusCode::kUnimplemented, std::move(msg)}; }
inline Status unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
inline Status failedPrecondition(std::string msg) { return {StatusCode::kFailedPrecondition, std::move(msg)}; }
inline Status internalError(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
inline Status outOfRange(std::string msg) { return {StatusCode::kOutOfRange, std::move(msg)}; }
inline Status resourceExhausted(std::string msg) { return {StatusCode::kResourceExhausted, std::move(msg)}; }

/// A value or an error. Accessing value() of an error is a bug (asserts in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.isOk() && "StatusOr built from an ok Status without a value");
    if (status_.isOk()) status_ = internalError("StatusOr built from an ok Status without a value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool isOk() const { return status_.isOk(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(isOk());
    return *value_;
  }
  const T& value() const& {
    assert(isOk());
    return *value_;
  }
  T&& value() && {
    assert(isOk());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace plugsdk

#define PLUGSDK_CONCAT_INNER(a, b) a##b
#define PLUGSDK_CONCAT(a, b) PLUGSDK_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function if `expr` is an error.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::plugsdk::Status plugsdk_status_ = (expr);          \
    if (!plugsdk_status_.isOk()) return plugsdk_status_; \
  } while (0)

/// `ASSIGN_OR_RETURN(auto x, f());` declares x from a StatusOr, or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL(PLUGSDK_CONCAT(plugsdk_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.isOk()) return tmp.status();       \
  lhs = std::move(tmp).value()
