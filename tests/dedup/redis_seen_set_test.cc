// RedisSeenSet against a real redis-server on loopback: the SeenSet contract, the layout and its
// memory, growth past capacity, exact mode, the front cache, the claim log, and bad input.
#include "dedup/redis_seen_set.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dedup/redis/redis_seen_layout.h"
#include "redis/redis_client.h"
#include "tests/dedup/forked_inserters.h"
#include "tests/dedup/redis_contract_set.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/dedup/seen_set_contract.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

// The set of a state directory on the shared server (redis_contract_set.h).
Result<std::unique_ptr<StateSeenSet>> OpenRedisSet(StateDir* dir, bool saves,
                                                   const StateParameters& p,
                                                   uint64_t front_cache_keys) {
  RedisServer* server = SharedRedisServer();
  if (server == nullptr) return Status::Unavailable("no redis-server");
  return OpenContractRedisSet(server->address(), dir, saves, p, front_cache_keys);
}

Result<std::unique_ptr<StateSeenSet>> OpenRedis(StateDir* dir, bool saves,
                                                const StateParameters& p) {
  return OpenRedisSet(dir, saves, p, 0);
}
Result<std::unique_ptr<StateSeenSet>> OpenRedisCached(StateDir* dir, bool saves,
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

// The number of keys in the server's current database.
long long DbSize(RedisClient& client) {
  auto reply = client.Run({{"DBSIZE"}, -1});
  return reply.ok() ? reply->integer : -1;
}

std::unique_ptr<RedisClient> MustConnect(const RedisAddress& address) {
  auto client = RedisClient::Connect(address);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(*client) : nullptr;
}

TEST(RedisSeenLayoutTest, SizeClassesAndTheLayerTable) {
  EXPECT_EQ(JemallocSizeClass(1), 8u);
  EXPECT_EQ(JemallocSizeClass(17), 32u);
  EXPECT_EQ(JemallocSizeClass(129), 160u);
  EXPECT_EQ(JemallocSizeClass(1 << 20), uint64_t{1} << 20);
  EXPECT_EQ(JemallocSizeClass((1 << 20) + 1), uint64_t{5} << 18);  // 1.25 MiB
  EXPECT_EQ(RedisStringAllocation(1 << 20), uint64_t{5} << 18);
  auto layout = ChooseRedisSeenLayout(10'000'000, 1e-3, 0);
  ASSERT_TRUE(layout.ok());
  // Layer 0 fills its size classes: at most 2 bytes per key at ε = 1e-3 over all shards.
  const uint64_t bytes = layout->shards * RedisStringAllocation(layout->layers[0].blocks * 64);
  EXPECT_LE(bytes, 20'000'000u);
  EXPECT_LE(layout->layers[0].blocks * 64 + 16,
            RedisStringAllocation(layout->layers[0].blocks * 64));
  EXPECT_GT(layout->layers[0].blocks * 64 + 16 + 64,
            RedisStringAllocation(layout->layers[0].blocks * 64));
  // A standalone server gets as few shards as the string sizes allow below 4 MiB of filter, past
  // it at most 32 (fitted to the size classes); a cluster at least 4 per master.
  EXPECT_LE(layout->shards, 32u);
  EXPECT_EQ(ChooseRedisSeenLayout(1'000'000, 1e-3, 0)->shards, 1u);
  auto spread = ChooseRedisSeenLayout(1'000'000, 1e-3, 0, 12);
  ASSERT_TRUE(spread.ok());
  EXPECT_GE(spread->shards, 12u);
  EXPECT_LE(spread->shards, 24u);
  for (size_t l = 1; l < layout->layers.size(); ++l) {
    EXPECT_GT(layout->layers[l].capacity, layout->layers[l - 1].capacity);
    EXPECT_GE(layout->layers[l].bits, layout->layers[l - 1].bits);
  }
  auto decoded = RedisSeenLayout::DecodeLayers(layout->EncodeLayers());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), layout->layers.size());
  EXPECT_EQ((*decoded)[3].blocks, layout->layers[3].blocks);
  for (const char* bad : {"", "1,2,3", "1,2,3,4,", "1,2,0,4", "x,2,3,4", "1,2,3,4;5"}) {
    EXPECT_EQ(RedisSeenLayout::DecodeLayers(bad).status().code(), StatusCode::kCorruption) << bad;
  }
  EXPECT_EQ(ChooseRedisSeenLayout(0, 1e-3, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseRedisSeenLayout(10, 1.5, 0).status().code(), StatusCode::kInvalidArgument);
}

