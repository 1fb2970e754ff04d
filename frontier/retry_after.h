// ParseRetryAfter: the value of an HTTP Retry-After header as a delay (RFC 9110 §10.2.3).
//
// The value is either delta-seconds or an HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, and the
// obsolete RFC 850 and asctime forms, which recipients must accept). A date in the past yields a
// zero delay. Anything else yields std::nullopt, and the caller falls back to its own back-off.
// Thread-safety: a pure function.
#ifndef URLSIEVE_FRONTIER_RETRY_AFTER_H_
#define URLSIEVE_FRONTIER_RETRY_AFTER_H_

#include <chrono>
#include <optional>
#include <string_view>

namespace urlsieve {

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now);

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_RETRY_AFTER_H_
