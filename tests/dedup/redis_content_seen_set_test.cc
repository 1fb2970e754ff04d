// RedisContentSeenSet against a real redis-server (docs/features/content-seen.md, "Shared"): the
// verdicts (exact, near, first, refetch, Forget) by example and against a plain model, exactly one
// first across processes, the ContentSeenSet contract (content_seen_set_contract.h), a retried call
// answered as it was, a Redis killed mid-run (an error naming the server, never a wrong verdict), a
// reopen with another max_distance refused, Stats and Delete.
#include "dedup/content/redis_content_seen_set.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "redis/redis_client.h"
#include "tests/dedup/content_seen_set_contract.h"
#include "tests/dedup/redis_content_first.h"
#include "tests/dedup/redis_shared_server.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve::testing {
namespace {

using Kind = ContentVerdict::Kind;

RedisContentSeenSetOptions Options(const std::string& name, int max_distance = 3) {
  RedisContentSeenSetOptions options;
  options.address = SharedRedisServer()->address();
  options.name = name;
  options.max_distance = max_distance;
  return options;
}

std::unique_ptr<RedisContentSeenSet> MustOpen(const RedisContentSeenSetOptions& options) {
  auto set = RedisContentSeenSet::Open(options);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(set).value() : nullptr;
}

ContentVerdict MustTest(RedisContentSeenSet& set, uint64_t digest, std::optional<uint64_t> simhash,
                        const std::string& id) {
  auto verdict = set.Test({digest, simhash}, {id, "warc:" + id});
  EXPECT_TRUE(verdict.ok()) << verdict.status().ToString();
  return verdict.ok() ? *verdict : ContentVerdict{};
}

constexpr uint64_t kS = 0x0123456789abcdefULL;

TEST(RedisContentSeenSetTest, ExactThenNearThenFirst) {
  auto set = MustOpen(Options("verdicts"));
  ASSERT_NE(set, nullptr);
  ContentVerdict v = MustTest(*set, 1, kS, "a");
  EXPECT_EQ(v.kind, Kind::kFirst);
  EXPECT_FALSE(v.refetch);

  v = MustTest(*set, 1, kS ^ 0xffff, "b");  // the same digest: exact, whatever the simhash
  EXPECT_EQ(v.kind, Kind::kExact);
  EXPECT_EQ(v.first.id, "a");
  EXPECT_EQ(v.first.data, "warc:a");

  v = MustTest(*set, 2, kS ^ 0b101, "c");  // another digest, simhash at distance 2
  EXPECT_EQ(v.kind, Kind::kNear);
  EXPECT_EQ(v.distance, 2);
  EXPECT_EQ(v.first.id, "a");

  v = MustTest(*set, 2, std::nullopt, "d");  // c's digest was stored as c's
  EXPECT_EQ(v.kind, Kind::kExact);
  EXPECT_EQ(v.first.id, "c");

  // A difference in every block (bits 3, 20, 40, 60: distance 4 > 3): a first.
  const uint64_t far = kS ^ (1ULL << 3) ^ (1ULL << 20) ^ (1ULL << 40) ^ (1ULL << 60);
  v = MustTest(*set, 3, far, "e");
  EXPECT_EQ(v.kind, Kind::kFirst);
  // Near by distance 1 to e, found through whichever block the difference spares.
  v = MustTest(*set, 4, far ^ (1ULL << 63), "f");
  EXPECT_EQ(v.kind, Kind::kNear);
  EXPECT_EQ(v.first.id, "e");
  EXPECT_EQ(v.distance, 1);
  EXPECT_EQ(set->size(), 4u);  // digests 1, 2, 3, 4

  v = MustTest(*set, 5, std::nullopt, "g");  // no simhash: exact test only
  EXPECT_EQ(v.kind, Kind::kFirst);
  EXPECT_EQ(set->size(), 5u);
}

TEST(RedisContentSeenSetTest, TheNearestWinsAndTheFirstStoredOnTies) {
  auto set = MustOpen(Options("nearest"));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(MustTest(*set, 1, kS, "x").kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, 2, kS ^ 0xf0, "y").kind, Kind::kFirst);  // distance 4 from x
  ContentVerdict v = MustTest(*set, 3, kS ^ 0x10, "q1");            // 1 from x, 3 from y
  EXPECT_EQ(v.kind, Kind::kNear);
  EXPECT_EQ(v.first.id, "x");
  EXPECT_EQ(v.distance, 1);
  v = MustTest(*set, 4, kS ^ 0x70, "q2");  // 3 from x, 1 from y
  EXPECT_EQ(v.first.id, "y");
  EXPECT_EQ(v.distance, 1);
  v = MustTest(*set, 5, kS ^ 0x30, "q3");  // 2 from both: the first stored
  EXPECT_EQ(v.first.id, "x");
  EXPECT_EQ(v.distance, 2);
}

