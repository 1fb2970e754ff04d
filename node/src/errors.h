// Errors for JavaScript: a urlsieve Status becomes an `Error` whose `code` names the status
// ("INVALID_ARGUMENT", "UNAVAILABLE", ...; the C API's URLSIEVE_* names without the prefix), so a
// caller can branch on `err.code` instead of parsing messages.
//
// Thread-safety: call on the JavaScript thread only (they create JavaScript values).
#ifndef URLSIEVE_NODE_SRC_ERRORS_H_
#define URLSIEVE_NODE_SRC_ERRORS_H_

#include <napi.h>

#include <string>

#include "base/status.h"

namespace urlsieve::node {

// "INVALID_ARGUMENT" for StatusCode::kInvalidArgument, and so on.
const char* JsErrorCode(StatusCode code);
// An Error (a TypeError is never made from a Status: a Status is about values, not types) whose
// message is `what` + ": " + the status's message, with `code` set.
Napi::Error StatusError(Napi::Env env, const std::string& what, const Status& status);
// A TypeError with code "ERR_INVALID_ARG_TYPE", as Node's own functions throw for a wrong type.
Napi::TypeError ArgTypeError(Napi::Env env, const std::string& message);

}  // namespace urlsieve::node

#endif  // URLSIEVE_NODE_SRC_ERRORS_H_
