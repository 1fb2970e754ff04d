// FetchRecordStore (crawler/state/fetch_record.h): records written at a checkpoint are read back
// whole; due selection; queued records are taken once, survive a reopen and are released by
// Put/Unqueue; a failed checkpoint keeps its changes for the next one.
#include "crawler/state/fetch_record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ScratchDir;

FetchRecord Record(const std::string& url, int64_t fetch_time, int64_t interval_s) {
  FetchRecord r;
  r.url = url;
  r.status = 200;
  r.etag = "\"v1-" + url + "\"";
  r.last_modified = "Sat, 21 Nov 2026 22:30:06 GMT";
  r.payload_digest = "sha1:AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH";
  r.fetch_time = fetch_time;
  r.interval_s = interval_s;
  r.depth = 2;
  r.parent = "http://a.test/";
  r.warc = {"<urn:uuid:12345678-1234-4123-8123-123456789abc>", url, "2026-11-21T22:30:06Z",
            r.payload_digest};
  return r;
}

class FetchRecordTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    db_.reset();
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((dir_.path() / "state.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
  }
  // A checkpoint as CrawlState runs it: the store writes into a transaction that commits.
  void Checkpoint(FetchRecordStore& store) {
    ASSERT_TRUE(db_->Begin().ok());
    Status written = store.Checkpoint(*db_);
    ASSERT_TRUE(written.ok()) << written.ToString();
    ASSERT_TRUE(db_->Commit().ok());
  }
  std::vector<FetchRecord> All() {
    Result<std::vector<FetchRecord>> all = FetchRecordStore::ReadAll(*db_);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    return all.ok() ? *all : std::vector<FetchRecord>{};
  }

  ScratchDir dir_{"fetch_record"};
  std::unique_ptr<SqliteDb> db_;
};

TEST_F(FetchRecordTest, PutIsWrittenAtTheCheckpointAndReadBackWhole) {
  FetchRecordStore store;
  store.Put(Record("http://a.test/x", 1000, 3600));
  EXPECT_TRUE(All().empty()) << "nothing is written before the checkpoint";
  Checkpoint(store);
  Reopen();
  std::vector<FetchRecord> all = All();
  ASSERT_EQ(all.size(), 1u);
  const FetchRecord expected = Record("http://a.test/x", 1000, 3600);
  const FetchRecord& got = all[0];
  EXPECT_EQ(got.url, expected.url);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.etag, expected.etag);
  EXPECT_EQ(got.last_modified, expected.last_modified);
  EXPECT_EQ(got.payload_digest, expected.payload_digest);
  EXPECT_EQ(got.fetch_time, 1000);
  EXPECT_EQ(got.interval_s, 3600);
  EXPECT_EQ(got.depth, 2u);
  EXPECT_EQ(got.parent, expected.parent);
  EXPECT_EQ(got.warc.record_id, expected.warc.record_id);
  EXPECT_EQ(got.warc.target_uri, expected.warc.target_uri);
  EXPECT_EQ(got.warc.date, expected.warc.date);
  EXPECT_EQ(got.warc.payload_digest, expected.warc.payload_digest);
  EXPECT_FALSE(got.queued);
}

TEST_F(FetchRecordTest, ALaterPutReplacesTheRecord) {
  FetchRecordStore store;
  store.Put(Record("http://a.test/x", 1000, 3600));
  Checkpoint(store);
  FetchRecord changed = Record("http://a.test/x", 5000, 1800);
  changed.etag = "\"v2\"";
  store.Put(changed);
  Checkpoint(store);
  std::vector<FetchRecord> all = All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].etag, "\"v2\"");
  EXPECT_EQ(all[0].fetch_time, 5000);
  EXPECT_EQ(all[0].interval_s, 1800);
}

TEST_F(FetchRecordTest, TakeDueSelectsByFetchTimeAndInterval) {
  {
    FetchRecordStore store;
    store.Put(Record("http://a.test/due", 1000, 100));       // due at 1100
    store.Put(Record("http://a.test/later", 1000, 10'000));  // due at 11000
    store.Put(Record("http://a.test/none", 1000, 0));        // takes revisit_after
    Checkpoint(store);
  }
  FetchRecordStore store;
  ASSERT_TRUE(db_->Begin().ok());
  Result<std::vector<FetchRecord>> due = store.TakeDue(*db_, 1100, 500);  // none: due at 1500
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].url, "http://a.test/due");
  EXPECT_TRUE((*due)[0].queued);
  due = store.TakeDue(*db_, 1500, 500);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u) << "the queued one is not taken again";
  EXPECT_EQ((*due)[0].url, "http://a.test/none");
  ASSERT_TRUE(db_->Commit().ok());
}

