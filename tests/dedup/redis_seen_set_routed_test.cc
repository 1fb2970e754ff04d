// RedisSeenSet in routed mode (redis_seen_set.h) against a real redis-server on loopback: each key
// told new lands once in the inbox stream of the shard its caller named, with its payload and the
// consumer group; exactly one caller in the world is told new and the inboxes hold each key once;
// a replayed or retried batch appends nothing twice; bad input and a mismatched reopen are clear
// errors that write nothing; the routed layout.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dedup/bloom/key_hash.h"
#include "dedup/redis/redis_seen_function.h"
#include "dedup/redis/redis_seen_layout.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/dedup/forked_inserters.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

constexpr uint32_t kShards = 16;
// The stream new keys go to (a crawl cluster's inbox: crawler/cluster/cluster_keys.h), and its
// group.
const RedisNewKeyStream kInbox = {"inbox", "crawl"};
std::string InboxKey(const std::string& name, uint32_t shard) {
  return RedisShardKeyPrefix(name, shard) + kInbox.suffix;
}

// Key i is a URL of host i % 37; its shard is its host's, as a crawl cluster's partition is.
std::string Url(int i) {
  return "http://h" + std::to_string(i % 37) + ".example/p/" + std::to_string(i);
}
uint32_t ShardOfUrl(int i, uint32_t shards = kShards) { return (i % 37) % shards; }
std::string Payload(int i) {
  return "{\"url\":\"" + Url(i) + "\",\"depth\":" + std::to_string(i % 5) + "}";
}

RedisSeenSetOptions RoutedOptions(const RedisAddress& address, const std::string& name,
                                  bool exact = false, uint32_t shards = kShards) {
  RedisSeenSetOptions options;
  options.address = address;
  options.name = name;
  options.requested.capacity = 100000;
  options.requested.fp_rate = 1e-3;
  options.requested.exact = exact;
  options.front_cache_keys = 0;
  options.routed = true;
  options.new_key_stream = kInbox;
  options.shards = shards;
  return options;
}

RedisSeenSetOptions RoutedOptions(const std::string& name, bool exact = false,
                                  uint32_t shards = kShards) {
  return RoutedOptions(SharedRedisServer()->address(), name, exact, shards);
}

// Inserts keys `ids` routed (their payloads Payload(i)); the status, and is_new per id.
Status InsertIds(RedisSeenSet& set, const std::vector<int>& ids, std::vector<bool>* is_new,
                 uint32_t shards = kShards) {
  std::vector<std::string> keys;
  std::vector<std::string> payloads;
  std::vector<uint32_t> routes;
  std::vector<KeyHash> hashes;
  for (int i : ids) {
    keys.push_back(Url(i));
    payloads.push_back(Payload(i));
    routes.push_back(ShardOfUrl(i, shards));
    hashes.push_back(HashKey(keys.back()));
  }
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::vector<std::string_view> payload_views(payloads.begin(), payloads.end());
  std::unique_ptr<bool[]> answers(new bool[ids.size()]);
  Status status = set.InsertRouted(routes, key_views, hashes, payload_views,
                                   std::span<bool>(answers.get(), ids.size()));
  is_new->assign(answers.get(), answers.get() + ids.size());
  return status;
}

std::vector<int> Range(int from, int to) {
  std::vector<int> ids;
  for (int i = from; i < to; ++i) ids.push_back(i);
  return ids;
}

// Every inbox entry's payload, per shard (XRANGE - +), and whether its consumer group exists.
struct Inbox {
  std::vector<std::string> payloads;
  bool exists = false;
  bool has_group = false;
};