TEST(RedisContentSeenSetTest, TheSameIdIsARefetchAndChangesNothing) {
  auto set = MustOpen(Options("refetch"));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(MustTest(*set, 1, kS, "a").kind, Kind::kFirst);
  ContentVerdict v = MustTest(*set, 1, kS, "a");
  EXPECT_EQ(v.kind, Kind::kFirst);
  EXPECT_TRUE(v.refetch);
  v = MustTest(*set, 9, kS ^ 1, "a");  // a changed a little: still itself
  EXPECT_EQ(v.kind, Kind::kFirst);
  EXPECT_TRUE(v.refetch);
  EXPECT_EQ(set->size(), 1u);
  v = MustTest(*set, 9, kS ^ 1, "b");  // digest 9 was not stored by the refetch
  EXPECT_EQ(v.kind, Kind::kNear);
  EXPECT_EQ(v.first.id, "a");
}

TEST(RedisContentSeenSetTest, ForgetRemovesTheDigestAndTheSimhashOfThatId) {
  auto set = MustOpen(Options("forget"));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(MustTest(*set, 1, kS, "a").kind, Kind::kFirst);
  EXPECT_EQ(MustTest(*set, 2, kS ^ 3, "b").kind, Kind::kNear);
  auto forgotten = set->Forget({1, kS}, "someone else");
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_FALSE(*forgotten);
  forgotten = set->Forget({1, kS}, "a");
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
  EXPECT_TRUE(*forgotten);
  EXPECT_EQ(set->size(), 1u);  // b's digest stays
  forgotten = set->Forget({1, kS}, "a");
  ASSERT_TRUE(forgotten.ok());
  EXPECT_FALSE(*forgotten);
  EXPECT_EQ(MustTest(*set, 1, kS ^ 1, "c").kind, Kind::kFirst);  // neither a's digest nor simhash
  EXPECT_EQ(MustTest(*set, 2, std::nullopt, "d").first.id, "b");
  forgotten = set->Forget({2, std::nullopt}, "b");
  ASSERT_TRUE(forgotten.ok());
  EXPECT_TRUE(*forgotten);
  EXPECT_EQ(MustTest(*set, 2, std::nullopt, "d").kind, Kind::kFirst);
}

// A plain model of ContentSeenSet's semantics (content_seen_set.h).
class Model {
 public:
  explicit Model(int k) : k_(k) {}
  ContentVerdict Test(uint64_t digest, std::optional<uint64_t> simhash, const std::string& id) {
    ContentVerdict v;
    if (auto it = exact_.find(digest); it != exact_.end()) {
      v.first = {copies_[it->second], "warc:" + copies_[it->second]};
      v.kind = copies_[it->second] == id ? Kind::kFirst : Kind::kExact;
      v.refetch = v.kind == Kind::kFirst;
      return v;
    }
    if (simhash) {
      int best = k_ + 1;
      size_t at = 0;
      for (size_t i = 0; i < near_.size(); ++i) {
        const int d = std::popcount(near_[i].first ^ *simhash);
        if (d < best) {
          best = d;
          at = i;
        }
      }
      if (best <= k_) {
        const std::string& first = copies_[near_[at].second];
        v.first = {first, "warc:" + first};
        v.distance = best;
        if (first == id) {
          v.refetch = true;
          return v;
        }
        v.kind = Kind::kNear;
        exact_[digest] = Store(id);
        return v;
      }
    }
    const size_t copy = Store(id);
    exact_[digest] = copy;
    if (simhash) near_.push_back({*simhash, copy});
    return v;
  }
  bool Forget(uint64_t digest, std::optional<uint64_t> simhash, const std::string& id) {
    bool removed = false;
    if (auto it = exact_.find(digest); it != exact_.end() && copies_[it->second] == id) {
      exact_.erase(it);
      removed = true;
    }
    if (simhash) {
      for (auto it = near_.begin(); it != near_.end(); ++it) {
        if (it->first == *simhash && copies_[it->second] == id) {
          near_.erase(it);
          removed = true;
          break;
        }
      }
    }
    return removed;
  }
  uint64_t size() const { return exact_.size(); }

 private:
  size_t Store(const std::string& id) {
    copies_.push_back(id);
    return copies_.size() - 1;
  }
  int k_;
  std::map<uint64_t, size_t> exact_;
  std::vector<std::pair<uint64_t, size_t>> near_;  // in the order stored
  std::vector<std::string> copies_;
};

