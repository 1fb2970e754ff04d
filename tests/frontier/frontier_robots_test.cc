// The frontier's robots.txt leases: fetch semantics of RFC 9309 §2.3.1, caching (§2.4),
// Crawl-delay.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontier/frontier.h"

namespace urlsieve {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class FrontierRobotsTest : public ::testing::Test {
 protected:
  FrontierRobotsTest() { options_.user_agent = "TestBot/1.0"; }

  Frontier& Make() {
    Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(options_, &clock_);
    EXPECT_TRUE(frontier.ok()) << frontier.status().ToString();
    frontier_ = std::move(*frontier);
    return *frontier_;
  }
  Lease MustNext() {
    Lease lease;
    EXPECT_EQ(frontier_->TryNext(&lease), NextStatus::kLease);
    return lease;
  }
  NextStatus Try() {
    Lease lease;
    return frontier_->TryNext(&lease);
  }
  // Hands out the robots lease of the first origin and answers it.
  void AnswerRobots(int status, std::string_view body = {}) {
    const Lease robots = MustNext();
    ASSERT_EQ(robots.kind, Lease::Kind::kRobots);
    frontier_->Done(robots, FetchOutcome{status, {}, {}, body});
  }
  // A robots.txt answer that redirects to `target` (RFC 9309 §2.3.1.2).
  static FetchOutcome Redirect(std::string_view target, int status = 301) {
    FetchOutcome outcome{status};
    outcome.robots_redirect = target;
    return outcome;
  }
  size_t Rejected(RejectReason reason) {
    return frontier_->Stats().rejected[static_cast<size_t>(reason)];
  }

  FrontierOptions options_;
  ManualClock clock_;
  std::unique_ptr<Frontier> frontier_;
};

TEST_F(FrontierRobotsTest, RobotsLeaseComesFirstAndPagesWaitForIt) {
  Frontier& f = Make();
  f.Push("http://a.com/private/x", 0);
  f.Push("http://a.com/public", 0);
  const Lease robots = MustNext();
  EXPECT_EQ(robots.kind, Lease::Kind::kRobots);
  EXPECT_EQ(robots.url, "http://a.com/robots.txt");
  EXPECT_EQ(Try(), NextStatus::kWait);  // pages wait for the rules, even after the delay
  clock_.Advance(hours(1));
  EXPECT_EQ(Try(), NextStatus::kWait);
  f.Done(robots, FetchOutcome{200, {}, {}, "User-agent: testbot\nDisallow: /private\n"});
  EXPECT_EQ(Try(), NextStatus::kWait);  // the robots fetch obeyed politeness too
  clock_.Advance(seconds(1));
  const Lease page = MustNext();
  EXPECT_EQ(page.url, "http://a.com/public");  // /private/x was rejected, not handed out
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 1u);
  EXPECT_EQ(rejections[0].url, "http://a.com/private/x");
  EXPECT_EQ(rejections[0].reason, RejectReason::kRobotsDisallowed);
}

TEST_F(FrontierRobotsTest, OneRobotsFetchPerOrigin) {
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://b.com/1", 0);
  f.Push("https://a.com/1", 0);  // another origin: its own robots.txt
  const Lease r1 = MustNext();
  const Lease r2 = MustNext();
  const Lease r3 = MustNext();
  EXPECT_EQ(Try(), NextStatus::kWait);
  for (const Lease* r : {&r1, &r2, &r3}) {
    EXPECT_EQ(r->kind, Lease::Kind::kRobots);
    f.Done(*r, FetchOutcome{404, {}, {}, {}});
  }
  f.Push("http://a.com/2", 0);
  int pages = 0;
  Lease lease;
  while (f.TryNext(&lease) == NextStatus::kLease) {
    EXPECT_EQ(lease.kind, Lease::Kind::kPage);
    f.Done(lease, FetchOutcome{200, {}, {}, {}});
    ++pages;
  }
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(f.Stats().robots_handed_out, 3u);
}

TEST_F(FrontierRobotsTest, ClientErrorMeansAllowAll) {
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  f.Push("http://a.com/anything", 0);
  AnswerRobots(404);
  EXPECT_EQ(MustNext().url, "http://a.com/anything");
}

