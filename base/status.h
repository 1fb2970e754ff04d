// Status and Result<T>: errors as values across the urlsieve library boundary.
//
// A Status is either OK or carries a code and a human-readable message. A Result<T> holds either a
// T or a non-OK Status (an expected-like type; std::expected needs C++23). Neither throws.
// Thread-safety: plain values; distinct objects may be used from different threads.
#ifndef URLSIEVE_BASE_STATUS_H_
#define URLSIEVE_BASE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace urlsieve {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input from the caller (a malformed URL, an out-of-range option)
  kNotFound,
  kCorruption,       // a state file or database failed its checks
  kIoError,          // the operating system or SQLite refused an operation
  kFailedPrecondition,
  kUnsupported,      // e.g. a state file written by a newer format version
  kUnavailable,      // a server (Redis) is unreachable, timed out or restarting: worth a retry
};

class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status IoError(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) {
    return {StatusCode::kFailedPrecondition, std::move(msg)};
  }
  static Status Unsupported(std::string msg) { return {StatusCode::kUnsupported, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::string_view StatusCodeName(StatusCode code);

// Result<T>: a T, or the Status explaining why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace urlsieve

// Returns early from the enclosing function when `expr` yields a non-OK Status.
#define URLSIEVE_RETURN_IF_ERROR(expr)              \
  do {                                              \
    ::urlsieve::Status urlsieve_status_ = (expr);   \
    if (!urlsieve_status_.ok()) return urlsieve_status_; \
  } while (0)

#endif  // URLSIEVE_BASE_STATUS_H_
