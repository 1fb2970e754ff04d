// SeenFilter checkpoints with the Bloom delta log (bloom_delta_log.h): what a checkpoint writes,
// reopening after many of them, and every state a crash can leave on disk, each built for real
// (a COMMIT that fails, or files copied from the states before and after a step).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "dedup/bloom/bloom_delta_log.h"
#include "dedup/seen_filter.h"
#include "tests/dedup/seen_state.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

std::string Url(int i) {
  return "http://h" + std::to_string(i % 31) + ".example/p/" + std::to_string(i);
}

// Makes the next COMMIT on `db` fail, for real: a deferred foreign-key violation is only checked
// at COMMIT. `db` must have no transaction open (PRAGMA foreign_keys is a no-op inside one).
Status EnableFailingCommits(SqliteDb& db) { return db.Exec("PRAGMA foreign_keys=ON"); }
Status ViolateAForeignKey(SqliteDb& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS fk_parent(id INTEGER PRIMARY KEY);"
      "CREATE TABLE IF NOT EXISTS fk_child(p INTEGER REFERENCES fk_parent(id) "
      "DEFERRABLE INITIALLY DEFERRED);"
      "INSERT INTO fk_child VALUES(42)");
}

class SeenFilterCheckpointTest : public ::testing::Test {
 protected:
  SeenFilterOptions Options(bool exact, bool checkpointed, const fs::path& dir) {
    SeenFilterOptions o;
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    o.state_dir = dir.string();
    o.exact = exact;
    o.checkpointed = checkpointed;
    return o;
  }
  SeenFilterOptions Options(bool exact, bool checkpointed = true) {
    return Options(exact, checkpointed, dir_.path() / "state");
  }
  static std::unique_ptr<SeenFilter> MustOpen(const SeenFilterOptions& o) {
    auto f = SeenFilter::Open(o);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(*f) : nullptr;
  }
  static void InsertRange(SeenFilter& f, int from, int to) {
    for (int i = from; i < to; ++i) {
      auto r = f.InsertIfNew(Url(i));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_TRUE(*r) << Url(i);
    }
  }
  static int CountSeen(const SeenFilter& f, int from, int to) {
    int seen = 0;
    for (int i = from; i < to; ++i) {
      auto r = f.Contains(Url(i));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      seen += r.ok() && *r ? 1 : 0;
    }
    return seen;
  }
  // Keys that push the delta log past its compaction threshold in one checkpoint.
  static int KeysToCompact(const SeenFilter& f) {
    return static_cast<int>(f.Stats().bloom_bytes / BloomDeltaLog::kCompactionDivisor / 16) + 1;
  }
  // Copies a closed state directory (SQLite's -wal, if any, included).
  static void CopyState(const fs::path& from, const fs::path& to) {
    fs::remove_all(to);
    fs::copy(from, to, fs::copy_options::recursive);
  }

  testing::ScratchDir dir_{"urlsieve_seen_ckpt"};
};

// The fix itself: after the first snapshot, a checkpoint appends 40 + 16 bytes per new key to
// bloom.delta and does not touch bloom.snap.
TEST_F(SeenFilterCheckpointTest, ACheckpointAppendsTheNewKeysAndLeavesTheSnapshotAlone) {
  auto f = MustOpen(Options(/*exact=*/false));
  InsertRange(*f, 0, 10);
  ASSERT_TRUE(f->Checkpoint().ok());  // the first one writes the snapshot
  const fs::path snap = dir_.path() / "state" / "bloom.snap";
  const fs::path log = dir_.path() / "state" / "bloom.delta";
  const std::string snapshot = ReadFile(snap);
  const auto snapshot_time = fs::last_write_time(snap);
  InsertRange(*f, 10, 30);
  ASSERT_TRUE(f->Checkpoint().ok());
  ASSERT_TRUE(f->Checkpoint().ok());
  InsertRange(*f, 30, 35);
  ASSERT_TRUE(f->Checkpoint().ok());
  EXPECT_EQ(ReadFile(snap), snapshot);
  EXPECT_EQ(fs::last_write_time(snap), snapshot_time);
  EXPECT_EQ(fs::file_size(log), BloomDeltaLog::kHeaderBytes + 3 * 40 + 25 * 16);
  EXPECT_EQ(f->Stats().generation, 4u);
}

