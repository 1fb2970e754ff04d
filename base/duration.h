// ParseDuration / FormatDuration: the spelling of a time span in options ("7d", "12h", "90m",
// "30s", "0"), shared by every command that takes one (--revisit-after, the re-crawl intervals).
//
// Thread-safety: pure functions.
#ifndef URLSIEVE_BASE_DURATION_H_
#define URLSIEVE_BASE_DURATION_H_

#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace urlsieve {

// A non-negative whole number followed by one unit: s, m, h, d or w ("0" alone needs none).
// InvalidArgument naming the text and the accepted form otherwise (a fraction, a negative
// number, an unknown unit, an overflow).
Result<std::chrono::seconds> ParseDuration(std::string_view text);

// The shortest exact spelling: 604800 s -> "7d" (weeks are not used), 5400 s -> "90m", 0 -> "0".
std::string FormatDuration(std::chrono::seconds duration);

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_DURATION_H_
