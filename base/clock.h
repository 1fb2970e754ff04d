// Clock: the frontier's source of time, injectable so that politeness is tested without sleeping.
//
// SystemClock reads std::chrono::steady_clock. ManualClock (for tests and simulations) only moves
// when told to. Besides Now(), a clock knows how to wait: WaitUntil() blocks on a condition
// variable until it is notified or the deadline passes *on this clock*. A ManualClock never sleeps
// in real time: waiters block until notified, and Advance()/Set() call the wake-up callbacks that
// waiters registered with AddWakeup(), so a frontier blocked in next() wakes when test time moves.
// WallNow() is the calendar time, needed to turn an HTTP-date (Retry-After) into a delay.
//
// Thread-safety: all methods are safe to call from any number of threads.
#ifndef URLSIEVE_BASE_CLOCK_H_
#define URLSIEVE_BASE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace urlsieve {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  virtual WallTime WallNow() const = 0;

  // Blocks (releasing `lock`) until `cv` is notified or `deadline` has passed on this clock.
  // May return early (spuriously); callers re-check their condition.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline) const = 0;

  // Registers a callback run whenever the clock jumps (never, for a real clock). The callback
  // must not call back into the clock. Returns a handle for RemoveWakeup().
  virtual uint64_t AddWakeup(std::function<void()> /*wake*/) { return 0; }
  // After it returns, the callback is not running and will not run again.
  virtual void RemoveWakeup(uint64_t /*handle*/) {}
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) const override {
    cv.wait_until(lock, deadline);
  }
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint(std::chrono::hours(1)),
                       WallTime wall_start = WallTime(std::chrono::seconds(1'700'000'000)))
      : start_(start), wall_start_(wall_start), now_(start.time_since_epoch().count()) {}

  TimePoint Now() const override {
    return TimePoint(Duration(now_.load(std::memory_order_acquire)));
  }
  WallTime WallNow() const override {
    return wall_start_ + std::chrono::duration_cast<WallTime::duration>(Now() - start_);
  }
  // Waits for a notification only: a manual deadline passes only when someone moves the clock,
  // and that runs the wake-up callbacks.
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) const override {
    if (Now() < deadline) cv.wait(lock);
  }

  void Advance(Duration d) {
    now_.fetch_add(d.count(), std::memory_order_acq_rel);
    Wake();
  }
  // Moves to `t` if that is later than now (never backwards, so concurrent callers are safe).
  void AdvanceTo(TimePoint t) {
    Duration::rep cur = now_.load(std::memory_order_acquire);
    while (
        cur < t.time_since_epoch().count() &&
        !now_.compare_exchange_weak(cur, t.time_since_epoch().count(), std::memory_order_acq_rel)) {
    }
    Wake();
  }
  void Set(TimePoint t) {
    now_.store(t.time_since_epoch().count(), std::memory_order_release);
    Wake();
  }

  uint64_t AddWakeup(std::function<void()> wake) override {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wakeups_.emplace(++next_handle_, std::move(wake));
    return next_handle_;
  }
  void RemoveWakeup(uint64_t handle) override {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wakeups_.erase(handle);
  }

 private:
  // Holding wake_mu_ while calling the callbacks is what lets RemoveWakeup() promise that no
  // callback runs afterwards. A callback takes its owner's mutex to notify, and waiters never
  // take wake_mu_ while holding that mutex, so there is no lock-order cycle.
  void Wake() {
    std::lock_guard<std::mutex> lock(wake_mu_);
    for (auto& [handle, wake] : wakeups_) wake();
  }

  const TimePoint start_;
  const WallTime wall_start_;
  std::atomic<Duration::rep> now_;
  std::mutex wake_mu_;
  uint64_t next_handle_ = 0;
  std::map<uint64_t, std::function<void()>> wakeups_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_BASE_CLOCK_H_
