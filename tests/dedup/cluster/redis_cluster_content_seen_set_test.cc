// RedisContentSeenSet on a real 3-master Redis Cluster (docs/features/content-seen.md, "Shared"):
// every key of a content set carries the hash tag {NAME:content}, so each Test is one Function
// call on one master, and exactly one of many processes testing one fingerprint is first.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "dedup/content/redis_content_seen_set.h"
#include "redis/redis_client.h"
#include "tests/dedup/redis_content_first.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

TEST(RedisClusterContentSeenSetTest, ExactlyOneFirstAcrossProcesses) {
  ScratchDir dir("urlsieve_cluster_content");
  auto cluster = RedisCluster::Start(dir.path() / "cluster");
  ASSERT_NE(cluster, nullptr);
  RedisContentSeenSetOptions options;
  options.address = cluster->address();
  options.name = "cluster_first";
  ExpectExactlyOneFirst(dir.path() / "exact", options, /*near=*/false);
  options.name = "cluster_first_near";
  ExpectExactlyOneFirst(dir.path() / "near", options, /*near=*/true);

  // The verdicts, and the set's keys all on one master (one slot).
  RedisContentSeenSetOptions exact_set = options;
  exact_set.name = "cluster_first";
  auto first_set = RedisContentSeenSet::Open(exact_set);
  ASSERT_TRUE(first_set.ok()) << first_set.status().ToString();
  ASSERT_TRUE((*first_set)->Delete().ok());
  auto set = RedisContentSeenSet::Open(options);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto v = (*set)->Test({SplitMix(5), SplitMix(5 + 1000) ^ 0b11}, {"late", "d"});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->kind, ContentVerdict::Kind::kNear);
  EXPECT_GE(v->distance, 1);  // the stored first is one bit from SplitMix(1005): 1 or 3 away
  EXPECT_LE(v->distance, 3);
  auto stats = (*set)->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->pages, (*set)->size());
  EXPECT_GE(stats->pages, 300u);
  auto client = RedisClient::Connect(cluster->address());
  ASSERT_TRUE(client.ok());
  std::vector<RedisReply> sizes;
  ASSERT_TRUE((*client)->OnEveryMaster({{"DBSIZE"}, -1}, &sizes).ok());
  int masters_with_keys = 0;
  for (const RedisReply& r : sizes) masters_with_keys += r.integer > 0 ? 1 : 0;
  EXPECT_EQ(masters_with_keys, 1);
  auto deleted = (*set)->Delete();
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_GT(*deleted, 0u);
}

}  // namespace
}  // namespace urlsieve::testing
