// CrawlState: the crawl's state directory, its seen set and its checkpoint protocol, without a
// crawl: the parts' rows and the seen set commit together, a crash returns both to the last
// checkpoint, the checkpoint holds the gate exclusively, and the directory is locked.
#include "crawler/state/crawl_state.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.h"
#include "crawler/state/local_seen_set_source.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

class CrawlStateTest : public ::testing::Test {
 protected:
  LocalSeenSetSource local_;
  CrawlStateOptions Options(bool exact) const {
    CrawlStateOptions o;
    o.dir = (dir_.path() / "state").string();
    o.capacity = 10000;
    o.fp_rate = 1e-3;
    o.exact = exact;
    return o;
  }
  static std::string Url(int i) {
    return "http://h" + std::to_string(i % 7) + ".example/" + std::to_string(i);
  }
  static int Insert(CrawlState& state, int from, int to) {
    int fresh = 0;
    for (int i = from; i < to; ++i) {
      auto r = state.seen().InsertIfNew(Url(i));
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      fresh += r.ok() && *r ? 1 : 0;
    }
    return fresh;
  }
  static int Contained(CrawlState& state, int from, int to) {
    int n = 0;
    for (int i = from; i < to; ++i) {
      auto r = state.seen().Contains(Url(i));
      n += r.ok() && *r ? 1 : 0;
    }
    return n;
  }
  static Status WriteRow(SqliteDb& db, const std::string& value) {
    return db.Exec("CREATE TABLE IF NOT EXISTS part(v TEXT); INSERT INTO part VALUES('" + value +
                   "')");
  }
  static std::string ReadRows(CrawlState& state) {
    std::string rows;
    Status status = state.Restore([&](SqliteDb& db) -> Status {
      auto select = db.Prepare("SELECT group_concat(v) FROM part");
      if (!select.ok()) return select.status();
      auto row = select->Step();
      if (!row.ok()) return row.status();
      rows = std::string(select->ColumnText(0));
      return Status::Ok();
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return rows;
  }

  testing::ScratchDir dir_{"urlsieve_crawl_state"};
};

TEST_F(CrawlStateTest, PartsAndSeenSetCommitTogetherAndACrashReturnsBothToTheCheckpoint) {
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact);
    std::filesystem::remove_all(dir_.path() / "state");
    {
      auto state = CrawlState::Open(Options(exact), local_);
      ASSERT_TRUE(state.ok()) << state.status().ToString();
      EXPECT_EQ(Insert(**state, 0, 30), 30);
      ASSERT_TRUE((*state)->Checkpoint([](SqliteDb& db) { return WriteRow(db, "one"); }).ok());
      EXPECT_EQ((*state)->generation(), 1u);
      EXPECT_EQ(Insert(**state, 30, 50), 20);
      ASSERT_TRUE((*state)->Checkpoint([](SqliteDb& db) { return WriteRow(db, "two"); }).ok());
      EXPECT_EQ((*state)->generation(), 2u);
      EXPECT_EQ(Insert(**state, 50, 80), 30);
      // Rows written outside a checkpoint, then the crash (no checkpoint).
      ASSERT_TRUE((*state)->Restore([](SqliteDb& db) { return WriteRow(db, "lost"); }).ok());
    }
    auto state = CrawlState::Open(Options(exact), local_);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_TRUE((*state)->notices().empty()) << (*state)->notices()[0].text;
    EXPECT_EQ((*state)->generation(), 2u);
    EXPECT_EQ(ReadRows(**state), "one,two");
    EXPECT_EQ(Contained(**state, 0, 50), 50);
    EXPECT_EQ(Contained(**state, 50, 80), 0);
    EXPECT_EQ((*state)->seen_set().Stats().exact, exact);
  }
}

// A part that fails rolls nothing forward: the generation stays, and the next checkpoint (whose
// transaction still holds the seen set's rows) commits everything.
TEST_F(CrawlStateTest, AFailedPartCommitsNothingAndTheNextCheckpointCommitsAll) {
  {
    auto state = CrawlState::Open(Options(/*exact=*/true), local_);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ(Insert(**state, 0, 10), 10);
    Status failed =
        (*state)->Checkpoint([](SqliteDb&) { return Status::IoError("the part failed"); });
    EXPECT_EQ(failed.code(), StatusCode::kIoError);
    EXPECT_EQ((*state)->generation(), 0u);
    ASSERT_TRUE((*state)->Checkpoint([](SqliteDb& db) { return WriteRow(db, "after"); }).ok());
    EXPECT_EQ((*state)->generation(), 1u);
  }
  auto state = CrawlState::Open(Options(true), local_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ(ReadRows(**state), "after");
  EXPECT_EQ(Contained(**state, 0, 10), 10);
}

TEST_F(CrawlStateTest, ACheckpointHoldsTheGateExclusively) {
  auto state = CrawlState::Open(Options(false), local_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  bool shared_while_checkpointing = true;
  ASSERT_TRUE((*state)
                  ->Checkpoint([&](SqliteDb&) {
                    std::thread fetcher([&] {
                      shared_while_checkpointing = (*state)->gate().try_lock_shared();
                      if (shared_while_checkpointing) (*state)->gate().unlock_shared();
                    });
                    fetcher.join();
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_FALSE(shared_while_checkpointing);
  // Outside a checkpoint a fetcher gets it.
  ASSERT_TRUE((*state)->gate().try_lock_shared());
  (*state)->gate().unlock_shared();
}

TEST_F(CrawlStateTest, TheSeenSetIsCheckpointedByTheCrawlOnly) {
  auto state = CrawlState::Open(Options(false), local_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_EQ((*state)->seen().Save().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*state)->generation(), 0u);
}

TEST_F(CrawlStateTest, ASecondOpenOfTheStateIsRefused) {
  auto first = CrawlState::Open(Options(false), local_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = CrawlState::Open(Options(false), local_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("in use by process"), std::string::npos)
      << second.status().ToString();
}

}  // namespace
}  // namespace urlsieve
