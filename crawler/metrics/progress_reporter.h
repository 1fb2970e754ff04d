// ProgressReporter: the one-line progress display of a running crawl.
//
// The crawl loop calls Update() as often as it likes (e.g. after every fetch); a line
// "\r<pages> pages  <rate> pages/s  <queued> queued  <hosts> hosts  <errors> errors" (and, in a
// re-crawl, "  <n> not modified  <n> unchanged  <n> changed") is printed at most once per interval,
// only when enabled — by default when stderr is a terminal, so logs and pipes never fill with
// carriage returns. Finish() ends the line.
// Thread-safety: all methods are safe to call concurrently.
#ifndef URLSIEVE_CRAWLER_METRICS_PROGRESS_REPORTER_H_
#define URLSIEVE_CRAWLER_METRICS_PROGRESS_REPORTER_H_

#include <cstdint>
#include <cstdio>
#include <mutex>

#include "base/clock.h"

namespace urlsieve {

struct ProgressSample {
  uint64_t pages = 0;
  uint64_t queued = 0;
  uint64_t hosts = 0;
  uint64_t errors = 0;
  // A re-crawl's re-fetches by what they found (shown once any is counted).
  uint64_t not_modified = 0;
  uint64_t unchanged = 0;
  uint64_t changed = 0;
};

class ProgressReporter {
 public:
  // Writes to `out` when `enabled`; `clock` must outlive the reporter.
  ProgressReporter(std::FILE* out, bool enabled, const Clock* clock,
                   Clock::Duration interval = std::chrono::milliseconds(250));
  // True when stderr is a terminal: the default for `enabled`.
  static bool StderrIsTerminal();

  // Prints a line if enabled and the interval has passed; returns whether it printed. The rate is
  // measured over the time since the previous line.
  bool Update(const ProgressSample& sample);
  // Prints the final line (unthrottled) and a newline, if enabled and anything was printed.
  void Finish(const ProgressSample& sample);

 private:
  void Print(const ProgressSample& sample, Clock::TimePoint now);  // requires mu_

  std::FILE* const out_;
  const bool enabled_;
  const Clock* const clock_;
  const Clock::Duration interval_;
  std::mutex mu_;
  bool printed_ = false;
  Clock::TimePoint last_time_;
  uint64_t last_pages_ = 0;
  double rate_ = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_METRICS_PROGRESS_REPORTER_H_
