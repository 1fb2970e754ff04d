#include "tools/site_server/http_date.h"

#include <time.h>

#include <cstdio>

namespace urlsieve::site {

std::string FormatHttpDate(int64_t unix_seconds) {
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char out[40];
  std::snprintf(out, sizeof(out), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return out;
}

std::optional<int64_t> ParseHttpDate(std::string_view text) {
  // strptime's %a/%b names are the C locale's, which is what HTTP uses: this process never calls
  // setlocale.
  static const char* const kForms[] = {
      "%a, %d %b %Y %H:%M:%S GMT",  // IMF-fixdate
      "%A, %d-%b-%y %H:%M:%S GMT",  // rfc850-date (two-digit year: 69-99 19xx, 00-68 20xx)
      "%a %b %e %H:%M:%S %Y",       // asctime-date
  };
  const std::string value(text);
  for (const char* form : kForms) {
    struct tm tm {};
    const char* end = strptime(value.c_str(), form, &tm);
    if (end != nullptr && *end == '\0') return static_cast<int64_t>(timegm(&tm));
  }
  return std::nullopt;
}

}  // namespace urlsieve::site
