// ExactSeenSet over the sharded exact store (dedup/exact_store.h) in a real state directory: the
// shard files and their stamps, the checkpoint deciding after a crash, forgetting, per-key times,
// rebuilding the Bloom filter from fingerprints, the bad files of [trust], and the migration of a
// format-1 store (seen_urls) — including one interrupted halfway.
#include "dedup/exact_seen_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "dedup/bloom/key_hash.h"
#include "tests/dedup/format1_state.h"
#include "tests/dedup/seen_state.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

class ExactSeenSetTest : public ::testing::Test {
 protected:
  SeenFilterOptions Options(bool checkpointed) const {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    o.state_dir = dir_.string();
    o.exact = true;
    o.checkpointed = checkpointed;
    return o;
  }
  std::unique_ptr<testing::SeenState> MustOpen(const SeenFilterOptions& o) {
    auto s = testing::SeenState::Open(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  static std::string Key(int i) {
    return "http://h" + std::to_string(i % 13) + ".example/" + std::to_string(i);
  }
  static int InsertRange(SeenSet& set, int from, int to) {
    std::vector<std::string> keys;
    for (int i = from; i < to; ++i) keys.push_back(Key(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<uint8_t> is_new;
    Status status = set.InsertKeysIfNew(views, &is_new);
    EXPECT_TRUE(status.ok()) << status.ToString();
    int fresh = 0;
    for (uint8_t b : is_new) fresh += b;
    return fresh;
  }
  static bool Has(const SeenSet& set, int i) {
    auto r = set.Contains(Key(i));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }
  static bool Forget(SeenSet& set, int i) {
    const std::string key = Key(i);
    const std::string_view view = key;
    const KeyHash hash = HashKey(key);
    bool forgotten = false;
    Status status = set.ForgetHashed({&view, 1}, {&hash, 1}, {&forgotten, 1});
    EXPECT_TRUE(status.ok()) << status.ToString();
    return forgotten;
  }
  static bool HasNotice(const testing::SeenState& s, SeenNotice::Kind kind, std::string_view text) {
    for (const SeenNotice& n : s.notices) {
      if (n.kind == kind && n.text.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string Shard(uint32_t i) const { return ExactStore::ShardPath(dir_.string(), i); }
  std::map<std::string, std::string> Files() const {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename() == "LOCK") continue;
      files[e.path().filename()] =
          std::to_string(std::hash<std::string>()(testing::ReadFile(e.path())));
    }
    return files;
  }
  // A format-1 state (seen_urls) holding Key(0..n), checkpointed at generation 2.
  void MakeFormat1State(int n) {
    {
      auto s = MustOpen(Options(true));
      ASSERT_NE(s, nullptr);
      ASSERT_EQ(InsertRange(*s->set, 0, n / 2), n / 2);
      ASSERT_TRUE(s->Checkpoint().ok());
      ASSERT_EQ(InsertRange(*s->set, n / 2, n), n - n / 2);
      ASSERT_TRUE(s->Checkpoint().ok());
    }
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) keys.push_back(Key(i));  // already canonical
    testing::MakeFormat1ExactStore(dir_, keys);
  }
  void ExpectMigrated(testing::SeenState& s, int n) {
    EXPECT_TRUE(HasNotice(s, SeenNotice::Kind::kUpgraded, "migrated the exact store"));
    for (int i = 0; i < n; ++i) EXPECT_TRUE(Has(*s.set, i)) << i;
    EXPECT_EQ(s.set->Stats().stored_keys, static_cast<uint64_t>(n));
    EXPECT_EQ(InsertRange(*s.set, 0, n + 10), 10);
    EXPECT_EQ(s.dir->generation(), 2u);
    auto tables = s.db().Prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'seen_urls'");
    ASSERT_TRUE(tables.ok() && tables->Step().ok());
    EXPECT_EQ(tables->ColumnInt64(0), 0);
  }

  testing::ScratchDir scratch_{"urlsieve_exact_set"};
  const fs::path dir_ = scratch_.path() / "state";
};

TEST_F(ExactSeenSetTest, ShardsAreCreatedStampedAndRecorded) {
  auto s = MustOpen(Options(false));
  ASSERT_NE(s, nullptr);
  for (uint32_t i = 0; i < ExactStore::kDefaultShards; ++i) EXPECT_TRUE(fs::exists(Shard(i))) << i;
  EXPECT_EQ(s->dir->StoredNumber("version"), std::optional<uint64_t>(3));
  auto meta = s->db().Prepare("SELECT value FROM urlsieve_meta WHERE key = 'exact_shards'");
  ASSERT_TRUE(meta.ok());
  ASSERT_TRUE(*meta->Step());
  EXPECT_EQ(meta->ColumnText(0), "16");
  EXPECT_EQ(InsertRange(*s->set, 0, 2000), 2000);
  // The keys spread over the shards.
  auto* exact = dynamic_cast<ExactSeenSet*>(s->set.get());
  ASSERT_NE(exact, nullptr);
  for (uint32_t i = 0; i < exact->store().shard_count(); ++i) {
    EXPECT_GT(exact->store().shard(i).rows(), 60u) << i;
  }
}

TEST_F(ExactSeenSetTest, ACrashBeforeStateDbCommitsUndoesTheShardsRows) {
  {
    auto s = MustOpen(Options(true));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 100), 100);
    ASSERT_TRUE(s->Checkpoint().ok());
    ASSERT_EQ(InsertRange(*s->set, 100, 200), 100);
    EXPECT_TRUE(Forget(*s->set, 5));
    // The checkpoint's first step: the shards commit; then the process dies before state.db's
    // COMMIT (the SeenState closes without one).
    auto* exact = dynamic_cast<ExactSeenSet*>(s->set.get());
    ASSERT_NE(exact, nullptr);
    ASSERT_TRUE(exact->store().CommitAll().ok());
  }
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->set->Stats().stored_keys, 100u);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(Has(*s->set, i)) << i;  // key 5's forget undone
  EXPECT_EQ(InsertRange(*s->set, 0, 200), 100);                     // 100..199 are new again, once
}

TEST_F(ExactSeenSetTest, ForgetMakesAKeyNewAgainDurablyAsInserts) {
  for (bool checkpointed : {false, true}) {
    SCOPED_TRACE(checkpointed);
    fs::remove_all(dir_);
    {
      auto s = MustOpen(Options(checkpointed));
      ASSERT_NE(s, nullptr);
      ASSERT_EQ(InsertRange(*s->set, 0, 50), 50);
      ASSERT_TRUE(checkpointed ? s->Checkpoint().ok() : s->set->Save().ok());
      EXPECT_TRUE(Forget(*s->set, 7));
      EXPECT_FALSE(Forget(*s->set, 7));
      EXPECT_FALSE(Forget(*s->set, 99));
      EXPECT_FALSE(Has(*s->set, 7));
      EXPECT_EQ(s->set->Stats().stored_keys, 49u);
      EXPECT_EQ(InsertRange(*s->set, 7, 8), 1);  // new again
      EXPECT_EQ(InsertRange(*s->set, 7, 8), 0);
      EXPECT_TRUE(Forget(*s->set, 8));
      ASSERT_TRUE(checkpointed ? s->Checkpoint().ok() : s->set->Save().ok());
    }
    auto s = MustOpen(Options(checkpointed));
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(Has(*s->set, 7));
    EXPECT_FALSE(Has(*s->set, 8));
    EXPECT_EQ(InsertRange(*s->set, 0, 50), 1);  // key 8
  }
}

TEST_F(ExactSeenSetTest, KeepsFirstSeenAndLastFetchedTimes) {
  const auto unix_now = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t before = unix_now();
  {
    auto s = MustOpen(Options(true));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 10), 10);
    const int64_t after = unix_now();
    const std::string key = Key(3);
    const std::string_view view = key;
    const KeyHash hash = HashKey(key);
    auto times = s->set->KeyTimesHashed(key, hash);
    ASSERT_TRUE(times.ok() && times->has_value());
    EXPECT_GE((*times)->first_seen, before);
    EXPECT_LE((*times)->first_seen, after);
    EXPECT_EQ((*times)->last_fetched, 0);
    ASSERT_TRUE(s->set->RecordFetchedHashed({&view, 1}, {&hash, 1}, 1'800'000'000).ok());
    ASSERT_TRUE(s->Checkpoint().ok());
    EXPECT_FALSE(s->set->KeyTimesHashed(Key(99), HashKey(Key(99)))->has_value());
  }
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  auto times = s->set->KeyTimesHashed(Key(3), HashKey(Key(3)));
  ASSERT_TRUE(times.ok() && times->has_value());
  EXPECT_EQ((*times)->last_fetched, 1'800'000'000);
  EXPECT_GE((*times)->first_seen, before);
}

TEST_F(ExactSeenSetTest, TheBloomFilterIsRebuiltFromTheFingerprints) {
  {
    auto s = MustOpen(Options(true));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 500), 500);
    ASSERT_TRUE(s->Checkpoint().ok());
  }
  fs::remove(dir_ / "bloom.snap");
  fs::remove(dir_ / "bloom.delta");
  SeenFilterOptions o = Options(true);
  EXPECT_FALSE(testing::SeenState::Open(o).ok());  // missing: only on request
  o.rebuild_bloom = true;
  auto s = MustOpen(o);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(HasNotice(*s, SeenNotice::Kind::kRebuilt, "500 keys"));
  EXPECT_EQ(s->set->Stats().bloom_inserted, 500u);
  EXPECT_EQ(s->set->Stats().maybe_lookups, 0u);
  EXPECT_EQ(InsertRange(*s->set, 0, 600), 100);
}

