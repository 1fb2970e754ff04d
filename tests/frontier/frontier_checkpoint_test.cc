// Durability (Checkpoint/Restore into the crawl's state database) and the memory bound (spill).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "frontier/frontier.h"
#include "tests/frontier/frontier_db_test_base.h"

namespace urlsieve {
namespace {

class FrontierCheckpointTest : public FrontierDbTest {
 protected:
  // Checkpoints inside a transaction, as the crawler does.
  void CheckpointAndCommit(Frontier& f, SqliteDb& db) {
    ASSERT_TRUE(db.Begin().ok());
    ASSERT_TRUE(f.Checkpoint(db).ok());
    ASSERT_TRUE(db.Commit().ok());
  }
  // Hands out everything that is left, completing each lease.
  static std::vector<std::string> Drain(Frontier& f) {
    std::vector<std::string> urls;
    Lease lease;
    while (f.TryNext(&lease) == NextStatus::kLease) {
      urls.push_back(lease.url);
      f.Done(lease, FetchOutcome{200, {}, {}, {}});
    }
    return urls;
  }
  static std::string Url(int i) {
    return "http://h" + std::to_string(i % 7) + ".test/p" + std::to_string(i);
  }
};

TEST_F(FrontierCheckpointTest, PendingAndInFlightSurviveAReopen) {
  options_.max_depth = 5;
  std::set<std::string> expected;
  {
    std::unique_ptr<Frontier> f = Make();
    std::unique_ptr<SqliteDb> db = OpenDb();
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(f->Push(Url(i), i % 4));
    EXPECT_FALSE(f->Push("http://h1.test/too-deep", 6));
    std::vector<Lease> in_flight(10);
    for (Lease& lease : in_flight) ASSERT_EQ(f->TryNext(&lease), NextStatus::kLease);
    for (int i = 0; i < 5; ++i) f->Done(in_flight[i], FetchOutcome{200, {}, {}, {}});
    for (int i = 0; i < 100; ++i) expected.insert(Url(i));
    for (int i = 0; i < 5; ++i) expected.erase(in_flight[i].url);
    CheckpointAndCommit(*f, *db);
    EXPECT_EQ(Table(*db), expected);  // 90 pending + 5 in flight
  }  // "crash": the frontier is gone, the in-flight leases never finish
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Restore(*db).ok());
  EXPECT_EQ(f->Stats().pending, 95u);
  const std::vector<std::string> drained = Drain(*f);
  EXPECT_EQ(std::set<std::string>(drained.begin(), drained.end()), expected);
  EXPECT_EQ(drained.size(), expected.size());  // each once
  // New URLs get fresh ids after a restore, and the next checkpoint is incremental.
  ASSERT_TRUE(f->Push("http://new.test/", 0));
  CheckpointAndCommit(*f, *db);
  EXPECT_EQ(Table(*db), std::set<std::string>{"http://new.test/"});
}

// An abandoned lease (a crawl cluster's: Frontier::Abandon) leaves the pending set.
TEST_F(FrontierCheckpointTest, AnAbandonedLeaseLeavesThePendingSet) {
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Push("http://a.test/1", 0));
  ASSERT_TRUE(f->Push("http://b.test/2", 0));
  CheckpointAndCommit(*f, *db);
  Lease lease;
  ASSERT_EQ(f->TryNext(&lease), NextStatus::kLease);
  f->Abandon(lease);
  CheckpointAndCommit(*f, *db);
  const std::set<std::string> left = Table(*db);
  EXPECT_EQ(left.size(), 1u);
  EXPECT_EQ(left.count(lease.url), 0u);
}

