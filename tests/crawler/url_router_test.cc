// UrlRouter, the seam between the seen stage and the frontier: LocalUrlRouter hands every URL of a
// batch, parsed, to a real Frontier (ManualClock), from any number of threads.
#include "crawler/crawl/url_router.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "frontier/frontier.h"

namespace urlsieve {
namespace {

class UrlRouterTest : public ::testing::Test {
 protected:
  UrlRouterTest() {
    options_.obey_robots = false;
    options_.delay = Clock::Duration::zero();
    options_.per_key_concurrency = 1000;
  }
  Frontier& Make() {
    Result<std::unique_ptr<Frontier>> frontier = Frontier::Open(options_, &clock_);
    EXPECT_TRUE(frontier.ok()) << frontier.status().ToString();
    frontier_ = std::move(*frontier);
    return *frontier_;
  }
  std::vector<CanonicalUrl> Parse(const std::vector<std::string>& urls) const {
    std::vector<CanonicalUrl> parsed;
    for (const std::string& url : urls) {
      Result<CanonicalUrl> canonical = fetch_form_.Canonicalize(url);
      EXPECT_TRUE(canonical.ok()) << url;
      if (canonical.ok()) parsed.push_back(std::move(*canonical));
    }
    return parsed;
  }
  // Every lease the frontier has now, completed.
  std::vector<Lease> Drain() {
    std::vector<Lease> leases;
    Lease lease;
    while (frontier_->TryNext(&lease) == NextStatus::kLease) {
      leases.push_back(lease);
      frontier_->Done(lease, FetchOutcome{200});
    }
    return leases;
  }

  FrontierOptions options_;
  ManualClock clock_;
  UrlCanonicalizer fetch_form_;
  std::unique_ptr<Frontier> frontier_;
};

TEST_F(UrlRouterTest, LocalRouterQueuesEveryUrlOfABatchWithItsDepthAndParent) {
  Frontier& f = Make();
  LocalUrlRouter router(&f);
  const std::vector<CanonicalUrl> batch =
      Parse({"http://a.com/1", "http://b.com/2", "https://a.com/3?x"});
  ASSERT_TRUE(router.Route(batch, 3, "http://a.com/").ok());
  ASSERT_TRUE(router.Route({}, 4, "http://a.com/empty").ok());  // an empty batch is fine
  std::set<std::string> urls;
  for (const Lease& lease : Drain()) {
    urls.insert(lease.url);
    EXPECT_EQ(lease.depth, 3u);
    EXPECT_EQ(lease.parent, "http://a.com/");
  }
  EXPECT_EQ(urls, (std::set<std::string>{"http://a.com/1", "http://b.com/2", "https://a.com/3?x"}));
  EXPECT_EQ(f.Stats().pushed, 3u);
}

TEST_F(UrlRouterTest, AUrlTheFrontierRejectsIsRoutedAndTheRejectionRecorded) {
  options_.max_depth = 1;
  Frontier& f = Make();
  LocalUrlRouter router(&f);
  EXPECT_TRUE(router.Route(Parse({"http://a.com/deep"}), 2, "http://a.com/").ok());
  const std::vector<Rejection> rejections = f.DrainRejections();
  ASSERT_EQ(rejections.size(), 1u);
  EXPECT_EQ(rejections[0].url, "http://a.com/deep");
  EXPECT_EQ(rejections[0].reason, RejectReason::kMaxDepth);
  EXPECT_TRUE(Drain().empty());
}

TEST_F(UrlRouterTest, ConcurrentBatchesFromManyThreadsLoseNothing) {
  Frontier& f = Make();
  LocalUrlRouter router(&f);
  constexpr int kThreads = 4;
  constexpr int kBatches = 50;
  constexpr int kPerBatch = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<std::string> urls;
        for (int i = 0; i < kPerBatch; ++i) {
          urls.push_back("http://h" + std::to_string(i % 5) + ".com/" + std::to_string(t) + "/" +
                         std::to_string(b) + "/" + std::to_string(i));
        }
        EXPECT_TRUE(router.Route(Parse(urls), 1, "http://seed.com/").ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<std::string> urls;
  for (const Lease& lease : Drain()) urls.insert(lease.url);
  EXPECT_EQ(urls.size(), static_cast<size_t>(kThreads * kBatches * kPerBatch));
  EXPECT_EQ(f.Stats().keys, 5u);
}

}  // namespace
}  // namespace urlsieve