TEST_F(ExactSeenSetTest, AMissingEmptyOrForeignShardIsRefusedAndNothingChanges) {
  const fs::path other = scratch_.path() / "other";
  {
    auto s = MustOpen(Options(true));
    ASSERT_EQ(InsertRange(*s->set, 0, 100), 100);
    ASSERT_TRUE(s->Checkpoint().ok());
  }
  {
    SeenFilterOptions o = Options(true);
    o.state_dir = other.string();
    auto s = MustOpen(o);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->Checkpoint().ok());
  }
  const std::string shard = Shard(5);
  const std::string saved = shard + ".saved";
  fs::rename(shard, saved);
  const auto expect_refused = [&](std::string_view what) {
    const auto before = Files();
    auto s = testing::SeenState::Open(Options(true));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
    EXPECT_NE(s.status().message().find(shard), std::string::npos) << s.status().ToString();
    EXPECT_NE(s.status().message().find(what), std::string::npos) << s.status().ToString();
    EXPECT_EQ(Files(), before) << what;
  };
  expect_refused("is missing");
  std::ofstream(shard).close();
  expect_refused("is empty");
  fs::copy_file(ExactStore::ShardPath(other.string(), 5), shard,
                fs::copy_options::overwrite_existing);
  expect_refused("belongs to another state");
  fs::copy_file(Shard(6), shard, fs::copy_options::overwrite_existing);
  expect_refused("is shard 6 of 16");
  fs::remove(shard);
  fs::rename(saved, shard);
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(Has(*s->set, i)) << i;
}

