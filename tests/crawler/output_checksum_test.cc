#include "crawler/output/output_checksum.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/sqlite_db.h"
#include "crawler/output/append_file.h"
#include "crawler/state/crawl_checkpoint.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

uint64_t OneShot(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

TEST(OutputChecksumTest, IncrementalEqualsOneShotAndCopiesAreIndependent) {
  OutputChecksum running;
  EXPECT_EQ(running.Digest(), OneShot(""));
  running.Update("hello, ");
  OutputChecksum copy = running;
  running.Update("world");
  EXPECT_EQ(running.Digest(), OneShot("hello, world"));
  EXPECT_EQ(copy.Digest(), OneShot("hello, "));
  copy = running;
  EXPECT_EQ(copy.Digest(), OneShot("hello, world"));
  EXPECT_EQ(FormatChecksum(0x1234), "0000000000001234");
}

TEST(OutputChecksumTest, AppendFileMarksTheChecksumOfWhatItWroteAcrossReopens) {
  urlsieve::testing::ScratchDir dir("urlsieve_checksum");
  const std::string path = (dir.path() / "out.jsonl").string();
  OutputMark mark;
  {
    auto file = AppendFile::Open(path, uint64_t{0});
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append("line one\n").ok());
    ASSERT_TRUE(
        (*file)->Append(std::string(100'000, 'x')).ok());  // past the buffer: written through
    auto synced = (*file)->Sync();
    ASSERT_TRUE(synced.ok());
    mark = *synced;
    ASSERT_TRUE((*file)->Append("after the checkpoint\n").ok());
  }
  const std::string content = ReadFile(path);
  ASSERT_EQ(mark.size + 21, content.size());
  EXPECT_EQ(mark.checksum, OneShot(std::string_view(content).substr(0, mark.size)));

  Result<VerifiedPrefix> prefix = VerifyOutputPrefix(path, mark);
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  EXPECT_EQ(ReadFile(path), content);  // verifying writes nothing
  auto file = AppendFile::Open(path, std::move(*prefix));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("resumed\n").ok());
  auto synced = (*file)->Sync();
  ASSERT_TRUE(synced.ok());
  const std::string resumed = ReadFile(path);
  EXPECT_EQ(resumed, content.substr(0, mark.size) + "resumed\n");
  EXPECT_EQ(synced->size, resumed.size());
  EXPECT_EQ(synced->checksum, OneShot(resumed));

  // Opening with a plain size reads the kept bytes to continue the checksum.
  file->reset();
  auto reopened = AppendFile::Open(path, uint64_t{mark.size});
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE((*reopened)->Append("again\n").ok());
  synced = (*reopened)->Sync();
  ASSERT_TRUE(synced.ok());
  EXPECT_EQ(synced->checksum, OneShot(ReadFile(path)));
}

TEST(OutputChecksumTest, VerifyNamesTheFileAndBothValues) {
  urlsieve::testing::ScratchDir dir("urlsieve_checksum");
  const std::string path = (dir.path() / "pages.jsonl").string();
  std::ofstream(path, std::ios::binary) << "0123456789";
  const OutputMark recorded{10, OneShot("0123456789")};
  EXPECT_TRUE(VerifyOutputPrefix(path, recorded).ok());
  EXPECT_TRUE(VerifyOutputPrefix(path, OutputMark{4, OneShot("0123")}).ok());
  EXPECT_TRUE(VerifyOutputPrefix(path, OutputMark{10, std::nullopt}).ok());  // size only

  std::ofstream(path, std::ios::binary) << "0123456788";
  Result<VerifiedPrefix> changed = VerifyOutputPrefix(path, recorded);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), StatusCode::kCorruption);
  EXPECT_NE(changed.status().message().find(path), std::string::npos);
  EXPECT_NE(changed.status().message().find(FormatChecksum(*recorded.checksum)), std::string::npos);
  EXPECT_NE(changed.status().message().find(FormatChecksum(OneShot("0123456788"))),
            std::string::npos);
  EXPECT_EQ(ReadFile(path), "0123456788");

  std::ofstream(path, std::ios::binary) << "012345678";
  Result<VerifiedPrefix> truncated = VerifyOutputPrefix(path, OutputMark{10, std::nullopt});
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos);

  fs::remove(path);
  EXPECT_TRUE(VerifyOutputPrefix(path, OutputMark{0, OneShot("")}).ok());
  Result<VerifiedPrefix> missing = VerifyOutputPrefix(path, recorded);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing"), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
}

TEST(CrawlCheckpointTest, MarksAndCountersRoundTripAndOldTablesGainChecksumColumns) {
  urlsieve::testing::ScratchDir dir("urlsieve_checksum");
  auto db = SqliteDb::Open((dir.path() / "state.db").string());
  ASSERT_TRUE(db.ok());
  // A table as an earlier version created it, with its row.
  ASSERT_TRUE((*db)
                  ->Exec("CREATE TABLE crawl_outputs(id INTEGER PRIMARY KEY CHECK (id = 1),"
                         " pages INTEGER NOT NULL, rejected INTEGER NOT NULL,"
                         " warc INTEGER NOT NULL);"
                         "INSERT INTO crawl_outputs VALUES(1, 10, 20, 0)")
                  .ok());
  Result<OutputMarks> old = ReadOutputMarks(**db);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->pages.size, 10u);
  EXPECT_EQ(old->rejected.size, 20u);
  EXPECT_FALSE(old->pages.checksum.has_value());
  EXPECT_EQ(ReadCrawlCounters(**db).status().code(), StatusCode::kNotFound);

  OutputMarks marks;
  marks.pages = {11, 0xfedcba9876543210ull};  // above INT64_MAX: stored as its two's complement
  marks.rejected = {22, 7};
  marks.warc = {0, std::nullopt};
  ASSERT_TRUE(WriteOutputMarks(**db, marks).ok());
  Result<OutputMarks> read = ReadOutputMarks(**db);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->pages.size, 11u);
  EXPECT_EQ(read->pages.checksum, 0xfedcba9876543210ull);
  EXPECT_EQ(read->rejected.checksum, 7u);
  EXPECT_FALSE(read->warc.checksum.has_value());

  CrawlStatsSnapshot counters;
  counters.pages = 5;
  counters.bytes = 500;
  counters.links_found = 50;
  counters.links_new = 25;
  counters.duration_s = 12.5;
  counters.sessions = 3;
  counters.status = {{200, 4}, {0, 1}};
  counters.errors = {{"timeout", 1}};
  counters.rejections = {{"robots_disallowed", 2}, {"scope-depth", 9}};
  ASSERT_TRUE(WriteCrawlCounters(**db, counters).ok());
  counters.rejections.erase("scope-depth");  // a later write replaces all
  ASSERT_TRUE(WriteCrawlCounters(**db, counters).ok());
  Result<CrawlStatsSnapshot> back = ReadCrawlCounters(**db);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->pages, 5u);
  EXPECT_EQ(back->bytes, 500u);
  EXPECT_EQ(back->links_found, 50u);
  EXPECT_EQ(back->links_new, 25u);
  EXPECT_DOUBLE_EQ(back->duration_s, 12.5);
  EXPECT_EQ(back->sessions, 3u);
  EXPECT_EQ(back->status, counters.status);
  EXPECT_EQ(back->errors, counters.errors);
  EXPECT_EQ(back->rejections, counters.rejections);
}

}  // namespace
}  // namespace urlsieve