// Invariant 2: Next() rejects robots-disallowed URLs outside the crawler's checkpoint gate. A
// checkpoint that drops such a URL from the pending set hands its rejection to the caller in the
// same step, so the rejection cannot be committed away before it is recorded.
TEST_F(FrontierCheckpointTest, RejectionsNotYetDrainedComeWithTheCheckpointThatDropsTheirUrls) {
  options_.obey_robots = true;
  options_.user_agent = "testbot";
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Push("http://a.test/private/x", 0));
  ASSERT_TRUE(f->Push("http://a.test/public", 0));
  CheckpointAndCommit(*f, *db);
  ASSERT_EQ(Table(*db).size(), 2u);
  Lease robots;
  ASSERT_EQ(f->TryNext(&robots), NextStatus::kLease);
  ASSERT_EQ(robots.kind, Lease::Kind::kRobots);
  f->Done(robots, FetchOutcome{200, {}, {}, "User-agent: testbot\nDisallow: /private\n"});
  Lease page;
  ASSERT_EQ(f->TryNext(&page), NextStatus::kLease);  // rejects /private/x on the way
  EXPECT_EQ(page.url, "http://a.test/public");

  std::vector<Rejection> undrained;
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(f->Checkpoint(*db, &undrained).ok());
  ASSERT_TRUE(db->Commit().ok());
  EXPECT_EQ(Table(*db), std::set<std::string>{"http://a.test/public"});
  ASSERT_EQ(undrained.size(), 1u);
  EXPECT_EQ(undrained[0].url, "http://a.test/private/x");
  EXPECT_EQ(undrained[0].reason, RejectReason::kRobotsDisallowed);
  EXPECT_TRUE(f->DrainRejections().empty());  // handed over once
}

TEST_F(FrontierCheckpointTest, IncrementalCheckpointsTrackEveryChange) {
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  std::set<std::string> pending;
  int next_url = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 30; ++i) {
      ASSERT_TRUE(f->Push(Url(next_url), 0));
      pending.insert(Url(next_url++));
    }
    Lease lease;
    for (int i = 0; i < 12 && f->TryNext(&lease) == NextStatus::kLease; ++i) {
      if (i % 3 == 0) continue;  // stays in flight: still pending
      f->Done(lease, FetchOutcome{200, {}, {}, {}});
      pending.erase(lease.url);
    }
    CheckpointAndCommit(*f, *db);
    EXPECT_EQ(Table(*db), pending) << "round " << round;
  }
}

TEST_F(FrontierCheckpointTest, RolledBackCheckpointIsWrittenAgain) {
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Push("http://a.test/1", 0));
  ASSERT_TRUE(f->Push("http://a.test/2", 0));
  CheckpointAndCommit(*f, *db);
  ASSERT_TRUE(f->Push("http://a.test/3", 0));
  Lease lease;
  ASSERT_EQ(f->TryNext(&lease), NextStatus::kLease);
  f->Done(lease, FetchOutcome{200, {}, {}, {}});
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(f->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Rollback().ok());  // e.g. the seen store failed in the same transaction
  ASSERT_TRUE(f->Push("http://a.test/4", 0));
  CheckpointAndCommit(*f, *db);
  EXPECT_EQ(Table(*db),
            (std::set<std::string>{"http://a.test/2", "http://a.test/3", "http://a.test/4"}));
}

TEST_F(FrontierCheckpointTest, AFreshCrawlReplacesAnOldPendingSet) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  {
    std::unique_ptr<Frontier> old = Make();
    ASSERT_TRUE(old->Push("http://old.test/", 0));
    CheckpointAndCommit(*old, *db);
  }
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://new.test/", 0));
  CheckpointAndCommit(*f, *db);
  EXPECT_EQ(Table(*db), std::set<std::string>{"http://new.test/"});
}

TEST_F(FrontierCheckpointTest, ARolledBackFirstCheckpointStillReplacesTheOldSet) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  {
    std::unique_ptr<Frontier> old = Make();
    ASSERT_TRUE(old->Push("http://old.test/", 0));
    CheckpointAndCommit(*old, *db);
  }
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://new.test/1", 0));
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(f->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Rollback().ok());
  ASSERT_TRUE(f->Push("http://new.test/2", 0));
  CheckpointAndCommit(*f, *db);
  EXPECT_EQ(Table(*db), (std::set<std::string>{"http://new.test/1", "http://new.test/2"}));
}

