// Conditional GET on the test servers: whether a response becomes 304 Not Modified, as an origin
// server decides it (RFC 9110 §13).
//
// A Site only says what it would answer (its ETag and Last-Modified headers among the response's
// headers); SiteServer asks NotModified() with the request's If-None-Match and If-Modified-Since
// and, when it holds, sends NotModifiedResponse() instead. So every Site answers conditional
// requests as soon as it sends validators. The rules:
//   - only a GET or HEAD whose answer would be 2xx is evaluated (§13.2.1: other answers ignore
//     preconditions);
//   - If-None-Match, when present, decides alone (§13.2.2 step 3): 304 when one of its entity-tags
//     matches the ETag by weak comparison (§8.8.3.2), or it is "*"; If-Modified-Since is then
//     ignored (§13.1.3);
//   - otherwise If-Modified-Since (§13.1.3): 304 when the response has a Last-Modified no later
//   than
//     that date; an invalid date, several values, or no Last-Modified means a full answer.
// Thread-safety: pure functions.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_CONDITIONAL_H_
#define URLSIEVE_TOOLS_SITE_SERVER_CONDITIONAL_H_

#include <optional>
#include <string>
#include <string_view>

#include "tools/site_server/site.h"

namespace urlsieve::site {

// A request's preconditions: the header values as sent (several lines joined with ", "), nullopt
// when absent.
struct Preconditions {
  std::optional<std::string> if_none_match;
  std::optional<std::string> if_modified_since;
};

// The value of header `name` (case-insensitive) among response.headers, or nullopt.
std::optional<std::string> HeaderOf(const SiteResponse& response, std::string_view name);

// Whether a `method` request with `preconditions` gets 304 instead of `response`.
bool NotModified(std::string_view method, const Preconditions& preconditions,
                 const SiteResponse& response);

// The 304 sent for `full`: no body, but the 200's Content-Length (§8.6); ETag as the 200 would
// send it; Last-Modified only when there is no ETag (§15.4.5: other representation metadata only
// to guide caches).
SiteResponse NotModifiedResponse(const SiteResponse& full);

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_CONDITIONAL_H_
