// A Redis seen set that lost data (docs/features/redis-seen-set.md, "A set that lost data"): a
// key deleted, overwritten or evicted, a server emptied under a running set, a metadata key lost,
// a shard state that lies. Each is an error naming the server and the key, no key is answered
// "new" by it, and only an open with accept_loss repairs. Against a real redis-server.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "dedup/redis_seen_set.h"
#include "redis/redis_client.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

std::string Url(int i) {
  return "http://l" + std::to_string(i % 13) + ".example/" + std::to_string(i);
}

RedisSeenSetOptions Options(const std::string& name, bool exact = false) {
  RedisSeenSetOptions options;
  options.address = SharedRedisServer()->address();
  options.name = name;
  options.requested.capacity = 10000;
  options.requested.fp_rate = 1e-3;
  options.requested.exact = exact;
  options.front_cache_keys = 0;
  return options;
}

std::unique_ptr<RedisSeenSet> MustOpen(const RedisSeenSetOptions& options,
                                       std::vector<SeenNotice>* notices = nullptr) {
  auto set = RedisSeenSet::Open(options, notices);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(*set) : nullptr;
}

// Inserts keys [from, to) as one batch: the status, and in *fresh the keys told new.
Status Insert(RedisSeenSet& set, int from, int to, int* fresh = nullptr) {
  std::vector<std::string> keys;
  for (int i = from; i < to; ++i) keys.push_back(Url(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<uint8_t> is_new;
  Status status = set.InsertKeysIfNew(views, &is_new);
  if (fresh != nullptr) *fresh = static_cast<int>(std::count(is_new.begin(), is_new.end(), 1));
  return status;
}

void Redis(const std::vector<std::string>& argv) {
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto reply = (*client)->Run({argv, argv.size() > 1 ? 1 : -1});
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_FALSE(reply->is_error()) << reply->str;
}

long long Exists(const std::string& key) {
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  if (!client.ok()) return -1;
  auto reply = (*client)->Run({{"EXISTS", key}, 1});
  return reply.ok() ? reply->integer : -1;
}

bool HasNotice(const std::vector<SeenNotice>& notices, SeenNotice::Kind kind,
               const std::string& part) {
  for (const SeenNotice& notice : notices) {
    if (notice.kind == kind && notice.text.find(part) != std::string::npos) return true;
  }
  return false;
}

// The error every call gives: kCorruption naming the server and `key`.
void ExpectLoss(const Status& status, const std::string& key) {
  EXPECT_EQ(status.code(), StatusCode::kCorruption) << status.ToString();
  EXPECT_NE(status.message().find(SharedRedisServer()->address().ToString()), std::string::npos)
      << status.ToString();
  EXPECT_NE(status.message().find(key), std::string::npos) << status.ToString();
}

class RedisSeenSetLossTest : public ::testing::TestWithParam<bool> {  // exact?
 protected:
  void SetUp() override { ASSERT_NE(SharedRedisServer(), nullptr); }
  std::string Name(const std::string& base) const { return base + (GetParam() ? "_x" : "_b"); }
};

INSTANTIATE_TEST_SUITE_P(BloomAndExact, RedisSeenSetLossTest, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? "Exact" : "Bloom";
                         });

// The probe of issue 24: DEL of a shard's filter string printed 866 seen URLs as new again.
TEST_P(RedisSeenSetLossTest, ADeletedFilterStringIsAnErrorUntilAnOpenAcceptsTheLoss) {
  const std::string name = Name("deleted");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  int fresh = 0;
  ASSERT_TRUE(Insert(*set, 0, 500, &fresh).ok());
  EXPECT_EQ(fresh, 500);
  const std::string key = "urlsieve:{" + name + ":0}:bloom:0";
  Redis({"DEL", key});
  ExpectLoss(Insert(*set, 0, 500, &fresh), key);
  ExpectLoss(Insert(*set, 500, 600), key);  // new keys too: the set cannot answer any
  ExpectLoss(set->Contains(Url(1)).status(), key);
  // A new open sees it too, and repairs only when asked.
  auto refused = RedisSeenSet::Open(Options(name, GetParam()), nullptr);
  ASSERT_FALSE(refused.ok());
  ExpectLoss(refused.status(), key);
  EXPECT_NE(refused.status().message().find("accept_loss"), std::string::npos);
  RedisSeenSetOptions accepting = Options(name, GetParam());
  accepting.accept_loss = true;
  std::vector<SeenNotice> notices;
  auto repaired = MustOpen(accepting, &notices);
  ASSERT_NE(repaired, nullptr);
  EXPECT_TRUE(HasNotice(notices, SeenNotice::Kind::kLossAccepted, key));
  EXPECT_EQ(repaired->identity(), set->identity());  // the same set, not a new one
  ASSERT_TRUE(Insert(*set, 600, 700, &fresh).ok());  // the first handle works again too
  EXPECT_EQ(fresh, 100);
}

// A shard's layer 0 is made by its first insert: until then its absence is no loss, for a
// second open as for a lookup; once made, its absence is (above).
TEST_P(RedisSeenSetLossTest, ALayerNotYetMadeIsNoLoss) {
  const std::string name = Name("unmade");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  const std::string key = "urlsieve:{" + name + ":0}:bloom:0";
  EXPECT_EQ(Exists(key), 0);
  auto again = MustOpen(Options(name, GetParam()));  // checks every shard
  ASSERT_NE(again, nullptr);
  auto held = again->Contains(Url(1));
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_FALSE(*held);
  int fresh = 0;
  ASSERT_TRUE(Insert(*again, 0, 300, &fresh).ok());
  EXPECT_EQ(fresh, 300);
  EXPECT_EQ(Exists(key), 1);
  ASSERT_TRUE(Insert(*set, 0, 300, &fresh).ok());
  EXPECT_EQ(fresh, 0);
  Redis({"DEL", key});
  ExpectLoss(Insert(*set, 300, 400), key);
}

// SET garbage on a shard printed 5000 of 5000 seen URLs again.
TEST_P(RedisSeenSetLossTest, AnOverwrittenFilterStringIsAnError) {
  const std::string name = Name("overwritten");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(Insert(*set, 0, 300).ok());
  const std::string key = "urlsieve:{" + name + ":0}:bloom:0";
  Redis({"SET", key, "garbage"});
  ExpectLoss(Insert(*set, 0, 300), key);
  Redis({"DEL", key});
  Redis({"HSET", key, "f", "v"});  // another type
  ExpectLoss(Insert(*set, 0, 300), key);
}

// HSET …:count layers 999 made every batch of that shard "new".
TEST_P(RedisSeenSetLossTest, AShardStateThatLiesIsAnErrorNotAllNew) {
  const std::string name = Name("lies");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(Insert(*set, 0, 300).ok());
  const std::string count = "urlsieve:{" + name + ":0}:count";
  Redis({"HSET", count, "layers", "999"});
  int fresh = -1;
  ExpectLoss(Insert(*set, 0, 300, &fresh), count);
  Redis({"HSET", count, "layers", "1", "count", "-5"});
  ExpectLoss(Insert(*set, 0, 300), count);
}

// The server emptied under a running set (FLUSHALL, or a restart without persistence): the
// library comes back, the shards do not.
TEST_P(RedisSeenSetLossTest, AServerEmptiedUnderARunningSetIsAnError) {
  const std::string name = Name("flushed");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(Insert(*set, 0, 300).ok());
  Redis({"FLUSHALL"});
  ExpectLoss(Insert(*set, 0, 300), "urlsieve:{" + name + ":0}:count");
  // Nothing was recreated behind the running set's back.
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  auto size = (*client)->Run({{"DBSIZE"}, -1});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->integer, 0);
}

