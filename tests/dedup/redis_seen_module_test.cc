// The urlsieve Redis server module (dedup/redis/module/): URLSIEVE.INSERT keeps the same keys and
// gives the same answers as the Function, so clients with and without it share a set; a replica
// without the module receives the same data; a master that loses the module makes the client go
// back to the Function; bad arguments are error replies, and the server stays up.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dedup/redis_seen_set.h"
#include "dedup/seen_set.h"
#include "redis/redis_client.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

std::string Url(int i) {
  return "http://h" + std::to_string(i % 89) + ".example/q/" + std::to_string(i);
}

RedisSeenSetOptions Options(const RedisServer& server, const std::string& name, bool module,
                            bool exact, uint64_t capacity) {
  RedisSeenSetOptions options;
  options.address = server.address();
  options.name = name;
  options.requested.capacity = capacity;
  options.requested.fp_rate = 1e-3;
  options.requested.exact = exact;
  options.front_cache_keys = 0;
  options.server_module = module;
  return options;
}

std::unique_ptr<RedisSeenSet> MustOpen(const RedisSeenSetOptions& options) {
  auto set = RedisSeenSet::Open(options, nullptr);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(set).value() : nullptr;
}

// Inserts Url(i) for i in `keys` in one batch; the answers as a string of 0/1.
std::string Insert(RedisSeenSet& set, const std::vector<int>& keys) {
  std::vector<std::string> urls;
  for (int i : keys) urls.push_back(Url(i));
  std::vector<std::string_view> views(urls.begin(), urls.end());
  std::vector<uint8_t> is_new;
  Status status = set.InsertKeysIfNew(views, &is_new);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::string answers;
  for (uint8_t v : is_new) answers += v ? '1' : '0';
  return answers;
}

// The same for a routed set of `shards` shards: Url(i) goes to shard i % shards, its payload the
// URL.
std::string InsertRouted(RedisSeenSet& set, const std::vector<int>& batch, uint32_t shards) {
  std::vector<std::string> urls;
  std::vector<uint32_t> routes;
  for (int i : batch) {
    urls.push_back(Url(i));
    routes.push_back(static_cast<uint32_t>(i) % shards);
  }
  std::vector<std::string_view> keys(urls.begin(), urls.end());
  std::vector<KeyHash> hashes;
  for (std::string_view key : keys) hashes.push_back(SeenSet::Hash(key));
  std::unique_ptr<bool[]> is_new(new bool[keys.size()]);
  Status status =
      set.InsertRouted(routes, keys, hashes, keys, std::span<bool>(is_new.get(), keys.size()));
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::string answers;
  for (size_t i = 0; i < keys.size(); ++i) answers += is_new[i] ? '1' : '0';
  return answers;
}

std::vector<int> Range(int from, int to) {
  std::vector<int> keys;
  for (int i = from; i < to; ++i) keys.push_back(i);
  return keys;
}

std::unique_ptr<RedisClient> Connect(const RedisServer& server) {
  auto client = RedisClient::Connect(server.address());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

// Calls of a module command so far (INFO commandstats).
long long ModuleCalls(RedisClient& client, const std::string& command = "urlsieve.insert") {
  auto info = client.Run({{"INFO", "commandstats"}, -1});
  if (!info.ok()) return -1;
  const std::string field = "cmdstat_" + command + ":calls=";
  const size_t at = info->str.find(field);
  if (at == std::string::npos) return 0;
  return std::atoll(info->str.c_str() + at + field.size());
}

// What a key holds, as text: a string's bytes, a hash's sorted fields, a list's items.
std::string Contents(RedisClient& client, const std::string& key) {
  auto type = client.Run({{"TYPE", key}, 1});
  if (!type.ok()) return "(no answer)";
  std::vector<std::string> parts;
  if (type->str == "string") {
    auto value = client.Run({{"GET", key}, 1});
    return value.ok() ? value->str : "(no answer)";
  }
  std::vector<std::string> read = {"HGETALL", key};
  if (type->str == "list") read = {"LRANGE", key, "0", "-1"};
  if (type->str == "stream") read = {"XRANGE", key, "-", "+"};
  auto all = client.Run({read, 1});
  if (!all.ok()) return "(no answer)";
  if (type->str == "stream") {
    for (const RedisReply& entry : all->elements) {
      if (entry.elements.size() != 2 || entry.elements[1].elements.size() != 2) return "(odd)";
      parts.push_back(entry.elements[0].str + " " + entry.elements[1].elements[1].str);
    }
  } else if (type->str == "hash") {
    for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
      parts.push_back(all->elements[i].str + "=" + all->elements[i + 1].str);
    }
    std::sort(parts.begin(), parts.end());
  } else {
    for (const RedisReply& item : all->elements) parts.push_back(item.str);
  }
  std::string out = type->str + ":";
  for (const std::string& part : parts) out += part + "\n";
  return out;
}