// What Redis allocates is what the layout planned: each layer string sits in its size class.
TEST(RedisSeenSetTest, LayerStringsFillTheirSizeClass) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  RedisSeenSetOptions options = Options("memory", 1'000'000);
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto layout = ChooseRedisSeenLayout(1'000'000, 1e-3, 0);
  ASSERT_TRUE(layout.ok());
  auto client = MustConnect(SharedRedisServer()->address());
  ASSERT_NE(client, nullptr);
  // A shard's layer 0 is made by its first insert, at its full size.
  auto made = client->Run({{"EXISTS", "urlsieve:{memory:0}:bloom:0"}});
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->integer, 0);
  EXPECT_EQ(InsertUrls(**set, 0, 3000).size(), 3000u);
  auto usage = client->Run({{"MEMORY", "USAGE", "urlsieve:{memory:0}:bloom:0"}});
  ASSERT_TRUE(usage.ok());
  const uint64_t allocation = RedisStringAllocation(layout->layers[0].blocks * 64);
  EXPECT_GE(static_cast<uint64_t>(usage->integer), allocation);
  EXPECT_LE(static_cast<uint64_t>(usage->integer), allocation + 128);  // key, object, dict entry
  EXPECT_EQ(InsertUrls(**set, 3000, 6000).size(), 3000u);
  auto after = client->Run({{"MEMORY", "USAGE", "urlsieve:{memory:0}:bloom:0"}});
  EXPECT_EQ(after->integer, usage->integer);  // BITFIELD never grew it
  auto total = (*set)->Usage();
  ASSERT_TRUE(total.ok()) << total.status().ToString();
  EXPECT_EQ(total->masters, 1u);
  EXPECT_EQ(total->keys, 1 + 2 * uint64_t{layout->shards});  // meta, per shard count + layer 0
  EXPECT_LE(total->bytes, 2'100'000u);
  EXPECT_GE(total->bytes, layout->shards * allocation);
}

// A set made by an earlier build (meta version 1: every layer 0 made with the set, no `unmade`
// field) opens and keeps its keys.
TEST(RedisSeenSetTest, ASetOfAnEarlierVersionOpensAndKeepsItsKeys) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  RedisSeenSetOptions options = Options("earlier", 10'000);
  {
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    EXPECT_EQ(InsertUrls(**set, 0, 500).size(), 500u);
  }
  auto client = MustConnect(SharedRedisServer()->address());
  ASSERT_NE(client, nullptr);
  auto version = client->Run({{"HGET", "urlsieve:{earlier}:meta", "version"}, 1});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->str, "3");
  ASSERT_TRUE(client->Run({{"HSET", "urlsieve:{earlier}:meta", "version", "1"}}).ok());
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(InsertUrls(**set, 0, 1000).size(), 500u);
}

TEST(RedisSeenSetTest, GrowsPastItsCapacityWithoutRepeatsAndWithinItsFalsePositiveRate) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    RedisSeenSetOptions options = Options(exact ? "grow-exact" : "grow", 1000, exact);
    options.requested.fp_rate = 1e-2;
    options.shards = 4;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    // 10x the capacity, in batches of several sizes.
    std::vector<int> fresh;
    for (int begin = 0, batch = 1; begin < 10000; begin += batch, batch = batch * 3 % 700 + 1) {
      std::vector<int> part = InsertUrls(**set, begin, std::min(10000, begin + batch), batch);
      fresh.insert(fresh.end(), part.begin(), part.end());
    }
    SeenStats stats = (*set)->Stats();
    EXPECT_GE(stats.bloom_layers, 3u);
    EXPECT_EQ(stats.bloom_inserted, fresh.size());
    EXPECT_GE(stats.bloom_capacity, 10000u);
    // Growth layers keep the filter within ε: a key may have been a false positive (never new),
    // never new twice.
    EXPECT_GE(fresh.size(), exact ? 10000u : 9800u);
    EXPECT_TRUE(InsertUrls(**set, 0, 10000).empty());
    if (exact) {
      EXPECT_EQ(stats.stored_keys, 10000u);
    }
    // Fresh keys: the observed false-positive rate stays within ε (expected ≤ 50 of 5000; the
    // bound allows four standard deviations more).
    int false_positives = 0;
    for (int i = 100000; i < 105000; ++i) {
      auto contained = (*set)->Contains(Url(i));
      ASSERT_TRUE(contained.ok()) << contained.status().ToString();
      false_positives += *contained ? 1 : 0;
    }
    EXPECT_LE(false_positives, exact ? 0 : 50 + 4 * 7);
    EXPECT_LE(stats.bloom_expected_fp_rate, 1e-2)
        << stats.bloom_layers << " layers, " << stats.bloom_inserted << " keys, capacity "
        << stats.bloom_capacity << ", " << stats.bloom_bytes << " bytes";
    // Another process (another open) knows the layers from Redis.
    auto other = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(other.ok());
    EXPECT_TRUE(InsertUrls(**other, 0, 10000).empty());
    EXPECT_GE(InsertUrls(**other, 20000, 20100).size(), exact ? 100u : 95u);
  }
}

