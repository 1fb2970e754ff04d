// `urlsieve crawl --cluster` coordinated through a real 3-master Redis Cluster
// (tests/support/redis_cluster.h): the three-node crawl of crawl_cluster_test.cc, where the
// partitions' keys (one hash tag each) spread over the masters' slots. A binary of its own, run
// as one CTest test, like tests/dedup/cluster/: a cluster takes seconds to assemble.
#include <gtest/gtest.h>

#include <memory>

#include "tests/crawler/cluster_crawl.h"
#include "tests/crawler/cluster_site.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ClusterCrawl;
using testing::ClusterSiteServer;
using testing::RedisCluster;
using testing::ScratchDir;

TEST(CrawlRedisClusterTest, ThreeNodesFetchEveryPageOnceOverAThreeMasterCluster) {
  ScratchDir dir("crawl_redis_cluster");
  auto redis = RedisCluster::Start(dir.path() / "redis", 3);
  ASSERT_NE(redis, nullptr);
  auto site = ClusterSiteServer::Start();
  ASSERT_NE(site, nullptr);
  ClusterCrawl crawl(dir.path() / "crawl", redis->url(), "c13", site.get());
  testing::ExpectThreeNodesCrawlEachPageOnce(crawl);

  // The cluster's keys are on more than one master: the partitions' hash tags spread.
  int masters_with_keys = 0;
  for (int i = 0; i < redis->size(); ++i) {
    masters_with_keys += redis->Run(i, {"DBSIZE"}).integer > 0 ? 1 : 0;
  }
  EXPECT_GE(masters_with_keys, 2);
}

}  // namespace
}  // namespace urlsieve
