#include "base/status.h"

namespace urlsieve {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kCorruption: return "corruption";
    case StatusCode::kIoError: return "I/O error";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kUnavailable: return "unavailable";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace urlsieve
