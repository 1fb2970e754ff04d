// Parents: every pending URL carries the page that linked to it, through RAM queues, the spill
// file, retries and Checkpoint/Restore, and the interned parents are freed with their children.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "base/sqlite_db.h"
#include "frontier/frontier.h"
#include "frontier/parent_table.h"
#include "tests/frontier/frontier_db_test_base.h"

namespace urlsieve {
namespace {

class FrontierParentTest : public FrontierDbTest {
 protected:
  // Hands out everything that is due, completing each lease; url → parent.
  static std::map<std::string, std::string> Drain(Frontier& f) {
    std::map<std::string, std::string> parents;
    Lease lease;
    while (f.TryNext(&lease) == NextStatus::kLease) {
      EXPECT_TRUE(parents.emplace(lease.url, lease.parent).second) << lease.url;
      f.Done(lease, FetchOutcome{200, {}, {}, {}});
    }
    return parents;
  }
  // Child i of the test crawls: ten children per parent, over seven hosts.
  static std::string Child(int i) {
    return "http://h" + std::to_string(i % 7) + ".test/c" + std::to_string(i);
  }
  static std::string ParentOf(int i) { return "http://p.test/page" + std::to_string(i / 10); }
};

TEST(ParentTableTest, RefCountsFreeAndReuseIds) {
  ParentTable table;
  EXPECT_EQ(table.Ref(""), 0u);
  EXPECT_EQ(table.Get(0), "");
  const size_t empty_bytes = table.memory_bytes();
  const std::string long_url = "http://example.test/" + std::string(100, 'x');
  const uint32_t a = table.Ref(long_url);
  EXPECT_EQ(table.Ref(long_url), a);
  const uint32_t b = table.Ref("http://b.test/");
  EXPECT_EQ(table.Ref(long_url), a);  // not the last one interned: found through the map
  EXPECT_NE(a, b);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_GT(table.memory_bytes(), empty_bytes + 100);
  table.Unref(a);
  table.Unref(a);
  EXPECT_EQ(table.Get(a), long_url);  // one reference left
  table.Unref(a);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.Ref("http://c.test/"), a);  // the freed id is reused
  EXPECT_EQ(table.Get(a), "http://c.test/");
  EXPECT_EQ(table.Get(b), "http://b.test/");
  table.Unref(a);
  table.Unref(b);
  EXPECT_EQ(table.size(), 0u);
}

TEST_F(FrontierParentTest, LeaseCarriesTheParentAndSeedsHaveNone) {
  options_.obey_robots = true;
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://a.test/", 0));
  ASSERT_TRUE(f->Push("http://a.test/x", 1, "http://a.test/"));
  ASSERT_TRUE(f->Push("http://b.test/y", 1, "http://a.test/"));
  EXPECT_EQ(f->Stats().parents, 1u);  // two children, one interned copy

  std::map<std::string, std::string> parents;
  int robots = 0;
  Lease lease;
  while (f->TryNext(&lease) == NextStatus::kLease) {
    if (lease.kind == Lease::Kind::kRobots) {
      ++robots;
      EXPECT_EQ(lease.parent, "") << lease.url;
      f->Done(lease, FetchOutcome{404, {}, {}, {}});
    } else {
      parents.emplace(lease.url, lease.parent);
      f->Done(lease, FetchOutcome{200, {}, {}, {}});
    }
  }
  EXPECT_EQ(robots, 2);
  EXPECT_EQ(parents, (std::map<std::string, std::string>{{"http://a.test/", ""},
                                                         {"http://a.test/x", "http://a.test/"},
                                                         {"http://b.test/y", "http://a.test/"}}));
  EXPECT_EQ(f->Stats().parents, 0u);
}

TEST_F(FrontierParentTest, InternedParentsAreFreedWithTheirChildren) {
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://seed.test/", 0));
  const uint64_t baseline = f->Stats().memory_bytes;
  const std::string long_parent = "http://p.test/" + std::string(1000, 'p');
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(f->Push(Child(i), 1, long_parent + ParentOf(i)));
  FrontierStats full = f->Stats();
  EXPECT_EQ(full.parents, 10u);
  // Ten copies of a 1 KB parent, not a hundred.
  EXPECT_GT(full.memory_bytes, baseline + 10 * 1000);
  EXPECT_LT(full.memory_bytes, baseline + 50 * 1000);
  // Rejected children never take a reference, and those rejected later drop theirs.
  options_.max_depth = 1;
  f = Make();
  EXPECT_FALSE(f->Push("http://a.test/deep", 2, "http://p.test/"));
  EXPECT_EQ(f->Stats().parents, 0u);

  std::map<std::string, std::string> parents;
  {
    std::unique_ptr<Frontier> g = Make();
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(g->Push(Child(i), 1, ParentOf(i)));
    parents = Drain(*g);
    EXPECT_EQ(g->Stats().parents, 0u);
    ASSERT_TRUE(g->Push("http://a.test/again", 1, "http://p.test/new"));
    EXPECT_EQ(g->Stats().parents, 1u);
  }
  ASSERT_EQ(parents.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(parents[Child(i)], ParentOf(i)) << i;

  options_.max_depth.reset();
  options_.max_pages_per_key = 1;
  f = Make();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(f->Push(Child(i * 7), 1, "http://p.test/"));
  EXPECT_EQ(Drain(*f).size(), 1u);
  EXPECT_EQ(f->DrainRejections().size(), 4u);
  EXPECT_EQ(f->Stats().parents, 0u);
}

TEST_F(FrontierParentTest, ARetryKeepsItsParent) {
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://a.test/x", 1, "http://p.test/"));
  Lease lease;
  ASSERT_EQ(f->TryNext(&lease), NextStatus::kLease);
  EXPECT_EQ(f->Stats().parents, 0u);  // handed out: the lease holds the string
  f->Done(lease, FetchOutcome{503, {}, {}, {}});
  EXPECT_EQ(f->Stats().retried, 1u);
  EXPECT_EQ(f->Stats().parents, 1u);
  clock_.Advance(std::chrono::hours(1));
  Lease retry;
  ASSERT_EQ(f->TryNext(&retry), NextStatus::kLease);
  EXPECT_EQ(retry.url, "http://a.test/x");
  EXPECT_EQ(retry.retries, 1u);
  EXPECT_EQ(retry.parent, "http://p.test/");
  f->Done(retry, FetchOutcome{200, {}, {}, {}});
  EXPECT_EQ(f->Stats().parents, 0u);
}

TEST_F(FrontierParentTest, ParentsSurviveTheSpillFile) {
  options_.max_pending_in_memory = 5;
  options_.spill_batch = 4;
  std::unique_ptr<Frontier> f = Make();
  constexpr int kUrls = 300;
  for (int i = 0; i < kUrls; ++i) {
    ASSERT_TRUE(f->Push(Child(i), 1, i % 3 == 0 ? std::string() : ParentOf(i)));
  }
  EXPECT_LE(f->Stats().pending_in_memory, 5u + 7 * 4);  // budget + a page-in batch per key
  EXPECT_GT(f->Stats().spill_bytes, 0);
  std::map<std::string, std::string> parents = Drain(*f);
  ASSERT_EQ(parents.size(), static_cast<size_t>(kUrls));
  for (int i = 0; i < kUrls; ++i) {
    EXPECT_EQ(parents[Child(i)], i % 3 == 0 ? "" : ParentOf(i)) << i;
  }
  EXPECT_EQ(f->Stats().parents, 0u);
}

TEST_F(FrontierParentTest, ParentsSurviveCheckpointAndRestore) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  {
    std::unique_ptr<Frontier> f = Make();
    ASSERT_TRUE(f->Push("http://seed.test/", 0));
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(f->Push(Child(i), 1, ParentOf(i)));
    ASSERT_TRUE(db->Begin().ok());
    ASSERT_TRUE(f->Checkpoint(*db).ok());
    ASSERT_TRUE(db->Commit().ok());
  }
  Result<SqliteStatement> nulls =
      db->Prepare("SELECT url FROM frontier_pending WHERE parent IS NULL");
  ASSERT_TRUE(nulls.ok());
  ASSERT_TRUE(*nulls->Step());
  EXPECT_EQ(nulls->ColumnText(0), "http://seed.test/");
  EXPECT_FALSE(*nulls->Step());

  options_.max_pending_in_memory = 10;  // and through the spill on the way back
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Restore(*db).ok());
  EXPECT_EQ(f->Stats().parents, 5u);
  std::map<std::string, std::string> parents = Drain(*f);
  ASSERT_EQ(parents.size(), 51u);
  EXPECT_EQ(parents["http://seed.test/"], "");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(parents[Child(i)], ParentOf(i)) << i;
}