// The same batches (repeats inside and across them, growth past a small capacity) into a set the
// module serves and one the Function serves: the same answers, and byte for byte the same keys.
class RedisSeenModuleTest : public ::testing::TestWithParam<bool> {};

TEST_P(RedisSeenModuleTest, AnswersAndStoresAsTheFunction) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  const bool exact = GetParam();
  auto client = Connect(*server);
  ASSERT_NE(client, nullptr);
  auto by_module = MustOpen(Options(*server, "mod", true, exact, 2000));
  auto by_function = MustOpen(Options(*server, "fun", false, exact, 2000));
  ASSERT_NE(by_module, nullptr);
  ASSERT_NE(by_function, nullptr);
  const long long calls_before = ModuleCalls(*client);
  std::vector<std::vector<int>> batches = {
      Range(0, 700), Range(300, 1500), {5, 5, 1600, 1600}, Range(1400, 6000), Range(0, 6000)};
  for (const std::vector<int>& batch : batches) {
    EXPECT_EQ(Insert(*by_module, batch), Insert(*by_function, batch));
  }
  EXPECT_GT(ModuleCalls(*client), calls_before);
  auto keys = client->Run({{"KEYS", "urlsieve:{mod*"}, -1});
  ASSERT_TRUE(keys.ok());
  size_t compared = 0;
  for (const RedisReply& key : keys->elements) {
    std::string twin = key.str;
    twin.replace(twin.find("{mod"), 4, "{fun");
    if (key.str.find(":done:") != std::string::npos || key.str.find(":meta") != std::string::npos) {
      continue;  // a per-process token; the identity
    }
    auto type = client->Run({{"TYPE", key.str}, 1});
    ASSERT_TRUE(type.ok());
    if (type->str == "string") {
      auto a = client->Run({{"GET", key.str}, 1});
      auto b = client->Run({{"GET", twin}, 1});
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_TRUE(a->str == b->str) << key.str << " differs from " << twin;
    } else if (type->str == "hash") {
      auto a = client->Run({{"HGETALL", key.str}, 1});
      auto b = client->Run({{"HGETALL", twin}, 1});
      ASSERT_TRUE(a.ok() && b.ok());
      std::vector<std::string> fa, fb;
      for (size_t i = 0; i + 1 < a->elements.size(); i += 2) {
        if (a->elements[i].str == "identity") continue;
        fa.push_back(a->elements[i].str + "=" + a->elements[i + 1].str);
      }
      for (size_t i = 0; i + 1 < b->elements.size(); i += 2) {
        if (b->elements[i].str == "identity") continue;
        fb.push_back(b->elements[i].str + "=" + b->elements[i + 1].str);
      }
      std::sort(fa.begin(), fa.end());
      std::sort(fb.begin(), fb.end());
      EXPECT_EQ(fa, fb) << key.str;
    }
    ++compared;
  }
  EXPECT_GT(compared, 2u);
  // Grown past its capacity: more than one layer.
  auto layers = client->Run({{"HGET", "urlsieve:{mod:0}:count", "layers"}, 1});
  ASSERT_TRUE(layers.ok());
  EXPECT_NE(layers->str, "1");
}

INSTANTIATE_TEST_SUITE_P(BloomAndExact, RedisSeenModuleTest, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? "Exact" : "Bloom";
                         });

