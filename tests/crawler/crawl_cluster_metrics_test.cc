// A node of a crawl cluster (`urlsieve crawl --cluster ... --metrics-listen`) serves its own
// metrics (docs/features/metrics.md, "Metrics"): urlsieve_node_info{node="ID"} 1 beside the usual
// families, scraped over real HTTP while it crawls (the cluster site, a real redis-server on a
// random loopback port) and at the end, parsed by prometheus_client, equal to the node's
// stats.json.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/crawler/cluster_crawl.h"
#include "tests/crawler/cluster_site.h"
#include "tests/crawler/metrics_scrape.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ClusterCrawl;
using testing::ClusterSiteServer;
using testing::ParseExposition;
using testing::RedisServer;
using testing::ScratchDir;

constexpr auto kDeadline = std::chrono::seconds(120);

// The node's urlsieve_node_info samples, label -> value.
std::map<std::string, double> NodeInfo(const nlohmann::json& parsed) {
  for (const MetricFamily& family : MetricFamilies()) {
    if (family.name == "urlsieve_node_info") return testing::ParsedSamples(parsed, family);
  }
  return {};
}

double Running(const nlohmann::json& parsed) {
  for (const MetricFamily& family : MetricFamilies()) {
    if (family.name != "urlsieve_crawl_running") continue;
    const auto samples = testing::ParsedSamples(parsed, family);
    return samples.empty() ? -1 : samples.begin()->second;
  }
  return -1;
}

TEST(CrawlClusterMetricsTest, ANodeServesItsOwnMetricsWithItsNodeLabel) {
  ScratchDir dir("crawl_cluster_metrics");
  std::unique_ptr<RedisServer> redis = RedisServer::Start(dir.path() / "redis");
  ASSERT_NE(redis, nullptr);
  std::unique_ptr<ClusterSiteServer> site = ClusterSiteServer::Start();
  ASSERT_NE(site, nullptr);
  ClusterCrawl crawl(dir.path() / "crawl", redis->url(), "metrics", site.get());
  std::unique_ptr<testing::CrawlChild> node =
      crawl.StartNode("n1", true, {"--metrics-listen", "127.0.0.1:0", "--metrics-linger", "1h"});

  std::string address;
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (address.empty() && std::chrono::steady_clock::now() < until && !node->exited()) {
    std::ifstream(crawl.Out("n1") / "metrics.addr") >> address;
    if (address.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling
  }
  ASSERT_FALSE(address.empty()) << node->err();

  const testing::ScrapeResult during = testing::Scrape(address);
  ASSERT_EQ(during.status, 200);
  const nlohmann::json first = ParseExposition(during.body, dir.path());
  ASSERT_FALSE(first.is_null());
  const std::map<std::string, double> info = {{"n1", 1.0}};
  EXPECT_EQ(NodeInfo(first), info);

  // The whole cluster's crawl (this one node) ends; its final figures stay up (the linger).
  nlohmann::json last;
  while (std::chrono::steady_clock::now() < until) {
    const testing::ScrapeResult r = testing::Scrape(address);
    ASSERT_EQ(r.status, 200) << node->err();
    last = ParseExposition(r.body, dir.path());
    ASSERT_FALSE(last.is_null());
    if (Running(last) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling for the end
  }
  ASSERT_EQ(Running(last), 0) << node->err();
  const nlohmann::json stats = crawl.Stats("n1");
  ASSERT_TRUE(stats.is_object());
  EXPECT_EQ(stats["node_id"], "n1");
  EXPECT_EQ(NodeInfo(last), info);
  testing::ExpectExpositionMatchesJson(last, stats);
  EXPECT_GT(stats["pages"].get<int>(), 0);
  EXPECT_EQ(stats["pages"].get<size_t>(), crawl.RecordedPages("n1"));

  node->Signal(SIGINT);  // ends the linger
  EXPECT_EQ(node->Wait(), 0) << node->err();
  EXPECT_FALSE(std::filesystem::exists(crawl.Out("n1") / "metrics.addr"));
}

}  // namespace
}  // namespace urlsieve