std::vector<Inbox> ReadInboxes(RedisClient& client, const std::string& name, uint32_t shards) {
  std::vector<Inbox> inboxes(shards);
  for (uint32_t s = 0; s < shards; ++s) {
    const std::string key = InboxKey(name, s);
    auto exists = client.Run({{"EXISTS", key}, 1});
    EXPECT_TRUE(exists.ok()) << exists.status().ToString();
    if (!exists.ok() || exists->integer == 0) continue;
    inboxes[s].exists = true;
    auto range = client.Run({{"XRANGE", key, "-", "+"}, 1});
    EXPECT_TRUE(range.ok()) << range.status().ToString();
    if (!range.ok()) continue;
    for (const RedisReply& entry : range->elements) {
      // [id, [field, value]]
      EXPECT_EQ(entry.elements.size(), 2u);
      if (entry.elements.size() != 2) continue;
      const RedisReply& fields = entry.elements[1];
      EXPECT_EQ(fields.elements.size(), 2u);
      if (fields.elements.size() != 2) continue;
      EXPECT_EQ(fields.elements[0].str, "c");
      inboxes[s].payloads.push_back(fields.elements[1].str);
    }
    auto groups = client.Run({{"XINFO", "GROUPS", key}, 2});
    EXPECT_TRUE(groups.ok()) << groups.status().ToString();
    if (!groups.ok()) continue;
    for (const RedisReply& group : groups->elements) {
      for (size_t f = 0; f + 1 < group.elements.size(); f += 2) {
        if (group.elements[f].str == "name" && group.elements[f + 1].str == kInbox.group) {
          inboxes[s].has_group = true;
        }
      }
    }
  }
  return inboxes;
}