// A crawl cluster's routed set: the same answers, and each inbox the same payloads in the same
// order (URLSIEVE.INSERT_ROUTED against the Function's insert_routed).
TEST_P(RedisSeenModuleTest, RoutesAndAppendsAsTheFunction) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  constexpr uint32_t kShards = 4;
  auto client = Connect(*server);
  ASSERT_NE(client, nullptr);
  std::vector<std::unique_ptr<RedisSeenSet>> sets;
  for (bool module : {true, false}) {
    RedisSeenSetOptions options =
        Options(*server, module ? "rmod" : "rfun", module, GetParam(), 3000);
    options.routed = true;
    options.shards = kShards;
    options.new_key_stream = {"inbox", "readers"};
    sets.push_back(MustOpen(options));
    ASSERT_NE(sets.back(), nullptr);
  }
  const long long calls_before = ModuleCalls(*client, "urlsieve.insert_routed");
  for (const std::vector<int>& batch : {Range(0, 900), Range(500, 5000), Range(0, 5000)}) {
    EXPECT_EQ(InsertRouted(*sets[0], batch, kShards), InsertRouted(*sets[1], batch, kShards));
  }
  EXPECT_GT(ModuleCalls(*client, "urlsieve.insert_routed"), calls_before);
  for (uint32_t shard = 0; shard < kShards; ++shard) {
    std::vector<std::string> payloads[2];
    for (int k = 0; k < 2; ++k) {
      const std::string inbox = "urlsieve:{" + std::string(k == 0 ? "rmod" : "rfun") + ":" +
                                std::to_string(shard) + "}:inbox";
      auto entries = client->Run({{"XRANGE", inbox, "-", "+"}, 1});
      ASSERT_TRUE(entries.ok());
      for (const RedisReply& entry : entries->elements) {
        ASSERT_EQ(entry.elements.size(), 2u);
        payloads[k].push_back(entry.elements[1].elements[1].str);
      }
    }
    EXPECT_EQ(payloads[0], payloads[1]) << "shard " << shard;
    EXPECT_FALSE(payloads[0].empty());
  }
}

// A client with the module and one without share a set: each sees what the other inserted.
TEST(RedisSeenModuleSharingTest, ClientsWithAndWithoutTheModuleShareASet) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto by_module = MustOpen(Options(*server, "shared", true, false, 10000));
  auto by_function = MustOpen(Options(*server, "shared", false, false, 10000));
  ASSERT_NE(by_module, nullptr);
  ASSERT_NE(by_function, nullptr);
  EXPECT_EQ(Insert(*by_module, Range(0, 500)), std::string(500, '1'));
  EXPECT_EQ(Insert(*by_function, Range(0, 1000)), std::string(500, '0') + std::string(500, '1'));
  EXPECT_EQ(Insert(*by_module, Range(0, 1000)), std::string(1000, '0'));
}

// The claim log and idempotent retries: the same token and sequence number answer as the first
// run did; bad arguments are error replies.
TEST(RedisSeenModuleSharingTest, RetriesReplayAndBadArgumentsAreErrors) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto set = MustOpen(Options(*server, "raw", true, false, 1000));
  ASSERT_NE(set, nullptr);
  auto client = Connect(*server);
  ASSERT_NE(client, nullptr);
  const std::string hashes(32, 'x');  // two keys
  const std::string count = "urlsieve:{raw:0}:count";
  auto call = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), "URLSIEVE.INSERT");
    auto reply = client->Run({argv, 1});
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? *reply : RedisReply{};
  };
  RedisReply first = call({count, "0", "tok", "7", "log", "3", hashes, "a", "b"});
  ASSERT_FALSE(first.is_error()) << first.str;
  ASSERT_EQ(first.elements.size(), 3u);
  EXPECT_EQ(first.elements[0].str, "10");  // the same key twice: new once
  RedisReply replay = call({count, "0", "tok", "7", "log", "3", hashes, "a", "b"});
  EXPECT_EQ(replay.elements[0].str, "10");
  RedisReply next = call({count, "0", "tok", "8", "log", "3", hashes, "a", "b"});
  EXPECT_EQ(next.elements[0].str, "00");
  auto logged = client->Run({{"LRANGE", "urlsieve:{raw:0}:claims:log", "0", "-1"}, 1});
  ASSERT_TRUE(logged.ok());
  ASSERT_EQ(logged->elements.size(), 1u);
  EXPECT_EQ(logged->elements[0].str, "3 a");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{count, "0", "", "1", "", "0", "short"},
                                             {count, "0", "", "1", "log", "0", hashes, "a"},
                                             {"urlsieve:{raw:0}:other", "0", "", "1", "", "0", ""},
                                             {"urlsieve:{none:0}:count", "0", "", "1", "", "0", ""},
                                             {count}}) {
    RedisReply reply = call(bad);
    EXPECT_TRUE(reply.is_error()) << bad[0];
  }
  auto pong = client->Run({{"PING"}, -1});
  ASSERT_TRUE(pong.ok());
  EXPECT_EQ(pong->str, "PONG");
}

