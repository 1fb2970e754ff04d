// SitemapStore (crawler/sitemap/sitemap_store.h): claims at most once, within a budget, through
// checkpoints, --resume and --recrawl; lastmods (the newest wins) and FetchRecordStore::TakeDue
// taking a URL whose lastmod is newer than its last fetch as due.
#include "crawler/sitemap/sitemap_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "crawler/state/fetch_record.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using Claim = SitemapStore::ClaimResult;

class SitemapStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((dir_.path() / "state.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  template <typename Store>
  void Checkpoint(Store& store) {
    ASSERT_TRUE(db_->Begin().ok());
    Status written = store.Checkpoint(*db_);
    ASSERT_TRUE(written.ok()) << written.ToString();
    ASSERT_TRUE(db_->Commit().ok());
  }

  testing::ScratchDir dir_{"sitemap_store"};
  std::unique_ptr<SqliteDb> db_;
};

TEST_F(SitemapStoreTest, ClaimsOnceWithinTheBudgetAndRemembersThroughAResume) {
  {
    SitemapStore store;
    EXPECT_EQ(store.Claim("http://a.test/s.xml", 0, "http://a.test/robots.txt", 3),
              Claim::kClaimed);
    EXPECT_EQ(store.Claim("http://a.test/s.xml", 1, "http://a.test/i.xml", 3), Claim::kRepeated);
    EXPECT_EQ(store.Claim("http://a.test/t.xml", 1, "http://a.test/s.xml", 3), Claim::kClaimed);
    EXPECT_EQ(store.Claim("http://a.test/u.xml", 1, "http://a.test/s.xml", 3), Claim::kClaimed);
    EXPECT_EQ(store.Claim("http://a.test/v.xml", 1, "http://a.test/s.xml", 3), Claim::kOverBudget);
    store.Done("http://a.test/s.xml", 200, "index", 3, 1000);
    Checkpoint(store);
  }
  Result<std::vector<SitemapRecord>> rows = SitemapStore::ReadAll(*db_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  const SitemapRecord& s = (*rows)[0];
  EXPECT_EQ(s.url, "http://a.test/s.xml");
  EXPECT_EQ(s.parent, "http://a.test/robots.txt");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.kind, "index");
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.fetched_at, 1000);
  EXPECT_EQ((*rows)[1].nesting, 1u);
  EXPECT_EQ((*rows)[1].fetched_at, 0);  // pending

  // --resume: every claim is known, fetched or pending.
  SitemapStore resumed;
  ASSERT_TRUE(resumed.Load(*db_, false).ok());
  EXPECT_EQ(resumed.Claim("http://a.test/s.xml", 0, "", 10), Claim::kRepeated);
  EXPECT_EQ(resumed.Claim("http://a.test/t.xml", 0, "", 10), Claim::kRepeated);
  EXPECT_EQ(resumed.claimed(), 3u);

  // --recrawl: a new pass fetches the fetched ones again; the pending ones stay claimed.
  SitemapStore pass;
  std::vector<SitemapRecord> roots;
  ASSERT_TRUE(pass.Load(*db_, true, &roots).ok());
  EXPECT_EQ(pass.claimed(), 2u);
  ASSERT_EQ(roots.size(), 1u);  // the fetched ones of nesting 0, to queue again
  EXPECT_EQ(roots[0].url, "http://a.test/s.xml");
  EXPECT_EQ(roots[0].parent, "http://a.test/robots.txt");
  EXPECT_EQ(pass.Claim("http://a.test/t.xml", 0, "", 10), Claim::kRepeated);
  EXPECT_EQ(pass.Claim("http://a.test/s.xml", 0, "", 10), Claim::kClaimed);
  Checkpoint(pass);
  rows = SitemapStore::ReadAll(*db_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].fetched_at, 0);  // claimed again, pending
}

TEST_F(SitemapStoreTest, TheNewestLastmodWinsAndMakesAFetchedUrlDue) {
  SitemapStore sitemaps;
  sitemaps.PutLastmod("http://a.test/changed", 5000, "http://a.test/s1.xml");
  sitemaps.PutLastmod("http://a.test/changed", 4000, "http://a.test/s2.xml");  // older: ignored
  sitemaps.PutLastmod("http://a.test/same", 500, "http://a.test/s1.xml");
  Checkpoint(sitemaps);
  SitemapStore later;
  later.PutLastmod("http://a.test/same", 900, "http://a.test/s3.xml");
  later.PutLastmod("http://a.test/changed", 100, "http://a.test/s3.xml");  // older than stored
  Checkpoint(later);
  Result<std::optional<int64_t>> changed = SitemapStore::ReadLastmod(*db_, "http://a.test/changed");
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(*changed, 5000);
  Result<std::optional<int64_t>> same = SitemapStore::ReadLastmod(*db_, "http://a.test/same");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, 900);

  // Both fetched at 1000 with a day's interval: at 2000 only the one modified since is due.
  FetchRecordStore records;
  for (const char* url : {"http://a.test/changed", "http://a.test/same", "http://a.test/none"}) {
    FetchRecord r;
    r.url = url;
    r.status = 200;
    r.fetch_time = 1000;
    r.interval_s = 86400;
    records.Put(r);
  }
  Checkpoint(records);
  ASSERT_TRUE(db_->Begin().ok());
  Result<std::vector<FetchRecord>> due = records.TakeDue(*db_, 2000, 86400);
  ASSERT_TRUE(db_->Commit().ok());
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].url, "http://a.test/changed");
}

}  // namespace
}  // namespace urlsieve
