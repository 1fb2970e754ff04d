#include "frontier/frontier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "url/url_canonicalizer.h"

namespace urlsieve {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

class FrontierTest : public ::testing::Test {
 protected:
  FrontierTest() { options_.obey_robots = false; }

  Frontier& Make() {
    Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(options_, &clock_);
    EXPECT_TRUE(frontier.ok()) << frontier.status().ToString();
    frontier_ = std::move(*frontier);
    return *frontier_;
  }

  // The next lease, which must be available now.
  Lease MustNext() {
    Lease lease;
    EXPECT_EQ(frontier_->TryNext(&lease), NextStatus::kLease);
    return lease;
  }
  // Asserts that nothing is due now and returns when something will be.
  Clock::TimePoint MustWait() {
    Lease lease;
    Clock::TimePoint wake;
    EXPECT_EQ(frontier_->TryNext(&lease, &wake), NextStatus::kWait) << lease.url;
    return wake;
  }
  void Ok(const Lease& lease) { frontier_->Done(lease, FetchOutcome{200, {}, {}, {}}); }

  FrontierOptions options_;
  ManualClock clock_;
  std::unique_ptr<Frontier> frontier_;
};

TEST_F(FrontierTest, DefaultsAreOneSecondAndOneConnectionPerKey) {
  Frontier& f = Make();
  ASSERT_TRUE(f.Push("http://a.com/1", 0));
  ASSERT_TRUE(f.Push("http://a.com/2", 0));
  const Lease first = MustNext();
  EXPECT_EQ(first.url, "http://a.com/1");
  EXPECT_EQ(first.kind, Lease::Kind::kPage);
  MustWait();  // one connection per key: /2 waits while /1 is in flight
  clock_.Advance(milliseconds(300));
  Ok(first);
  EXPECT_EQ(MustWait(), clock_.Now() + seconds(1));  // 1 s after the end of the last fetch
  clock_.Advance(milliseconds(999));
  MustWait();
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(MustNext().url, "http://a.com/2");
}

TEST_F(FrontierTest, ZeroDelayAndHigherConcurrency) {
  options_.delay = Clock::Duration::zero();
  options_.per_key_concurrency = 3;
  Frontier& f = Make();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f.Push("http://a.com/" + std::to_string(i), 0));
  Lease leases[3] = {MustNext(), MustNext(), MustNext()};
  MustWait();
  Ok(leases[1]);
  EXPECT_EQ(MustNext().url, "http://a.com/3");
  MustWait();
}

TEST_F(FrontierTest, FifoWithinAKeyBreadthFirstAcrossKeys) {
  options_.delay = Clock::Duration::zero();
  options_.per_key_concurrency = 10;
  Frontier& f = Make();
  f.Push("http://deep.com/a", 3);
  f.Push("http://deep.com/b", 1);
  f.Push("http://shallow.com/x", 0);
  f.Push("http://mid.com/y", 2);
  EXPECT_EQ(MustNext().url, "http://shallow.com/x");
  EXPECT_EQ(MustNext().url, "http://mid.com/y");
  EXPECT_EQ(MustNext().url, "http://deep.com/a");  // FIFO inside the key despite depth
  EXPECT_EQ(MustNext().url, "http://deep.com/b");
}

TEST_F(FrontierTest, AnExpeditedUrlGoesAheadOfItsKeysQueueAndPolitenessStillApplies) {
  Frontier& f = Make();  // one second between a key's fetches
  f.Push("http://a.com/1", 1);
  f.Push("http://a.com/2", 1);
  f.Expedite("http://a.com/check");
  f.Expedite("http://never.pushed.com/x");  // a mark never used holds nothing back
  f.Push("http://a.com/check", 5);
  EXPECT_EQ(f.Stats().pending, 3u);
  const Lease first = MustNext();
  EXPECT_EQ(first.url, "http://a.com/check");
  EXPECT_EQ(first.depth, 5u);
  Ok(first);
  MustWait();  // the key's delay holds for it as for any URL
  clock_.Advance(std::chrono::seconds(1));
  const Lease second = MustNext();
  EXPECT_EQ(second.url, "http://a.com/1");
  Ok(second);
  // A mark is used once: the same URL pushed again waits its turn.
  f.Push("http://a.com/check", 5);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(MustNext().url, "http://a.com/2");
}

