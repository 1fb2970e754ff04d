// The Redis Cluster client (redis/redis_cluster_client.h) against a real 3-master cluster on
// loopback (tests/support/redis_cluster.h): slots as the server computes them, routing, replies in
// order, MOVED and ASK during a slot migration, a redirection loop, a killed node, a master's
// failover to its replica.
#include "redis/redis_cluster_client.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "redis/redis_client.h"
#include "tests/support/redis_cluster.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::RedisCluster;
using testing::ScratchDir;

// prefix + number (not "x" + std::to_string(n): GCC 12 -O3 warns falsely, -Wrestrict).
std::string Numbered(std::string_view prefix, long long number) {
  std::string out(prefix);
  out += std::to_string(number);
  return out;
}

std::unique_ptr<RedisClient> ConnectTo(const RedisCluster& cluster) {
  auto client = RedisClient::Connect(cluster.address());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  if (!client.ok()) return nullptr;
  EXPECT_TRUE((*client)->is_cluster());
  return std::move(client).value();
}

TEST(RedisKeySlotTest, KnownValuesAndHashTags) {
  EXPECT_EQ(RedisKeySlot("123456789"), 0x31C3 % 16384);  // the CRC16/XMODEM check value
  EXPECT_EQ(RedisKeySlot("foo"), 12182);
  EXPECT_EQ(RedisKeySlot("bar"), 5061);
  EXPECT_EQ(RedisKeySlot("{user1000}.following"), RedisKeySlot("user1000"));
  EXPECT_EQ(RedisKeySlot("{user1000}.following"), RedisKeySlot("{user1000}.followers"));
  EXPECT_NE(RedisKeySlot("foo{}{bar}"), RedisKeySlot("bar"));  // an empty tag: the whole key
  EXPECT_EQ(RedisKeySlot("foo{{bar}}zap"), RedisKeySlot("{bar"));
  EXPECT_EQ(RedisKeySlot("foo{bar}{zap}"), RedisKeySlot("bar"));
  EXPECT_LT(RedisKeySlot(std::string(1000, '\xff')), 16384);
}

// One cluster for the tests that leave it as they found it; started by the first, killed at the
// end of the suite (or of the process, should it crash).
class RedisClusterClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("redis_cluster_client");
    cluster_ = RedisCluster::Start(dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(cluster_, nullptr); }

  static ScratchDir* dir_;
  static RedisCluster* cluster_;
};

ScratchDir* RedisClusterClientTest::dir_ = nullptr;
RedisCluster* RedisClusterClientTest::cluster_ = nullptr;

TEST_F(RedisClusterClientTest, SlotsAreThoseOfClusterKeyslot) {
  std::vector<std::string> keys = {
      "",    "{",   "}",    "{}",     "}{",    "{a",    "a}",
      "{}a", "a{}", "{{}}", "{a}{b}", "x{y}z", "{{a}}", "urlsieve:{s:0}"};
  std::mt19937_64 random(12);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string alphabet = "ab{}:";
  for (int i = 0; i < 400; ++i) {
    std::string key;
    const int length = i % 17;
    for (int j = 0; j < length; ++j) {
      // Half of the keys from a tiny alphabet rich in braces, half arbitrary bytes.
      key += i % 2 == 0 ? alphabet[random() % alphabet.size()] : static_cast<char>(byte(random));
    }
    keys.push_back(key);
  }
  auto node = cluster_->Connect(0);
  ASSERT_NE(node, nullptr);
  std::vector<RedisCommand> commands;
  for (const std::string& key : keys) commands.push_back({{"CLUSTER", "KEYSLOT", key}, -1});
  std::vector<RedisReply> replies;
  ASSERT_TRUE(node->Pipeline(commands, &replies).ok());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(replies[i].type, RedisReply::Type::kInteger) << replies[i].str;
    EXPECT_EQ(RedisKeySlot(keys[i]), replies[i].integer) << "key #" << i << " '" << keys[i] << "'";
  }
}

