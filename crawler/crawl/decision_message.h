// DescribeDecision: the log line telling the user what went wrong with a fetch and what the
// frontier decided about it (retry after a back-off, give up on the URL, retire the host), e.g.
//   http://127.0.0.1:9/robots.txt: connect: Connection refused; attempt 1 of 5 failed, retrying
//   in 5 s (the origin waits for its robots.txt)
// Control bytes in the URL or failure (a Retry-After value is the server's text) are escaped as
// \xNN, and each is cut at 200 bytes. FormatDuration: "250 ms", "5 s", "1.5 s", "10 min",
// "11 d 13 h".
// Thread-safety: pure functions.
#ifndef URLSIEVE_CRAWLER_CRAWL_DECISION_MESSAGE_H_
#define URLSIEVE_CRAWLER_CRAWL_DECISION_MESSAGE_H_

#include <string>
#include <string_view>

#include "base/clock.h"
#include "frontier/frontier.h"

namespace urlsieve {

// `url` is what was fetched (a page, or "<origin>/robots.txt" when `robots`); `failure` is what
// went wrong ("HTTP 503", "timeout: ..."). Returns "" when there is nothing to report.
std::string DescribeDecision(std::string_view url, bool robots, std::string_view failure,
                             const DoneDecision& decision);

std::string FormatDuration(Clock::Duration duration);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_DECISION_MESSAGE_H_