TEST_F(FrontierTest, WithoutBreadthFirstDueKeysTakeTurns) {
  options_.delay = Clock::Duration::zero();
  options_.breadth_first = false;
  Frontier& f = Make();
  f.Push("http://deep.com/a", 3);
  f.Push("http://shallow.com/x", 0);
  EXPECT_EQ(MustNext().url, "http://deep.com/a");
  EXPECT_EQ(MustNext().url, "http://shallow.com/x");
}

TEST_F(FrontierTest, SlowKeyDoesNotBlockOthers) {
  Frontier& f = Make();
  f.Push("http://slow.com/1", 0);
  f.Push("http://slow.com/2", 0);
  f.Push("http://fast.com/1", 0);
  f.Push("http://fast.com/2", 0);
  const Lease slow = MustNext();
  const Lease fast = MustNext();
  EXPECT_NE(slow.url.substr(0, 15), fast.url.substr(0, 15));
  Ok(fast.url.find("fast") != std::string::npos ? fast : slow);
  clock_.Advance(seconds(1));
  EXPECT_EQ(MustNext().url, "http://fast.com/2");  // slow.com still has its fetch in flight
}

TEST_F(FrontierTest, InvalidUrlsAndDepthLimitAreRejectedWithReasons) {
  options_.max_depth = 2;
  Frontier& f = Make();
  EXPECT_FALSE(f.Push("not a url", 0));
  EXPECT_FALSE(f.Push("http:///path", 0));
  EXPECT_FALSE(f.Push("http://a.com/deep", 3));
  EXPECT_TRUE(f.Push("http://a.com/ok", 2));
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 3u);
  EXPECT_EQ(rejections[0].reason, RejectReason::kInvalidUrl);
  EXPECT_EQ(rejections[1].reason, RejectReason::kInvalidUrl);
  EXPECT_EQ(rejections[2].reason, RejectReason::kMaxDepth);
  EXPECT_EQ(rejections[2].url, "http://a.com/deep");
  EXPECT_TRUE(f.DrainRejections().empty());
  const FrontierStats stats = f.Stats();
  EXPECT_EQ(stats.rejected[static_cast<size_t>(RejectReason::kInvalidUrl)], 2u);
  EXPECT_EQ(stats.rejected[static_cast<size_t>(RejectReason::kMaxDepth)], 1u);
  EXPECT_EQ(stats.pending, 1u);
}

TEST_F(FrontierTest, PagesPerKeyAndTotalBudgets) {
  options_.delay = Clock::Duration::zero();
  options_.max_pages_per_key = 2;
  options_.max_total_pages = 3;
  Frontier& f = Make();
  for (int i = 0; i < 4; ++i) f.Push("http://a.com/" + std::to_string(i), 0);
  for (int i = 0; i < 4; ++i) f.Push("http://b.com/" + std::to_string(i), 0);
  int handed = 0;
  Lease lease;
  while (f.TryNext(&lease) == NextStatus::kLease) {
    ++handed;
    Ok(lease);
  }
  EXPECT_EQ(handed, 3);
  EXPECT_FALSE(f.Push("http://c.com/late", 0));
  const FrontierStats stats = f.Stats();
  EXPECT_EQ(stats.pending, 0u);
  EXPECT_EQ(stats.rejected[static_cast<size_t>(RejectReason::kKeyBudget)] +
                stats.rejected[static_cast<size_t>(RejectReason::kTotalBudget)],
            6u);
  EXPECT_GE(stats.rejected[static_cast<size_t>(RejectReason::kTotalBudget)], 1u);
  EXPECT_EQ(f.DrainRejections().size(), 6u);
}