// Checks that the inboxes hold exactly the payloads of `ids`, once each, each in its shard.
void ExpectInboxesHoldOnce(RedisClient& client, const std::string& name,
                           const std::vector<int>& ids, uint32_t shards = kShards) {
  std::map<std::string, std::pair<int, uint32_t>> wanted;  // payload -> (id, shard)
  for (int i : ids) wanted[Payload(i)] = {i, ShardOfUrl(i, shards)};
  std::map<std::string, int> seen;
  const std::vector<Inbox> inboxes = ReadInboxes(client, name, shards);
  size_t total = 0;
  for (uint32_t s = 0; s < shards; ++s) {
    if (inboxes[s].exists) {
      EXPECT_TRUE(inboxes[s].has_group) << "shard " << s << " has no group " << kInbox.group;
    }
    for (const std::string& payload : inboxes[s].payloads) {
      ++total;
      auto it = wanted.find(payload);
      if (it == wanted.end()) {
        ADD_FAILURE() << "unexpected inbox entry in shard " << s << ": " << payload;
        continue;
      }
      EXPECT_EQ(it->second.second, s) << payload << " is in the inbox of shard " << s;
      ++seen[payload];
    }
  }
  int wrong = 0;
  for (const auto& [payload, where] : wanted) {
    if (seen[payload] != 1) {
      if (++wrong <= 5)
        ADD_FAILURE() << payload << " is in the inboxes " << seen[payload] << " times";
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(total, ids.size());
}

std::unique_ptr<RedisClient> Client(const RedisAddress& address) {
  auto client = RedisClient::Connect(address);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

int64_t DbSize(RedisClient& client) {
  auto reply = client.Run({{"DBSIZE"}, -1});
  return reply.ok() ? reply->integer : -1;
}

TEST(RedisSeenSetRoutedTest, NewKeysGoOnceToTheirShardsInboxWithTheirPayload) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    const std::string name = exact ? "routed-exact" : "routed";
    auto set = RedisSeenSet::Open(RoutedOptions(name, exact), nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    auto routed = client->Run({{"HGET", "urlsieve:{" + name + "}:meta", "routed"}, 1});
    ASSERT_TRUE(routed.ok());
    EXPECT_EQ(routed->str, "1");

    // 3000 keys in batches of 50 overlapping by 20: each told new once.
    constexpr int kKeys = 3000;
    std::vector<int> told(kKeys, 0);
    for (int begin = 0; begin < kKeys; begin += 30) {
      const std::vector<int> ids = Range(begin, std::min(kKeys, begin + 50));
      std::vector<bool> is_new;
      ASSERT_TRUE(InsertIds(**set, ids, &is_new).ok());
      for (size_t j = 0; j < ids.size(); ++j) told[ids[j]] += is_new[j];
    }
    for (int i = 0; i < kKeys; ++i) ASSERT_EQ(told[i], 1) << Url(i);
    ExpectInboxesHoldOnce(*client, name, Range(0, kKeys));

    // Everything again, in one batch: all seen, nothing appended.
    std::vector<bool> is_new;
    ASSERT_TRUE(InsertIds(**set, Range(0, kKeys), &is_new).ok());
    EXPECT_EQ(std::count(is_new.begin(), is_new.end(), true), 0);
    ExpectInboxesHoldOnce(*client, name, Range(0, kKeys));

    auto usage = (*set)->Usage();
    ASSERT_TRUE(usage.ok()) << usage.status().ToString();
    EXPECT_EQ(usage->inbox_entries, static_cast<uint64_t>(kKeys));
    EXPECT_EQ(usage->inbox_streams, kShards);
    EXPECT_GT(usage->inbox_bytes, 0u);
    EXPECT_EQ((*set)->Stats().bloom_inserted, static_cast<uint64_t>(kKeys));
  }
}

TEST(RedisSeenSetRoutedTest, AShardWithoutNewKeysHasNoInboxAndTheFrontCacheAppendsNothing) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  RedisSeenSetOptions options = RoutedOptions("routed-cache");
  options.front_cache_keys = 1 << 12;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  // Hosts 0 and 1 only: shards 0 and 1.
  std::vector<int> ids;
  for (int i = 0; i < 37 * 20; i += 37) {
    ids.push_back(i);
    ids.push_back(i + 1);
  }
  std::vector<bool> is_new;
  ASSERT_TRUE(InsertIds(**set, ids, &is_new).ok());
  EXPECT_EQ(std::count(is_new.begin(), is_new.end(), true), static_cast<long>(ids.size()));
  const uint64_t trips = (*set)->round_trips();
  ASSERT_TRUE(InsertIds(**set, ids, &is_new).ok());  // answered by the front cache
  EXPECT_EQ((*set)->round_trips(), trips);
  EXPECT_EQ(std::count(is_new.begin(), is_new.end(), true), 0);
  const std::vector<Inbox> inboxes = ReadInboxes(*client, "routed-cache", kShards);
  for (uint32_t s = 0; s < kShards; ++s) EXPECT_EQ(inboxes[s].exists, s < 2) << s;
  ExpectInboxesHoldOnce(*client, "routed-cache", ids);
}

// A key twice in one batch is new once, and appended once.
TEST(RedisSeenSetRoutedTest, AKeyTwiceInOneBatchIsNewOnceAndAppendedOnce) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  for (bool exact : {false, true}) {
    const std::string name = exact ? "routed-twice-exact" : "routed-twice";
    auto set = RedisSeenSet::Open(RoutedOptions(name, exact), nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    std::vector<bool> is_new;
    ASSERT_TRUE(InsertIds(**set, {5, 5, 42, 5, 42, 79}, &is_new).ok());
    EXPECT_EQ(is_new, (std::vector<bool>{true, false, true, false, false, true}));
    ExpectInboxesHoldOnce(*client, name, {5, 42, 79});
  }
}

// Three processes of three threads each insert the same 9000 keys routed, in different orders and
// batch sizes: each key is told new exactly once in the world and is in the inboxes once.
TEST(RedisSeenSetRoutedTest, ExactlyOneCallerInTheWorldIsToldNewAndTheInboxesHoldEachKeyOnce) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  ScratchDir dir("redis_routed_one_new");
  constexpr int kProcesses = 3;
  constexpr int kThreads = 3;
  constexpr int kKeys = 9000;
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    const std::string name = exact ? "routed-one-new-exact" : "routed-one-new";
    const std::vector<int> told = CountNewAcrossProcesses(
        dir.path(), kProcesses, kThreads, kKeys, 120, [&](int p) -> IdInserter {
          RedisSeenSetOptions options = RoutedOptions(server->address(), name, exact);
          options.front_cache_keys = p % 2 == 0 ? 0 : 1 << 16;
          auto opened = RedisSeenSet::Open(options, nullptr);
          if (!opened.ok()) return {};
          std::shared_ptr<RedisSeenSet> set = std::move(*opened);
          return [set](const std::vector<int>& ids, std::vector<bool>* is_new) {
            return InsertIds(*set, ids, is_new).ok();
          };
        });
    int wrong = 0;
    for (int count : told) wrong += count == 1 ? 0 : 1;
    EXPECT_EQ(wrong, 0);
    auto client = Client(server->address());
    ASSERT_NE(client, nullptr);
    ExpectInboxesHoldOnce(*client, name, Range(0, kKeys));
  }
}