// Many checkpoints, across several compactions, then a crash: the reopened filter knows every key
// of the last checkpoint, in exact mode without rebuilding anything.
TEST_F(SeenFilterCheckpointTest, ReopenAfterManyCheckpointsHasEveryCheckpointedKey) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    fs::remove_all(dir_.path() / "state");
    int inserted = 0;
    uint64_t bloom_inserted = 0;
    int snapshots = 0;
    {
      auto f = MustOpen(Options(exact));
      const int round = KeysToCompact(*f) / 5;
      const fs::path snap = dir_.path() / "state" / "bloom.snap";
      fs::file_time_type last_snapshot{};
      for (int r = 0; r < 40; ++r) {
        InsertRange(*f, inserted, inserted + round);
        inserted += round;
        ASSERT_TRUE(f->Checkpoint().ok());
        if (fs::last_write_time(snap) != last_snapshot) ++snapshots;
        last_snapshot = fs::last_write_time(snap);
      }
      bloom_inserted = f->Stats().bloom_inserted;
      InsertRange(*f, inserted, inserted + 50);  // after the last checkpoint: lost in the crash
    }
    EXPECT_GE(snapshots, 4);   // compacted now and then ...
    EXPECT_LE(snapshots, 12);  // ... but most checkpoints only appended
    auto f = MustOpen(Options(exact));
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
    EXPECT_EQ(CountSeen(*f, 0, inserted), inserted);
    EXPECT_EQ(f->Stats().bloom_inserted, bloom_inserted);
    if (exact) {
      EXPECT_EQ(f->Stats().stored_keys, static_cast<uint64_t>(inserted));
      EXPECT_EQ(CountSeen(*f, inserted, inserted + 50), 0);
    } else {
      EXPECT_LE(CountSeen(*f, inserted, inserted + 50), 2);  // false positives only
    }
    EXPECT_EQ(f->Stats().generation, 40u);
  }
}

// A compaction writes bloom.snap.next, COMMITs, renames it, and the next checkpoint starts a new
// log. Each state a crash can leave is assembled from the files before and after the steps.
TEST_F(SeenFilterCheckpointTest, CompactionInterruptedAtEachStepLosesNothingCommitted) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    const fs::path state = dir_.path() / "state";
    const fs::path before = dir_.path() / "before", after = dir_.path() / "after",
                   appended = dir_.path() / "appended";
    fs::remove_all(state);
    int compact_keys = 0;
    {
      auto f = MustOpen(Options(exact));
      InsertRange(*f, 0, 50);
      ASSERT_TRUE(f->Checkpoint().ok());  // generation 1: the first snapshot
      InsertRange(*f, 50, 100);
      ASSERT_TRUE(f->Checkpoint().ok());  // 2: appended to the log
      compact_keys = KeysToCompact(*f);
    }
    CopyState(state, before);
    const int c_end = 100 + compact_keys;
    {
      auto f = MustOpen(Options(exact));
      InsertRange(*f, 100, c_end);
      ASSERT_TRUE(f->Checkpoint().ok());  // 3: past the threshold, a full snapshot
    }
    EXPECT_NE(ReadFile(state / "bloom.snap"), ReadFile(before / "bloom.snap"));
    EXPECT_EQ(ReadFile(state / "bloom.delta"), ReadFile(before / "bloom.delta"));  // not yet reset
    CopyState(state, after);
    {
      auto f = MustOpen(Options(exact));
      InsertRange(*f, c_end, c_end + 20);
      ASSERT_TRUE(f->Checkpoint().ok());  // 4: a new log
    }
    EXPECT_NE(ReadFile(state / "bloom.delta"), ReadFile(before / "bloom.delta"));
    CopyState(state, appended);

    // Opens a state assembled in `dir` and checks which ranges of keys it holds.
    auto check = [&](const fs::path& dir, bool has_c, std::string_view step) {
      SCOPED_TRACE(step);
      auto f = MustOpen(Options(exact, true, dir));
      ASSERT_NE(f, nullptr);
      EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
      EXPECT_EQ(CountSeen(*f, 0, 100), 100);
      const int c_seen = CountSeen(*f, 100, c_end);
      if (has_c) {
        EXPECT_EQ(c_seen, compact_keys);
      } else {
        EXPECT_LE(c_seen, exact ? 0 : compact_keys / 100 + 2);
      }
      EXPECT_FALSE(fs::exists(dir / "bloom.snap.next"));
      EXPECT_EQ(f->Stats().generation, has_c ? 3u : 2u);
    };
    const fs::path crash = dir_.path() / "crash";
    // 1. The snapshot of 3 is written as bloom.snap.next; no COMMIT: it is discarded.
    CopyState(before, crash);
    fs::copy_file(after / "bloom.snap", crash / "bloom.snap.next");
    check(crash, /*has_c=*/false, "snapshot written, not committed");
    // 2. COMMITted, not renamed: bloom.snap.next is promoted; the old log is ignored.
    CopyState(after, crash);
    fs::copy_file(after / "bloom.snap", crash / "bloom.snap.next",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(before / "bloom.snap", crash / "bloom.snap",
                  fs::copy_options::overwrite_existing);
    check(crash, true, "committed, not renamed");
    // 3. Renamed; the old log is still there.
    CopyState(after, crash);
    check(crash, true, "renamed, old log left");
    // 4. The next checkpoint wrote its new log, no COMMIT: the log is ignored.
    CopyState(after, crash);
    fs::copy_file(appended / "bloom.delta", crash / "bloom.delta",
                  fs::copy_options::overwrite_existing);
    check(crash, true, "new log written, not committed");
    // And the whole sequence, committed.
    {
      auto f = MustOpen(Options(exact, true, appended));
      ASSERT_NE(f, nullptr);
      EXPECT_TRUE(f->notices().empty()) << f->notices()[0].text;
      EXPECT_EQ(CountSeen(*f, 0, c_end + 20), c_end + 20);
      EXPECT_EQ(f->Stats().generation, 4u);
    }
  }
}