TEST_F(FrontierRobotsTest, ServerErrorMeansDisallowAllAndRetryLater) {
  options_.delay = Clock::Duration::zero();
  options_.backoff_initial = seconds(10);
  Frontier& f = Make();
  f.Push("http://a.com/page", 0);
  AnswerRobots(503);
  Lease lease;
  Clock::TimePoint wake;
  EXPECT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);  // no page while unreachable
  EXPECT_EQ(wake, clock_.Now() + seconds(10));
  clock_.Advance(seconds(10));
  AnswerRobots(0);  // unreachable this time
  clock_.Advance(seconds(20));
  AnswerRobots(200, "User-agent: *\nAllow: /\n");
  EXPECT_EQ(MustNext().url, "http://a.com/page");
  EXPECT_EQ(Rejected(RejectReason::kRobotsUnreachable), 0u);
}

TEST_F(FrontierRobotsTest, RobotsUnreachableForGoodRejectsTheOrigin) {
  options_.robots_retries = 2;
  options_.backoff_initial = seconds(10);
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  for (uint32_t i = 0; i < 3; ++i) {
    Lease lease;
    Clock::TimePoint wake;
    while (f.TryNext(&lease, &wake) != NextStatus::kLease) clock_.AdvanceTo(wake);
    ASSERT_EQ(lease.url, "http://a.com/robots.txt");
    const DoneDecision decision = f.Done(lease, FetchOutcome{i == 1 ? 0 : 500, {}, {}, {}});
    // Each decision says which attempt failed and what comes next, for the crawler's log.
    EXPECT_EQ(decision.attempt, i + 1);
    EXPECT_EQ(decision.max_attempts, 3u);
    if (i < 2) {
      EXPECT_EQ(decision.action, DoneDecision::Action::kRetry);
      EXPECT_EQ(decision.wait, seconds(10 << i));
    } else {
      EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
      EXPECT_EQ(decision.reason, RejectReason::kRobotsUnreachable);
    }
  }
  // The origin's URLs are rejected when its key next comes up (after its delay).
  Lease lease;
  Clock::TimePoint wake;
  ASSERT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  clock_.AdvanceTo(wake);
  EXPECT_EQ(f.TryNext(&lease), NextStatus::kIdle);
  EXPECT_EQ(Rejected(RejectReason::kRobotsUnreachable), 2u);
  EXPECT_FALSE(f.Push("http://a.com/3", 0));
}

TEST_F(FrontierRobotsTest, RobotsRetriesZeroGivesUpAfterOneAttempt) {
  options_.robots_retries = 0;
  options_.max_consecutive_failures = 100;  // robots retries do not depend on it
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  const Lease robots = MustNext();
  const DoneDecision decision = f.Done(robots, FetchOutcome{0, {}, {}, {}});
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
  EXPECT_EQ(decision.attempt, 1u);
  EXPECT_EQ(decision.max_attempts, 1u);
  Lease lease;
  Clock::TimePoint wake;
  while (f.TryNext(&lease, &wake) == NextStatus::kWait) clock_.AdvanceTo(wake);
  EXPECT_EQ(f.TryNext(&lease), NextStatus::kIdle);
  EXPECT_EQ(Rejected(RejectReason::kRobotsUnreachable), 1u);
  EXPECT_EQ(f.Stats().robots_handed_out, 1u);
}

TEST_F(FrontierRobotsTest, PermanentFailureOfRobotsRejectsTheOriginWithoutRetrying) {
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  f.Push("http://b.com/1", 0);
  Lease ra = MustNext();
  Lease rb = MustNext();
  if (ra.url > rb.url) std::swap(ra, rb);
  ASSERT_EQ(ra.url, "http://a.com/robots.txt");
  FetchOutcome tls;
  tls.permanent_failure = RejectReason::kTlsError;
  const DoneDecision decision = f.Done(ra, tls);
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
  EXPECT_EQ(decision.reason, RejectReason::kTlsError);
  f.Done(rb, FetchOutcome{404, {}, {}, {}});
  // Without moving the clock: no back-off, no second robots.txt request.
  Lease lease;
  ASSERT_EQ(f.TryNext(&lease), NextStatus::kLease);
  EXPECT_EQ(lease.url, "http://b.com/1");
  f.Done(lease, FetchOutcome{200, {}, {}, {}});
  EXPECT_EQ(f.TryNext(&lease), NextStatus::kIdle);
  EXPECT_EQ(Rejected(RejectReason::kTlsError), 2u);
  EXPECT_EQ(f.Stats().robots_handed_out, 2u);
  EXPECT_FALSE(f.Push("http://a.com/3", 0));  // and later links of the origin too
  EXPECT_EQ(Rejected(RejectReason::kTlsError), 3u);
}

