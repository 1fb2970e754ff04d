// The spill file (FrontierOptions::spill_path) failing under the frontier: a real write failure —
// the kernel's file size limit (RLIMIT_FSIZE), as on a full disk — loses no URL and is reported
// by StorageError(), naming the file and what was being done.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "frontier/frontier.h"
#include "tests/frontier/frontier_db_test_base.h"
#include "tests/support/file_size_limit.h"

namespace urlsieve {
namespace {

using FrontierSpillTest = FrontierDbTest;

TEST_F(FrontierSpillTest, NoErrorWhileTheSpillFileWorks) {
  options_.max_pending_in_memory = 10;
  options_.spill_path = (dir_ / "spill.db").string();
  std::unique_ptr<Frontier> f = Make();
  for (int i = 0; i < 100; ++i) f->Push("http://a.test/" + std::to_string(i), 0);
  EXPECT_GT(f->Stats().spill_bytes, 0);
  EXPECT_TRUE(f->StorageError().ok());
}

TEST_F(FrontierSpillTest, ASpillFileThatCannotGrowLosesNoUrlAndIsReported) {
  options_.max_pending_in_memory = 10;
  options_.spill_path = (dir_ / "spill.db").string();
  std::unique_ptr<Frontier> f = Make();
  ASSERT_NE(f, nullptr);
  // 12 MB of URLs: more than the spill's 8 MiB page cache, so SQLite must write them to the file,
  // which may not grow past 1 MiB.
  constexpr int kUrls = 6000;
  const std::string filler(2000, 'x');
  std::set<std::string> pushed;
  {
    testing::FileSizeLimit limit(1 << 20);
    for (int i = 0; i < kUrls; ++i) {
      std::string url =
          "http://h" + std::to_string(i % 5) + ".test/" + std::to_string(i) + "/" + filler;
      ASSERT_TRUE(f->Push(url, 0));
      pushed.insert(std::move(url));
    }
  }
  const Status error = f->StorageError();
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.message().find("frontier: spilling a pending URL"), std::string::npos)
      << error.ToString();
  EXPECT_NE(error.message().find(options_.spill_path), std::string::npos) << error.ToString();
  EXPECT_EQ(f->Stats().pending, static_cast<uint64_t>(kUrls));

  // Every URL is handed out once, or stays in the pending set the checkpoint records.
  std::vector<std::string> handed;
  Lease lease;
  while (f->TryNext(&lease) == NextStatus::kLease) {
    handed.push_back(lease.url);
    f->Done(lease, FetchOutcome{200, {}, {}, {}});
  }
  std::unique_ptr<SqliteDb> db = OpenDb();
  ASSERT_TRUE(db->Begin().ok());
  ASSERT_TRUE(f->Checkpoint(*db).ok());
  ASSERT_TRUE(db->Commit().ok());
  std::set<std::string> accounted = Table(*db);
  EXPECT_EQ(accounted.size() + handed.size(), static_cast<size_t>(kUrls));
  accounted.insert(handed.begin(), handed.end());
  EXPECT_EQ(accounted, pushed);
  // The first error is the one kept.
  EXPECT_EQ(f->StorageError().message(), error.message());
}

}  // namespace
}  // namespace urlsieve