TEST_F(ExactSeenSetTest, AFullShardFailsTheBatchNamingTheFileAndLeavesNothingBehind) {
  for (bool checkpointed : {false, true}) {
    SCOPED_TRACE(checkpointed);
    fs::remove_all(dir_);
    auto s = MustOpen(Options(checkpointed));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 100), 100);
    ASSERT_TRUE(checkpointed ? s->Checkpoint().ok() : s->set->Save().ok());
    auto* exact = dynamic_cast<ExactSeenSet*>(s->set.get());
    ASSERT_NE(exact, nullptr);
    // Shard 0 may not grow: a batch with enough of its keys to need a new page fails.
    ASSERT_TRUE(exact->store().shard(0).db().Exec("PRAGMA max_page_count = 1").ok());
    std::vector<std::string> keys;
    for (int i = 1000; i < 5000; ++i) keys.push_back(Key(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<uint8_t> is_new;
    Status status = s->set->InsertKeysIfNew(views, &is_new);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(Shard(0)), std::string::npos) << status.ToString();
    EXPECT_NE(status.message().find("full"), std::string::npos) << status.ToString();
    // The disk has room again: every key of the failed batch is new once, the earlier ones seen.
    ASSERT_TRUE(exact->store().shard(0).db().Exec("PRAGMA max_page_count = 1000000").ok());
    if (checkpointed) {
      // SQLite rolled back the whole open transaction of the shard: the set refuses to answer
      // until the state is reopened at its last checkpoint.
      Status broken = s->set->InsertKeysIfNew(views, &is_new);
      EXPECT_NE(broken.message().find("reopen the state"), std::string::npos) << broken.ToString();
      s.reset();
      s = MustOpen(Options(checkpointed));
      ASSERT_NE(s, nullptr);
    }
    ASSERT_TRUE(s->set->InsertKeysIfNew(views, &is_new).ok());
    EXPECT_EQ(std::count(is_new.begin(), is_new.end(), 1), 4000);
    EXPECT_EQ(InsertRange(*s->set, 0, 100), 0);
    EXPECT_EQ(s->set->Stats().stored_keys, 4100u);
  }
}

