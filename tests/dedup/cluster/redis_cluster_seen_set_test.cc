// RedisSeenSet on a real 3-master Redis Cluster (tests/support/redis_cluster.h): the SeenSet
// contract, the shards spread over the masters, and routed mode's inboxes beside their shards.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "redis/redis_cluster_client.h"
#include "tests/dedup/redis_contract_set.h"
#include "tests/dedup/seen_set_contract.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

// One cluster for every test of the process, started on first use and killed when the process
// exits (ctest runs each test in a process of its own; inside one, tests use distinct set names).
class SharedClusterHolder {
 public:
  SharedClusterHolder() : cluster_(RedisCluster::Start(dir_.path())) {}
  ~SharedClusterHolder() { cluster_.reset(); }  // before its directory goes
  RedisCluster* cluster() { return cluster_.get(); }

 private:
  ScratchDir dir_{"urlsieve_shared_redis_cluster"};
  std::unique_ptr<RedisCluster> cluster_;
};

RedisCluster* SharedCluster() {
  static SharedClusterHolder holder;
  return holder.cluster();
}

// Shards forced to 8 (a set of the contract's 10,000 keys would have one): each batch then spans
// the three masters.
constexpr uint32_t kContractShards = 8;

Result<std::unique_ptr<StateSeenSet>> OpenCluster(StateDir* dir, bool saves,
                                                  const StateParameters& p) {
  RedisCluster* cluster = SharedCluster();
  if (cluster == nullptr) return Status::Unavailable("no Redis Cluster");
  return OpenContractRedisSet(cluster->address(), dir, saves, p, 0, kContractShards);
}

// Bloom and exact mode; the front cache, local to the process and blind to the deployment, is
// left to the standalone suite (redis_seen_set_test.cc).
INSTANTIATE_TEST_SUITE_P(
    RedisCluster, SeenSetContractTest,
    ::testing::Values(SeenSetImplementation{"ClusterBloom", true, false, OpenCluster, true},
                      SeenSetImplementation{"ClusterExact", true, true, OpenCluster, true}),
    SeenSetImplementationName);

std::string Url(int i) {
  return "http://h" + std::to_string(i % 97) + ".example/p/" + std::to_string(i);
}

// The keys of node `n` that match `pattern`, by SCAN on that node alone.
std::vector<std::string> KeysOn(RedisCluster& cluster, int n, const std::string& pattern) {
  std::vector<std::string> keys;
  auto node = cluster.Connect(n);
  if (node == nullptr) return keys;
  std::string cursor = "0";
  do {
    auto reply = node->Run({{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, -1});
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok() || reply->elements.size() != 2) break;
    cursor = reply->elements[0].str;
    for (const RedisReply& key : reply->elements[1].elements) keys.push_back(key.str);
  } while (cursor != "0");
  return keys;
}

TEST(RedisClusterSeenSetTest, ShardsSpreadOverEveryMaster) {
  RedisCluster* cluster = SharedCluster();
  ASSERT_NE(cluster, nullptr);
  RedisSeenSetOptions options;
  options.address = cluster->address();
  static int run = 0;  // a set of its own each time the test runs in this process
  const std::string name = "spread" + std::to_string(run++);
  options.name = name;
  options.requested.capacity = 1000000;  // 1.8 MB of filter: >= 4 shards per master by default
  options.requested.fp_rate = 1e-3;
  options.front_cache_keys = 0;
  std::vector<SeenNotice> notices;
  auto set = RedisSeenSet::Open(options, &notices);
  ASSERT_TRUE(set.ok()) << set.status().ToString();

  constexpr int kKeys = 20000;
  std::vector<std::string> urls;
  for (int i = 0; i < kKeys; ++i) urls.push_back(Url(i));
  std::vector<std::string_view> views(urls.begin(), urls.end());
  std::vector<uint8_t> is_new;
  ASSERT_TRUE((*set)->InsertKeysIfNew(views, &is_new).ok());
  int fresh = 0;
  for (uint8_t n : is_new) fresh += n;
  EXPECT_EQ(fresh, kKeys);  // 20,000 keys in a set sized for 10^6: no false positive expected
  ASSERT_TRUE((*set)->InsertKeysIfNew(views, &is_new).ok());
  for (int i = 0; i < kKeys; ++i) ASSERT_FALSE(is_new[i]) << Url(i);

  // Every master holds some of the shards' keys, each on the master owning its slot.
  std::set<std::string> shard_tags;
  size_t keys_on_nodes = 0;
  for (int n = 0; n < cluster->size(); ++n) {
    const std::vector<std::string> keys = KeysOn(*cluster, n, "urlsieve:{" + name + ":*");
    EXPECT_FALSE(keys.empty()) << "master " << n << " holds no shard of the set";
    for (const std::string& key : keys) {
      EXPECT_EQ(cluster->OwnerOf(RedisKeySlot(key)), n) << key;
      shard_tags.insert(key.substr(0, key.find('}') + 1));
      // Usage leaves out the function's answer records (`done:<token>`, expiring in 300 s).
      if (key.find(":done:") == std::string::npos) ++keys_on_nodes;
    }
    keys_on_nodes += KeysOn(*cluster, n, "urlsieve:{" + name + "}*").size();  // the metadata
  }
  EXPECT_GE(shard_tags.size(), 4u * static_cast<size_t>(cluster->size()));

  auto usage = (*set)->Usage();
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  EXPECT_EQ(usage->masters, 3u);
  EXPECT_EQ(usage->keys, keys_on_nodes);
  EXPECT_GT(usage->bytes, 1000000u);
}

