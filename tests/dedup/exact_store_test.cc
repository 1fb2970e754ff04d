// ExactShard (dedup/exact_shard.h): one file of the exact store: inserts, lookups by fingerprint,
// forgets, times, the rows of uncommitted generations, and the bad files of [trust] (foreign,
// wrong slot, not a shard, corrupt, truncated, missing, empty, a full disk).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "dedup/exact_shard.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

StateIdentity Identity(uint8_t seed) {
  std::string hex(32, '0');
  hex[0] = static_cast<char>('1' + seed);
  return *StateIdentity::FromHex(hex);
}

KeyHash H(uint64_t low, uint64_t high = 0x0123'4567'89ab'cdefull) { return KeyHash{low, high}; }

class ExactShardTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  ExactShard::Options Options(uint64_t committed = 0) {
    ExactShard::Options o;
    o.path = path_;
    o.identity = Identity(0);
    o.number = 3;
    o.count = 16;
    o.create = true;
    o.committed_generation = committed;
    return o;
  }
  void Reopen(uint64_t committed = 0, std::set<std::pair<uint64_t, uint64_t>>* keys = nullptr) {
    shard_.reset();
    auto shard = ExactShard::Open(Options(committed), [keys](const KeyHash& h) {
      if (keys != nullptr) keys->emplace(h.low, h.high);
    });
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    shard_ = std::move(*shard);
  }
  std::vector<uint8_t> Insert(const std::vector<ExactShard::Entry>& entries,
                              uint64_t generation = 0, int64_t now = 1000,
                              int64_t renew_at_or_before = ExactShard::kNeverRenew) {
    std::vector<uint8_t> inserted(entries.size(), 7);
    EXPECT_TRUE(shard_->Begin().ok());
    Status status =
        shard_->InsertIfAbsent(entries, generation, now, renew_at_or_before, inserted.data());
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(shard_->Commit().ok());
    return inserted;
  }
  bool Has(const KeyHash& h) {
    auto r = shard_->Contains(h);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && *r;
  }
  Status OpenError(const ExactShard::Options& o) {
    auto shard = ExactShard::Open(o);
    return shard.ok() ? Status::Ok() : shard.status();
  }

  testing::ScratchDir scratch_{"urlsieve_exact_shard"};
  const std::string path_ = (scratch_.path() / "seen-03.db").string();
  std::unique_ptr<ExactShard> shard_;
};