TEST_F(ExactSeenSetTest, ASecondWriterIsRefusedByTheLock) {
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  auto second = testing::SeenState::Open(Options(true));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("LOCK"), std::string::npos)
      << second.status().ToString();
}

TEST_F(ExactSeenSetTest, AFormat1StoreIsMigratedOnOpen) {
  MakeFormat1State(300);
  ASSERT_FALSE(HasFailure());
  {
    auto s = MustOpen(Options(true));
    ASSERT_NE(s, nullptr);
    ExpectMigrated(*s, 300);
    EXPECT_EQ(s->dir->generation(), 2u);
    ASSERT_TRUE(s->Checkpoint().ok());
  }
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->notices.empty()) << s->notices[0].text;
  EXPECT_EQ(InsertRange(*s->set, 0, 310), 0);
  auto version = s->db().Prepare("SELECT value FROM urlsieve_meta WHERE key = 'version'");
  ASSERT_TRUE(version.ok() && *version->Step());
  EXPECT_EQ(version->ColumnText(0), "3");
}

TEST_F(ExactSeenSetTest, AnInterruptedMigrationIsDoneAgain) {
  MakeFormat1State(300);
  ASSERT_FALSE(HasFailure());
  // The shards a migration wrote, put back beside the format-1 state.db it never committed to
  // (one of them cut short at 0 bytes): as a crash before the migration's COMMIT leaves them.
  const fs::path before = scratch_.path() / "before";
  fs::copy(dir_, before, fs::copy_options::recursive);
  {
    auto s = MustOpen(Options(true));
    ASSERT_NE(s, nullptr);
  }
  for (uint32_t i = 0; i < ExactStore::kDefaultShards; ++i) {
    fs::copy_file(Shard(i), ExactStore::ShardPath(before.string(), i));
  }
  fs::resize_file(ExactStore::ShardPath(before.string(), 9), 0);
  fs::remove_all(dir_);
  fs::rename(before, dir_);
  auto s = MustOpen(Options(true));
  ASSERT_NE(s, nullptr);
  ExpectMigrated(*s, 300);
}

TEST_F(ExactSeenSetTest, AForeignLeftoverShardStopsTheMigration) {
  const fs::path other = scratch_.path() / "other";
  {
    SeenFilterOptions o = Options(true);
    o.state_dir = other.string();
    ASSERT_NE(MustOpen(o), nullptr);
  }
  MakeFormat1State(50);
  ASSERT_FALSE(HasFailure());
  fs::copy_file(ExactStore::ShardPath(other.string(), 2), Shard(2));
  auto s = testing::SeenState::Open(Options(true));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(Shard(2) + " belongs to another state"), std::string::npos)
      << s.status().ToString();
  fs::remove(Shard(2));
  auto again = MustOpen(Options(true));
  ASSERT_NE(again, nullptr);
  ExpectMigrated(*again, 50);
}

TEST_F(ExactSeenSetTest, AReadOnlyOpenOfAFormat1StoreNamesTheCommandThatConverts) {
  MakeFormat1State(20);
  ASSERT_FALSE(HasFailure());
  const auto before = Files();
  SeenFilterOptions o = Options(false);
  o.read_only = true;
  auto s = testing::SeenState::Open(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("urlsieve filter --state " + dir_.string() + " < /dev/null"),
            std::string::npos)
      << s.status().ToString();
  EXPECT_EQ(Files(), before);
}

// Time-aware exact sets (revisit_after): the row's first-seen time decides, to the second.
class ExactTimeAwareTest : public ExactSeenSetTest {
 protected:
  static constexpr int64_t kRevisitAfter = 3600;
  SeenFilterOptions TimeOptions(bool checkpointed) {
    SeenFilterOptions o = Options(checkpointed);
    o.revisit_after = std::chrono::seconds(kRevisitAfter);
    o.clock = &clock_;
    return o;
  }
  void Advance(int64_t seconds) { clock_.Advance(std::chrono::seconds(seconds)); }
  ManualClock clock_;
};

