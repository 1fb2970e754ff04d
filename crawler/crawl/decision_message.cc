#include "crawler/crawl/decision_message.h"

#include <chrono>
#include <cstdio>

namespace urlsieve {

std::string FormatDuration(Clock::Duration duration) {
  using std::chrono::duration_cast;
  const auto ms = duration_cast<std::chrono::milliseconds>(duration).count();
  char text[64];
  if (ms < 1000) {
    std::snprintf(text, sizeof(text), "%lld ms", static_cast<long long>(ms));
  } else if (ms < 120'000) {
    if (ms % 1000 == 0) {
      std::snprintf(text, sizeof(text), "%lld s", static_cast<long long>(ms / 1000));
    } else {
      std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000);
    }
  } else if (ms < 2 * 3'600'000LL) {
    std::snprintf(text, sizeof(text), "%lld min", static_cast<long long>(ms / 60'000));
  } else if (ms < 2 * 86'400'000LL) {
    std::snprintf(text, sizeof(text), "%lld h", static_cast<long long>(ms / 3'600'000));
  } else {
    std::snprintf(text, sizeof(text), "%lld d %lld h", static_cast<long long>(ms / 86'400'000),
                  static_cast<long long>(ms % 86'400'000 / 3'600'000));
  }
  return text;
}

namespace {

// Header values come from the server: control bytes are escaped so that they cannot drive the
// terminal, and a value is cut at 200 bytes.
void AppendEscaped(std::string_view text, std::string* out) {
  constexpr size_t kMaxBytes = 200;
  if (text.size() > kMaxBytes) text = text.substr(0, kMaxBytes);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '\\') {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      *out += escaped;
    } else {
      *out += c;
    }
  }
}

}  // namespace

std::string DescribeDecision(std::string_view url, bool robots, std::string_view failure,
                             const DoneDecision& decision) {
  using Action = DoneDecision::Action;
  if (decision.action == Action::kNone) return "";
  std::string line;
  AppendEscaped(url, &line);
  line += ": ";
  AppendEscaped(failure, &line);
  line += "; ";
  const std::string attempts = "attempt " + std::to_string(decision.attempt) + " of " +
                               std::to_string(decision.max_attempts) + " failed";
  const std::string rejected = " (" + std::string(RejectReasonName(decision.reason)) + ")";
  switch (decision.action) {
    case Action::kNone:
      break;
    case Action::kRetry:
      line += attempts;
      line += robots ? ", retrying in " + FormatDuration(decision.wait) +
                           " (the origin waits for its robots.txt)"
                     : ", retrying after the host's back-off of " + FormatDuration(decision.wait);
      break;
    case Action::kGiveUp:
      line += attempts + ", giving up on this URL" + rejected + "; the host backs off " +
              FormatDuration(decision.wait);
      break;
    case Action::kRetired:
      switch (decision.reason) {
        case RejectReason::kRetryAfterTooLong:
          line += "the server asks to wait " + FormatDuration(decision.wait) +
                  " (Retry-After), more than max_retry_after: host retired, its URLs are "
                  "rejected" +
                  rejected;
          break;
        case RejectReason::kRobotsUnreachable:
          line += attempts + ", robots.txt unreachable: the origin's URLs are rejected" + rejected;
          break;
        case RejectReason::kKeyRetired:
          line += "too many consecutive failures: host retired, its URLs are rejected" + rejected;
          break;
        default:
          line += "a permanent failure, not retried: the origin's URLs are rejected" + rejected;
          break;
      }
      break;
  }
  return line;
}

}  // namespace urlsieve