TEST_F(FrontierTest, RetryAfterDeltaSecondsAndHttpDate) {
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  Lease lease = MustNext();
  f.Done(lease, FetchOutcome{429, {}, "120", {}});
  EXPECT_EQ(MustWait(), clock_.Now() + seconds(120));
  clock_.Advance(seconds(120));
  lease = MustNext();
  EXPECT_EQ(lease.url, "http://a.com/1");  // queued again: a retry, not a duplicate
  EXPECT_EQ(lease.retries, 1u);
  // ManualClock's calendar starts at 1700000000 = Tue, 14 Nov 2023 22:13:20 GMT.
  const auto wall = std::chrono::duration_cast<seconds>(clock_.WallNow().time_since_epoch());
  EXPECT_EQ(wall.count(), 1700000000 + 120);
  f.Done(lease, FetchOutcome{503, {}, "Tue, 14 Nov 2023 22:20:00 GMT", {}});
  EXPECT_EQ(MustWait(), clock_.Now() + seconds(400 - 120));
}

TEST_F(FrontierTest, RetryAfterUpToTheCapIsWaitedFor) {
  options_.max_retry_after = seconds(600);
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  Lease lease = MustNext();
  const DoneDecision decision = f.Done(lease, FetchOutcome{503, {}, "600", {}});
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetry);
  EXPECT_EQ(decision.attempt, 1u);
  EXPECT_EQ(decision.max_attempts, options_.max_retries + 1);
  EXPECT_EQ(decision.wait, seconds(600));
  EXPECT_EQ(MustWait(), clock_.Now() + seconds(600));
}

TEST_F(FrontierTest, RetryAfterLongerThanTheCapRetiresTheKeyAtOnce) {
  options_.max_retry_after = seconds(600);
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  f.Push("http://b.com/1", 0);
  f.Push("http://b.com/2", 0);
  const Lease a = MustNext();
  ASSERT_EQ(a.url, "http://a.com/1");
  DoneDecision decision = f.Done(a, FetchOutcome{503, {}, "999999", {}});
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
  EXPECT_EQ(decision.reason, RejectReason::kRetryAfterTooLong);
  EXPECT_EQ(decision.wait, seconds(999999));
  // An HTTP-date a day ahead (ManualClock's calendar starts at Tue, 14 Nov 2023 22:13:20 GMT).
  const Lease b = MustNext();
  ASSERT_EQ(b.url, "http://b.com/1");
  decision = f.Done(b, FetchOutcome{429, {}, "Wed, 15 Nov 2023 22:13:20 GMT", {}});
  EXPECT_EQ(decision.reason, RejectReason::kRetryAfterTooLong);
  EXPECT_EQ(decision.wait, hours(24));
  // The clock never moved: the crawl is over because both keys were retired, not because time
  // passed.
  Lease none;
  EXPECT_EQ(f.TryNext(&none), NextStatus::kIdle);
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 4u);
  for (const Rejection& r : rejections) {
    EXPECT_EQ(r.reason, RejectReason::kRetryAfterTooLong) << r.url;
  }
  EXPECT_FALSE(f.Push("http://a.com/3", 0));  // a retired key takes nothing more
  EXPECT_EQ(RejectReasonName(RejectReason::kRetryAfterTooLong), "retry_after_too_long");
}

TEST_F(FrontierTest, PermanentFailureIsNotRetriedAndRejectsTheOrigin) {
  options_.max_retries = 5;
  options_.delay = Clock::Duration::zero();
  options_.key_kind = PolitenessKeyKind::kRegistrableDomain;  // two origins, one key
  Frontier& f = Make();
  f.Push("https://a.example.com/1", 0);
  f.Push("https://a.example.com/2", 0);
  f.Push("https://b.example.com/1", 0);
  const Lease lease = MustNext();
  ASSERT_EQ(lease.url, "https://a.example.com/1");
  FetchOutcome tls;
  tls.permanent_failure = RejectReason::kTlsError;
  const DoneDecision decision = f.Done(lease, tls);
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
  EXPECT_EQ(decision.reason, RejectReason::kTlsError);
  // No back-off: the other origin of the key is fetched now; the failed origin never again.
  const Lease next = MustNext();
  EXPECT_EQ(next.url, "https://b.example.com/1");
  Ok(next);
  Lease none;
  EXPECT_EQ(f.TryNext(&none), NextStatus::kIdle);
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 2u);
  EXPECT_EQ(rejections[0].url, "https://a.example.com/1");
  EXPECT_EQ(rejections[1].url, "https://a.example.com/2");
  for (const Rejection& r : rejections) EXPECT_EQ(r.reason, RejectReason::kTlsError);
  const FrontierStats stats = f.Stats();
  EXPECT_EQ(stats.retried, 0u);
  EXPECT_EQ(stats.handed_out, 2u);
  EXPECT_EQ(RejectReasonName(RejectReason::kTlsError), "tls_error");
}

