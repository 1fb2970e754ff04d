#include "crawler/crawl/seen_retry.h"

#include <algorithm>
#include <cstdio>

namespace urlsieve {
namespace {

constexpr std::chrono::milliseconds kStopPoll{100};

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

SeenRetry::SeenRetry(SeenRetryOptions options, std::function<void(const std::string&)> say)
    : options_(std::move(options)), say_(std::move(say)) {}

Status SeenRetry::Run(const std::function<Status()>& call,
                      std::chrono::steady_clock::duration* retried_for) {
  std::chrono::milliseconds wait = options_.first_wait;
  bool failed = false;
  std::chrono::steady_clock::time_point first_failure;
  if (retried_for != nullptr) *retried_for = std::chrono::steady_clock::duration::zero();
  for (;;) {
    const auto started = std::chrono::steady_clock::now();
    Status status = call();
    if (failed && retried_for != nullptr) *retried_for = started - first_failure;
    if (status.code() != StatusCode::kUnavailable) {
      Answered();
      return status;
    }
    if (!failed) first_failure = started;
    failed = true;
    Failed(status);
    if (!Wait(wait)) return status;
    wait = std::min(wait * 2, options_.max_wait);
  }
}

void SeenRetry::Failed(const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (outage_) return;
  outage_ = true;
  outage_began_ = std::chrono::steady_clock::now();
  std::string message = options_.what;
  message += " does not answer (";
  message += status.message();
  message += "); retrying with back-off (";
  message += Seconds(options_.first_wait);
  message += " doubling to ";
  message += Seconds(options_.max_wait);
  message += ") until it does; no URL is dropped";
  say_(message);
}

void SeenRetry::Answered() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!outage_) return;
  outage_ = false;
  std::string message = options_.what;
  message += " answers again after ";
  message += Seconds(std::chrono::steady_clock::now() - outage_began_);
  message += "; continuing";
  say_(message);
}

bool SeenRetry::Wait(std::chrono::milliseconds duration) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stop_ || (options_.stop_requested && options_.stop_requested())) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    auto slice = deadline - now;
    if (options_.stop_requested)
      slice = std::min<std::chrono::steady_clock::duration>(slice, kStopPoll);
    stop_cv_.wait_for(lock, slice, [this] { return stop_; });
  }
}

void SeenRetry::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
}

bool SeenRetry::stopped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_ || (options_.stop_requested && options_.stop_requested());
}

bool SeenRetry::in_outage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outage_;
}

}  // namespace urlsieve