TEST(RedisContentSeenSetTest, AgreesWithAPlainModel) {
  for (int k : {3, 1, 6}) {
    auto set = MustOpen(Options("model" + std::to_string(k), k));
    ASSERT_NE(set, nullptr);
    Model model(k);
    std::mt19937_64 rng(42 + static_cast<uint64_t>(k));
    std::vector<uint64_t> bases;
    for (int i = 0; i < 12; ++i) bases.push_back(rng());
    struct Done {
      uint64_t digest;
      std::optional<uint64_t> simhash;
      std::string id;
    };
    std::vector<Done> done;
    for (int op = 0; op < 700; ++op) {
      if (!done.empty() && rng() % 10 == 0) {
        const Done& d = done[rng() % done.size()];
        auto forgotten = set->Forget({d.digest, d.simhash}, d.id);
        ASSERT_TRUE(forgotten.ok()) << forgotten.status().ToString();
        EXPECT_EQ(*forgotten, model.Forget(d.digest, d.simhash, d.id)) << "op " << op;
        continue;
      }
      uint64_t simhash = bases[rng() % bases.size()];
      for (int flips = static_cast<int>(rng() % (2 * k + 2)); flips > 0; --flips) {
        simhash ^= uint64_t{1} << (rng() % 64);
      }
      const std::optional<uint64_t> sim =
          rng() % 8 == 0 ? std::nullopt : std::optional<uint64_t>(simhash);
      const uint64_t digest = rng() % 300;
      const std::string id = "u" + std::to_string(rng() % 150);
      const ContentVerdict want = model.Test(digest, sim, id);
      const ContentVerdict got = MustTest(*set, digest, sim, id);
      ASSERT_EQ(static_cast<int>(got.kind), static_cast<int>(want.kind))
          << "k " << k << " op " << op;
      EXPECT_EQ(got.refetch, want.refetch) << "op " << op;
      if (want.kind != Kind::kFirst) {
        EXPECT_EQ(got.first.id, want.first.id) << "op " << op;
        EXPECT_EQ(got.first.data, want.first.data) << "op " << op;
      }
      if (want.kind == Kind::kNear) {
        EXPECT_EQ(got.distance, want.distance) << "op " << op;
      }
      done.push_back({digest, sim, id});
    }
    EXPECT_EQ(set->size(), model.size());
  }
}

TEST(RedisContentSeenSetTest, ExactlyOneFirstAcrossProcesses) {
  ScratchDir dir("urlsieve_content_first");
  ExpectExactlyOneFirst(dir.path() / "exact", Options("first_exact"), /*near=*/false);
  ExpectExactlyOneFirst(dir.path() / "near", Options("first_near"), /*near=*/true);
}

TEST(RedisContentSeenSetTest, AnotherMaxDistanceOrNearIsRefused) {
  auto set = MustOpen(Options("geometry", 3));
  ASSERT_NE(set, nullptr);
  auto other = RedisContentSeenSet::Open(Options("geometry", 2));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("max_distance 3"), std::string::npos)
      << other.status().ToString();
  EXPECT_NE(other.status().message().find("max_distance 2"), std::string::npos);
  EXPECT_NE(other.status().message().find(SharedRedisServer()->address().ToString()),
            std::string::npos);
  RedisContentSeenSetOptions exact_only = Options("geometry", 3);
  exact_only.near = false;
  other = RedisContentSeenSet::Open(exact_only);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  RedisContentSeenSetOptions read_only = Options("geometry", 0);
  read_only.read_only = true;
  auto reader = RedisContentSeenSet::Open(read_only);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->max_distance(), 3);  // as stored
  read_only.name = "nothing_here";
  EXPECT_EQ(RedisContentSeenSet::Open(read_only).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RedisContentSeenSet::Open(Options("bad name")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RedisContentSeenSet::Open(Options("k8", 8)).status().code(),
            StatusCode::kInvalidArgument);
}

// The Function keeps a connection's last answer under its token and number: a call whose reply
// was lost, sent again, is answered as it was (a first stays a first, not a refetch of itself).
TEST(RedisContentSeenSetTest, ARetriedCallIsAnsweredAsItWas) {
  auto set = MustOpen(Options("retry"));
  ASSERT_NE(set, nullptr);
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  const std::string meta = "urlsieve:{retry:content}:meta";
  auto identity = (*client)->Run({{"HGET", meta, "identity"}});
  ASSERT_TRUE(identity.ok());
  auto call = [&](const std::string& seq) {
    auto reply = (*client)->Run({{"FCALL", "urlsieve_content_v1_test", "1", meta, identity->str,
                                  "tok", seq, "0000", std::string(6, '\x01'), "page", "d", "0"},
                                 3});
    EXPECT_TRUE(reply.ok());
    EXPECT_EQ(reply->elements.size(), 6u) << reply->str;
    if (reply->elements.size() != 6) return std::string("?");
    std::string answer = reply->elements[0].str;
    answer += reply->elements[1].integer != 0 ? '1' : '0';
    return answer;
  };
  EXPECT_EQ(call("1"), "F0");  // stored
  EXPECT_EQ(call("1"), "F0");  // the same call again: the same answer
  EXPECT_EQ(call("2"), "F1");  // a new call: the same page again
  ContentVerdict v = MustTest(*set, 0x0000010101010101ULL, std::nullopt, "other");
  EXPECT_EQ(v.kind, Kind::kExact);
  EXPECT_EQ(v.first.id, "page");
}