TEST_F(FrontierTest, ExponentialBackoffThenRetirement) {
  options_.max_retries = 10;
  options_.max_consecutive_failures = 4;
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 1);
  Clock::Duration expected = options_.backoff_initial;
  for (int i = 0; i < 3; ++i) {
    const Lease lease = MustNext();
    f.Done(lease, FetchOutcome{i == 1 ? 500 : 0, {}, {}, {}});
    EXPECT_EQ(MustWait(), clock_.Now() + expected) << i;
    clock_.Advance(expected);
    expected *= 2;
  }
  const Lease last = MustNext();
  f.Done(last, FetchOutcome{502, {}, {}, {}});
  Lease none;
  EXPECT_EQ(f.TryNext(&none), NextStatus::kIdle);
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 2u);
  EXPECT_EQ(rejections[0].reason, RejectReason::kKeyRetired);
  EXPECT_EQ(rejections[1].reason, RejectReason::kKeyRetired);
  EXPECT_FALSE(f.Push("http://a.com/3", 0));  // a retired key takes nothing more
}

TEST_F(FrontierTest, SuccessResetsFailuresAndRetriesAreBounded) {
  options_.max_retries = 1;
  options_.backoff_initial = seconds(1);
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  Lease lease = MustNext();  // /1
  f.Done(lease, FetchOutcome{0, {}, {}, {}});
  clock_.Advance(seconds(1));
  lease = MustNext();  // /2
  Ok(lease);
  clock_.Advance(seconds(1));
  lease = MustNext();  // /1 again
  EXPECT_EQ(lease.url, "http://a.com/1");
  EXPECT_EQ(lease.retries, 1u);
  f.Done(lease, FetchOutcome{0, {}, {}, {}});
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 1u);
  EXPECT_EQ(rejections[0].reason, RejectReason::kFetchFailed);
  EXPECT_EQ(f.Stats().completed, 1u);
}

TEST_F(FrontierTest, AdaptiveDelayAndJitter) {
  options_.adaptive_factor = 2;
  options_.jitter = 0.5;
  Frontier& f = Make();
  for (int i = 0; i < 20; ++i) f.Push("http://a.com/" + std::to_string(i), 0);
  Lease lease = MustNext();
  clock_.Advance(seconds(3));
  f.Done(lease, FetchOutcome{200, seconds(3), {}, {}});
  const Clock::Duration wait = MustWait() - clock_.Now();
  EXPECT_GE(wait, seconds(6));
  EXPECT_LE(wait, seconds(9));
  // Jitter varies the delay, within [delay, 1.5 × delay].
  bool varied = false;
  Clock::Duration previous{};
  for (int i = 0; i < 10; ++i) {
    clock_.AdvanceTo(MustWait());
    lease = MustNext();
    f.Done(lease, FetchOutcome{200, milliseconds(10), {}, {}});
    const Clock::Duration d = MustWait() - clock_.Now();
    EXPECT_GE(d, seconds(1));
    EXPECT_LE(d, milliseconds(1500));
    varied |= i > 0 && d != previous;
    previous = d;
  }
  EXPECT_TRUE(varied);
}

TEST_F(FrontierTest, RegistrableDomainKeysShareABudget) {
  options_.key_kind = PolitenessKeyKind::kRegistrableDomain;
  Frontier& f = Make();
  f.Push("http://a.example.com/1", 0);
  f.Push("https://b.example.com/2", 0);
  f.Push("http://other.co.uk/3", 0);
  f.Push("http://x.other.co.uk/4", 0);
  MustNext();
  MustNext();
  MustWait();
  EXPECT_EQ(f.Stats().keys, 2u);
  EXPECT_EQ(f.Stats().origins, 4u);
}

