// RedisSeenSet's generations and forgetting on a real 3-master Redis Cluster: a generation's keys
// carry their shard's hash tag, so each shard's Function call touches one slot; the shards (and
// so the generation keys) spread over the masters (docs/features/redis-seen-set.md, "The Redis seen
// set").
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "dedup/redis_seen_set.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

std::string Url(int i) {
  return "http://h" + std::to_string(i % 97) + ".example/t/" + std::to_string(i);
}

int CountNew(SeenSet& set, int from, int to) {
  std::vector<std::string> urls;
  for (int i = from; i < to; ++i) urls.push_back(Url(i));
  std::vector<std::string_view> views(urls.begin(), urls.end());
  std::vector<uint8_t> is_new;
  Status status = set.InsertKeysIfNew(views, &is_new);
  EXPECT_TRUE(status.ok()) << status.ToString();
  int n = 0;
  for (uint8_t b : is_new) n += b;
  return n;
}

int CountForgotten(SeenSet& set, int from, int to) {
  std::vector<std::string> urls;
  for (int i = from; i < to; ++i) urls.push_back(Url(i));
  std::vector<std::string_view> views(urls.begin(), urls.end());
  std::vector<KeyHash> hashes;
  for (const std::string& url : urls) hashes.push_back(SeenSet::Hash(url));
  std::unique_ptr<bool[]> forgotten(new bool[urls.size()]);
  Status status = set.ForgetHashed(views, hashes, {forgotten.get(), urls.size()});
  EXPECT_TRUE(status.ok()) << status.ToString();
  int n = 0;
  for (size_t i = 0; i < urls.size(); ++i) n += forgotten[i] ? 1 : 0;
  return n;
}

TEST(RedisClusterSeenSetTimeTest, GenerationsAndForgettingSpreadOverTheMasters) {
  ScratchDir dir("urlsieve_cluster_time");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  for (bool exact : {false, true}) {
    ManualClock clock;
    RedisSeenSetOptions options;
    options.address = cluster->address();
    options.name = exact ? "time_exact" : "time_counting";
    options.shards = 8;
    options.requested.capacity = 10000;
    options.requested.fp_rate = 1e-3;
    options.requested.exact = exact;
    options.requested.deletable = !exact;
    options.requested.revisit_after_s = 100;
    options.requested.generations = 2;
    options.clock = &clock;
    options.front_cache_keys = 1 << 12;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    EXPECT_EQ(CountNew(**set, 0, 2000), 2000);
    EXPECT_EQ(CountNew(**set, 0, 2000), 0);
    EXPECT_EQ(CountForgotten(**set, 0, 500), 500);
    EXPECT_EQ(CountNew(**set, 0, 2000), 500);
    clock.Advance(std::chrono::seconds(149));  // the generation of t0 lives until t0 + 150 s
    EXPECT_EQ(CountNew(**set, 0, 2000), 0);
    clock.Advance(std::chrono::seconds(1));
    EXPECT_EQ(CountNew(**set, 0, 2000), 2000);

    // The generation keys are on every master.
    std::set<int> masters;
    for (int n = 0; n < cluster->size(); ++n) {
      auto node = cluster->Connect(n);
      ASSERT_NE(node, nullptr);
      auto reply = node->Run(
          {{"SCAN", "0", "MATCH", "urlsieve:{" + options.name + ":*}:gen:*", "COUNT", "100000"},
           -1});
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      ASSERT_EQ(reply->elements.size(), 2u);
      if (!reply->elements[1].elements.empty()) masters.insert(n);
    }
    EXPECT_EQ(masters.size(), static_cast<size_t>(cluster->size()));
  }
  cluster.reset();
}

}  // namespace
}  // namespace urlsieve::testing
