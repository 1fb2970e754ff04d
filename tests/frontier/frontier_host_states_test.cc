// FrontierStats::keys_active / keys_waiting / keys_retired (the metrics' urlsieve_hosts, docs/
// features/metrics.md "Metrics"): a key is active with a lease in flight, waiting with URLs queued
// and none in flight, retired once closed; a key with nothing left is in none of them.
#include <gtest/gtest.h>

#include <memory>

#include "frontier/frontier.h"

namespace urlsieve {
namespace {

struct HostStates {
  uint64_t active, waiting, retired;
  bool operator==(const HostStates&) const = default;
};

HostStates StatesOf(Frontier& f) {
  const FrontierStats s = f.Stats();
  return {s.keys_active, s.keys_waiting, s.keys_retired};
}

TEST(FrontierHostStatesTest, ActiveWaitingRetired) {
  FrontierOptions options;
  options.obey_robots = false;
  options.max_retries = 10;
  options.max_consecutive_failures = 1;
  ManualClock clock;
  Result<std::unique_ptr<Frontier>> opened = Frontier::Open(options, &clock);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Frontier& f = **opened;
  EXPECT_EQ(StatesOf(f), (HostStates{0, 0, 0}));

  ASSERT_TRUE(f.Push("http://a.com/1", 0));
  ASSERT_TRUE(f.Push("http://a.com/2", 0));
  ASSERT_TRUE(f.Push("http://b.com/1", 0));
  EXPECT_EQ(StatesOf(f), (HostStates{0, 2, 0}));

  Lease a;
  ASSERT_EQ(f.TryNext(&a), NextStatus::kLease);
  Lease b;
  ASSERT_EQ(f.TryNext(&b), NextStatus::kLease);
  EXPECT_EQ(StatesOf(f), (HostStates{2, 0, 0}));  // each has a fetch in flight

  f.Done(b, FetchOutcome{200});
  EXPECT_EQ(StatesOf(f), (HostStates{1, 0, 0}));  // b.com has nothing left: in no state
  f.Done(a, FetchOutcome{200});
  EXPECT_EQ(StatesOf(f), (HostStates{0, 1, 0}));  // a.com/2 waits for the delay

  clock.Advance(std::chrono::seconds(1));
  Lease again;
  ASSERT_EQ(f.TryNext(&again), NextStatus::kLease);
  ASSERT_TRUE(f.Push("http://a.com/3", 0));
  f.Done(again, FetchOutcome{0});  // one failure retires a.com (max_consecutive_failures 1)
  EXPECT_EQ(StatesOf(f), (HostStates{0, 0, 1}));
  EXPECT_EQ(f.Stats().keys, 2u);
}

}  // namespace
}  // namespace urlsieve