// A batch arriving when a shard's newest layer holds its capacity adds the next layer only for a
// key that is actually new: repeats alone never grow the shard.
TEST(RedisSeenSetTest, RepeatsAtCapacityDoNotGrowTheShard) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  auto client = MustConnect(SharedRedisServer()->address());
  ASSERT_NE(client, nullptr);
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    const std::string name = exact ? "full-exact" : "full";
    const std::string count_key = "urlsieve:{" + name + ":0}:count";
    RedisSeenSetOptions options = Options(name, 1000, exact);
    options.shards = 1;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    auto hget = [&](const char* field) -> long long {
      auto reply = client->Run({{"HGET", count_key, field}});
      return reply.ok() && reply->type == RedisReply::Type::kString ? std::stoll(reply->str) : -1;
    };
    auto table = client->Run({{"HGET", count_key, "table"}});
    ASSERT_TRUE(table.ok());
    auto layers = RedisSeenLayout::DecodeLayers(table->str);
    ASSERT_TRUE(layers.ok()) << layers.status().ToString();
    ASSERT_GE(layers->size(), 2u);
    const auto capacity = static_cast<long long>((*layers)[0].capacity);
    // Fill layer 0 exactly: each batch at most the room left, so none of them grows it.
    int next = 0;
    for (long long count = hget("count"); count < capacity; count = hget("count")) {
      ASSERT_GE(count, 0);
      const int batch = static_cast<int>(capacity - count);
      InsertUrls(**set, next, next + batch, batch);
      next += batch;
      ASSERT_EQ(hget("layers"), 1);
    }
    ASSERT_EQ(hget("count"), capacity);
    // Repeats only, in one batch and one by one: still one layer.
    EXPECT_TRUE(InsertUrls(**set, 0, std::min(next, 300), 300).empty());
    EXPECT_TRUE(InsertUrls(**set, 0, 3, 1).empty());
    EXPECT_EQ(hget("layers"), 1);
    EXPECT_EQ(hget("count"), capacity);
    auto bloom1 = client->Run({{"EXISTS", "urlsieve:{" + name + ":0}:bloom:1"}});
    ASSERT_TRUE(bloom1.ok());
    EXPECT_EQ(bloom1->integer, 0);
    // Repeats and one new key (not a false positive of layer 0): the next layer takes it, and
    // only it.
    int fresh = 100000;
    for (;; ++fresh) {
      auto contained = (*set)->Contains(Url(fresh));
      ASSERT_TRUE(contained.ok()) << contained.status().ToString();
      if (!*contained) break;
    }
    std::vector<std::string> keys = {Url(0), Url(1), Url(fresh), Url(2)};
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<uint8_t> is_new;
    ASSERT_TRUE((*set)->InsertKeysIfNew(views, &is_new).ok());
    EXPECT_EQ(is_new, (std::vector<uint8_t>{0, 0, 1, 0}));
    EXPECT_EQ(hget("layers"), 2);
    EXPECT_EQ(hget("count"), 1);
    EXPECT_EQ(hget("n0"), capacity);
    EXPECT_TRUE(InsertUrls(**set, 0, next).empty());
  }
}