// Meta key deleted: the next open wrote a new identity, then failed for ever.
TEST_P(RedisSeenSetLossTest, ALostMetadataKeyIsAnErrorAndNeverANewIdentity) {
  const std::string name = Name("meta");
  auto set = MustOpen(Options(name, GetParam()));
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(Insert(*set, 0, 300).ok());
  const std::string meta = "urlsieve:{" + name + "}:meta";
  Redis({"DEL", meta});
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same answer each time: nothing written
    auto refused = RedisSeenSet::Open(Options(name, GetParam()), nullptr);
    ASSERT_FALSE(refused.ok());
    ExpectLoss(refused.status(), meta);
  }
  // The running set keeps its shards, and its answers.
  int fresh = -1;
  ASSERT_TRUE(Insert(*set, 0, 300, &fresh).ok());
  EXPECT_EQ(fresh, 0);
  // accept_loss starts the set again: a new identity, nothing of the old one left.
  RedisSeenSetOptions accepting = Options(name, GetParam());
  accepting.accept_loss = true;
  std::vector<SeenNotice> notices;
  auto again = MustOpen(accepting, &notices);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(HasNotice(notices, SeenNotice::Kind::kLossAccepted, meta));
  EXPECT_NE(again->identity(), set->identity());
  ASSERT_TRUE(Insert(*again, 0, 300, &fresh).ok());
  EXPECT_EQ(fresh, 300);
  // The old handle's shards are gone: it stops, it does not answer.
  EXPECT_FALSE(Insert(*set, 300, 400).ok());
}