TEST_F(FetchRecordTest, RevisitAfterZeroMakesEveryRecordDue) {
  {
    FetchRecordStore store;
    store.Put(Record("http://a.test/1", 1000, 10'000'000));
    store.Put(Record("http://a.test/2", 2000, 0));
    Checkpoint(store);
  }
  FetchRecordStore store;
  ASSERT_TRUE(db_->Begin().ok());
  Result<std::vector<FetchRecord>> due = store.TakeDue(*db_, 2000, 0);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].url, "http://a.test/1") << "oldest first";
  ASSERT_TRUE(db_->Commit().ok());
}

TEST_F(FetchRecordTest, QueuedRecordsSurviveACheckpointAndAreReleasedByPutOrUnqueue) {
  {
    FetchRecordStore store;
    store.Put(Record("http://a.test/1", 1000, 100));
    store.Put(Record("http://a.test/2", 1000, 100));
    store.Put(Record("http://a.test/3", 1000, 100));
    Checkpoint(store);
  }
  {
    FetchRecordStore store;
    ASSERT_TRUE(db_->Begin().ok());
    Result<std::vector<FetchRecord>> due = store.TakeDue(*db_, 2000, 0);
    ASSERT_TRUE(due.ok());
    ASSERT_EQ(due->size(), 3u);
    ASSERT_TRUE(store.Checkpoint(*db_).ok());
    ASSERT_TRUE(db_->Commit().ok());
    EXPECT_TRUE(store.Find("http://a.test/1").has_value());
  }
  // A resumed re-crawl: the queued ones are loaded again and not taken twice.
  Reopen();
  FetchRecordStore store;
  ASSERT_TRUE(db_->Begin().ok());
  ASSERT_TRUE(store.LoadQueued(*db_).ok());
  EXPECT_EQ(store.queued(), 3u);
  Result<std::vector<FetchRecord>> due = store.TakeDue(*db_, 9000, 0);
  ASSERT_TRUE(due.ok());
  EXPECT_TRUE(due->empty());
  ASSERT_TRUE(db_->Commit().ok());
  std::optional<FetchRecord> found = store.Find("http://a.test/2");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->etag, Record("http://a.test/2", 0, 0).etag);
  EXPECT_FALSE(store.Find("http://a.test/none").has_value());

  FetchRecord refetched = *found;
  refetched.fetch_time = 9000;
  store.Put(refetched);
  store.Unqueue("http://a.test/3");
  EXPECT_EQ(store.queued(), 1u);
  EXPECT_FALSE(store.Find("http://a.test/2").has_value());
  Checkpoint(store);
  std::vector<FetchRecord> all = All();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(all[0].queued);   // /1: still pending
  EXPECT_FALSE(all[1].queued);  // /2: re-fetched
  EXPECT_EQ(all[1].fetch_time, 9000);
  EXPECT_FALSE(all[2].queued);  // /3: rejected, kept as it was
  EXPECT_EQ(all[2].fetch_time, 1000);
}

TEST_F(FetchRecordTest, AFailedCheckpointKeepsItsChangesForTheNext) {
  FetchRecordStore store;
  store.Put(Record("http://a.test/x", 1000, 3600));
  // No transaction and a read-only connection: the write fails.
  {
    SqliteDb::Options read_only;
    read_only.read_only = true;
    read_only.create_if_missing = false;
    ASSERT_TRUE(db_->Exec("CREATE TABLE t(x)").ok());  // the file exists
    Result<std::unique_ptr<SqliteDb>> ro =
        SqliteDb::Open((dir_.path() / "state.db").string(), read_only);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_FALSE(store.Checkpoint(**ro).ok());
  }
  Checkpoint(store);
  std::vector<FetchRecord> all = All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].url, "http://a.test/x");
}

}  // namespace
}  // namespace urlsieve
