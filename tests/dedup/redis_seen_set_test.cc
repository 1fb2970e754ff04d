// RedisSeenSet against a real redis-server on loopback: the SeenSet contract, the layout and its
// memory, growth past capacity, exact mode, the front cache, the claim log, and bad input.
#include "dedup/redis_seen_set.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
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

namespace urlsieve::testing {
namespace {

TEST(RedisSeenLayoutTest, DISABLED_Print) {
  for (uint64_t capacity : {10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull}) {
    auto layout = ChooseRedisSeenLayout(capacity, 1e-3, 0);
    ASSERT_TRUE(layout.ok());
    uint64_t bytes = layout->shards * RedisStringAllocation(layout->layers[0].blocks * 64);
    std::printf("capacity %llu shards %u blocks %llu k %u alloc %llu B/key %.4f layers %zu last %llu\n",
                (unsigned long long)capacity, layout->shards,
                (unsigned long long)layout->layers[0].blocks, layout->layers[0].bits,
                (unsigned long long)bytes, double(bytes) / capacity, layout->layers.size(),
                (unsigned long long)layout->layers.back().blocks);
  }
}

}  // namespace
}  // namespace urlsieve::testing
namespace urlsieve::testing {
namespace {
TEST(RedisSeenLayoutTest, DISABLED_PrintShards) {
  for (uint64_t capacity : {1000000ull, 10000000ull}) {
    for (uint32_t s = 16; s <= 64; ++s) {
      auto layout = ChooseRedisSeenLayout(capacity, 1e-3, s);
      uint64_t bytes = s * RedisStringAllocation(layout->layers[0].blocks * 64);
      std::printf("cap %llu S %u B/key %.4f\n", (unsigned long long)capacity, s, double(bytes) / capacity);
    }
  }
}
}  // namespace
}  // namespace urlsieve::testing

namespace urlsieve::testing {
namespace {

// Figures for docs/design.md (run by hand: --gtest_also_run_disabled_tests): URLs/s, Redis bytes
// per URL and round trips per URL for 10^6 distinct keys in batches of 512, on the shared
// loopback server.
double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

uint64_t UsedMemory(RedisClient& client) {
  auto info = client.Run({{"INFO", "memory"}, -1});
  if (!info.ok()) return 0;
  const size_t at = info->str.find("used_memory:");
  return at == std::string::npos ? 0 : std::stoull(info->str.substr(at + 12));
}

TEST(RedisSeenSetMeasure, DISABLED_DistinctKeys) {
  const int n = std::getenv("URLSIEVE_MEASURE_N") ? std::atoi(std::getenv("URLSIEVE_MEASURE_N"))
                                                  : 1000000;
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back("http://www.site" + std::to_string(i % 5000) + ".example/path/" + std::to_string(i) + "?q=" + std::to_string(i * 7));
  for (int mode = 0; mode < 3; ++mode) {
    const bool exact = mode == 2;
    const bool cached = mode == 1;
    ASSERT_EQ((*client)->Run({{"FLUSHALL"}, -1})->type, RedisReply::Type::kStatus);
    const uint64_t before = UsedMemory(**client);
    RedisSeenSetOptions options = Options("measure", n, exact);
    options.front_cache_keys = cached ? (1 << 22) : 0;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    const auto start = std::chrono::steady_clock::now();
    size_t fresh = 0;
    for (int pass = 0; pass < (cached ? 2 : 1); ++pass) {
      for (int begin = 0; begin < n; begin += 512) {
        std::vector<std::string_view> views(keys.begin() + begin,
                                            keys.begin() + std::min(n, begin + 512));
        std::vector<uint8_t> is_new;
        ASSERT_TRUE((*set)->InsertKeysIfNew(views, &is_new).ok());
        for (uint8_t b : is_new) fresh += b;
      }
    }
    const double seconds = Seconds(start);
    if (std::getenv("URLSIEVE_MEASURE_STATS")) {
      auto info = (*client)->Run({{"INFO", "commandstats"}, -1});
      std::printf("%s\n", info->str.c_str());
      (*client)->Run({{"CONFIG", "RESETSTAT"}, -1});
    }
    auto usage = (*set)->Usage();
    ASSERT_TRUE(usage.ok()) << usage.status().ToString();
    const uint64_t after = UsedMemory(**client);
    SeenStats stats = (*set)->Stats();
    std::printf("%s%s: %d keys%s: %.0f URLs/s, new %zu (fp %.2e), usage %.3f B/URL (%llu keys), "
                "used_memory delta %.3f B/URL, round trips/URL %.4f, layers %u, expected fp %.2e\n",
                exact ? "exact" : "bloom", cached ? "+cache" : "", n, cached ? " twice" : "",
                (cached ? 2.0 : 1.0) * n / seconds, fresh, 1.0 - double(fresh) / n,
                double(usage->bytes) / n, (unsigned long long)usage->keys,
                double(after - before) / n, double((*set)->round_trips()) / n / (cached ? 2 : 1),
                stats.bloom_layers, stats.bloom_expected_fp_rate);
  }
}

// The Redisson-style baseline: a Lua script of k SETBITs per key over one key, offsets from the
// client (k = 10, m = 1.44·10·n bits), one EVALSHA per batch of 512.
TEST(RedisSeenSetMeasure, DISABLED_LuaSetbitBaseline) {
  const int n = std::getenv("URLSIEVE_MEASURE_N") ? std::atoi(std::getenv("URLSIEVE_MEASURE_N"))
                                                  : 1000000;
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  ASSERT_EQ((*client)->Run({{"FLUSHALL"}, -1})->type, RedisReply::Type::kStatus);
  const char* script =
      "local k = tonumber(ARGV[1]) local out = {} local j = 2 "
      "for i = 1, (#ARGV - 1) / k do local new = 0 "
      "for b = 1, k do if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then new = 1 end j = j + 1 end "
      "out[i] = new end return out";
  auto sha = (*client)->Run({{"SCRIPT", "LOAD", script}, -1});
  ASSERT_TRUE(sha.ok());
  const uint64_t m = static_cast<uint64_t>(14.4 * n);
  const auto start = std::chrono::steady_clock::now();
  for (int begin = 0; begin < n; begin += 512) {
    RedisCommand command;
    command.argv = {"EVALSHA", sha->str, "1", "bf", "10"};
    command.key_index = 3;
    for (int i = begin; i < std::min(n, begin + 512); ++i) {
      const std::string key = "http://www.site" + std::to_string(i % 5000) + ".example/path/" + std::to_string(i) + "?q=" + std::to_string(i * 7);
      const KeyHash h = SeenSet::Hash(key);
      for (uint64_t b = 0; b < 10; ++b) command.argv.push_back(std::to_string((h.low + b * h.high) % m));
    }
    auto reply = (*client)->Run(command);
    ASSERT_TRUE(reply.ok());
    ASSERT_FALSE(reply->is_error()) << reply->str;
  }
  std::printf("lua setbit: %d keys: %.0f URLs/s\n", n, n / Seconds(start));
}

}  // namespace
}  // namespace urlsieve::testing