// Four processes of four threads each insert the same 20000 keys in different orders and batch
// sizes: each key is told new exactly once in the world.
TEST(RedisSeenSetTest, ExactlyOneCallerInTheWorldIsToldNew) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  ScratchDir dir("redis_one_new");
  constexpr int kProcesses = 4;
  constexpr int kThreads = 4;
  constexpr int kKeys = 20000;
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    const std::string name = exact ? "one-new-exact" : "one-new";
    const std::vector<int> told = CountNewAcrossProcesses(
        dir.path(), kProcesses, kThreads, kKeys, 300, [&](int p) -> IdInserter {
          RedisSeenSetOptions options = Options(name, 100000, exact);
          options.front_cache_keys = p % 2 == 0 ? 0 : 1 << 16;
          auto opened = RedisSeenSet::Open(options, nullptr);
          if (!opened.ok()) return {};
          std::shared_ptr<RedisSeenSet> set = std::move(*opened);
          return [set](const std::vector<int>& ids, std::vector<bool>* is_new) {
            std::vector<std::string> keys;
            for (int id : ids) keys.push_back(Url(id));
            std::vector<std::string_view> views(keys.begin(), keys.end());
            std::vector<uint8_t> answers;
            if (!set->InsertKeysIfNew(views, &answers).ok()) return false;
            is_new->assign(answers.begin(), answers.end());
            return true;
          };
        });
    int wrong = 0;
    for (int count : told) wrong += count == 1 ? 0 : 1;
    EXPECT_EQ(wrong, 0);
  }
}

// Redis killed mid-stream (SIGKILL) and restarted from its AOF: calls fail (never "seen"), the
// writer retries each failed batch until it succeeds, and in the end every distinct key was told
// new exactly once.
TEST(RedisSeenSetTest, AKilledRedisGivesErrorsThenRecoversWithEveryKeyNewOnce) {
  ScratchDir dir("redis_killed");
  RedisServer::Options server_options;
  server_options.append_only = true;
  auto server = RedisServer::Start(dir.path() / "redis", server_options);
  ASSERT_NE(server, nullptr);
  RedisSeenSetOptions options = Options("killed", 100000, /*exact=*/true);
  options.address = server->address();
  options.timeouts.command_s = 2;
  options.front_cache_keys = 1 << 16;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  constexpr int kKeys = 30000;
  constexpr int kBatch = 100;
  std::atomic<int> batches_done{0};
  std::atomic<int> failures{0};
  std::vector<int> told(kKeys, 0);
  std::thread writer([&] {
    // Keys with repeats: batch b holds keys b*70 .. b*70+99 (30 % overlap with the next).
    for (int b = 0; b * 70 < kKeys; ++b) {
      std::vector<std::string> keys;
      std::vector<int> ids;
      for (int key = b * 70; key < std::min(kKeys, b * 70 + kBatch); ++key) {
        keys.push_back(Url(key));
        ids.push_back(key);
      }
      std::vector<std::string_view> views(keys.begin(), keys.end());
      std::vector<uint8_t> is_new;
      for (;;) {
        Status status = (*set)->InsertKeysIfNew(views, &is_new);
        if (status.ok()) break;
        EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
        ++failures;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the caller's back-off
      }
      for (size_t j = 0; j < ids.size(); ++j) told[ids[j]] += is_new[j];
      ++batches_done;
    }
  });
  auto wait_for = [](const std::function<bool()>& condition) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!condition() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polling a condition
    }
    return condition();
  };
  EXPECT_TRUE(wait_for([&] { return batches_done >= 50; }));
  server->Kill(SIGKILL);
  EXPECT_TRUE(wait_for([&] { return failures >= 1; }));
  const int done_while_down = batches_done;
  ASSERT_TRUE(server->Restart());
  EXPECT_TRUE(wait_for([&] { return batches_done >= done_while_down + 50; }));
  server->Kill(SIGKILL);  // once more, without waiting for a failure
  ASSERT_TRUE(server->Restart());
  writer.join();
  EXPECT_GE(failures, 1);
  int wrong = 0;
  for (int count : told) wrong += count == 1 ? 0 : 1;
  EXPECT_EQ(wrong, 0);
  SeenStats stats = (*set)->Stats();
  EXPECT_EQ(stats.stored_keys, static_cast<uint64_t>(kKeys));
}

