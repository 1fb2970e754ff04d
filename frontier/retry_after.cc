#include "frontier/retry_after.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "base/strings.h"

namespace urlsieve {
namespace {

// Digits only (no sign), at most 18 of them: a longer delay is handled apart (ParseRetryAfter).
bool ParseDigits(std::string_view s, int64_t* out) {
  if (s.size() > 18) return false;
  const std::optional<uint64_t> value = ParseUint64(s);
  if (!value) return false;
  *out = static_cast<int64_t>(*value);
  return true;
}

int MonthIndex(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i) {
    if (kMonths[i] == name) return i + 1;
  }
  return 0;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "HH:MM:SS" → seconds of the day.
bool ParseTime(std::string_view s, int64_t* seconds) {
  int64_t h = 0, m = 0, sec = 0;
  if (s.size() != 8 || s[2] != ':' || s[5] != ':' || !ParseDigits(s.substr(0, 2), &h) ||
      !ParseDigits(s.substr(3, 2), &m) || !ParseDigits(s.substr(6, 2), &sec) || h > 23 || m > 59 ||
      sec > 60) {
    return false;
  }
  *seconds = h * 3600 + m * 60 + sec;
  return true;
}

// Splits on runs of spaces.
std::array<std::string_view, 6> Words(std::string_view s, size_t* count) {
  std::array<std::string_view, 6> words{};
  *count = 0;
  while (!s.empty()) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    if (s.empty()) break;
    const size_t end = std::min(s.find(' '), s.size());
    if (*count == words.size()) {
      *count = words.size() + 1;  // too many words
      return words;
    }
    words[(*count)++] = s.substr(0, end);
    s.remove_prefix(end);
  }
  return words;
}

// Seconds since the Unix epoch of an HTTP-date, all three forms of RFC 9110 §5.6.7.
std::optional<int64_t> ParseHttpDate(std::string_view s) {
  size_t n = 0;
  const auto w = Words(s, &n);
  int64_t day = 0, year = 0, tod = 0;
  int month = 0;
  if (n == 6 && w[0].size() == 4 && w[0][3] == ',' && w[5] == "GMT") {
    // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
    if (w[1].size() != 2 || !ParseDigits(w[1], &day) || (month = MonthIndex(w[2])) == 0 ||
        w[3].size() != 4 || !ParseDigits(w[3], &year) || !ParseTime(w[4], &tod)) {
      return std::nullopt;
    }
  } else if (n == 4 && !w[0].empty() && w[0].back() == ',' && w[3] == "GMT") {
    // rfc850-date: "Sunday, 06-Nov-94 08:49:37 GMT". Two-digit years: RFC 9110 §5.6.7 says to
    // take the most recent past year with those digits; years ≥ 70 are 19xx, the rest 20xx.
    const std::string_view date = w[1];
    if (date.size() != 9 || date[2] != '-' || date[6] != '-' ||
        !ParseDigits(date.substr(0, 2), &day) || (month = MonthIndex(date.substr(3, 3))) == 0 ||
        !ParseDigits(date.substr(7, 2), &year) || !ParseTime(w[2], &tod)) {
      return std::nullopt;
    }
    year += year >= 70 ? 1900 : 2000;
  } else if (n == 5 && w[0].size() == 3) {
    // asctime-date: "Sun Nov  6 08:49:37 1994"
    if ((month = MonthIndex(w[1])) == 0 || w[2].size() > 2 || !ParseDigits(w[2], &day) ||
        !ParseTime(w[3], &tod) || w[4].size() != 4 || !ParseDigits(w[4], &year)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (day < 1 || day > 31) return std::nullopt;
  return DaysFromCivil(year, month, day) * 86400 + tod;
}

}  // namespace

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value,
                                                    std::chrono::system_clock::time_point now) {
  value = Trim(value);
  int64_t seconds = 0;
  if (ParseDigits(value, &seconds)) return std::chrono::seconds(seconds);
  if (value.size() > 18 && value.find_first_not_of("0123456789") == std::string_view::npos) {
    return std::chrono::seconds(INT32_MAX);  // absurdly long delta: the caller caps it
  }
  const std::optional<int64_t> when = ParseHttpDate(value);
  if (!when) return std::nullopt;
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return std::chrono::seconds(*when > now_s ? *when - now_s : 0);
}

}  // namespace urlsieve