TEST_F(FrontierRobotsTest, RulesExpireAfterTheirTtl) {
  options_.delay = Clock::Duration::zero();
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  AnswerRobots(200, "User-agent: *\nDisallow: /x\n");
  f.Done(MustNext(), FetchOutcome{200, {}, {}, {}});
  clock_.Advance(hours(23));
  f.Push("http://a.com/2", 0);
  const Lease cached = MustNext();
  EXPECT_EQ(cached.kind, Lease::Kind::kPage);  // still cached
  f.Done(cached, FetchOutcome{200, {}, {}, {}});
  clock_.Advance(hours(1));
  f.Push("http://a.com/3", 0);
  f.Push("http://a.com/x", 0);
  // 24 h later (RFC 9309 §2.4) the rules are fetched again, and the new ones apply.
  const Lease refresh = MustNext();
  EXPECT_EQ(refresh.kind, Lease::Kind::kRobots);
  f.Done(refresh, FetchOutcome{200, {}, {}, "User-agent: *\nDisallow: /3\n"});
  EXPECT_EQ(MustNext().url, "http://a.com/x");
  EXPECT_EQ(Rejected(RejectReason::kRobotsDisallowed), 1u);
}

TEST_F(FrontierRobotsTest, CrawlDelayWithinFloorAndCap) {
  options_.crawl_delay_floor = seconds(2);
  options_.crawl_delay_cap = seconds(30);
  Frontier& f = Make();
  for (int i = 0; i < 3; ++i) f.Push("http://a.com/" + std::to_string(i), 0);
  for (int i = 0; i < 3; ++i) f.Push("http://b.com/" + std::to_string(i), 0);
  Lease ra = MustNext();
  Lease rb = MustNext();
  if (ra.url > rb.url) std::swap(ra, rb);
  f.Done(ra, FetchOutcome{200, {}, {}, "User-agent: *\nCrawl-delay: 7\n"});
  f.Done(rb, FetchOutcome{200, {}, {}, "User-agent: *\nCrawl-delay: 0.5\n"});  // below floor
  // What a cluster node hands over with a partition: the delays longer than the configured one.
  std::vector<std::pair<std::string, Clock::Duration>> learned = f.LearnedDelays();
  std::sort(learned.begin(), learned.end());
  ASSERT_EQ(learned.size(), 2u);
  EXPECT_EQ(learned[0], std::make_pair(std::string("http://a.com"), Clock::Duration(seconds(7))));
  EXPECT_EQ(learned[1], std::make_pair(std::string("http://b.com"), Clock::Duration(seconds(2))));
  clock_.Advance(seconds(2));
  Lease first = MustNext();
  if (first.url.find("b.com") == std::string::npos) {
    clock_.Advance(seconds(5));
    first = MustNext();
  }
  EXPECT_EQ(first.url, "http://b.com/0");
  f.Done(first, FetchOutcome{200, {}, {}, {}});
  clock_.Advance(seconds(1));
  Lease lease;
  Clock::TimePoint wake;
  EXPECT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  clock_.AdvanceTo(wake);
  // a.com is due 7 s after its robots fetch; b.com 2 s after its page.
  std::vector<std::string> order;
  for (int i = 0; i < 3; ++i) {
    while (f.TryNext(&lease, &wake) != NextStatus::kLease) clock_.AdvanceTo(wake);
    order.push_back(lease.url);
    f.Done(lease, FetchOutcome{200, {}, {}, {}});
  }
  EXPECT_EQ(order[0], "http://b.com/1");
}