TEST_F(FrontierTest, IpLiteralHostsAreEachTheirOwnRegistrableDomain) {
  // One rule with the crawl's scope (frontier/politeness_key.h): not "0.1" for every IPv4 host.
  options_.key_kind = PolitenessKeyKind::kRegistrableDomain;
  Frontier& f = Make();
  f.Push("http://10.0.0.1/1", 0);
  f.Push("http://127.0.0.1:8080/2", 0);
  f.Push("http://127.0.0.1:8081/3", 0);  // another origin on the same address: the same key
  f.Push("http://[::1]/4", 0);
  MustNext();
  MustNext();
  MustNext();
  MustWait();
  EXPECT_EQ(f.Stats().keys, 3u);
  EXPECT_EQ(f.Stats().origins, 4u);
}

TEST_F(FrontierTest, AParsedUrlIsQueuedAsItsFetchForm) {
  options_.delay = Clock::Duration::zero();
  options_.per_key_concurrency = 10;
  Frontier& f = Make();
  const UrlCanonicalizer fetch_form;
  Result<CanonicalUrl> parsed = fetch_form.Canonicalize("HTTP://A.com:80/x/../y?q#frag");
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->key(), "http://a.com/y?q");
  ASSERT_TRUE(f.Push(*parsed, 2, "http://a.com/parent"));
  ASSERT_TRUE(f.Push("http://a.com/z", 2));  // a string of the same origin: the same key
  const Lease lease = MustNext();
  EXPECT_EQ(lease.url, parsed->key());
  EXPECT_EQ(lease.depth, 2u);
  EXPECT_EQ(lease.parent, "http://a.com/parent");
  EXPECT_EQ(MustNext().url, "http://a.com/z");
  EXPECT_EQ(f.Stats().keys, 1u);
  EXPECT_EQ(f.Stats().origins, 1u);
  // A retry re-queues the same URL without parsing it again.
  f.Done(lease, FetchOutcome{503});
  Lease retry;
  Clock::TimePoint wake;
  while (f.TryNext(&retry, &wake) == NextStatus::kWait) clock_.AdvanceTo(wake);
  EXPECT_EQ(retry.url, parsed->key());
  EXPECT_EQ(retry.retries, 1u);
}

TEST_F(FrontierTest, CustomKeysGroupHostsOnOneServer) {
  options_.key_kind = PolitenessKeyKind::kCustom;
  options_.key_function = [](std::string_view origin) {
    return origin.find("shared") != std::string_view::npos ? std::string("10.0.0.1")
                                                           : std::string(origin);
  };
  Frontier& f = Make();
  f.Push("http://shared1.com/", 0);
  f.Push("http://shared2.com/", 0);
  f.Push("http://alone.com/", 0);
  MustNext();
  MustNext();
  MustWait();
  EXPECT_EQ(f.Stats().keys, 2u);
}

TEST_F(FrontierTest, BlockingNextWakesWhenTheManualClockMoves) {
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  Ok(MustNext());
  const Clock::TimePoint due = clock_.Now() + seconds(1);
  Lease lease;
  bool got = false;
  std::thread fetcher([&] { got = f.Next(&lease); });
  clock_.Advance(seconds(1));  // whether the fetcher waits already or not, it must see this
  fetcher.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(lease.url, "http://a.com/2");
  EXPECT_GE(lease.start, due);
}

TEST_F(FrontierTest, NextReturnsFalseWhenOverOrStopped) {
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  Lease lease;
  ASSERT_TRUE(f.Next(&lease));
  Ok(lease);
  EXPECT_FALSE(f.Next(&lease));  // nothing pending, nothing in flight: the crawl is over

  f.Push("http://a.com/2", 0);  // not due for 1 s of manual time, which never passes
  bool result = true;
  std::thread fetcher([&] { result = f.Next(&lease); });
  f.Stop();
  fetcher.join();
  EXPECT_FALSE(result);
  EXPECT_EQ(f.TryNext(&lease), NextStatus::kStopped);
}

TEST_F(FrontierTest, NextWaitsForInFlightLeasesThatMayPushMore) {
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  Lease first;
  ASSERT_TRUE(f.Next(&first));
  Lease second;
  bool got = false;
  std::thread fetcher([&] { got = f.Next(&second); });
  f.Push("http://b.com/link", 1);  // discovered by `first`, pushed before its Done
  Ok(first);
  fetcher.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(second.url, "http://b.com/link");
}

