#include "crawler/crawl/decision_message.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace urlsieve {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Action = DoneDecision::Action;

DoneDecision Decision(Action action, RejectReason reason, uint32_t attempt, uint32_t max,
                      Clock::Duration wait) {
  DoneDecision d;
  d.action = action;
  d.reason = reason;
  d.attempt = attempt;
  d.max_attempts = max;
  d.wait = wait;
  return d;
}

TEST(DecisionMessageTest, FormatsDurationsForPeople) {
  EXPECT_EQ(FormatDuration(milliseconds(10)), "10 ms");
  EXPECT_EQ(FormatDuration(seconds(5)), "5 s");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(FormatDuration(seconds(600)), "10 min");
  EXPECT_EQ(FormatDuration(std::chrono::hours(5)), "5 h");
  EXPECT_EQ(FormatDuration(seconds(999999)), "11 d 13 h");
}

TEST(DecisionMessageTest, SaysWhatFailedTheWaitAndTheAttempt) {
  EXPECT_EQ(
      DescribeDecision("http://a:1/robots.txt", true, "connect: refused",
                       Decision(Action::kRetry, RejectReason::kFetchFailed, 1, 5, seconds(5))),
      "http://a:1/robots.txt: connect: refused; attempt 1 of 5 failed, retrying in 5 s (the "
      "origin waits for its robots.txt)");
  EXPECT_EQ(
      DescribeDecision("http://a:1/x", false, "HTTP 500",
                       Decision(Action::kRetry, RejectReason::kFetchFailed, 2, 3, seconds(10))),
      "http://a:1/x: HTTP 500; attempt 2 of 3 failed, retrying after the host's back-off of "
      "10 s");
  EXPECT_EQ(
      DescribeDecision("http://a:1/x", false, "HTTP 500",
                       Decision(Action::kGiveUp, RejectReason::kFetchFailed, 3, 3, seconds(20))),
      "http://a:1/x: HTTP 500; attempt 3 of 3 failed, giving up on this URL (fetch_failed); the "
      "host backs off 20 s");
  EXPECT_EQ(DescribeDecision("http://a:1/x", false, "HTTP 503 (Retry-After: 999999)",
                             Decision(Action::kRetired, RejectReason::kRetryAfterTooLong, 1, 3,
                                      seconds(999999))),
            "http://a:1/x: HTTP 503 (Retry-After: 999999); the server asks to wait 11 d 13 h "
            "(Retry-After), more than max_retry_after: host retired, its URLs are rejected "
            "(retry_after_too_long)");
  EXPECT_EQ(DescribeDecision("https://a:1/robots.txt", true, "tls: certificate",
                             Decision(Action::kRetired, RejectReason::kTlsError, 1, 1, {})),
            "https://a:1/robots.txt: tls: certificate; a permanent failure, not retried: the "
            "origin's URLs are rejected (tls_error)");
  EXPECT_EQ(DescribeDecision("http://a:1/x", false, "HTTP 200", DoneDecision{}), "");
}

TEST(DecisionMessageTest, EscapesControlBytesFromTheServer) {
  const std::string line =
      DescribeDecision("http://a:1/x", false, "HTTP 503 (Retry-After: \x1b[2J\r\n)",
                       Decision(Action::kRetry, RejectReason::kFetchFailed, 1, 3, seconds(1)));
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("Retry-After: \\x1b[2J\\x0d\\x0a)"), std::string::npos) << line;
  const std::string longer =
      DescribeDecision("http://a:1/x", false, std::string(100'000, 'x'),
                       Decision(Action::kRetry, RejectReason::kFetchFailed, 1, 3, seconds(1)));
  EXPECT_LT(longer.size(), 400u);
}

}  // namespace
}  // namespace urlsieve
