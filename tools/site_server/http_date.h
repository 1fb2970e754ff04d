// HTTP-date (RFC 9110 §5.6.7) for the test servers' Last-Modified and If-Modified-Since.
//
// FormatHttpDate writes the preferred IMF-fixdate form; ParseHttpDate accepts all three forms a
// recipient must accept (IMF-fixdate, rfc850-date, asctime-date) and nothing else.
// Thread-safety: pure functions.
#ifndef URLSIEVE_TOOLS_SITE_SERVER_HTTP_DATE_H_
#define URLSIEVE_TOOLS_SITE_SERVER_HTTP_DATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace urlsieve::site {

// "Sun, 06 Nov 1994 08:49:37 GMT" for `unix_seconds`.
std::string FormatHttpDate(int64_t unix_seconds);

// Seconds since the Unix epoch, or nullopt when `text` is not exactly one HTTP-date.
std::optional<int64_t> ParseHttpDate(std::string_view text);

}  // namespace urlsieve::site

#endif  // URLSIEVE_TOOLS_SITE_SERVER_HTTP_DATE_H_