TEST_F(RedisClusterClientTest, PipelineRoutesByKeyAndKeepsTheOrder) {
  auto client = ConnectTo(*cluster_);
  ASSERT_NE(client, nullptr);
  const std::string prefix = Numbered("route:", ::getpid()) + ":";
  constexpr int kKeys = 300;
  std::vector<RedisCommand> commands;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = prefix + std::to_string(i);
    commands.push_back({{"SET", key, Numbered("v", i)}});
    commands.push_back({{"GET", key}});
    commands.push_back({{"STRLEN", key}});
    if (i % 50 == 0) commands.push_back({{"ECHO", Numbered("e", i)}, -1});  // any master
  }
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client->Pipeline(commands, &replies).ok());
  ASSERT_EQ(replies.size(), commands.size());
  size_t r = 0;
  for (int i = 0; i < kKeys; ++i) {
    EXPECT_EQ(replies[r++].str, "OK");
    EXPECT_EQ(replies[r++].str, Numbered("v", i));
    EXPECT_EQ(replies[r++].integer, static_cast<long long>(Numbered("v", i).size()));
    if (i % 50 == 0) {
      EXPECT_EQ(replies[r++].str, Numbered("e", i));
    }
  }

  // Each key lives on the master that owns its slot, and only there.
  std::set<int> owners;
  for (int n = 0; n < cluster_->size(); ++n) {
    auto node = cluster_->Connect(n);
    ASSERT_NE(node, nullptr);
    std::vector<RedisCommand> gets;
    for (int i = 0; i < kKeys; ++i) gets.push_back({{"GET", prefix + std::to_string(i)}});
    std::vector<RedisReply> got;
    ASSERT_TRUE(node->Pipeline(gets, &got).ok());
    for (int i = 0; i < kKeys; ++i) {
      const int owner = cluster_->OwnerOf(RedisKeySlot(gets[i].argv[1]));
      if (owner == n) {
        EXPECT_EQ(got[i].str, Numbered("v", i)) << "node " << n;
        owners.insert(n);
      } else {
        EXPECT_TRUE(got[i].is_error()) << "node " << n << " answered for a key of node " << owner;
        EXPECT_EQ(got[i].str.rfind("MOVED ", 0), 0u) << got[i].str;
      }
    }
  }
  EXPECT_EQ(owners.size(), 3u);  // 300 keys spread over all the masters

  std::vector<RedisCommand> cleanup;
  for (int i = 0; i < kKeys; ++i) cleanup.push_back({{"DEL", prefix + std::to_string(i)}});
  ASSERT_TRUE(client->Pipeline(cleanup, &replies).ok());
}

TEST_F(RedisClusterClientTest, OnEveryMasterReachesEachMasterOnce) {
  auto client = ConnectTo(*cluster_);
  ASSERT_NE(client, nullptr);
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client->OnEveryMaster({{"CLUSTER", "MYID"}, -1}, &replies).ok());
  std::set<std::string> ids;
  for (const RedisReply& reply : replies) ids.insert(reply.str);
  std::set<std::string> expected;
  for (int n = 0; n < cluster_->size(); ++n) expected.insert(cluster_->NodeId(n));
  EXPECT_EQ(replies.size(), 3u);
  EXPECT_EQ(ids, expected);
}

TEST_F(RedisClusterClientTest, CommandWithoutItsKeyIsInvalid) {
  auto client = ConnectTo(*cluster_);
  ASSERT_NE(client, nullptr);
  auto bad = client->Run({{"GET"}, 1});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
}

