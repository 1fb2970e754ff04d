// Clock: the frontier's source of time, injectable so that politeness is tested without sleeping.
//
// SystemClock reads std::chrono::steady_clock. ManualClock (for tests and simulations) only moves
// when told to. Thread-safety: both are safe to call from any number of threads.
#ifndef URLSIEVE_FRONTIER_CLOCK_H_
#define URLSIEVE_FRONTIER_CLOCK_H_

#include <atomic>
#include <chrono>

namespace urlsieve {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint(std::chrono::hours(1))) : now_(start.time_since_epoch().count()) {}
  TimePoint Now() const override {
    return TimePoint(Duration(now_.load(std::memory_order_acquire)));
  }
  void Advance(Duration d) { now_.fetch_add(d.count(), std::memory_order_acq_rel); }
  void Set(TimePoint t) { now_.store(t.time_since_epoch().count(), std::memory_order_release); }

 private:
  std::atomic<Duration::rep> now_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_CLOCK_H_
