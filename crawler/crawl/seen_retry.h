// SeenRetry: runs a seen-set call again, with back-off, for as long as it fails transiently — a
// Redis seen set (dedup/redis_seen_set.h) that is down, restarting or slow returns
// StatusCode::kUnavailable, never a verdict (docs/features/redis-seen-set.md, "The Redis seen
// set"). The crawl's seen insert and `urlsieve filter --redis` go through it, so an outage holds
// them up and loses nothing: the same batch is asked again, and the set answers a retried batch as
// it answered the first run, if that run reached it.
//
// Back-off: first_wait (0.1 s), doubling up to max_wait (5 s), for as long as it takes. It says so
// once per outage (the first failure, naming the server and the error) and once when the set
// answers again (how long it was away), through `say`; calls failing in several threads at once
// make one outage. A non-transient error (a wrong password, a name holding another type, a
// function missing) is returned at once. Stop() (or stop_requested() turning true) ends the waits:
// Run() then returns the last transient error, and the caller decides what the unanswered batch
// becomes (docs/features/redis-seen-set.md: the crawl queues it whole, `filter` prints it whole, so
// nothing is lost).
//
// Thread-safety: Run() may be called from several threads at once; Stop() from any thread.
#ifndef URLSIEVE_CRAWLER_CRAWL_SEEN_RETRY_H_
#define URLSIEVE_CRAWLER_CRAWL_SEEN_RETRY_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "base/status.h"

namespace urlsieve {

// How long after a call's first failure its retry is still answered as the lost run was: a Redis
// seen set replays a batch's answers for 240 s (kPendingLifetime, dedup/redis_seen_set.cc; the
// server keeps them 300 s). A batch answered later than this, after an outage, may be told "seen"
// for keys its lost first run made new: its caller treats the answers as unknown (the crawl queues
// the batch whole, `filter` prints it whole).
inline constexpr std::chrono::seconds kSeenReplayWindow{200};

struct SeenRetryOptions {
  std::chrono::milliseconds first_wait{100};
  std::chrono::milliseconds max_wait{5000};
  // What is being asked, for the messages: "the seen set NAME at redis://host:port/0".
  std::string what;
  // Polled during the waits (every 100 ms at most) when set: true ends them as Stop() does. For a
  // caller whose stop comes from a signal handler, which cannot call Stop().
  std::function<bool()> stop_requested;
};

class SeenRetry {
 public:
  SeenRetry(SeenRetryOptions options, std::function<void(const std::string&)> say);

  // call() until it returns OK or a status other than kUnavailable, or until a stop; returns its
  // last status. *retried_for (if given): the time from the first failure to the last call (zero
  // when the first call answered); compare it with kSeenReplayWindow.
  Status Run(const std::function<Status()>& call,
             std::chrono::steady_clock::duration* retried_for = nullptr);
  void Stop();
  bool stopped() const;
  // Whether a call is failing now (an outage began and has not ended).
  bool in_outage() const;

 private:
  // Waits `duration` unless a stop comes first; false when stopped.
  bool Wait(std::chrono::milliseconds duration);
  void Failed(const Status& status);
  void Answered();

  const SeenRetryOptions options_;
  const std::function<void(const std::string&)> say_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;                                   // guarded by mu_
  bool outage_ = false;                                 // guarded by mu_
  std::chrono::steady_clock::time_point outage_began_;  // guarded by mu_
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_SEEN_RETRY_H_