TEST_F(ExactTimeAwareTest, AKeyIsNewAgainExactlyRevisitAfterItWasToldNew) {
  for (bool checkpointed : {false, true}) {
    SCOPED_TRACE(checkpointed);
    fs::remove_all(dir_);
    auto s = MustOpen(TimeOptions(checkpointed));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 10), 10);
    Advance(kRevisitAfter / 2);
    ASSERT_EQ(InsertRange(*s->set, 5, 15), 5);  // 10..14 new; 5..9 seen, not refreshed
    Advance(kRevisitAfter / 2 - 1);             // 0..9 were told new revisit_after - 1 s ago
    EXPECT_TRUE(Has(*s->set, 0));
    EXPECT_EQ(InsertRange(*s->set, 0, 15), 0);
    Advance(1);  // ... now exactly revisit_after ago
    EXPECT_FALSE(Has(*s->set, 0));
    EXPECT_TRUE(Has(*s->set, 10));
    EXPECT_FALSE(s->set->KeyTimesHashed(Key(0), HashKey(Key(0)))->has_value());
    EXPECT_EQ(InsertRange(*s->set, 0, 15), 10);  // 0..9 again, once
    EXPECT_EQ(InsertRange(*s->set, 0, 15), 0);
    auto times = s->set->KeyTimesHashed(Key(0), HashKey(Key(0)));
    ASSERT_TRUE(times.ok() && times->has_value());
    EXPECT_EQ((*times)->first_seen,
              std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
                  .count());
    const SeenStats stats = s->set->Stats();
    EXPECT_EQ(stats.stored_keys, 15u);  // renewed in place
    EXPECT_EQ(stats.revisit_after_s, static_cast<uint64_t>(kRevisitAfter));
    EXPECT_EQ(stats.generations, 0u);
  }
}

TEST_F(ExactTimeAwareTest, AgesAcrossAReopenAndKeepsTheStoredRevisitAfter) {
  {
    auto s = MustOpen(TimeOptions(false));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 20), 20);
    ASSERT_TRUE(s->set->Save().ok());
  }
  Advance(kRevisitAfter);
  SeenFilterOptions other = TimeOptions(false);
  other.revisit_after = std::chrono::seconds(10 * kRevisitAfter);  // the stored one wins
  auto s = MustOpen(other);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->set->Stats().revisit_after_s, static_cast<uint64_t>(kRevisitAfter));
  EXPECT_EQ(InsertRange(*s->set, 0, 20), 20);
}

TEST_F(ExactTimeAwareTest, ARenewalLostInACrashLeavesTheKeyNew) {
  {
    auto s = MustOpen(TimeOptions(true));
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(InsertRange(*s->set, 0, 10), 10);
    ASSERT_TRUE(s->Checkpoint().ok());
    Advance(kRevisitAfter);
    ASSERT_EQ(InsertRange(*s->set, 0, 5), 5);  // renewed in the pending generation
    // The shards commit, then the process dies before state.db's COMMIT.
    auto* exact = dynamic_cast<ExactSeenSet*>(s->set.get());
    ASSERT_NE(exact, nullptr);
    ASSERT_TRUE(exact->store().CommitAll().ok());
  }
  // Nobody acted on those answers: the keys are new again, not seen with a first-seen time of a
  // generation that never committed; the others are as at the checkpoint (aged out too).
  auto s = MustOpen(TimeOptions(true));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(InsertRange(*s->set, 0, 10), 10);
  EXPECT_EQ(InsertRange(*s->set, 0, 10), 0);
}

TEST_F(ExactTimeAwareTest, ExactlyOneOfManyThreadsIsToldAnAgedKeyIsNew) {
  auto s = MustOpen(TimeOptions(false));
  ASSERT_NE(s, nullptr);
  constexpr int kKeys = 2000;
  ASSERT_EQ(InsertRange(*s->set, 0, kKeys), kKeys);
  Advance(kRevisitAfter);
  std::atomic<int> fresh{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { fresh += InsertRange(*s->set, 0, kKeys); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fresh.load(), kKeys);
}

}  // namespace
}  // namespace urlsieve