TEST_F(FrontierRobotsTest, CrawlDelayAboveCapSkipsOrCaps) {
  options_.crawl_delay_cap = seconds(30);
  {
    Frontier& f = Make();
    f.Push("http://a.com/1", 0);
    AnswerRobots(200, "User-agent: *\nCrawl-delay: 3600\n");
    clock_.Advance(seconds(1));
    Lease lease;
    EXPECT_EQ(f.TryNext(&lease), NextStatus::kIdle);
    EXPECT_EQ(Rejected(RejectReason::kCrawlDelayTooLong), 1u);
  }
  options_.crawl_delay_over_cap = CrawlDelayOverCap::kCap;
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Push("http://a.com/2", 0);
  AnswerRobots(200, "User-agent: *\nCrawl-delay: 3600\n");
  Lease lease;
  Clock::TimePoint wake;
  EXPECT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  EXPECT_EQ(wake, clock_.Now() + seconds(30));
  clock_.AdvanceTo(wake);
  lease = MustNext();
  f.Done(lease, FetchOutcome{200, {}, {}, {}});
  EXPECT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  EXPECT_EQ(wake, clock_.Now() + seconds(30));
}

TEST_F(FrontierRobotsTest, ObeyRobotsOffHandsOutNoRobotsLeases) {
  options_.obey_robots = false;
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  EXPECT_EQ(MustNext().kind, Lease::Kind::kPage);
}

// RFC 9309 §2.3.1.2 on the frontier's clock: each hop of a robots.txt redirect chain is another
// robots lease of the origin, handed out when its key is next due; the pages wait for the end.
TEST_F(FrontierRobotsTest, RobotsRedirectHopsAreLeasesThatWaitForTheKeysDelay) {
  Frontier& f = Make();  // 1 s between requests to a key
  f.Push("http://a.com/private/x", 0);
  f.Push("http://a.com/public", 0);
  const Lease first = MustNext();
  ASSERT_EQ(first.url, "http://a.com/robots.txt");
  const DoneDecision decision = f.Done(first, Redirect("https://cdn.example.net/a/robots.txt"));
  EXPECT_EQ(decision.action, DoneDecision::Action::kNone);  // a hop is not a failure
  Lease lease;
  Clock::TimePoint wake;
  ASSERT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  EXPECT_EQ(wake, clock_.Now() + seconds(1));  // the key's delay, not a sleeping thread
  clock_.Advance(seconds(1));
  const Lease hop = MustNext();
  EXPECT_EQ(hop.kind, Lease::Kind::kRobots);
  EXPECT_EQ(hop.url, "https://cdn.example.net/a/robots.txt");  // for the origin http://a.com
  clock_.Advance(hours(1));
  EXPECT_EQ(Try(), NextStatus::kWait);  // its pages still wait for the rules
  f.Done(hop, FetchOutcome{200, {}, {}, "User-agent: *\nDisallow: /private\n"});
  clock_.Advance(seconds(1));
  EXPECT_EQ(MustNext().url, "http://a.com/public");
  EXPECT_EQ(Rejected(RejectReason::kRobotsDisallowed), 1u);
  EXPECT_EQ(f.Stats().robots_handed_out, 2u);
}

