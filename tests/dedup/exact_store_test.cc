#include "dedup/exact_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

class ExactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = SqliteDb::Open((dir_ / "state.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    auto store = ExactStore::Open(db_.get());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    db_.reset();
  }

  std::vector<uint8_t> Insert(const std::vector<ExactStore::Entry>& entries) {
    std::vector<uint8_t> inserted;
    EXPECT_TRUE(db_->Begin().ok());
    Status status = store_->InsertIfAbsent(entries, &inserted);
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(db_->Commit().ok());
    return inserted;
  }

  testing::ScratchDir scratch_{"urlsieve_exact"};
  const std::filesystem::path& dir_ = scratch_.path();
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<ExactStore> store_;
};

TEST_F(ExactStoreTest, InsertsOnlyAbsentKeys) {
  EXPECT_EQ(Insert({{1, "http://a/"}, {2, "http://b/"}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(Insert({{2, "http://b/"}, {3, "http://c/"}, {1, "http://a/"}}),
            (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(store_->rows(), 3u);
}

TEST_F(ExactStoreTest, SameHashDifferentUrlsAreDistinct) {
  // A 64-bit hash collision must not make a new URL look seen: the URL itself is compared.
  EXPECT_EQ(Insert({{42, "http://a/x"}, {42, "http://a/y"}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(*store_->Contains(42, "http://a/x"));
  EXPECT_TRUE(*store_->Contains(42, "http://a/y"));
  EXPECT_FALSE(*store_->Contains(42, "http://a/z"));
}

TEST_F(ExactStoreTest, FirstOccurrenceInBatchWins) {
  EXPECT_EQ(Insert({{9, "http://z/"}, {5, "http://q/"}, {9, "http://z/"}, {5, "http://q/"}}),
            (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST_F(ExactStoreTest, AbsenceHintSkipsOnlyTheFirstProbeOfAHash) {
  // A later occurrence flagged "not stored" must still find the earlier one of the same batch.
  EXPECT_EQ(Insert({{5, "http://q/", true}, {5, "http://q/", false}, {6, "http://r/", false}}),
            (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(store_->rows(), 2u);
}

TEST_F(ExactStoreTest, HandlesHashesWithTheHighBitSet) {
  const uint64_t big = 0xFFFF'FFFF'FFFF'FFF0ull;
  EXPECT_EQ(Insert({{big, "http://a/"}, {1, "http://b/"}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(*store_->Contains(big, "http://a/"));
  EXPECT_EQ(Insert({{big, "http://a/"}}), (std::vector<uint8_t>{0}));
}

TEST_F(ExactStoreTest, OpenVisitsEveryRow) {
  Insert({{3, "http://c/"}, {1, "http://a/"}, {2, "http://b/"}});
  store_.reset();
  std::set<std::string> keys;
  auto store = ExactStore::Open(db_.get(), [&](std::string_view k) { keys.emplace(k); });
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(keys, (std::set<std::string>{"http://a/", "http://b/", "http://c/"}));
  EXPECT_EQ((*store)->rows(), 3u);
}

TEST_F(ExactStoreTest, IndexGrowsAndKeepsEveryKey) {
  // Past the initial 1024 slots several times; hashes share their high bits (the index's tag and
  // home slot) in groups of four, so probing runs past tag matches that are other keys.
  std::vector<std::string> keys;
  std::vector<ExactStore::Entry> entries;
  for (uint64_t i = 0; i < 5000; ++i) keys.push_back("http://k/" + std::to_string(i));
  for (uint64_t i = 0; i < 5000; ++i) entries.push_back({((i / 4) << 32) | i, keys[i]});
  std::vector<uint8_t> all_new(5000, 1);
  EXPECT_EQ(Insert(entries), all_new);
  for (uint64_t i = 0; i < 5000; ++i) {
    EXPECT_TRUE(*store_->Contains(entries[i].hash, keys[i])) << i;
    EXPECT_FALSE(*store_->Contains(entries[i].hash, "http://other/")) << i;
  }
  EXPECT_EQ(Insert(entries), std::vector<uint8_t>(5000, 0));
}

TEST_F(ExactStoreTest, RolledBackInsertsAreForgottenEvenWhenTheirRowIdIsReused) {
  std::vector<uint8_t> inserted;
  ASSERT_TRUE(db_->Begin().ok());
  ASSERT_TRUE(
      store_->InsertIfAbsent(std::vector<ExactStore::Entry>{{7, "http://r/"}}, &inserted).ok());
  // Inside the transaction the row is visible to the same connection: lookups stay exact.
  EXPECT_TRUE(*store_->Contains(7, "http://r/"));
  ASSERT_TRUE(db_->Rollback().ok());
  EXPECT_FALSE(*store_->Contains(7, "http://r/"));
  // The next row takes the rolled-back row's id; the index entry left behind must not match it.
  EXPECT_EQ(Insert({{8, "http://s/"}, {7, "http://r/"}}), (std::vector<uint8_t>{1, 1}));
  EXPECT_TRUE(*store_->Contains(7, "http://r/"));
}

TEST_F(ExactStoreTest, PersistsAcrossReopen) {
  Insert({{1, "http://a/"}});
  store_.reset();
  db_.reset();
  auto db = SqliteDb::Open((dir_ / "state.db").string());
  ASSERT_TRUE(db.ok());
  db_ = std::move(*db);
  auto store = ExactStore::Open(db_.get());
  ASSERT_TRUE(store.ok());
  store_ = std::move(*store);
  EXPECT_TRUE(*store_->Contains(1, "http://a/"));
}

}  // namespace
}  // namespace urlsieve