// Replication is by effects: a replica that never loaded the module holds the same set.
TEST(RedisSeenModuleReplicaTest, AReplicaWithoutTheModuleHoldsTheSameSet) {
  ScratchDir dir("redis_module_replica");
  RedisServer::Options with_module;
  with_module.urlsieve_module = true;
  auto master = RedisServer::Start(dir.path() / "master", with_module);
  ASSERT_NE(master, nullptr);
  RedisServer::Options replica_options;
  replica_options.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master->port())};
  auto replica = RedisServer::Start(dir.path() / "replica", replica_options);
  ASSERT_NE(replica, nullptr);
  for (bool exact : {false, true}) {
    auto set = MustOpen(Options(*master, exact ? "rx" : "rb", true, exact, 1500));
    ASSERT_NE(set, nullptr);
    Insert(*set, Range(0, 4000));
    Insert(*set, Range(2000, 6000));
  }
  // A routed set: its inbox entries keep on the replica the ids the master gave them.
  RedisSeenSetOptions routed = Options(*master, "rr", true, false, 5000);
  routed.routed = true;
  routed.shards = 2;
  routed.new_key_stream = {"inbox", "readers"};
  auto set = MustOpen(routed);
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(InsertRouted(*set, Range(0, 2000), 2), std::string(2000, '1'));
  auto on_master = Connect(*master);
  auto on_replica = Connect(*replica);
  ASSERT_NE(on_master, nullptr);
  ASSERT_NE(on_replica, nullptr);
  auto waited = on_master->Run({{"WAIT", "1", "10000"}, -1});
  ASSERT_TRUE(waited.ok());
  ASSERT_EQ(waited->integer, 1);
  auto keys = on_master->Run({{"KEYS", "urlsieve:*"}, -1});
  ASSERT_TRUE(keys.ok());
  ASSERT_GT(keys->elements.size(), 4u);
  for (const RedisReply& key : keys->elements) {
    EXPECT_EQ(Contents(*on_master, key.str), Contents(*on_replica, key.str)) << key.str;
  }
}

// A master that unloads the module (or restarts without it): the client sends the batch to the
// Function instead, and nothing is answered twice.
TEST(RedisSeenModuleReplicaTest, WithoutTheModuleTheClientGoesBackToTheFunction) {
  ScratchDir dir("redis_module_unload");
  RedisServer::Options with_module;
  with_module.urlsieve_module = true;
  with_module.extra_args = {"--enable-module-command", "yes"};
  auto server = RedisServer::Start(dir.path(), with_module);
  ASSERT_NE(server, nullptr);
  auto set = MustOpen(Options(*server, "gone", true, false, 10000));
  ASSERT_NE(set, nullptr);
  auto client = Connect(*server);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(Insert(*set, Range(0, 300)), std::string(300, '1'));
  EXPECT_GT(ModuleCalls(*client), 0);
  auto unloaded = client->Run({{"MODULE", "UNLOAD", "urlsieve"}, -1});
  ASSERT_TRUE(unloaded.ok());
  ASSERT_FALSE(unloaded->is_error()) << unloaded->str;
  EXPECT_EQ(Insert(*set, Range(0, 600)), std::string(300, '0') + std::string(300, '1'));
}

}  // namespace
}  // namespace urlsieve::testing