// Routed mode on the cluster: each shard's inbox lives on the master owning the shard's slot,
// beside its filter; two threads inserting the same keys are told new once in total, and each new
// key is in its shard's inbox once, with the consumer group.
TEST(RedisClusterSeenSetTest, RoutedInboxesLiveWithTheirShardsAndHoldEachKeyOnce) {
  RedisCluster* cluster = SharedCluster();
  ASSERT_NE(cluster, nullptr);
  static int run = 0;
  const std::string name = "routed" + std::to_string(run++);
  constexpr uint32_t kShards = 64;
  constexpr int kKeys = 6000;
  RedisSeenSetOptions options;
  options.address = cluster->address();
  options.name = name;
  options.requested.capacity = 100000;
  options.requested.fp_rate = 1e-3;
  options.front_cache_keys = 0;
  options.routed = true;
  options.new_key_stream = {"inbox", "crawl"};  // a crawl cluster's inboxes
  options.shards = kShards;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();

  auto shard_of = [](int i) { return static_cast<uint32_t>(i % 97) % kShards; };  // its host's
  std::vector<int> told(kKeys, 0);
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int begin = 0; begin < kKeys; begin += 50) {
        std::vector<std::string> keys;
        std::vector<std::string> payloads;
        std::vector<uint32_t> shards;
        std::vector<KeyHash> hashes;
        std::vector<int> ids;
        for (int j = begin; j < std::min(kKeys, begin + 50); ++j) {
          const int i = t == 0 ? j : kKeys - 1 - j;  // the other order in the other thread
          ids.push_back(i);
          keys.push_back(Url(i));
          payloads.push_back("payload " + std::to_string(i));
          shards.push_back(shard_of(i));
          hashes.push_back(SeenSet::Hash(keys.back()));
        }
        std::vector<std::string_view> key_views(keys.begin(), keys.end());
        std::vector<std::string_view> payload_views(payloads.begin(), payloads.end());
        std::unique_ptr<bool[]> is_new(new bool[ids.size()]);
        Status status = (*set)->InsertRouted(shards, key_views, hashes, payload_views,
                                             std::span<bool>(is_new.get(), ids.size()));
        EXPECT_TRUE(status.ok()) << status.ToString();
        if (!status.ok()) return;
        std::lock_guard<std::mutex> lock(mu);
        for (size_t j = 0; j < ids.size(); ++j) told[ids[j]] += is_new[j];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  int wrong = 0;
  for (int count : told) wrong += count == 1 ? 0 : 1;
  EXPECT_EQ(wrong, 0);

  auto client = RedisClient::Connect(cluster->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<int> in_inbox(kKeys, 0);
  std::set<int> masters;
  for (uint32_t s = 0; s < kShards; ++s) {
    const std::string inbox = RedisShardKeyPrefix(name, s) + "inbox";
    auto range = (*client)->Run({{"XRANGE", inbox, "-", "+"}, 1});
    ASSERT_TRUE(range.ok()) << range.status().ToString();
    if (range->elements.empty()) continue;
    const int owner = cluster->OwnerOf(RedisKeySlot(inbox));
    masters.insert(owner);
    EXPECT_EQ(owner, cluster->OwnerOf(RedisKeySlot(RedisShardKeyPrefix(name, s) + "count")));
    for (const RedisReply& entry : range->elements) {
      ASSERT_EQ(entry.elements.size(), 2u);
      const std::string& payload = entry.elements[1].elements[1].str;
      const int i = std::stoi(payload.substr(payload.find(' ') + 1));
      ASSERT_GE(i, 0);
      ASSERT_LT(i, kKeys);
      EXPECT_EQ(shard_of(i), s) << payload;
      ++in_inbox[i];
    }
    auto groups = (*client)->Run({{"XINFO", "GROUPS", inbox}, 2});
    ASSERT_TRUE(groups.ok());
    ASSERT_EQ(groups->elements.size(), 1u) << inbox;
  }
  wrong = 0;
  for (int count : in_inbox) wrong += count == 1 ? 0 : 1;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(masters.size(), 3u);  // 64 shards of 97 hosts: every master holds inboxes
}

}  // namespace
}  // namespace urlsieve::testing