// The function itself: a call run again under the same token and sequence number (a retry whose
// first reply was lost) is answered as the first run was and appends nothing.
TEST(RedisSeenSetRoutedTest, AReplayedCallIsAnsweredAsItsFirstRunAndAppendsNothing) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  const std::string name = "routed-replay";
  auto set = RedisSeenSet::Open(RoutedOptions(name, /*exact=*/true), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  auto table = client->Run({{"HGET", "urlsieve:{" + name + "}:meta", "layers"}, 1});
  ASSERT_TRUE(table.ok());
  auto layers = RedisSeenLayout::DecodeLayers(table->str);
  ASSERT_TRUE(layers.ok());
  const uint32_t shard = 3;
  auto call = [&](const std::string& seq, const std::vector<int>& ids) {
    std::vector<std::string> argv = {"FCALL",
                                     kRedisSeenInsertRouted,
                                     "2",
                                     RedisShardKeyPrefix(name, shard) + "count",
                                     InboxKey(name, shard),
                                     "1",
                                     "test-token",
                                     seq,
                                     kInbox.group,
                                     "1"};
    for (int i : ids) {
      const std::string payload = Payload(i);
      const std::string_view view = payload;
      AppendRedisKeyArguments(HashKey(Url(i)), *layers, 1, true, &view, &argv);
    }
    auto reply = client->Run({argv, 3});
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_FALSE(reply->is_error()) << reply->str;
    return reply->elements.empty() ? std::string("?") : reply->elements[0].str;
  };
  auto xlen = [&] {
    auto reply = client->Run({{"XLEN", InboxKey(name, shard)}, 1});
    return reply.ok() ? reply->integer : -1;
  };
  const std::vector<int> ids = {3, 40, 77};  // hosts 3, 3, 3
  EXPECT_EQ(call("1", ids), "111");
  EXPECT_EQ(xlen(), 3);
  EXPECT_EQ(call("1", ids), "111");  // replayed: the first run's answer
  EXPECT_EQ(xlen(), 3);
  EXPECT_EQ(call("2", ids), "000");  // a new call: seen
  EXPECT_EQ(xlen(), 3);
  EXPECT_EQ(call("3", {3, 114}), "01");
  EXPECT_EQ(xlen(), 4);
}