TEST(RedisClusterMigrationTest, FollowsAskThenMovedWhileASlotMoves) {
  ScratchDir dir("redis_cluster_migration");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);
  ASSERT_NE(client, nullptr);

  const std::string key = "migrating";
  const int slot = RedisKeySlot(key);
  const int source = cluster->OwnerOf(slot);
  ASSERT_GE(source, 0);
  const int target = (source + 1) % cluster->size();
  ASSERT_TRUE(client->Run({{"SET", key, "before"}}).ok());
  const std::string source_id = cluster->NodeId(source);
  const std::string target_id = cluster->NodeId(target);
  const std::string slot_text = std::to_string(slot);
  cluster->Run(target, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", source_id});
  cluster->Run(source, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", target_id});

  // A key the source does not hold: ASK, answered by the target.
  auto asked = client->Run({{"SET", "{migrating}new", "asked"}});
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  EXPECT_EQ(asked->str, "OK");
  EXPECT_EQ(cluster->Run(target, {"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer, 1);
  EXPECT_EQ(cluster->Run(source, {"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer, 1);

  // The old key moves: the source answers ASK for it now.
  cluster->Run(source, {"MIGRATE", "127.0.0.1", std::to_string(cluster->node(target).port()), "",
                        "0", "5000", "KEYS", key});
  auto moved_key = client->Run({{"GET", key}});
  ASSERT_TRUE(moved_key.ok()) << moved_key.status().ToString();
  EXPECT_EQ(moved_key->str, "before");

  // The slot is the target's: the source answers MOVED, and the client's map (still naming the
  // source) is corrected.
  for (int n = 0; n < cluster->size(); ++n) {
    cluster->Run(n, {"CLUSTER", "SETSLOT", slot_text, "NODE", target_id});
  }
  auto direct = cluster->Connect(source)->Run({{"GET", key}});
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->str.rfind("MOVED " + slot_text, 0), 0u) << direct->str;
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client
                  ->Pipeline(std::vector<RedisCommand>{{{"GET", key}},
                                                       {{"GET", "{migrating}new"}},
                                                       {{"SET", "elsewhere", "x"}},
                                                       {{"GET", "elsewhere"}}},
                             &replies)
                  .ok());
  EXPECT_EQ(replies[0].str, "before");
  EXPECT_EQ(replies[1].str, "asked");
  EXPECT_EQ(replies[3].str, "x");
  EXPECT_EQ(cluster->Run(target, {"CLUSTER", "COUNTKEYSINSLOT", slot_text}).integer, 2);
}

TEST(RedisClusterMigrationTest, ARedirectionLoopIsAnErrorNotALoop) {
  ScratchDir dir("redis_cluster_loop");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);
  ASSERT_NE(client, nullptr);
  const std::string key = "looping";
  const int slot = RedisKeySlot(key);
  const int owner = cluster->OwnerOf(slot);
  const int other = (owner + 1) % cluster->size();
  // The owner hands the (empty) slot to `other`, which was not told and still names the owner:
  // each sends the key's commands to the other.
  cluster->Run(owner, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", cluster->NodeId(other)});
  auto looped = client->Run({{"GET", key}});
  EXPECT_EQ(looped.status().code(), StatusCode::kUnavailable) << looped.status().ToString();
  EXPECT_NE(looped.status().message().find("redirections"), std::string::npos)
      << looped.status().ToString();
}

TEST(RedisClusterFaultTest, AKilledNodeIsUnavailableNamingItThenHeals) {
  ScratchDir dir("redis_cluster_kill");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);
  ASSERT_NE(client, nullptr);
  std::vector<RedisCommand> sets;
  std::vector<RedisCommand> gets;
  for (int i = 0; i < 60; ++i) {
    sets.push_back({{"SET", Numbered("k", i), std::to_string(i)}});
    gets.push_back({{"GET", Numbered("k", i)}});
  }
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client->Pipeline(sets, &replies).ok());

  constexpr int kVictim = 1;
  const std::string victim = Numbered("127.0.0.1:", cluster->node(kVictim).port());
  cluster->node(kVictim).Kill(SIGKILL);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second reads the slot map again
    Status down = client->Pipeline(gets, &replies);
    EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
    EXPECT_NE(down.message().find(victim), std::string::npos) << down.ToString();
  }
  std::vector<RedisReply> masters;
  Status every = client->OnEveryMaster({{"PING"}, -1}, &masters);
  EXPECT_EQ(every.code(), StatusCode::kUnavailable) << every.ToString();
  EXPECT_NE(every.message().find(victim), std::string::npos) << every.ToString();

  // Back on its port with its nodes.conf (its data gone: no AOF): the client recovers by itself.
  ASSERT_TRUE(cluster->node(kVictim).Restart());
  ASSERT_TRUE(cluster->WaitUntilConsistent());
  Status back = client->Pipeline(gets, &replies);
  ASSERT_TRUE(back.ok()) << back.ToString();
  for (size_t i = 0; i < gets.size(); ++i) {
    const int owner = cluster->OwnerOf(RedisKeySlot(gets[i].argv[1]));
    if (owner == kVictim) {
      EXPECT_EQ(replies[i].type, RedisReply::Type::kNil) << replies[i].str;
    } else {
      EXPECT_EQ(replies[i].str, std::to_string(i));
    }
  }
}

TEST(RedisClusterFaultTest, APasswordReachesEveryNodeAndAWrongOneIsRefused) {
  ScratchDir dir("redis_cluster_auth");
  auto cluster = RedisCluster::Start(dir.path(), 3, "s3cret");
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);  // node connections opened later authenticate too
  ASSERT_NE(client, nullptr);
  std::vector<RedisCommand> commands;
  for (int i = 0; i < 60; ++i) commands.push_back({{"SET", Numbered("a", i), "v"}});
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client->Pipeline(commands, &replies).ok());
  for (const RedisReply& reply : replies) EXPECT_EQ(reply.str, "OK");
  ASSERT_TRUE(client->OnEveryMaster({{"PING"}, -1}, &replies).ok());
  EXPECT_EQ(replies.size(), 3u);

  RedisAddress wrong = cluster->address();
  wrong.password = "guess";
  auto refused = RedisClient::Connect(wrong);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("authenticating"), std::string::npos);
  EXPECT_EQ(refused.status().message().find("guess"), std::string::npos);
}