// An open that stopped half-way (the metadata written, not every shard made) is finished by the
// next open, and only then is a missing shard a loss.
TEST_P(RedisSeenSetLossTest, AnOpenStoppedHalfWayIsFinishedByTheNext) {
  const std::string name = Name("half");
  RedisSeenSetOptions options = Options(name, GetParam());
  options.shards = 3;
  {
    auto set = MustOpen(options);
    ASSERT_NE(set, nullptr);
  }
  const std::string meta = "urlsieve:{" + name + "}:meta";
  Redis({"HDEL", meta, "ready"});
  Redis({"DEL", "urlsieve:{" + name + ":2}:count", "urlsieve:{" + name + ":2}:bloom:0"});
  auto finished = MustOpen(options);
  ASSERT_NE(finished, nullptr);
  int fresh = 0;
  ASSERT_TRUE(Insert(*finished, 0, 300, &fresh).ok());
  EXPECT_EQ(fresh, 300);
  Redis({"DEL", "urlsieve:{" + name + ":1}:count"});
  auto refused = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(refused.ok());
  ExpectLoss(refused.status(), "urlsieve:{" + name + ":1}:count");
}

// A live generation's string deleted (an evicted or deleted key of a set with revisit_after).
TEST_P(RedisSeenSetLossTest, ALostGenerationIsAnError) {
  const std::string name = Name("gen");
  ManualClock clock;
  RedisSeenSetOptions options = Options(name, GetParam());
  options.requested.revisit_after_s = 4000;
  options.requested.generations = 4;
  options.clock = &clock;
  auto set = MustOpen(options);
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(Insert(*set, 0, 300).ok());
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  auto keys = (*client)->Run({{"KEYS", "urlsieve:{" + name + ":0}:gen:*"}, -1});
  ASSERT_TRUE(keys.ok());
  std::string generation;
  for (const RedisReply& key : keys->elements) {
    if (key.str.find(":fp:") == std::string::npos) generation = key.str;
  }
  ASSERT_FALSE(generation.empty());
  Redis({"DEL", generation});
  ExpectLoss(Insert(*set, 0, 300), generation);
}

// A server that may evict the set's keys: a warning, and in exact mode an error unless the loss
// is accepted.
TEST(RedisSeenSetEvictionTest, AnEvictingMaxmemoryPolicyIsAWarningAndRefusedInExactMode) {
  ScratchDir dir("redis_evicting");
  RedisServer::Options evicting;
  evicting.extra_args = {"--maxmemory", "512mb", "--maxmemory-policy", "allkeys-lru"};
  auto server = RedisServer::Start(dir.path() / "redis", evicting);
  ASSERT_NE(server, nullptr);
  RedisSeenSetOptions options;
  options.address = server->address();
  options.name = "evict";
  options.requested.capacity = 1000;
  options.requested.fp_rate = 1e-3;
  std::vector<SeenNotice> notices;
  auto bloom = RedisSeenSet::Open(options, &notices);
  ASSERT_TRUE(bloom.ok()) << bloom.status().ToString();
  EXPECT_TRUE(HasNotice(notices, SeenNotice::Kind::kWarning, "allkeys-lru"));
  EXPECT_TRUE(HasNotice(notices, SeenNotice::Kind::kWarning, server->address().ToString()));
  options.name = "evict_exact";
  options.requested.exact = true;
  auto exact = RedisSeenSet::Open(options, nullptr);
  ASSERT_FALSE(exact.ok());
  EXPECT_EQ(exact.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(exact.status().message().find("noeviction"), std::string::npos);
  options.accept_loss = true;
  notices.clear();
  auto accepted = RedisSeenSet::Open(options, &notices);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_TRUE(HasNotice(notices, SeenNotice::Kind::kWarning, "allkeys-lru"));
}

}  // namespace
}  // namespace urlsieve::testing