TEST_F(FrontierTest, RepeatedOrForeignDoneIsIgnored) {
  options_.per_key_concurrency = 2;
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  const Lease lease = MustNext();
  Ok(lease);
  Ok(lease);  // a second Done must not free a connection slot that is not in use
  Lease foreign = lease;
  foreign.key = 12345;
  Ok(foreign);
  const FrontierStats stats = f.Stats();
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_EQ(stats.completed, 1u);
}

TEST_F(FrontierTest, OptionsAreValidated) {
  options_.per_key_concurrency = 0;
  EXPECT_FALSE(Frontier::Open(options_, &clock_).ok());
  options_.per_key_concurrency = 1;
  options_.key_kind = PolitenessKeyKind::kCustom;
  EXPECT_FALSE(Frontier::Open(options_, &clock_).ok());
  EXPECT_FALSE(Frontier::Open(FrontierOptions(), nullptr).ok());
}

}  // namespace
}  // namespace urlsieve

namespace urlsieve {
namespace {

// Abandon (a crawl cluster's lease handed to another node before the fetch): the URL leaves the
// frontier with no retry, no rejection and no back-off, and frees its key and its budget.
TEST_F(FrontierTest, AbandonForgetsAPageLeaseWithoutRetryOrRejection) {
  options_.max_pages_per_key = 1;
  Frontier& f = Make();
  ASSERT_TRUE(f.Push("http://a.com/1", 0));
  ASSERT_TRUE(f.Push("http://a.com/2", 0));
  const Lease first = MustNext();
  EXPECT_EQ(first.url, "http://a.com/1");
  MustWait();  // one connection per key
  f.Abandon(first);
  // The key's delay, counted from the hand-out, still holds (no back-off is added); the
  // abandoned page does not count against its budget of one page: /2 is handed out, not rejected.
  EXPECT_EQ(MustWait(), clock_.Now() + seconds(1));
  clock_.Advance(seconds(1));
  const Lease second = MustNext();
  EXPECT_EQ(second.url, "http://a.com/2");
  Ok(second);
  const FrontierStats stats = f.Stats();
  EXPECT_EQ(stats.abandoned, 1u);
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_EQ(stats.pending, 0u);
  EXPECT_EQ(stats.retried, 0u);
  EXPECT_EQ(stats.completed, 1u);
  EXPECT_TRUE(f.DrainRejections().empty());
  Lease lease;
  EXPECT_EQ(f.TryNext(&lease), NextStatus::kIdle);  // /1 is gone for good
  f.Abandon(first);  // a second Abandon of the same lease changes nothing
  EXPECT_EQ(f.Stats().abandoned, 1u);
}

TEST_F(FrontierTest, AbandonOfARobotsLeaseLeavesTheRulesToBeAskedAgain) {
  options_.obey_robots = true;
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  ASSERT_TRUE(f.Push("http://a.com/1", 0));
  const Lease robots = MustNext();
  ASSERT_EQ(robots.kind, Lease::Kind::kRobots);
  f.Abandon(robots);
  // The page is still pending and its origin's robots.txt is asked for again first.
  const Lease again = MustNext();
  EXPECT_EQ(again.kind, Lease::Kind::kRobots);
  EXPECT_EQ(again.url, "http://a.com/robots.txt");
  f.Done(again, FetchOutcome{404, {}, {}, {}});
  EXPECT_EQ(MustNext().url, "http://a.com/1");
  EXPECT_TRUE(f.DrainRejections().empty());
}

// A thread blocked in Next() on the abandoned lease's key is woken.
TEST_F(FrontierTest, AbandonWakesAWaitingNext) {
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  ASSERT_TRUE(f.Push("http://a.com/1", 0));
  ASSERT_TRUE(f.Push("http://a.com/2", 0));
  const Lease first = MustNext();
  Lease got;
  std::thread waiter([&] { EXPECT_TRUE(f.Next(&got)); });
  f.Abandon(first);
  waiter.join();
  EXPECT_EQ(got.url, "http://a.com/2");
}

}  // namespace
}  // namespace urlsieve
