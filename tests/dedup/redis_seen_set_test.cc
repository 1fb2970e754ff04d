// RedisSeenSet against a real redis-server on loopback: the SeenSet contract, the layout and its
// memory, growth past capacity, exact mode, the front cache, the claim log, and bad input.
#include "dedup/redis_seen_set.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "dedup/redis_client.h"
#include "dedup/redis_seen_layout.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/dedup/seen_set_contract.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

// The set of a state directory: named after the directory, so a reopen finds it again. The
// crawl's set (saves false) keeps a claim log named after the state.
Result<std::unique_ptr<SeenSet>> OpenRedisSet(StateDir* dir, bool saves, const StateParameters& p,
                                              uint64_t front_cache_keys) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) return Status::Unavailable("no redis-server");
  RedisSeenSetOptions options;
  options.address = server->address();
  char name[32];
  std::snprintf(
      name, sizeof(name), "c%016llx",
      static_cast<unsigned long long>(XXH3_64bits(dir->path().data(), dir->path().size())));
  options.name = name;
  options.requested = p;
  options.front_cache_keys = front_cache_keys;
  if (!saves) {
    options.claim_log = dir->identity().ToHex();
    options.committed_generation = dir->generation();
  }
  std::vector<SeenNotice> notices;
  auto set = RedisSeenSet::Open(options, &notices);
  if (!set.ok()) return set.status();
  return std::unique_ptr<SeenSet>(std::move(*set));
}

Result<std::unique_ptr<SeenSet>> OpenRedis(StateDir* dir, bool saves, const StateParameters& p) {
  return OpenRedisSet(dir, saves, p, 0);
}
Result<std::unique_ptr<SeenSet>> OpenRedisCached(StateDir* dir, bool saves,
                                                 const StateParameters& p) {
  return OpenRedisSet(dir, saves, p, 1 << 16);
}

// The exact set runs without a front cache: the contract counts its Bloom "maybe" lookups, and
// repeats answered by the cache never reach the Bloom filter.
INSTANTIATE_TEST_SUITE_P(
    Redis, SeenSetContractTest,
    ::testing::Values(SeenSetImplementation{"RedisBloom", true, false, OpenRedis, true},
                      SeenSetImplementation{"RedisBloomCached", true, false, OpenRedisCached, true},
                      SeenSetImplementation{"RedisExact", true, true, OpenRedis, true}),
    SeenSetImplementationName);

std::string Url(int i) {
  return "http://h" + std::to_string(i % 97) + ".example/p/" + std::to_string(i);
}

RedisSeenSetOptions Options(const std::string& name, uint64_t capacity = 10000,
                            bool exact = false) {
  RedisSeenSetOptions options;
  options.address = SharedRedisServer()->address();
  options.name = name;
  options.requested.capacity = capacity;
  options.requested.fp_rate = 1e-3;
  options.requested.exact = exact;
  options.front_cache_keys = 0;
  return options;
}

// Inserts keys [from, to) in batches of `batch`; the indexes told new.
std::vector<int> InsertUrls(RedisSeenSet& set, int from, int to, int batch = 512) {
  std::vector<int> fresh;
  for (int begin = from; begin < to; begin += batch) {
    const int end = std::min(to, begin + batch);
    std::vector<std::string> keys;
    for (int i = begin; i < end; ++i) keys.push_back(Url(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<uint8_t> is_new;
    Status status = set.InsertKeysIfNew(views, &is_new);
    EXPECT_TRUE(status.ok()) << status.ToString();
    if (!status.ok()) return fresh;
    for (int i = begin; i < end; ++i) {
      if (is_new[i - begin]) fresh.push_back(i);
    }
  }
  return fresh;
}

TEST(RedisSeenSetTest, InsertsContainsAndReopens) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  auto set = RedisSeenSet::Open(Options("basic"), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(InsertUrls(**set, 0, 1000).size(), 1000u);
  EXPECT_EQ(InsertUrls(**set, 500, 1500).size(), 500u);
  auto contained = (*set)->Contains(Url(7));
  ASSERT_TRUE(contained.ok()) << contained.status().ToString();
  EXPECT_TRUE(*contained);
  contained = (*set)->Contains(Url(5000));
  ASSERT_TRUE(contained.ok());
  EXPECT_FALSE(*contained);
  std::vector<SeenNotice> notices;
  RedisSeenSetOptions other = Options("basic", 20000);
  auto again = RedisSeenSet::Open(other, &notices);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].kind, SeenNotice::Kind::kStoredParameters);
  EXPECT_EQ((*again)->parameters().capacity, 10000u);
  EXPECT_EQ((*again)->identity(), (*set)->identity());
  EXPECT_TRUE(InsertUrls(**again, 0, 1500).empty());
  SeenStats stats = (*again)->Stats();
  EXPECT_EQ(stats.bloom_inserted, 1500u);
  EXPECT_EQ(stats.bloom_layers, 1u);
  EXPECT_GT(stats.bloom_fill_ratio, 0);
}

}  // namespace
}  // namespace urlsieve::testing