TEST_F(FrontierCheckpointTest, RestoreNeedsANewFrontierAndToleratesAnEmptyDatabase) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Restore(*db).ok());  // no tables yet: nothing pending
  EXPECT_EQ(f->Stats().pending, 0u);
  std::unique_ptr<Frontier> used = Make();
  used->Push("http://a.test/", 0);
  EXPECT_EQ(used->Restore(*db).code(), StatusCode::kFailedPrecondition);
  options_.checkpoints = false;
  std::unique_ptr<Frontier> off = Make();
  EXPECT_EQ(off->Checkpoint(*db).code(), StatusCode::kFailedPrecondition);
}

TEST_F(FrontierCheckpointTest, SpillKeepsRamBoundedAndQueuesFifo) {
  options_.max_pending_in_memory = 20;
  options_.spill_batch = 8;
  options_.spill_path = (dir_ / "spill.db").string();
  options_.per_key_concurrency = 1;
  std::unique_ptr<Frontier> f = Make();
  constexpr int kUrls = 2000;
  for (int i = 0; i < kUrls; ++i) ASSERT_TRUE(f->Push(Url(i), 0));
  FrontierStats stats = f->Stats();
  EXPECT_EQ(stats.pending, static_cast<uint64_t>(kUrls));
  EXPECT_LE(stats.pending_in_memory, 20u);
  EXPECT_GT(stats.spill_bytes, 0);

  std::map<std::string, std::vector<int>> per_host;
  size_t max_in_memory = 0;
  Lease lease;
  int handed = 0;
  while (f->TryNext(&lease) == NextStatus::kLease) {
    ++handed;
    const std::string host = lease.url.substr(0, lease.url.find('/', 8));
    per_host[host].push_back(std::stoi(lease.url.substr(lease.url.rfind('p') + 1)));
    f->Done(lease, FetchOutcome{200, {}, {}, {}});
    if (handed % 50 == 0) max_in_memory = std::max(max_in_memory, f->Stats().pending_in_memory);
    if (handed % 300 == 0) {
      for (int j = 0; j < 10; ++j) ASSERT_TRUE(f->Push(Url(kUrls + handed + j), 0));
    }
  }
  EXPECT_EQ(handed, kUrls + 60);
  // Soft bound: the budget plus one page-in batch per key.
  EXPECT_LE(max_in_memory, 20u + 7 * 8);
  for (auto& [host, ids] : per_host) {
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end())) << host;  // FIFO through the disk
  }
  EXPECT_EQ(f->Stats().pending, 0u);
}

TEST_F(FrontierCheckpointTest, RestoreIntoASpillingFrontier) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  {
    std::unique_ptr<Frontier> f = Make();
    for (int i = 0; i < 500; ++i) ASSERT_TRUE(f->Push(Url(i), 0));
    CheckpointAndCommit(*f, *db);
  }
  options_.max_pending_in_memory = 50;  // spill_path "": an anonymous temporary file
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Restore(*db).ok());
  EXPECT_EQ(f->Stats().pending, 500u);
  EXPECT_LE(f->Stats().pending_in_memory, 50u);
  const std::vector<std::string> drained = Drain(*f);
  EXPECT_EQ(std::set<std::string>(drained.begin(), drained.end()).size(), 500u);
  EXPECT_EQ(drained.size(), 500u);
}

TEST_F(FrontierCheckpointTest, BudgetRejectionsReachSpilledUrls) {
  options_.max_pending_in_memory = 5;
  options_.max_pages_per_key = 3;
  std::unique_ptr<Frontier> f = Make();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(f->Push("http://one.test/" + std::to_string(i), 0));
  EXPECT_EQ(Drain(*f).size(), 3u);
  EXPECT_EQ(f->DrainRejections().size(), 47u);
  EXPECT_EQ(f->Stats().pending, 0u);
}

}  // namespace
}  // namespace urlsieve
