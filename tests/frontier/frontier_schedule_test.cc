// A randomized schedule: many keys with random Crawl-delays, random outcomes, several threads
// calling Next/TryNext/Done/Push at once, time from a ManualClock that the threads themselves
// move forward when nothing is due. Checks invariants 1–3 on the log
// (docs/architecture.md, "Invariants").
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "frontier/frontier.h"

namespace urlsieve {
namespace {

using std::chrono::milliseconds;

struct Start {
  Clock::TimePoint at;
  Lease::Kind kind;
};

class ScheduleLog {
 public:
  void OnStart(const Lease& lease, const std::string& origin, uint32_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    starts_[origin].push_back({lease.start, lease.kind});
    if (++in_flight_[origin] > static_cast<int>(limit)) concurrency_violation_ = origin;
    if (lease.kind == Lease::Kind::kPage) ++handed_[lease.url];
  }
  // Called before Done(): after Done the frontier may start the key again at once.
  void OnFinish(const std::string& origin) {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_[origin];
  }
  void OnCompleted(const std::string& url) {
    std::lock_guard<std::mutex> lock(mu_);
    ++final_[url];
  }

  std::mutex mu_;
  std::map<std::string, std::vector<Start>> starts_;
  std::map<std::string, int> in_flight_;
  std::map<std::string, int> handed_;
  std::map<std::string, int> final_;
  std::string concurrency_violation_;
};

std::string OriginOf(const std::string& url) { return url.substr(0, url.find('/', 8)); }

TEST(FrontierScheduleTest, RandomizedScheduleKeepsEveryInvariant) {
  constexpr int kKeys = 40;
  constexpr int kSeeds = 600;
  constexpr int kDiscovered = 600;
  constexpr int kThreads = 4;

  std::mt19937_64 rng(20261121);
  FrontierOptions options;
  options.user_agent = "schedbot";
  options.delay = milliseconds(100);
  options.per_key_concurrency = 2;
  options.max_retries = 2;
  options.max_consecutive_failures = 6;
  options.backoff_initial = milliseconds(200);
  options.backoff_max = milliseconds(3000);
  ManualClock clock;
  Result<std::unique_ptr<Frontier>> opened = Frontier::Open(options, &clock);
  ASSERT_TRUE(opened.ok());
  Frontier& frontier = **opened;

  // Each origin's robots.txt: a random Crawl-delay (sometimes none) and a disallowed prefix.
  std::map<std::string, std::string> robots;
  std::map<std::string, Clock::Duration> min_gap;
  const int crawl_delays_ms[] = {-1, 0, 150, 500, 1000, 2500};
  for (int k = 0; k < kKeys; ++k) {
    const std::string origin = "http://host" + std::to_string(k) + ".test";
    const int cd = crawl_delays_ms[rng() % 6];
    std::string body = "User-agent: *\nDisallow: /private\n";
    if (cd >= 0) body += "Crawl-delay: " + std::to_string(cd / 1000.0) + "\n";
    robots[origin] = body;
    min_gap[origin] = std::max<Clock::Duration>(options.delay, milliseconds(std::max(cd, 0)));
  }
  auto random_url = [&](std::mt19937_64& r, int i) {
    const std::string origin = "http://host" + std::to_string(r() % kKeys) + ".test";
    return origin + (r() % 10 == 0 ? "/private/" : "/p/") + std::to_string(i);
  };
  std::vector<std::string> all_urls;
  for (int i = 0; i < kSeeds; ++i) {
    all_urls.push_back(random_url(rng, i));
    ASSERT_TRUE(frontier.Push(all_urls.back(), static_cast<uint32_t>(rng() % 3)));
  }
  std::vector<std::string> discovered;
  for (int i = 0; i < kDiscovered; ++i) discovered.push_back(random_url(rng, kSeeds + i));
  all_urls.insert(all_urls.end(), discovered.begin(), discovered.end());
  std::atomic<size_t> next_discovered{0};

  ScheduleLog log;
  auto worker = [&](uint64_t seed) {
    std::mt19937_64 r(seed);
    Lease lease;
    for (;;) {
      Clock::TimePoint wake;
      const NextStatus status = frontier.TryNext(&lease, &wake);
      if (status == NextStatus::kIdle) return;
      if (status == NextStatus::kWait) {
        if (wake != Clock::TimePoint::max()) {
          clock.AdvanceTo(wake);  // nothing due: let time pass
          continue;
        }
        if (!frontier.Next(&lease)) return;  // every key busy elsewhere: block
      }
      const std::string origin = OriginOf(lease.url);
      log.OnStart(lease, origin, options.per_key_concurrency);
      clock.AdvanceTo(clock.Now() + milliseconds(r() % 400));  // the fetch takes a while
      if (lease.kind == Lease::Kind::kRobots) {
        log.OnFinish(origin);
        frontier.Done(lease, FetchOutcome{200, {}, {}, robots.at(origin)});
        continue;
      }
      for (int links = static_cast<int>(r() % 3); links > 0; --links) {
        const size_t i = next_discovered.fetch_add(1);
        if (i < discovered.size()) frontier.Push(discovered[i], lease.depth + 1);
      }
      const int roll = static_cast<int>(r() % 10);
      FetchOutcome outcome{200, milliseconds(r() % 400), {}, {}};
      if (roll == 0) outcome = FetchOutcome{503, {}, "1", {}};
      if (roll == 1) outcome = FetchOutcome{0, {}, {}, {}};
      if (outcome.http_status == 200) log.OnCompleted(lease.url);
      log.OnFinish(origin);
      frontier.Done(lease, outcome);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, 1000 + t);
  for (std::thread& t : threads) t.join();

  // Whatever discovered URLs no fetch got around to pushing are not part of the crawl.
  const size_t pushed = kSeeds + std::min<size_t>(next_discovered.load(), kDiscovered);
  all_urls.resize(pushed);

  // Invariant 3: starts of one key at least its delay apart, never more than its concurrency.
  EXPECT_EQ(log.concurrency_violation_, "");
  size_t robots_leases = 0;
  for (auto& [origin, starts] : log.starts_) {
    ASSERT_FALSE(starts.empty());
    // Threads log in their own order; the frontier stamped each start under its lock.
    std::sort(starts.begin(), starts.end(),
              [](const Start& a, const Start& b) { return a.at < b.at; });
    EXPECT_EQ(starts.front().kind, Lease::Kind::kRobots) << origin;
    for (size_t i = 0; i < starts.size(); ++i) {
      robots_leases += starts[i].kind == Lease::Kind::kRobots;
      if (i == 0) continue;
      EXPECT_GE(starts[i].at - starts[i - 1].at, min_gap[origin])
          << origin << " start " << i << " of " << starts.size();
    }
  }
  EXPECT_EQ(robots_leases, log.starts_.size());  // one robots.txt per origin (no TTL expiry)

  // Invariants 1 and 2: every URL ends exactly once — completed, or rejected with a reason —
  // and is handed out at most 1 + max_retries times.
  std::map<std::string, int> final = log.final_;
  size_t disallowed = 0;
  for (const Rejection& rejection : frontier.DrainRejections()) {
    ++final[rejection.url];
    if (rejection.reason == RejectReason::kRobotsDisallowed) {
      ++disallowed;
      EXPECT_NE(rejection.url.find("/private/"), std::string::npos) << rejection.url;
      EXPECT_EQ(log.handed_.count(rejection.url), 0u) << rejection.url;
    }
  }
  for (const std::string& url : all_urls) {
    EXPECT_EQ(final[url], 1) << url;
    EXPECT_LE(log.handed_[url], 1 + static_cast<int>(options.max_retries)) << url;
    if (url.find("/private/") != std::string::npos) {
      EXPECT_EQ(log.handed_[url], 0) << url;
    }
  }
  EXPECT_EQ(final.size(), all_urls.size());
  EXPECT_GT(disallowed, 0u);
  const FrontierStats stats = frontier.Stats();
  EXPECT_EQ(stats.pending, 0u);
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_GT(stats.retried, 0u);
}

}  // namespace
}  // namespace urlsieve