TEST_F(FrontierParentTest, ADatabaseWithoutTheParentColumnIsRestoredAndUpgraded) {
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(db->Exec("CREATE TABLE frontier_pending(id INTEGER PRIMARY KEY, url TEXT NOT NULL,"
                       " depth INTEGER NOT NULL);"
                       "CREATE TABLE frontier_meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
                       "INSERT INTO frontier_pending VALUES(3, 'http://old.test/a', 2);"
                       "INSERT INTO frontier_meta VALUES('checkpoint_seq', 1), ('next_id', 4);")
                  .ok());
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Restore(*db).ok());
  ASSERT_TRUE(f->Push("http://new.test/b", 3, "http://old.test/a"));
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(f->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Commit().ok());
  Result<SqliteStatement> rows =
      db->Prepare("SELECT url, ifnull(parent, '-') FROM frontier_pending ORDER BY id");
  ASSERT_TRUE(rows.ok());
  ASSERT_TRUE(*rows->Step());
  EXPECT_EQ(rows->ColumnText(0), "http://old.test/a");
  EXPECT_EQ(rows->ColumnText(1), "-");
  ASSERT_TRUE(*rows->Step());
  EXPECT_EQ(rows->ColumnText(0), "http://new.test/b");
  EXPECT_EQ(rows->ColumnText(1), "http://old.test/a");
  EXPECT_FALSE(*rows->Step());

  std::map<std::string, std::string> parents = Drain(*f);
  EXPECT_EQ(parents, (std::map<std::string, std::string>{
                         {"http://old.test/a", ""}, {"http://new.test/b", "http://old.test/a"}}));
}

}  // namespace
}  // namespace urlsieve
