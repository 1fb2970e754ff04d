// PendingStore: the frontier's pending set in a real SQLite state database — the delta of each
// checkpoint written inside the caller's transaction, written again after a rollback, read back in
// id order. (Databases written before the parent column existed: frontier_parent_test.cc.)
#include "frontier/pending_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/sqlite_db.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using Row = std::tuple<uint64_t, std::string, uint32_t, std::string>;

class PendingStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteDb> OpenDb(bool read_only = false) {
    SqliteDb::Options options;
    options.read_only = read_only;
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path_, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  static PendingDelta Delta(std::vector<PendingRow> inserts, std::vector<uint64_t> deletes,
                            uint64_t next_id) {
    return PendingDelta{std::move(inserts), std::move(deletes), next_id};
  }
  // Checkpoints inside a transaction, as the frontier's caller does.
  static Status CheckpointAndCommit(PendingStore& store, SqliteDb& db, PendingDelta delta) {
    URLSIEVE_RETURN_IF_ERROR(db.Begin());
    URLSIEVE_RETURN_IF_ERROR(store.Checkpoint(db, [&] { return std::move(delta); }));
    return db.Commit();
  }
  static std::vector<Row> Load(SqliteDb& db, uint64_t* next_id = nullptr) {
    PendingStore store;
    std::vector<Row> rows;
    Result<uint64_t> loaded = store.Load(db, [&](uint64_t id, std::string_view url, uint32_t depth,
                                                 std::string_view parent, PendingKind) {
      rows.emplace_back(id, std::string(url), depth, std::string(parent));
    });
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_TRUE(store.used());
    if (next_id != nullptr) *next_id = loaded.ok() ? *loaded : 0;
    return rows;
  }

  testing::ScratchDir scratch_{"pending_store"};
  const std::string path_ = (scratch_.path() / "state.db").string();
};

TEST_F(PendingStoreTest, CheckpointsWriteDeltasThatLoadReadsBackInIdOrder) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  PendingStore store;
  EXPECT_FALSE(store.used());
  ASSERT_TRUE(CheckpointAndCommit(store, *db,
                                  Delta({{3, "http://a.test/3", 1, "http://a.test/"},
                                         {1, "http://a.test/", 0, ""},
                                         {2, "http://b.test/2", 1, "http://a.test/"}},
                                        {}, 4))
                  .ok());
  EXPECT_TRUE(store.used());
  ASSERT_TRUE(CheckpointAndCommit(store, *db,
                                  Delta({{4, "http://c.test/4", 2, "http://a.test/3"}}, {1, 3}, 5))
                  .ok());
  uint64_t next_id = 0;
  EXPECT_EQ(Load(*db, &next_id), (std::vector<Row>{{2, "http://b.test/2", 1, "http://a.test/"},
                                                   {4, "http://c.test/4", 2, "http://a.test/3"}}));
  EXPECT_EQ(next_id, 5u);
}

TEST_F(PendingStoreTest, ADeltaRolledBackIsWrittenByTheNextCheckpoint) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  PendingStore store;
  ASSERT_TRUE(CheckpointAndCommit(store, *db, Delta({{1, "http://a.test/", 0, ""}}, {}, 2)).ok());
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(store
                  .Checkpoint(*db,
                              [] {
                                return Delta({{2, "http://a.test/2", 1, "http://a.test/"}}, {1}, 3);
                              })
                  .ok());
  ASSERT_TRUE(db->Rollback().ok());  // another part of the checkpoint failed
  EXPECT_EQ(Load(*db), (std::vector<Row>{{1, "http://a.test/", 0, ""}}));
  ASSERT_TRUE(CheckpointAndCommit(store, *db, Delta({}, {}, 3)).ok());
  EXPECT_EQ(Load(*db), (std::vector<Row>{{2, "http://a.test/2", 1, "http://a.test/"}}));
}

TEST_F(PendingStoreTest, AFailureBeforeTheDeltaLeavesItWithTheCaller) {
  { OpenDb(); }  // an empty database
  std::unique_ptr<SqliteDb> db = OpenDb(/*read_only=*/true);
  PendingStore store;
  bool taken = false;
  const Status status = store.Checkpoint(*db, [&] {
    taken = true;
    return Delta({}, {}, 1);
  });
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(path_), std::string::npos) << status.ToString();
  EXPECT_FALSE(taken);
  EXPECT_FALSE(store.used());
}

TEST_F(PendingStoreTest, AFreshStoreReplacesThePendingSetItFinds) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  {
    PendingStore earlier_crawl;
    ASSERT_TRUE(
        CheckpointAndCommit(earlier_crawl, *db, Delta({{1, "http://old.test/", 0, ""}}, {}, 2))
            .ok());
  }
  PendingStore fresh;
  ASSERT_TRUE(CheckpointAndCommit(fresh, *db, Delta({{1, "http://new.test/", 0, ""}}, {}, 2)).ok());
  EXPECT_EQ(Load(*db), (std::vector<Row>{{1, "http://new.test/", 0, ""}}));

  // A store that loaded the set continues it.
  PendingStore resumed;
  ASSERT_TRUE(
      resumed.Load(*db, [](uint64_t, std::string_view, uint32_t, std::string_view, PendingKind) {})
          .ok());
  ASSERT_TRUE(CheckpointAndCommit(resumed, *db,
                                  Delta({{2, "http://new.test/2", 1, "http://new.test/"}}, {}, 3))
                  .ok());
  EXPECT_EQ(Load(*db).size(), 2u);
}

TEST_F(PendingStoreTest, ADatabaseWithoutTheTablesIsAnEmptyPendingSet) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  uint64_t next_id = 7;
  EXPECT_TRUE(Load(*db, &next_id).empty());
  EXPECT_EQ(next_id, 0u);
}

TEST_F(PendingStoreTest, ADepthOutOfRangeIsCorruption) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  PendingStore writer;
  ASSERT_TRUE(CheckpointAndCommit(writer, *db, Delta({{1, "http://a.test/", 0, ""}}, {}, 2)).ok());
  ASSERT_TRUE(db->Exec("UPDATE frontier_pending SET depth=-1").ok());
  PendingStore store;
  Result<uint64_t> loaded =
      store.Load(*db, [](uint64_t, std::string_view, uint32_t, std::string_view, PendingKind) {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(loaded.status().message(), "frontier_pending: bad depth");
  EXPECT_FALSE(store.used());
}

TEST_F(PendingStoreTest, AKindIsKeptAndOneOutOfRangeIsCorruption) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  PendingStore writer;
  PendingDelta delta =
      Delta({{1, "http://a.test/", 0, ""}, {2, "http://a.test/s.xml", 1, ""}}, {}, 3);
  delta.inserts[1].kind = PendingKind::kSitemap;
  ASSERT_TRUE(CheckpointAndCommit(writer, *db, std::move(delta)).ok());
  std::vector<PendingKind> kinds;
  PendingStore reader;
  ASSERT_TRUE(reader
                  .Load(*db, [&](uint64_t, std::string_view, uint32_t, std::string_view,
                                 PendingKind kind) { kinds.push_back(kind); })
                  .ok());
  EXPECT_EQ(kinds, (std::vector<PendingKind>{PendingKind::kPage, PendingKind::kSitemap}));
  ASSERT_TRUE(db->Exec("UPDATE frontier_pending SET kind=7 WHERE id=2").ok());
  PendingStore store;
  Result<uint64_t> loaded =
      store.Load(*db, [](uint64_t, std::string_view, uint32_t, std::string_view, PendingKind) {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(loaded.status().message(), "frontier_pending: bad kind 7");
}

}  // namespace
}  // namespace urlsieve