// A server that is not Redis: answers every connection with an HTTP error and closes.
class NotRedisServer {
 public:
  NotRedisServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;  // the listening socket was shut down
        const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        (void)!::write(client, reply, sizeof(reply) - 1);
        ::close(client);
      }
    });
  }
  ~NotRedisServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(RedisSeenSetTest, BadInputIsAClearErrorAndWritesNothing) {
  ScratchDir dir("redis_bad_input");
  RedisServer::Options with_password;
  with_password.password = "right";
  auto server = RedisServer::Start(dir.path() / "redis", with_password);
  ASSERT_NE(server, nullptr);
  RedisAddress address = server->address();
  address.password = "right";
  auto client = MustConnect(address);
  ASSERT_NE(client, nullptr);

  // A wrong password.
  RedisSeenSetOptions options = Options("bad");
  options.address = server->address();
  options.address.password = "wrong";
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition) << set.status().ToString();
  EXPECT_NE(set.status().message().find(server->address().ToString()), std::string::npos)
      << set.status().message();
  EXPECT_EQ(set.status().message().find("wrong"), std::string::npos) << set.status().message();
  EXPECT_EQ(DbSize(*client), 0);

  // A peer that is not Redis.
  {
    NotRedisServer http;
    RedisSeenSetOptions at_http = Options("bad");
    at_http.address = *RedisAddress::Parse("redis://127.0.0.1:" + std::to_string(http.port()));
    set = RedisSeenSet::Open(at_http, nullptr);
    ASSERT_FALSE(set.ok());
    EXPECT_NE(set.status().code(), StatusCode::kOk);
    EXPECT_NE(set.status().message().find("127.0.0.1:" + std::to_string(http.port())),
              std::string::npos)
        << set.status().message();
  }

  options.address = address;
  // The metadata key holds another type.
  ASSERT_TRUE(client->Run({{"SET", "urlsieve:{taken}:meta", "x"}}).ok());
  options.name = "taken";
  set = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition) << set.status().ToString();
  EXPECT_NE(set.status().message().find("urlsieve:{taken}:meta"), std::string::npos)
      << set.status().message();
  // A shard's key holds another type.
  ASSERT_TRUE(client->Run({{"LPUSH", "urlsieve:{shard:0}:count", "x"}}).ok());
  options.name = "shard";
  set = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition) << set.status().ToString();
  EXPECT_NE(set.status().message().find("urlsieve:{shard:0}:count"), std::string::npos)
      << set.status().message();
  // Metadata of another version, and of something else.
  ASSERT_TRUE(client
                  ->Run({{"HSET", "urlsieve:{future}:meta", "format", "urlsieve-redis-seen-set",
                          "version", "99"}})
                  .ok());
  options.name = "future";
  set = RedisSeenSet::Open(options, nullptr);
  EXPECT_EQ(set.status().code(), StatusCode::kUnsupported) << set.status().ToString();
  EXPECT_NE(set.status().message().find("version 99"), std::string::npos);
  ASSERT_TRUE(client->Run({{"HSET", "urlsieve:{alien}:meta", "owner", "someone"}}).ok());
  options.name = "alien";
  set = RedisSeenSet::Open(options, nullptr);
  EXPECT_EQ(set.status().code(), StatusCode::kCorruption) << set.status().ToString();
  // A bad name.
  options.name = "a{b}";
  EXPECT_EQ(RedisSeenSet::Open(options, nullptr).status().code(), StatusCode::kInvalidArgument);
  // Nothing was written: the four keys the test made, and no function library.
  EXPECT_EQ(DbSize(*client), 4);
  auto functions = client->Run({{"FUNCTION", "LIST"}, -1});
  ASSERT_TRUE(functions.ok());
  EXPECT_TRUE(functions->elements.empty());
  // A read-only open of a set that does not exist.
  options.name = "absent";
  options.read_only = true;
  EXPECT_EQ(RedisSeenSet::Open(options, nullptr).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(DbSize(*client), 4);
}

TEST(RedisSeenSetTest, TheFrontCacheAnswersRepeatsLocallyAndNewStillComesFromRedis) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  RedisSeenSetOptions options = Options("cache");
  options.front_cache_keys = 1 << 16;
  auto first = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(InsertUrls(**first, 0, 1000).size(), 1000u);
  const uint64_t trips = (*first)->round_trips();
  const uint64_t sent = (*first)->keys_sent();
  EXPECT_TRUE(InsertUrls(**first, 0, 1000).empty());
  EXPECT_TRUE(InsertUrls(**first, 500, 1000, 7).empty());
  EXPECT_EQ((*first)->round_trips(), trips);  // every repeat answered locally
  EXPECT_EQ((*first)->keys_sent(), sent);
  auto contained = (*first)->Contains(Url(3));
  ASSERT_TRUE(contained.ok());
  EXPECT_TRUE(*contained);
  EXPECT_EQ((*first)->round_trips(), trips);
  // Keys another process inserted: not in this cache, so Redis answers, "seen".
  auto second = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(InsertUrls(**second, 1000, 2000).size(), 1000u);
  EXPECT_TRUE(InsertUrls(**first, 1000, 2000).empty());
  EXPECT_GT((*first)->round_trips(), trips);
  // Now cached here too.
  const uint64_t later = (*first)->round_trips();
  EXPECT_TRUE(InsertUrls(**first, 1000, 2000).empty());
  EXPECT_EQ((*first)->round_trips(), later);
}

