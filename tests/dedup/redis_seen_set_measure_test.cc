// Figures for docs/design.md and the targets, run by hand on the shared loopback server
// (they print, and assert nothing a slow machine could fail):
//   dedup_tests --gtest_also_run_disabled_tests --gtest_filter='RedisSeenSetMeasure.*'
// URLSIEVE_MEASURE_N sets the number of distinct keys (10^6 by default);
// URLSIEVE_MEASURE_BLOOM_ONLY skips exact mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dedup/redis_client.h"
#include "dedup/redis_seen_layout.h"
#include "dedup/redis_seen_set.h"
#include "tests/dedup/redis_shared_server.h"

namespace urlsieve::testing {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

uint64_t UsedMemory(RedisClient& client) {
  auto info = client.Run({{"INFO", "memory"}, -1});
  if (!info.ok()) return 0;
  const size_t at = info->str.find("used_memory:");
  return at == std::string::npos ? 0 : std::stoull(info->str.substr(at + 12));
}

// URLs/s, Redis bytes per URL and round trips per URL for N distinct keys in batches of 512: Bloom,
// Bloom with the front cache (the keys twice: the second pass is answered locally), exact.
TEST(RedisSeenSetMeasure, DISABLED_DistinctKeys) {
  const int n =
      std::getenv("URLSIEVE_MEASURE_N") ? std::atoi(std::getenv("URLSIEVE_MEASURE_N")) : 1000000;
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back("http://www.site" + std::to_string(i % 5000) + ".example/path/" +
                   std::to_string(i) + "?q=" + std::to_string(i * 7));
  const int modes = std::getenv("URLSIEVE_MEASURE_BLOOM_ONLY") ? 2 : 3;
  for (int mode = 0; mode < modes; ++mode) {
    const bool exact = mode == 2;
    const bool cached = mode == 1;
    ASSERT_EQ((*client)->Run({{"FLUSHALL"}, -1})->type, RedisReply::Type::kStatus);
    const uint64_t before = UsedMemory(**client);
    RedisSeenSetOptions options;
    options.address = SharedRedisServer()->address();
    options.name = "measure";
    options.requested.capacity = n;
    options.requested.fp_rate = 1e-3;
    options.requested.exact = exact;
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
    std::printf(
        "%s%s: %d keys%s: %.0f URLs/s, new %zu (fp %.2e), usage %.3f B/URL (%llu keys), "
        "used_memory delta %.3f B/URL, round trips/URL %.4f, layers %u, expected fp %.2e\n",
        exact ? "exact" : "bloom", cached ? "+cache" : "", n, cached ? " twice" : "",
        (cached ? 2.0 : 1.0) * n / seconds, fresh, 1.0 - double(fresh) / n,
        double(usage->bytes) / n, (unsigned long long)usage->keys, double(after - before) / n,
        double((*set)->round_trips()) / n / (cached ? 2 : 1), stats.bloom_layers,
        stats.bloom_expected_fp_rate);
  }
}

// The Redisson-style baseline: a Lua script of k SETBITs per key over one key, offsets from the
// client (k = 10, m = 1.44·10·n bits), one EVALSHA per batch of 512.
TEST(RedisSeenSetMeasure, DISABLED_LuaSetbitBaseline) {
  const int n =
      std::getenv("URLSIEVE_MEASURE_N") ? std::atoi(std::getenv("URLSIEVE_MEASURE_N")) : 1000000;
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  ASSERT_EQ((*client)->Run({{"FLUSHALL"}, -1})->type, RedisReply::Type::kStatus);
  const char* script =
      "local k = tonumber(ARGV[1]) local out = {} local j = 2 "
      "for i = 1, (#ARGV - 1) / k do local new = 0 "
      "for b = 1, k do if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then new = 1 end j = j + "
      "1 end "
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
      const std::string key = "http://www.site" + std::to_string(i % 5000) + ".example/path/" +
                              std::to_string(i) + "?q=" + std::to_string(i * 7);
      const KeyHash h = SeenSet::Hash(key);
      for (uint64_t b = 0; b < 10; ++b)
        command.argv.push_back(std::to_string((h.low + b * h.high) % m));
    }
    auto reply = (*client)->Run(command);
    ASSERT_TRUE(reply.ok());
    ASSERT_FALSE(reply->is_error()) << reply->str;
  }
  std::printf("lua setbit: %d keys: %.0f URLs/s\n", n, n / Seconds(start));
  if (std::getenv("URLSIEVE_MEASURE_STATS")) {
    auto info = (*client)->Run({{"INFO", "commandstats"}, -1});
    std::printf("%s\n", info->str.c_str());
  }
}

}  // namespace
}  // namespace urlsieve::testing

namespace urlsieve::testing {
namespace {
TEST(RedisSeenSetMeasure, DISABLED_Layouts) {
  for (uint64_t capacity :
       {10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull}) {
    auto layout = ChooseRedisSeenLayout(capacity, 1e-3, 0);
    ASSERT_TRUE(layout.ok());
    uint64_t bytes = layout->shards * RedisStringAllocation(layout->layers[0].blocks * 64);
    const double mean = double(capacity) / layout->shards;
    std::printf(
        "capacity %llu: %u shards of %llu blocks, k %u, %.4f B/key, %zu layers, "
        "threshold mean + %.1f sigma\n",
        (unsigned long long)capacity, layout->shards, (unsigned long long)layout->layers[0].blocks,
        layout->layers[0].bits, double(bytes) / capacity, layout->layers.size(),
        (layout->layers[0].capacity - mean) / std::sqrt(mean));
  }
}
}  // namespace
}  // namespace urlsieve::testing
