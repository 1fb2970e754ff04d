// Sitemap leases (Frontier::PushSitemap; docs/features/sitemaps.md, "Sitemaps"): their kind
// survives RAM, the spill file, retries and checkpoints; max_depth and the page budgets do not
// apply; robots.txt does.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "frontier/frontier.h"
#include "tests/frontier/frontier_db_test_base.h"

namespace urlsieve {
namespace {

class FrontierSitemapTest : public FrontierDbTest {
 protected:
  void CheckpointAndCommit(Frontier& f, SqliteDb& db) {
    ASSERT_TRUE(db.Begin().ok());
    ASSERT_TRUE(f.Checkpoint(db).ok());
    ASSERT_TRUE(db.Commit().ok());
  }
  // url -> kind of every lease handed out until the frontier is idle (each completed with 200).
  static std::map<std::string, Lease::Kind> Drain(Frontier& f) {
    std::map<std::string, Lease::Kind> kinds;
    Lease lease;
    while (f.TryNext(&lease) == NextStatus::kLease) {
      EXPECT_TRUE(kinds.emplace(lease.url, lease.kind).second) << lease.url;
      f.Done(lease, FetchOutcome{200, {}, {}, {}});
    }
    return kinds;
  }
};

TEST_F(FrontierSitemapTest, TheKindSurvivesSpillAndCheckpoint) {
  options_.max_pending_in_memory = 4;  // most URLs spill
  options_.spill_path = (dir_ / "spill.db").string();
  std::map<std::string, Lease::Kind> expected;
  {
    std::unique_ptr<Frontier> f = Make();
    std::unique_ptr<SqliteDb> db = OpenDb();
    for (int i = 0; i < 30; ++i) {
      const std::string url = "http://a.test/" + std::to_string(i);
      if (i % 3 == 0) {
        ASSERT_TRUE(f->PushSitemap(url, static_cast<uint32_t>(i % 5), "http://a.test/robots.txt"));
        expected[url] = Lease::Kind::kSitemap;
      } else {
        ASSERT_TRUE(f->Push(url, 1));
        expected[url] = Lease::Kind::kPage;
      }
    }
    CheckpointAndCommit(*f, *db);
  }  // a crash: the pending set is in state.db
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Restore(*db).ok());
  EXPECT_EQ(Drain(*f), expected);
  EXPECT_EQ(f->Stats().sitemaps_handed_out, 10u);
  EXPECT_EQ(f->Stats().handed_out, 20u);
}

TEST_F(FrontierSitemapTest, AnOlderPendingTableWithoutKindIsRead) {
  {
    std::unique_ptr<SqliteDb> db = OpenDb();
    ASSERT_TRUE(
        db->Exec("CREATE TABLE frontier_pending(id INTEGER PRIMARY KEY, url TEXT NOT NULL,"
                 " depth INTEGER NOT NULL, parent TEXT);"
                 "CREATE TABLE frontier_meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
                 "INSERT INTO frontier_pending VALUES(1, 'http://a.test/old', 0, NULL);"
                 "INSERT INTO frontier_meta VALUES('next_id', 2)")
            .ok());
  }
  std::unique_ptr<Frontier> f = Make();
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(f->Restore(*db).ok());
  ASSERT_TRUE(f->PushSitemap("http://a.test/s.xml", 0));
  CheckpointAndCommit(*f, *db);  // migrates: adds the kind column
  std::unique_ptr<Frontier> again = Make();
  ASSERT_TRUE(again->Restore(*db).ok());
  EXPECT_EQ(Drain(*again),
            (std::map<std::string, Lease::Kind>{{"http://a.test/old", Lease::Kind::kPage},
                                                {"http://a.test/s.xml", Lease::Kind::kSitemap}}));
}

TEST_F(FrontierSitemapTest, DepthAndPageBudgetsDoNotCountSitemaps) {
  options_.max_depth = 0;
  options_.max_total_pages = 1;
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->Push("http://a.test/page", 0));
  ASSERT_TRUE(f->PushSitemap("http://a.test/nested.xml", 3));  // nesting 3 > max_depth
  ASSERT_TRUE(f->PushSitemap("http://b.test/s.xml", 0));
  const std::map<std::string, Lease::Kind> drained = Drain(*f);
  EXPECT_EQ(drained.size(), 3u);
  EXPECT_TRUE(f->DrainRejections().empty());
}

TEST_F(FrontierSitemapTest, ARetryIsASitemapAgainAndRobotsApply) {
  options_.obey_robots = true;
  options_.user_agent = "testbot";
  options_.backoff_initial = Clock::Duration::zero();
  std::unique_ptr<Frontier> f = Make();
  ASSERT_TRUE(f->PushSitemap("http://a.test/private/s.xml", 0));
  ASSERT_TRUE(f->PushSitemap("http://a.test/s.xml", 0));
  Lease robots;
  ASSERT_EQ(f->TryNext(&robots), NextStatus::kLease);
  ASSERT_EQ(robots.kind, Lease::Kind::kRobots);
  f->Done(robots, FetchOutcome{200, {}, {}, "User-agent: *\nDisallow: /private/\n"});
  Lease lease;
  ASSERT_EQ(f->TryNext(&lease), NextStatus::kLease);
  EXPECT_EQ(lease.url, "http://a.test/s.xml");
  EXPECT_EQ(lease.kind, Lease::Kind::kSitemap);
  const std::vector<Rejection> rejections = f->DrainRejections();
  ASSERT_EQ(rejections.size(), 1u);
  EXPECT_EQ(rejections[0].url, "http://a.test/private/s.xml");
  EXPECT_EQ(rejections[0].reason, RejectReason::kRobotsDisallowed);
  EXPECT_TRUE(rejections[0].sitemap);
  EXPECT_EQ(f->Done(lease, FetchOutcome{503}).action, DoneDecision::Action::kRetry);
  Lease retry;
  ASSERT_EQ(f->TryNext(&retry), NextStatus::kLease);
  EXPECT_EQ(retry.url, "http://a.test/s.xml");
  EXPECT_EQ(retry.kind, Lease::Kind::kSitemap);
  EXPECT_EQ(retry.retries, 1u);
}

}  // namespace
}  // namespace urlsieve