// Redis killed mid-stream (SIGKILL) and restarted from its AOF, twice: calls fail (never "seen"),
// the writer retries each failed batch unchanged until it succeeds, and in the end every key was
// told new exactly once and is in the inboxes exactly once.
TEST(RedisSeenSetRoutedTest, AKilledRedisAppendsNothingTwiceAndLosesNothing) {
  ScratchDir dir("redis_routed_killed");
  RedisServer::Options server_options;
  server_options.append_only = true;
  auto server = RedisServer::Start(dir.path() / "redis", server_options);
  ASSERT_NE(server, nullptr);
  RedisSeenSetOptions options = RoutedOptions(server->address(), "routed-killed", true);
  options.timeouts.command_s = 2;
  options.front_cache_keys = 1 << 16;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  constexpr int kKeys = 20000;
  constexpr int kBatch = 100;
  std::atomic<int> batches_done{0};
  std::atomic<int> failures{0};
  std::vector<int> told(kKeys, 0);
  std::thread writer([&] {
    for (int b = 0; b * 70 < kKeys; ++b) {
      const std::vector<int> ids = Range(b * 70, std::min(kKeys, b * 70 + kBatch));
      std::vector<bool> is_new;
      for (;;) {
        Status status = InsertIds(**set, ids, &is_new);
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
  EXPECT_TRUE(wait_for([&] { return batches_done >= 40; }));
  server->Kill(SIGKILL);
  EXPECT_TRUE(wait_for([&] { return failures >= 1; }));
  const int done_while_down = batches_done;
  ASSERT_TRUE(server->Restart());
  EXPECT_TRUE(wait_for([&] { return batches_done >= done_while_down + 40; }));
  server->Kill(SIGKILL);  // once more, without waiting for a failure
  ASSERT_TRUE(server->Restart());
  writer.join();
  EXPECT_GE(failures, 1);
  int wrong = 0;
  for (int count : told) wrong += count == 1 ? 0 : 1;
  EXPECT_EQ(wrong, 0);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  ExpectInboxesHoldOnce(*client, "routed-killed", Range(0, kKeys));
}

TEST(RedisSeenSetRoutedTest, BadInputIsAClearErrorAndAppendsNothing) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  {
    RedisSeenSetOptions options = RoutedOptions("routed-bad");
    options.shards = 0;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument) << set.status().ToString();
    options = RoutedOptions("routed-bad");
    options.claim_log = "0123456789abcdef0123456789abcdef";
    set = RedisSeenSet::Open(options, nullptr);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument) << set.status().ToString();
    EXPECT_NE(set.status().message().find("claim log"), std::string::npos);
    EXPECT_EQ(DbSize(*client), 0);
  }
  auto set = RedisSeenSet::Open(RoutedOptions("routed-bad"), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const int64_t keys_after_open = DbSize(*client);

  const std::string key = Url(1);
  const std::string_view keys[] = {key, key};
  const KeyHash hashes[] = {HashKey(key), HashKey(key)};
  const std::string_view payloads[] = {"p", "p"};
  bool is_new[2] = {true, true};
  // The unrouted inserts on a routed set.
  Status status =
      (*set)->InsertHashedIfNew(std::span(keys, 1), std::span(hashes, 1), std::span(is_new, 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("routed"), std::string::npos) << status.ToString();
  status = (*set)->InsertHashedIfNewClaiming(std::span(keys, 1), std::span(hashes, 1),
                                             std::span(payloads, 1), std::span(is_new, 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  // A shard out of range.
  const uint32_t outside[] = {kShards};
  status = (*set)->InsertRouted(outside, std::span(keys, 1), std::span(hashes, 1),
                                std::span(payloads, 1), std::span(is_new, 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("shard 16"), std::string::npos) << status.ToString();
  // Spans of different lengths.
  const uint32_t shards[] = {1, 1};
  status = (*set)->InsertRouted(std::span(shards, 1), std::span(keys, 2), std::span(hashes, 2),
                                std::span(payloads, 2), std::span(is_new, 2));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  status = (*set)->InsertRouted(std::span(shards, 2), std::span(keys, 2), std::span(hashes, 2),
                                std::span(payloads, 1), std::span(is_new, 2));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  status = (*set)->InsertRouted(std::span(shards, 2), std::span(keys, 2), std::span(hashes, 1),
                                std::span(payloads, 2), std::span(is_new, 2));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  // A lookup needs the shard.
  EXPECT_EQ((*set)->Contains(key).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DbSize(*client), keys_after_open);  // nothing written, nothing appended

  // InsertRouted on a set that is not routed.
  RedisSeenSetOptions plain = RoutedOptions("plain-bad");
  plain.routed = false;
  plain.shards = 0;
  auto unrouted = RedisSeenSet::Open(plain, nullptr);
  ASSERT_TRUE(unrouted.ok()) << unrouted.status().ToString();
  const int64_t keys_with_plain = DbSize(*client);
  status = (*unrouted)->InsertRouted(std::span(shards, 1), std::span(keys, 1), std::span(hashes, 1),
                                     std::span(payloads, 1), std::span(is_new, 1));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("\"plain-bad\" is not routed"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(DbSize(*client), keys_with_plain);

  // An inbox key of another type, made after the set opened: the call is refused before it
  // writes anything, so the key is not "seen" and not queued.
  const std::string inbox = InboxKey("routed-bad", 1);
  ASSERT_TRUE(client->Run({{"SET", inbox, "not a stream"}, 1}).ok());
  status = (*set)->InsertRouted(std::span(shards, 1), std::span(keys, 1), std::span(hashes, 1),
                                std::span(payloads, 1), std::span(is_new, 1));
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(inbox), std::string::npos) << status.ToString();
  ASSERT_TRUE(client->Run({{"DEL", inbox}, 1}).ok());
  status = (*set)->InsertRouted(std::span(shards, 1), std::span(keys, 1), std::span(hashes, 1),
                                std::span(payloads, 1), std::span(is_new, 1));
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(is_new[0]);  // the refused call wrote nothing
  // And a reopen refuses a name whose inbox holds another type.
  ASSERT_TRUE(client->Run({{"DEL", inbox}, 1}).ok());
  ASSERT_TRUE(client->Run({{"SET", inbox, "not a stream"}, 1}).ok());
  auto reopened = RedisSeenSet::Open(RoutedOptions("routed-bad"), nullptr);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(reopened.status().message().find(inbox), std::string::npos);
}

TEST(RedisSeenSetRoutedTest, AReopenWithOtherRoutingIsRefusedNamingBothAndWritesNothing) {
  RedisServer* server = SharedRedisServer();
  ASSERT_NE(server, nullptr);
  auto client = Client(server->address());
  ASSERT_NE(client, nullptr);
  {
    auto set = RedisSeenSet::Open(RoutedOptions("routed-16"), nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    std::vector<bool> is_new;
    ASSERT_TRUE(InsertIds(**set, Range(0, 100), &is_new).ok());
  }
  RedisSeenSetOptions plain = RoutedOptions("plain");
  plain.routed = false;
  plain.shards = 0;
  ASSERT_TRUE(RedisSeenSet::Open(plain, nullptr).ok());
  auto dump = [&] {
    auto keys = client->Run({{"KEYS", "*"}, -1});
    std::vector<std::string> out;
    if (keys.ok()) {
      for (const RedisReply& key : keys->elements) out.push_back(key.str);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> before = dump();

  // Routed, opened unrouted.
  RedisSeenSetOptions options = RoutedOptions("routed-16");
  options.routed = false;
  options.shards = 0;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(set.status().message().find("routed with 16 shards"), std::string::npos)
      << set.status().ToString();
  EXPECT_NE(set.status().message().find("not routed"), std::string::npos)
      << set.status().ToString();
  // Routed with another shard count.
  set = RedisSeenSet::Open(RoutedOptions("routed-16", false, 32), nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(set.status().message().find("16 shards"), std::string::npos) << set.status().ToString();
  EXPECT_NE(set.status().message().find("32 shards"), std::string::npos) << set.status().ToString();
  // Unrouted, opened routed.
  set = RedisSeenSet::Open(RoutedOptions("plain"), nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(set.status().message().find("not routed"), std::string::npos)
      << set.status().ToString();
  EXPECT_NE(set.status().message().find("routed set of 16 shards"), std::string::npos)
      << set.status().ToString();
  EXPECT_EQ(dump(), before);

  // Read-only (`urlsieve stats --redis`) opens either.
  options.read_only = true;
  set = RedisSeenSet::Open(options, nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto usage = (*set)->Usage();
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  EXPECT_EQ(usage->inbox_entries, 100u);
  // The same routing reopens and goes on.
  set = RedisSeenSet::Open(RoutedOptions("routed-16"), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<bool> is_new;
  ASSERT_TRUE(InsertIds(**set, Range(50, 150), &is_new).ok());
  EXPECT_EQ(std::count(is_new.begin(), is_new.end(), true), 50);
  ExpectInboxesHoldOnce(*client, "routed-16", Range(0, 150));
}

// 1024 shards (a crawl cluster's default partition count) from 10^3 to 10^9 keys: every shard's
// first layer holds at least its share and the floor, the layer table leaves room for a shard
// holding far more than its share (in few layers), and the filter costs what the capacity needs.
TEST(RedisSeenSetRoutedTest, TheRoutedLayoutOf1024Shards) {
  for (uint64_t capacity = 1000; capacity <= 1000000000; capacity *= 10) {
    SCOPED_TRACE(capacity);
    auto layout =
        ChooseRedisSeenLayout(capacity, 1e-3, 1024, 1, kRoutedMinShardKeys, kRoutedGrowthShift);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    EXPECT_EQ(layout->shards, 1024u);
    const uint64_t share = std::max<uint64_t>((capacity + 1023) / 1024, kRoutedMinShardKeys);
    EXPECT_GE(layout->layers[0].capacity, share);
    EXPECT_LE(layout->layers[0].capacity, share + share / 4 + 64);
    uint64_t total = 0;
    for (const RedisBloomLayer& layer : layout->layers) total += layer.capacity;
    // Layers quadruple: a shard of 64 times its share fits in 4 of them (doubling: 7).
    ASSERT_GE(layout->layers.size(), 4u);
    EXPECT_GE(layout->layers[1].capacity, 4 * share);
    EXPECT_GE(layout->layers[0].capacity + layout->layers[1].capacity + layout->layers[2].capacity +
                  layout->layers[3].capacity,
              64 * share);
    // Past the last layer (a string of up to 512 MiB) the set's ε no longer holds for the shard:
    // at 10^9 keys that is above 80 million keys in one partition.
    EXPECT_GE(total, std::min<uint64_t>(64 * share, uint64_t{80} << 20));
    const double bytes = 1024.0 * RedisStringAllocation(layout->layers[0].blocks * 64);
    EXPECT_LE(bytes / (1024.0 * layout->layers[0].capacity), 2.6);  // bytes per key at ε 1e-3
  }
}

}  // namespace
}  // namespace urlsieve::testing

namespace urlsieve::testing {
namespace {

// Forgets `ids` routed (each in its host's shard); the status, and forgotten per id.
Status ForgetIds(RedisSeenSet& set, const std::vector<int>& ids, std::vector<bool>* forgotten,
                 bool route = true) {
  std::vector<std::string> keys;
  std::vector<uint32_t> routes;
  std::vector<KeyHash> hashes;
  for (int i : ids) {
    keys.push_back(Url(i));
    routes.push_back(ShardOfUrl(i));
    hashes.push_back(HashKey(keys.back()));
  }
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::unique_ptr<bool[]> answers(new bool[ids.size()]());
  Status status =
      route
          ? set.ForgetRouted(routes, key_views, hashes, std::span<bool>(answers.get(), ids.size()))
          : set.ForgetHashed(key_views, hashes, std::span<bool>(answers.get(), ids.size()));
  forgotten->assign(answers.get(), answers.get() + ids.size());
  return status;
}

// docs/features/cluster.md, "Forgetting": a deletable (or exact) routed set forgets each key in
// the shard it was routed to, and the key is new again there — its payload queued once more.
TEST(RedisSeenSetRoutedForgetTest, ADeletableOrExactRoutedSetForgetsInTheKeysShard) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact ? "exact" : "deletable");
    const std::string name = exact ? "routed-forget-exact" : "routed-forget-counting";
    RedisSeenSetOptions options = RoutedOptions(name, exact);
    options.requested.deletable = !exact;
    auto set = RedisSeenSet::Open(options, nullptr);
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    std::vector<bool> is_new;
    ASSERT_TRUE(InsertIds(**set, Range(0, 100), &is_new).ok());
    std::vector<bool> forgotten;
    ASSERT_TRUE(ForgetIds(**set, {3, 40, 77}, &forgotten).ok());
    EXPECT_EQ(forgotten, std::vector<bool>({true, true, true}));
    ASSERT_TRUE(ForgetIds(**set, {3, 500}, &forgotten).ok());
    EXPECT_EQ(forgotten, std::vector<bool>({false, false})) << "gone, never there";
    ASSERT_TRUE(InsertIds(**set, {2, 3, 40, 77}, &is_new).ok());
    EXPECT_EQ(is_new, std::vector<bool>({false, true, true, true}));

    // A routed set names its shards: forgetting by hash is refused, nothing changed.
    Status by_hash = ForgetIds(**set, {2}, &forgotten, /*route=*/false);
    EXPECT_EQ(by_hash.code(), StatusCode::kInvalidArgument) << by_hash.ToString();
    ASSERT_TRUE(InsertIds(**set, {2}, &is_new).ok());
    EXPECT_EQ(is_new, std::vector<bool>({false}));
  }
}

// docs/decisions.md: a crawl has no time-aware seen set on any deployment (its time is the
// re-crawl), so a routed set takes no revisit_after: refused, naming why, nothing written.
TEST(RedisSeenSetRoutedForgetTest, ARoutedSetTakesNoRevisitAfter) {
  RedisSeenSetOptions options = RoutedOptions("routed-time");
  options.requested.revisit_after_s = 3600;
  options.requested.generations = 4;
  auto set = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument) << set.status().ToString();
  EXPECT_NE(set.status().message().find("re-crawl"), std::string::npos) << set.status().ToString();
  options.read_only = true;
  options.requested = {};
  EXPECT_FALSE(RedisSeenSet::Open(options, nullptr).ok()) << "nothing was created";
}

TEST(RedisSeenSetRoutedForgetTest, APlainRoutedSetCannotForget) {
  auto set = RedisSeenSet::Open(RoutedOptions("routed-forget-plain"), nullptr);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<bool> is_new;
  ASSERT_TRUE(InsertIds(**set, {1}, &is_new).ok());
  std::vector<bool> forgotten;
  Status status = ForgetIds(**set, {1}, &forgotten);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("--deletable"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace urlsieve::testing
