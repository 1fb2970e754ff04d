#include "crawler/metrics/progress_reporter.h"

#include <unistd.h>

namespace urlsieve {

ProgressReporter::ProgressReporter(std::FILE* out, bool enabled, const Clock* clock,
                                   Clock::Duration interval)
    : out_(out), enabled_(enabled), clock_(clock), interval_(interval), last_time_(clock->Now()) {}

bool ProgressReporter::StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

bool ProgressReporter::Update(const ProgressSample& sample) {
  if (!enabled_) return false;
  Clock::TimePoint now = clock_->Now();
  std::lock_guard<std::mutex> lock(mu_);
  if (now - last_time_ < interval_) return false;
  Print(sample, now);
  return true;
}

void ProgressReporter::Finish(const ProgressSample& sample) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!printed_) return;
  Print(sample, clock_->Now());
  std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressReporter::Print(const ProgressSample& s, Clock::TimePoint now) {
  double seconds = std::chrono::duration<double>(now - last_time_).count();
  if (seconds > 0 && s.pages >= last_pages_) rate_ = (s.pages - last_pages_) / seconds;
  last_time_ = now;
  last_pages_ = s.pages;
  // The trailing spaces overwrite what remains of a longer previous line.
  std::fprintf(out_, "\r%llu pages  %.1f pages/s  %llu queued  %llu hosts  %llu errors   ",
               static_cast<unsigned long long>(s.pages), rate_,
               static_cast<unsigned long long>(s.queued), static_cast<unsigned long long>(s.hosts),
               static_cast<unsigned long long>(s.errors));
  if (s.not_modified + s.unchanged + s.changed > 0) {
    std::fprintf(out_, "%llu not modified  %llu unchanged  %llu changed   ",
                 static_cast<unsigned long long>(s.not_modified),
                 static_cast<unsigned long long>(s.unchanged),
                 static_cast<unsigned long long>(s.changed));
  }
  std::fflush(out_);
  printed_ = true;
}

}  // namespace urlsieve
