// RedisSeenSet on a real 3-master Redis Cluster (tests/support/redis_cluster.h): the SeenSet
// contract, and the shards spread over the masters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dedup/redis_cluster_client.h"
#include "dedup/redis_seen_set.h"
#include "tests/dedup/redis_contract_set.h"
#include "tests/dedup/seen_set_contract.h"
#include "tests/support/redis_cluster.h"

namespace urlsieve::testing {
namespace {

// One cluster for every test of the process, started on first use and killed when the process
// exits (ctest runs each test in a process of its own; inside one, tests use distinct set names).
class SharedClusterHolder {
 public:
  SharedClusterHolder()
      : dir_(std::filesystem::temp_directory_path() /
             ("urlsieve_shared_redis_cluster_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    cluster_ = RedisCluster::Start(dir_);
  }
  ~SharedClusterHolder() {
    cluster_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  RedisCluster* cluster() { return cluster_.get(); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<RedisCluster> cluster_;
};

RedisCluster* SharedCluster() {
  static SharedClusterHolder holder;
  return holder.cluster();
}

// Shards forced to 8 (a set of the contract's 10,000 keys would have one): each batch then spans
// the three masters.
constexpr uint32_t kContractShards = 8;

Result<std::unique_ptr<SeenSet>> OpenCluster(StateDir* dir, bool saves, const StateParameters& p) {
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

}  // namespace
}  // namespace urlsieve::testing