TEST_F(ExactShardTest, InsertsOnlyAbsentKeys) {
  EXPECT_EQ(Insert({{H(1)}, {H(2)}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(Insert({{H(2)}, {H(3)}, {H(1)}}), (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(shard_->rows(), 3u);
}

TEST_F(ExactShardTest, FingerprintsThatShareHalvesAreDistinct) {
  // Same low half (the index's tag and home slot), different high half, and the reverse.
  EXPECT_EQ(Insert({{H(42, 1)}, {H(42, 2)}, {H(7, 1)}}), (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_TRUE(Has(H(42, 1)));
  EXPECT_TRUE(Has(H(42, 2)));
  EXPECT_FALSE(Has(H(42, 3)));
  EXPECT_FALSE(Has(H(8, 1)));
}

TEST_F(ExactShardTest, FirstOccurrenceInBatchWins) {
  EXPECT_EQ(Insert({{H(9)}, {H(5)}, {H(9)}, {H(5)}}), (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST_F(ExactShardTest, AnAbsenceHintSkipsTheLookup) {
  EXPECT_EQ(Insert({{H(5), false}, {H(5), true}, {H(6), false}}), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(shard_->rows(), 2u);
}

TEST_F(ExactShardTest, HandlesFingerprintsWithTheHighBitSet) {
  const KeyHash big{0xFFFF'FFFF'FFFF'FFF0ull, 0xFFFF'FFFF'FFFF'FFFFull};
  EXPECT_EQ(Insert({{big}, {H(1)}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(Has(big));
  Reopen();
  EXPECT_TRUE(Has(big));
  EXPECT_EQ(Insert({{big}}), (std::vector<uint8_t>{0}));
}

TEST_F(ExactShardTest, OpenVisitsEveryKey) {
  Insert({{H(3, 30)}, {H(1, 10)}, {H(2, 20)}});
  std::set<std::pair<uint64_t, uint64_t>> keys;
  Reopen(0, &keys);
  EXPECT_EQ(keys, (std::set<std::pair<uint64_t, uint64_t>>{{1, 10}, {2, 20}, {3, 30}}));
  EXPECT_EQ(shard_->rows(), 3u);
}

TEST_F(ExactShardTest, IndexGrowsAndKeepsEveryKey) {
  // Past the initial 1024 slots several times; fingerprints share their tag (bits 32..63 of low)
  // in groups of four, so probing runs past tag matches that are other keys.
  std::vector<ExactShard::Entry> entries;
  for (uint64_t i = 0; i < 5000; ++i) entries.push_back({H(((i / 4) << 32) | i, i)});
  EXPECT_EQ(Insert(entries), std::vector<uint8_t>(5000, 1));
  for (uint64_t i = 0; i < 5000; ++i) {
    EXPECT_TRUE(Has(entries[i].hash)) << i;
    EXPECT_FALSE(Has(H(entries[i].hash.low, i + 1))) << i;
  }
  EXPECT_EQ(Insert(entries), std::vector<uint8_t>(5000, 0));
}

TEST_F(ExactShardTest, RolledBackInsertsAreForgottenEvenWhenTheirRowIdIsReused) {
  std::vector<uint8_t> inserted(1);
  ASSERT_TRUE(shard_->Begin().ok());
  const ExactShard::Entry r{H(7)};
  ASSERT_TRUE(shard_->InsertIfAbsent({&r, 1}, 0, 1, ExactShard::kNeverRenew, inserted.data()).ok());
  EXPECT_TRUE(Has(H(7)));  // visible to its own connection inside the transaction
  ASSERT_TRUE(shard_->Rollback().ok());
  EXPECT_FALSE(Has(H(7)));
  // The next row takes the rolled-back row's id; the index entry left behind must not match it.
  EXPECT_EQ(Insert({{H(8)}, {H(7)}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(Has(H(7)));
}

TEST_F(ExactShardTest, ForgetDeletesAndTheKeyIsNewAgain) {
  Insert({{H(1)}, {H(2)}});
  ASSERT_TRUE(shard_->Begin().ok());
  auto forgot = shard_->Forget(H(1), 0, /*defer=*/false);
  ASSERT_TRUE(forgot.ok());
  EXPECT_TRUE(*forgot);
  EXPECT_FALSE(*shard_->Forget(H(1), 0, false));  // already gone
  EXPECT_FALSE(*shard_->Forget(H(3), 0, false));  // never there
  ASSERT_TRUE(shard_->Commit().ok());
  EXPECT_FALSE(Has(H(1)));
  EXPECT_EQ(shard_->rows(), 1u);
  Reopen();
  EXPECT_FALSE(Has(H(1)));
  EXPECT_EQ(Insert({{H(1)}, {H(2)}}), (std::vector<uint8_t>{1, 0}));
}

TEST_F(ExactShardTest, TimesAreKeptPerKey) {
  Insert({{H(1)}}, 0, /*now=*/1'700'000'000);
  ASSERT_TRUE(shard_->Begin().ok());
  EXPECT_TRUE(*shard_->SetLastFetched(H(1), 1'700'000'100));
  EXPECT_FALSE(*shard_->SetLastFetched(H(2), 1'700'000'100));
  ASSERT_TRUE(shard_->Commit().ok());
  Reopen();
  auto times = shard_->GetTimes(H(1));
  ASSERT_TRUE(times.ok());
  ASSERT_TRUE(times->has_value());
  EXPECT_EQ((*times)->first_seen, 1'700'000'000);
  EXPECT_EQ((*times)->last_fetched, 1'700'000'100);
  EXPECT_FALSE(shard_->GetTimes(H(2))->has_value());
}

TEST_F(ExactShardTest, OpenUndoesWhatACommittedGenerationDoesNotHold) {
  // Committed generation 1 holds keys 1 and 2. Generation 2 (never committed in state.db): key 3
  // inserted, key 1 forgotten (deferred), key 4 inserted and forgotten.
  Insert({{H(1)}, {H(2)}}, /*generation=*/1);
  Reopen(/*committed=*/1);
  Insert({{H(3)}, {H(4)}}, 2);
  ASSERT_TRUE(shard_->Begin().ok());
  EXPECT_TRUE(*shard_->Forget(H(1), 2, /*defer=*/true));
  EXPECT_TRUE(*shard_->Forget(H(4), 2, /*defer=*/true));  // of generation 2 itself: deleted
  ASSERT_TRUE(shard_->Commit().ok());
  EXPECT_FALSE(Has(H(1)));
  EXPECT_TRUE(Has(H(3)));

  // A read-only open at generation 1 sees generation 1 and changes nothing.
  shard_.reset();
  {
    ExactShard::Options o = Options(1);
    o.read_only = true;
    o.create = false;
    auto ro = ExactShard::Open(o);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_TRUE(*(*ro)->Contains(H(1)));
    EXPECT_TRUE(*(*ro)->Contains(H(2)));
    EXPECT_FALSE(*(*ro)->Contains(H(3)));
    EXPECT_EQ((*ro)->rows(), 2u);
  }
  // A writable open at generation 1 repairs the file; then generation 2 is committed with the
  // forget of key 2 and a later open at 2 holds key 1 only.
  Reopen(1);
  EXPECT_TRUE(Has(H(1)));
  EXPECT_TRUE(Has(H(2)));
  EXPECT_FALSE(Has(H(3)));
  EXPECT_FALSE(Has(H(4)));
  ASSERT_TRUE(shard_->Begin().ok());
  EXPECT_TRUE(*shard_->Forget(H(2), 2, /*defer=*/true));
  ASSERT_TRUE(shard_->Commit().ok());
  Reopen(2);
  EXPECT_TRUE(Has(H(1)));
  EXPECT_FALSE(Has(H(2)));
  EXPECT_EQ(shard_->rows(), 1u);
  // ... and the forgotten row is gone from the file.
  auto db = SqliteDb::Open(path_);
  auto count = (*db)->Prepare("SELECT count(*) FROM seen");
  ASSERT_TRUE(count->Step().ok());
  EXPECT_EQ(count->ColumnInt64(0), 1);
}

TEST_F(ExactShardTest, AForgottenKeyInsertedAgainInTheSameGenerationIsKept) {
  Insert({{H(1)}}, 1);
  Reopen(1);
  ASSERT_TRUE(shard_->Begin().ok());
  EXPECT_TRUE(*shard_->Forget(H(1), 2, /*defer=*/true));
  ASSERT_TRUE(shard_->Commit().ok());
  EXPECT_EQ(Insert({{H(1)}}, 2, 2000), (std::vector<uint8_t>{1}));  // revived
  EXPECT_EQ(Insert({{H(1)}}, 2), (std::vector<uint8_t>{0}));
  Reopen(1);  // generation 2 never committed: the key was there at 1, and still is
  EXPECT_TRUE(Has(H(1)));
  Reopen(2);
  EXPECT_TRUE(Has(H(1)));
}

TEST_F(ExactShardTest, AKeyFirstSeenAtOrBeforeTheRenewTimeIsNewAgainAndFirstSeenNow) {
  Insert({{H(1)}, {H(2)}}, 1, /*now=*/1000);
  Reopen(1);
  // Key 1 first seen at 1000 (at the renew time: aged out), key 2 at 1000 too but asked with an
  // earlier renew time.
  EXPECT_EQ(Insert({{H(1)}}, 2, /*now=*/5000, /*renew_at_or_before=*/1000),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(Insert({{H(2)}}, 2, 5000, /*renew_at_or_before=*/999), (std::vector<uint8_t>{0}));
  EXPECT_EQ(Insert({{H(1)}}, 2, 5001, 1000), (std::vector<uint8_t>{0}));  // renewed: 5000
  EXPECT_EQ((*shard_->GetTimes(H(1)))->first_seen, 5000);
  EXPECT_EQ(shard_->rows(), 2u);
  Reopen(2);  // generation 2 committed: the renewal holds
  EXPECT_EQ((*shard_->GetTimes(H(1)))->first_seen, 5000);
  EXPECT_EQ(shard_->rows(), 2u);
}

TEST_F(ExactShardTest, ARenewalThatNeverCommitsLeavesTheKeyNew) {
  Insert({{H(1)}}, 1, /*now=*/1000);
  Reopen(1);
  EXPECT_EQ(Insert({{H(1)}}, 2, 5000, /*renew_at_or_before=*/1000), (std::vector<uint8_t>{1}));
  // A crash before generation 2 commits: the key, aged out at generation 1, is new again, not
  // "seen" with a first-seen time nobody acted on.
  Reopen(1);
  EXPECT_FALSE(Has(H(1)));
  EXPECT_EQ(Insert({{H(1)}}, 2, 6000), (std::vector<uint8_t>{1}));
}

TEST_F(ExactShardTest, AKeyForgottenAtACommittedGenerationAndRevivedLaterIsUndoneByACrash) {
  Insert({{H(1)}}, 1);
  Reopen(1);
  ASSERT_TRUE(shard_->Begin().ok());
  EXPECT_TRUE(*shard_->Forget(H(1), 2, /*defer=*/true));
  ASSERT_TRUE(shard_->Commit().ok());
  // Generation 2 (with the forget) committed meanwhile; the revival belongs to generation 3.
  EXPECT_EQ(Insert({{H(1)}}, 3, 2000), (std::vector<uint8_t>{1}));
  Reopen(2);  // generation 3 never committed: forgotten, as at 2
  EXPECT_FALSE(Has(H(1)));
}

TEST_F(ExactShardTest, AFileOfAnotherStateIsRefused) {
  Insert({{H(1)}});
  shard_.reset();
  ExactShard::Options o = Options();
  o.identity = Identity(1);
  Status status = OpenError(o);
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_NE(status.message().find(path_ + " belongs to another state"), std::string::npos)
      << status.ToString();
}

TEST_F(ExactShardTest, AShardInTheWrongSlotIsRefused) {
  shard_.reset();
  ExactShard::Options o = Options();
  o.number = 4;
  Status status = OpenError(o);
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_NE(status.message().find(path_ + " is shard 3 of 16"), std::string::npos)
      << status.ToString();
}

TEST_F(ExactShardTest, AnotherSqliteFileIsRefused) {
  shard_.reset();
  fs::remove(path_);
  ASSERT_TRUE((*SqliteDb::Open(path_))->Exec("CREATE TABLE t(x)").ok());
  Status status = OpenError(Options());
  EXPECT_EQ(status.code(), StatusCode::kCorruption);
  EXPECT_NE(status.message().find(path_ + ": not a urlsieve exact-store shard"), std::string::npos)
      << status.ToString();
}

TEST_F(ExactShardTest, MissingEmptyCorruptAndTruncatedFilesAreErrorsNamingTheFile) {
  Insert({{H(1)}, {H(2)}});
  shard_.reset();
  const std::string saved = path_ + ".saved";
  ASSERT_TRUE(fs::copy_file(path_, saved));
  ExactShard::Options existing = Options();
  existing.create = false;

  fs::remove(path_);
  Status missing = OpenError(existing);
  EXPECT_EQ(missing.code(), StatusCode::kCorruption);
  EXPECT_NE(missing.message().find(path_ + " is missing"), std::string::npos) << missing.ToString();
  EXPECT_FALSE(fs::exists(path_));  // nothing created in its place

  std::ofstream(path_).close();  // 0 bytes
  Status empty = OpenError(existing);
  EXPECT_EQ(empty.code(), StatusCode::kCorruption);
  EXPECT_NE(empty.message().find(path_ + " is empty"), std::string::npos) << empty.ToString();

  fs::remove(path_);
  {
    std::ofstream garbage(path_, std::ios::binary);
    garbage << std::string(8192, 'x');
  }
  Status corrupt = OpenError(existing);
  EXPECT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find(path_), std::string::npos) << corrupt.ToString();

  fs::remove(path_);
  fs::copy_file(saved, path_);
  fs::resize_file(path_, fs::file_size(path_) - 1);
  Status truncated = OpenError(existing);
  EXPECT_EQ(truncated.code(), StatusCode::kCorruption);
  EXPECT_NE(truncated.message().find(path_), std::string::npos) << truncated.ToString();
  EXPECT_EQ(fs::file_size(path_), fs::file_size(saved) - 1);  // left as it was
}

TEST_F(ExactShardTest, AFullDiskIsAnErrorNamingTheFileAndLosesNothing) {
  Insert({{H(1)}, {H(2)}});
  ASSERT_TRUE(shard_->db().Exec("PRAGMA max_page_count = 1").ok());  // clamps to the current size
  std::vector<ExactShard::Entry> many;
  for (uint64_t i = 100; i < 2100; ++i) many.push_back({H(i, i)});
  std::vector<uint8_t> inserted(many.size());
  ASSERT_TRUE(shard_->Begin().ok());
  Status status = shard_->InsertIfAbsent(many, 0, 1, ExactShard::kNeverRenew, inserted.data());
  if (status.ok()) status = shard_->Commit();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path_), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("full"), std::string::npos) << status.ToString();
  if (shard_->InTransaction()) {
    ASSERT_TRUE(shard_->Rollback().ok());
  }
  Reopen();
  EXPECT_TRUE(Has(H(1)));
  EXPECT_TRUE(Has(H(2)));
  EXPECT_EQ(shard_->rows(), 2u);
}

}  // namespace
}  // namespace urlsieve
