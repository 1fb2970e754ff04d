#include "errors.h"

namespace urlsieve::node {

const char* JsErrorCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kCorruption:
      return "CORRUPTION";
    case StatusCode::kIoError:
      return "IO_ERROR";
    case StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case StatusCode::kUnsupported:
      return "UNSUPPORTED";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
  }
  return "INTERNAL";
}

Napi::Error StatusError(Napi::Env env, const std::string& what, const Status& status) {
  Napi::Error error = Napi::Error::New(env, "urlsieve: " + what + ": " + status.message());
  error.Set("code", Napi::String::New(env, JsErrorCode(status.code())));
  return error;
}

Napi::TypeError ArgTypeError(Napi::Env env, const std::string& message) {
  Napi::TypeError error = Napi::TypeError::New(env, "urlsieve: " + message);
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  return error;
}

}  // namespace urlsieve::node