// A COMMIT that fails after the record was appended (disk full, say): the record stays past the
// committed length. Standalone, the next Save writes over it.
TEST_F(SeenFilterCheckpointTest, RecordOfAFailedCommitIsIgnoredAndOverwritten) {
  {
    auto state = testing::SeenState::Open(Options(/*exact=*/false, /*checkpointed=*/false));
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    SeenFilter* f = (*state)->filter.get();
    InsertRange(*f, 0, 20);
    ASSERT_TRUE(f->Save().ok());  // 1: snapshot
    InsertRange(*f, 20, 40);
    ASSERT_TRUE(f->Save().ok());  // 2: record
    ASSERT_TRUE(EnableFailingCommits((*state)->db()).ok());
    InsertRange(*f, 40, 60);
    Status failed = (*state)->Checkpoint(ViolateAForeignKey);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.ToString().find("FOREIGN KEY"), std::string::npos) << failed.ToString();
    EXPECT_EQ(f->Stats().generation, 2u);
  }
  {
    auto f = MustOpen(Options(false, false));
    EXPECT_EQ(f->Stats().generation, 2u);
    EXPECT_EQ(CountSeen(*f, 0, 40), 40);
    EXPECT_LE(CountSeen(*f, 40, 60), 2);
    InsertRange(*f, 100, 120);
    ASSERT_TRUE(f->Save().ok());  // 3, over the failed record
  }
  auto f = MustOpen(Options(false, false));
  EXPECT_EQ(f->Stats().generation, 3u);
  EXPECT_EQ(CountSeen(*f, 0, 40), 40);
  EXPECT_EQ(CountSeen(*f, 100, 120), 20);
}

// Standalone exact mode commits each batch with the generation after the last checkpoint. After a
// failed checkpoint that generation is also the one of the record it appended: state.db's
// committed length, not that record, decides, and the filter is rebuilt from the store.
TEST_F(SeenFilterCheckpointTest, ExactBatchAfterAFailedCheckpointIsNotHiddenByItsRecord) {
  {
    auto state = testing::SeenState::Open(Options(/*exact=*/true, /*checkpointed=*/false));
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    SeenFilter* f = (*state)->filter.get();
    InsertRange(*f, 0, 20);
    ASSERT_TRUE(f->Save().ok());  // 1: snapshot
    InsertRange(*f, 20, 40);      // bumps state.db to 2 (the snapshot is now stale)
    ASSERT_TRUE(f->Save().ok());  // 3: a snapshot again (the chain was broken)
    ASSERT_TRUE(f->Save().ok());  // 4: an empty record
    ASSERT_TRUE(EnableFailingCommits((*state)->db()).ok());
    // record 5 appended, not committed
    ASSERT_FALSE((*state)->Checkpoint(ViolateAForeignKey).ok());
    ASSERT_TRUE((*state)->db().Exec("PRAGMA foreign_keys=OFF").ok());
    InsertRange(*f, 40, 60);  // committed with generation 5
  }
  auto f = MustOpen(Options(true, false));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Stats().generation, 5u);
  bool rebuilt = false;
  for (const auto& n : f->notices()) rebuilt |= n.kind == SeenNotice::Kind::kRebuilt;
  EXPECT_TRUE(rebuilt);
  for (int i = 0; i < 60; ++i) {
    auto r = f->InsertIfNew(Url(i));
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(*r) << Url(i);
  }
}