TEST(RedisSeenSetTest, TheClaimLogKeepsPayloadsUntilTheirCheckpointCommits) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  RedisSeenSetOptions options = Options("claims");
  options.claim_log = "crawl1";
  options.committed_generation = 5;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ((*set)->Save().code(), StatusCode::kFailedPrecondition);
  auto insert = [&](int from, int to) {
    std::vector<std::string> keys;
    std::vector<std::string> payloads;
    for (int i = from; i < to; ++i) {
      keys.push_back(Url(i));
      payloads.push_back("depth=1 url=" + Url(i));
    }
    keys.push_back(Url(from));  // a repeat: no claim
    payloads.push_back("repeat");
    std::vector<std::string_view> key_views(keys.begin(), keys.end());
    std::vector<std::string_view> payload_views(payloads.begin(), payloads.end());
    std::vector<KeyHash> hashes;
    for (const std::string& key : keys) hashes.push_back(SeenSet::Hash(key));
    std::unique_ptr<bool[]> is_new(new bool[keys.size()]);
    Status status = (*set)->InsertHashedIfNewClaiming(key_views, hashes, payload_views,
                                                      std::span<bool>(is_new.get(), keys.size()));
    EXPECT_TRUE(status.ok()) << status.ToString();
  };
  auto claims = [&](RedisSeenSet& s) {
    auto got = s.UncommittedClaims();
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::string> sorted = got.ok() ? *got : std::vector<std::string>();
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  };
  insert(0, 100);
  EXPECT_EQ(claims(**set).size(), 100u);
  // A crash now: the next open (at committed generation 5) gets the 100 payloads back.
  {
    auto reopened = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(reopened.ok());
    std::vector<std::string> got = claims(**reopened);
    ASSERT_EQ(got.size(), 100u);
    EXPECT_EQ(got[0].substr(0, 12), "depth=1 url=");
  }
  ASSERT_TRUE((*set)->CheckpointCommitted(6).ok());
  insert(100, 150);
  ASSERT_EQ((*set)->Stats().generation, 6u);
  {
    RedisSeenSetOptions at6 = options;
    at6.committed_generation = 6;
    auto reopened = RedisSeenSet::Open(at6, nullptr);
    ASSERT_TRUE(reopened.ok());
    EXPECT_EQ(claims(**reopened).size(), 50u);
    // A crash between the COMMIT of 7 and the cleanup: entries ≤ 7 are leftovers.
    at6.committed_generation = 7;
    reopened = RedisSeenSet::Open(at6, nullptr);
    ASSERT_TRUE(reopened.ok());
    EXPECT_TRUE(claims(**reopened).empty());
  }
  // Another crawl's log is its own.
  RedisSeenSetOptions other = options;
  other.claim_log = "crawl2";
  auto second = RedisSeenSet::Open(other, nullptr);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(claims(**second).empty());
}

// A server that lost the function library (FUNCTION FLUSH) gets it again: no data was lost. (A
// lost shard is an error: redis_seen_set_loss_test.cc.)
TEST(RedisSeenSetTest, ALostFunctionLibraryIsLoadedAgain) {
  ASSERT_NE(SharedRedisServer(), nullptr);
  auto set = RedisSeenSet::Open(Options("restore"), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(InsertUrls(**set, 0, 100).size(), 100u);
  auto client = MustConnect(SharedRedisServer()->address());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Run({{"FUNCTION", "FLUSH"}, -1}).ok());
  EXPECT_TRUE(InsertUrls(**set, 0, 100).empty());
  EXPECT_EQ(InsertUrls(**set, 100, 200).size(), 100u);
}

}  // namespace
}  // namespace urlsieve::testing