// A cluster node whose cluster was never created serves no slot: a clear error, not a hang.
TEST(RedisClusterFaultTest, ANodeThatServesNoSlotIsUnavailable) {
  ScratchDir dir("redis_cluster_empty");
  testing::RedisServer::Options options;
  options.cluster = true;
  auto node = testing::RedisServer::Start(dir.path() / "node", options);
  ASSERT_NE(node, nullptr);
  auto client = RedisClient::Connect(node->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE((*client)->is_cluster());
  auto get = (*client)->Run({{"GET", "k"}});
  EXPECT_EQ(get.status().code(), StatusCode::kUnavailable) << get.status().ToString();
  EXPECT_NE(get.status().message().find(Numbered("no master serves slot ", RedisKeySlot("k"))),
            std::string::npos)
      << get.status().ToString();
  std::vector<RedisReply> replies;
  Status every = (*client)->OnEveryMaster({{"PING"}, -1}, &replies);
  EXPECT_EQ(every.code(), StatusCode::kUnavailable) << every.ToString();
}

}  // namespace
}  // namespace urlsieve

namespace urlsieve {
namespace {

// A master's failover (issue 24, item 6): with one replica per master, writes the client waited
// for (WaitForReplicas) are on the replica that takes over; the client follows the promotion by
// itself (a refused connection, CLUSTERDOWN while the cluster elects: kUnavailable, then the map
// read again).
TEST(RedisClusterFailoverTest, WaitedWritesSurviveAFailoverAndTheClientFollowsIt) {
  ScratchDir dir("redis_cluster_failover");
  auto cluster = RedisCluster::Start(dir.path(), 3, "", /*replicas_per_master=*/1);
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);
  ASSERT_NE(client, nullptr);
  std::vector<RedisCommand> sets;
  std::vector<RedisCommand> gets;
  std::vector<std::string> keys;
  for (int i = 0; i < 60; ++i) {
    keys.push_back(Numbered("k", i));
    sets.push_back({{"SET", keys.back(), std::to_string(i)}});
    gets.push_back({{"GET", keys.back()}});
  }
  std::vector<RedisReply> replies;
  ASSERT_TRUE(client->Pipeline(sets, &replies).ok());
  int lagging = -1;
  Status waited = client->WaitForReplicas(keys, 5000, &lagging);
  ASSERT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(lagging, 0);
  const int victim = cluster->OwnerOf(RedisKeySlot("k0"), cluster->Masters().front());
  ASSERT_GE(victim, 0);
  ASSERT_GE(cluster->KillMasterAndFailOver(victim), 0);
  Status back = Status::Unavailable("not tried");
  for (int attempt = 0; attempt < 20 && !back.ok(); ++attempt) {
    back = client->Pipeline(gets, &replies);  // the first may meet the dead master's connection
    if (back.ok()) {
      for (const RedisReply& reply : replies) {
        if (reply.is_error()) back = Status::Unavailable(reply.str);
      }
    }
    if (!back.ok()) {
      EXPECT_EQ(back.code(), StatusCode::kUnavailable) << back.ToString();
    }
  }
  ASSERT_TRUE(back.ok()) << back.ToString();
  for (size_t i = 0; i < gets.size(); ++i) EXPECT_EQ(replies[i].str, std::to_string(i));

  // The promoted master has no replica (its old master is dead): nothing to wait for.
  waited = client->WaitForReplicas(keys, 5000, &lagging);
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(lagging, 0);
}

TEST(RedisClusterFailoverTest, WaitingWithoutReplicasReturnsAtOnce) {
  ScratchDir dir("redis_cluster_no_replicas");
  auto cluster = RedisCluster::Start(dir.path());
  ASSERT_NE(cluster, nullptr);
  auto client = ConnectTo(*cluster);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Run({{"SET", "a", "1"}}).ok());
  int lagging = -1;
  // A master without replicas is not sent WAIT: were it sent "WAIT 1 1000", it would answer 0
  // after a second, and the master would count as lagging.
  Status waited = client->WaitForReplicas(std::vector<std::string>{"a"}, 1000, &lagging);
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(lagging, 0);
}

}  // namespace
}  // namespace urlsieve