// A compaction whose final rename fails (here bloom.snap is a directory) has committed its
// snapshot as bloom.snap.next: the next checkpoint must not append a log to a snapshot that is not
// in place, but write and rename a full snapshot again.
TEST_F(SeenFilterCheckpointTest, FailedSnapshotRenameIsRetriedByTheNextCheckpoint) {
  const fs::path snap = dir_.path() / "state" / "bloom.snap";
  {
    auto f = MustOpen(Options(/*exact=*/false));
    InsertRange(*f, 0, 20);
    fs::create_directories(snap / "in-the-way");
    Status failed = f->Checkpoint();
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.code(), StatusCode::kIoError) << failed.ToString();
    fs::remove_all(snap);
    InsertRange(*f, 20, 40);
    Status retried = f->Checkpoint();
    ASSERT_TRUE(retried.ok()) << retried.ToString();
    EXPECT_TRUE(fs::is_regular_file(snap));
  }
  auto f = MustOpen(Options(false));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Stats().generation, 2u);
  EXPECT_EQ(CountSeen(*f, 0, 40), 40);
}

TEST_F(SeenFilterCheckpointTest, DamagedCommittedLogIsCorruptionInBloomOnlyMode) {
  const fs::path log = dir_.path() / "state" / "bloom.delta";
  {
    auto f = MustOpen(Options(/*exact=*/false));
    InsertRange(*f, 0, 20);
    ASSERT_TRUE(f->Checkpoint().ok());
    InsertRange(*f, 20, 40);
    ASSERT_TRUE(f->Checkpoint().ok());
  }
  const std::string whole = ReadFile(log);
  std::string damaged = whole;
  damaged[damaged.size() - 20] ^= 0x10;
  for (const std::string& bytes : {whole.substr(0, whole.size() - 8), damaged}) {
    WriteFile(log, bytes);
    auto f = SeenFilter::Open(Options(false));
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kCorruption);
    EXPECT_NE(f.status().message().find(log.string()), std::string::npos) << f.status().ToString();
    EXPECT_EQ(ReadFile(log), bytes);
  }
}

// A damaged committed log is an error naming it, also in exact mode (as for a damaged snapshot);
// a requested rebuild refills the filter from the exact store and says why.
TEST_F(SeenFilterCheckpointTest, DamagedCommittedLogIsAnErrorUnlessARebuildIsRequested) {
  const fs::path log = dir_.path() / "state" / "bloom.delta";
  {
    auto f = MustOpen(Options(/*exact=*/true));
    InsertRange(*f, 0, 20);
    ASSERT_TRUE(f->Checkpoint().ok());
    InsertRange(*f, 20, 40);
    ASSERT_TRUE(f->Checkpoint().ok());
  }
  std::string damaged = ReadFile(log);
  damaged[damaged.size() - 20] ^= 0x10;
  WriteFile(log, damaged);
  auto refused = SeenFilter::Open(Options(true));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find(log.string()), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("--rebuild"), std::string::npos);
  EXPECT_EQ(ReadFile(log), damaged);
  SeenFilterOptions rebuild = Options(true);
  rebuild.rebuild_bloom = true;
  auto f = MustOpen(rebuild);
  ASSERT_NE(f, nullptr);
  ASSERT_FALSE(f->notices().empty());
  EXPECT_NE(f->notices()[0].text.find("rebuilt the Bloom filter from 40 keys"), std::string::npos)
      << f->notices()[0].text;
  EXPECT_EQ(CountSeen(*f, 0, 40), 40);
}

// The log carries the state's identity: a log copied from another state is refused, naming it
// and the other state's identity.
TEST_F(SeenFilterCheckpointTest, LogOfAnotherStateIsRefused) {
  const fs::path mine = dir_.path() / "state", theirs = dir_.path() / "other";
  std::string their_identity;
  for (const fs::path& state : {mine, theirs}) {
    auto f = MustOpen(Options(/*exact=*/false, /*checkpointed=*/true, state));
    ASSERT_NE(f, nullptr);
    InsertRange(*f, 0, 20);
    ASSERT_TRUE(f->Checkpoint().ok());
    InsertRange(*f, 20, 40);
    ASSERT_TRUE(f->Checkpoint().ok());
    their_identity = f->Stats().identity.ToHex();
  }
  const std::string foreign = ReadFile(theirs / "bloom.delta");
  WriteFile(mine / "bloom.delta", foreign);
  auto f = SeenFilter::Open(Options(false, true, mine));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kCorruption);
  EXPECT_NE(f.status().message().find(their_identity), std::string::npos) << f.status().ToString();
  EXPECT_NE(f.status().message().find((mine / "bloom.delta").string()), std::string::npos);
  EXPECT_EQ(ReadFile(mine / "bloom.delta"), foreign);
}

}  // namespace
}  // namespace urlsieve