TEST(RedisContentSeenSetTest, ARedisKilledMidRunIsAnErrorNamingIt) {
  ScratchDir dir("urlsieve_content_killed");
  RedisServerOptions durable;
  durable.append_only = true;
  auto server = RedisServer::Start(dir.path() / "redis", durable);
  ASSERT_NE(server, nullptr);
  RedisContentSeenSetOptions options;
  options.address = server->address();
  options.name = "killed";
  options.timeouts = {0.5, 2.0};
  auto set = MustOpen(options);
  ASSERT_NE(set, nullptr);
  for (uint64_t i = 0; i < 50; ++i) {
    std::string id = "page ";
    id += std::to_string(i);
    EXPECT_EQ(MustTest(*set, SplitMix(i), SplitMix(i + 99), id).kind, Kind::kFirst);
  }
  server->Kill();
  auto verdict = set->Test({SplitMix(1), SplitMix(100)}, {"page 1 again", ""});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(verdict.status().message().find(server->address().ToString()), std::string::npos)
      << verdict.status().ToString();
  EXPECT_EQ(set->Forget({SplitMix(1), SplitMix(100)}, "page 1").status().code(),
            StatusCode::kUnavailable);
  // Back with its append-only file: what it had is there, and the failed call's retry is answered.
  ASSERT_TRUE(server->Restart());
  verdict = set->Test({SplitMix(1), SplitMix(100)}, {"page 1 again", ""});
  ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
  EXPECT_EQ(verdict->kind, Kind::kExact);
  EXPECT_EQ(verdict->first.id, "page 1");
}

TEST(RedisContentSeenSetTest, ASetEmptiedUnderItIsAnErrorNotAFirst) {
  auto set = MustOpen(Options("emptied"));
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(MustTest(*set, 7, kS, "a").kind, Kind::kFirst);
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Run({{"FLUSHALL"}, -1}).ok());
  auto verdict = set->Test({7, kS}, {"b", ""});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.status().code(), StatusCode::kCorruption) << verdict.status().ToString();
  EXPECT_NE(verdict.status().message().find("deleted or lost"), std::string::npos);
}

TEST(RedisContentSeenSetTest, StatsCountAndDeleteDropsEveryKey) {
  auto set = MustOpen(Options("stats"));
  ASSERT_NE(set, nullptr);
  for (uint64_t i = 0; i < 300; ++i) {
    EXPECT_EQ(MustTest(*set, SplitMix(i), SplitMix(i + 5000), "page" + std::to_string(i)).kind,
              Kind::kFirst);
  }
  auto stats = set->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->pages, 300u);
  EXPECT_GT(stats->exact_bytes, 300u * 12);
  EXPECT_GT(stats->near_bytes, 300u * 30);
  EXPECT_EQ(stats->copy_chunks, 1u);
  EXPECT_GT(stats->keys, 300u);
  auto deleted = set->Delete();
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, stats->keys);
  auto client = RedisClient::Connect(SharedRedisServer()->address());
  ASSERT_TRUE(client.ok());
  auto left = (*client)->Run({{"KEYS", "urlsieve:{stats:content}:[^d]*"}, -1});
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->elements.empty());
  EXPECT_EQ(set->Test({1, kS}, {"x", ""}).status().code(), StatusCode::kCorruption);
}

// The contract: every Open of one store opens one set (by name) on the shared server; a Redis set
// is durable as it goes (Persist: nothing).
class RedisStore : public ContentSeenSetStore {
 public:
  RedisStore() : name_("contract" + std::to_string(next_++)) {}
  Result<std::unique_ptr<ContentSeenSet>> Open(const ContentSeenOptions& options) override {
    RedisContentSeenSetOptions redis = Options(name_, options.max_distance);
    redis.near = options.near;
    auto set = RedisContentSeenSet::Open(redis);
    if (!set.ok()) return set.status();
    return std::unique_ptr<ContentSeenSet>(std::move(set).value());
  }
  Status Persist(ContentSeenSet&) override { return Status::Ok(); }

 private:
  static inline int next_ = 0;
  std::string name_;
};

INSTANTIATE_TEST_SUITE_P(Redis, ContentSeenSetContractTest,
                         ::testing::Values(ContentSeenSetImplementation{
                             "Redis",
                             [](const std::filesystem::path&) {
                               return std::unique_ptr<ContentSeenSetStore>(new RedisStore);
                             }}),
                         ContentSeenSetImplementationName);

}  // namespace
}  // namespace urlsieve::testing