TEST_F(FrontierRobotsTest, FiveRobotsRedirectsAreFollowedASixthMeansUnreachable) {
  options_.robots_retries = 1;
  options_.backoff_initial = seconds(10);
  Frontier& f = Make();
  f.Push("http://a.com/page", 0);
  // Follows kRobotsMaxRedirects hops, each after the key's delay; the 6th redirect is one too many.
  std::vector<std::string> asked;
  DoneDecision decision;
  for (uint32_t hop = 0; hop <= kRobotsMaxRedirects; ++hop) {
    Lease lease;
    Clock::TimePoint wake;
    ASSERT_EQ(f.TryNext(&lease, &wake), hop == 0 ? NextStatus::kLease : NextStatus::kWait);
    if (hop > 0) {
      EXPECT_EQ(wake, clock_.Now() + seconds(1));
      clock_.AdvanceTo(wake);
      ASSERT_EQ(f.TryNext(&lease), NextStatus::kLease);
    }
    ASSERT_EQ(lease.kind, Lease::Kind::kRobots);
    asked.push_back(lease.url);
    decision = f.Done(lease, Redirect("http://a.com/r" + std::to_string(hop + 1), 302));
  }
  EXPECT_EQ(asked, (std::vector<std::string>{"http://a.com/robots.txt", "http://a.com/r1",
                                             "http://a.com/r2", "http://a.com/r3",
                                             "http://a.com/r4", "http://a.com/r5"}));
  // §2.3.1.4: unreachable, so the origin is asked again after a back-off, from /robots.txt.
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetry);
  EXPECT_EQ(decision.attempt, 1u);
  EXPECT_EQ(decision.wait, seconds(10));
  clock_.Advance(seconds(10));
  const Lease again = MustNext();
  EXPECT_EQ(again.url, "http://a.com/robots.txt");
  // The retry's chain is as long: the origin is given up after it (robots_retries = 1).
  Lease lease = again;
  for (uint32_t hop = 0; hop < kRobotsMaxRedirects; ++hop) {
    f.Done(lease, Redirect("http://a.com/s" + std::to_string(hop + 1)));
    clock_.Advance(seconds(1));
    lease = MustNext();
  }
  EXPECT_EQ(lease.url, "http://a.com/s5");
  decision = f.Done(lease, Redirect("http://a.com/s6"));
  EXPECT_EQ(decision.action, DoneDecision::Action::kRetired);
  EXPECT_EQ(decision.reason, RejectReason::kRobotsUnreachable);
  clock_.Advance(seconds(1));
  EXPECT_EQ(Try(), NextStatus::kIdle);
  EXPECT_EQ(Rejected(RejectReason::kRobotsUnreachable), 1u);
  EXPECT_EQ(f.Stats().robots_handed_out, 2 * (kRobotsMaxRedirects + 1));
}

TEST_F(FrontierRobotsTest, ARobotsRedirectHopWaitsForTheKeysBackOff) {
  // Two origins share a key; a page of one fails with a 503 while the other's robots.txt
  // redirects: the hop waits for the key's back-off like any request to the key.
  options_.key_kind = PolitenessKeyKind::kRegistrableDomain;
  options_.per_key_concurrency = 2;
  options_.delay = Clock::Duration::zero();
  options_.backoff_initial = seconds(10);
  Frontier& f = Make();
  f.Push("http://b.example.com/1", 0);
  f.Push("http://a.example.com/1", 0);
  AnswerRobots(404);  // b's: allow all
  const Lease page = MustNext();
  ASSERT_EQ(page.url, "http://b.example.com/1");
  const Lease robots = MustNext();
  ASSERT_EQ(robots.url, "http://a.example.com/robots.txt");
  f.Done(robots, Redirect("http://a.example.com/moved-robots.txt"));
  f.Done(page, FetchOutcome{503});
  Lease lease;
  Clock::TimePoint wake;
  ASSERT_EQ(f.TryNext(&lease, &wake), NextStatus::kWait);
  EXPECT_EQ(wake, clock_.Now() + seconds(10));
  clock_.AdvanceTo(wake);
  const Lease hop = MustNext();
  EXPECT_EQ(hop.url, "http://a.example.com/moved-robots.txt");
}

TEST_F(FrontierRobotsTest, RobotsRefreshedAfterTheTtlStartsAgainFromRobotsTxt) {
  options_.delay = Clock::Duration::zero();
  options_.robots_ttl = hours(24);
  Frontier& f = Make();
  f.Push("http://a.com/1", 0);
  f.Done(MustNext(), Redirect("http://a.com/moved-robots.txt"));
  const Lease hop = MustNext();
  ASSERT_EQ(hop.url, "http://a.com/moved-robots.txt");
  f.Done(hop, FetchOutcome{200, {}, {}, "User-agent: *\nAllow: /\n"});
  f.Done(MustNext(), FetchOutcome{200});
  clock_.Advance(hours(25));
  f.Push("http://a.com/2", 0);
  const Lease refresh = MustNext();
  EXPECT_EQ(refresh.kind, Lease::Kind::kRobots);
  EXPECT_EQ(refresh.url, "http://a.com/robots.txt");  // not the old chain's target
}

}  // namespace
}  // namespace urlsieve
