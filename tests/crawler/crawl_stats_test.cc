#include "crawler/metrics/crawl_stats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "crawler/metrics/progress_reporter.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

PageRecord Page(int status, uint64_t bytes, std::optional<std::string> error = {}) {
  PageRecord r;
  r.status = status;
  r.bytes = bytes;
  r.links_found = 3;
  r.links_new = 1;
  r.error = std::move(error);
  return r;
}

TEST(CrawlStatsTest, CountsPagesStatusesErrorsAndRejections) {
  ManualClock clock;
  CrawlStats stats(&clock);
  stats.RecordPage(Page(200, 100));
  stats.RecordPage(Page(200, 50));
  stats.RecordPage(Page(404, 10));
  stats.RecordPage(Page(0, 0, "timeout: 30000 ms"));
  stats.RecordPage(Page(0, 0, "dns: no such host"));
  stats.RecordPage(Page(0, 0, "timeout: 30000 ms"));
  stats.RecordPage(Page(0, 0, "weird"));
  stats.RecordRejection("robots", 2);
  stats.RecordRejection("link-mailto");
  clock.Advance(std::chrono::seconds(2));

  CrawlStatsSnapshot s = stats.Snapshot();
  s.AddRejections({{"scope-off-site", 5}, {"robots", 1}, {"scope-depth", 0}});
  EXPECT_EQ(s.pages, 7u);
  EXPECT_EQ(s.bytes, 160u);
  EXPECT_EQ(s.links_found, 21u);
  EXPECT_EQ(s.links_new, 7u);
  EXPECT_DOUBLE_EQ(s.duration_s, 2.0);
  EXPECT_DOUBLE_EQ(s.pages_per_s(), 3.5);

  nlohmann::json j = s.ToJson();
  EXPECT_EQ(j["pages"], 7);
  EXPECT_EQ(j["status"]["200"], 2);
  EXPECT_EQ(j["status"]["404"], 1);
  EXPECT_EQ(j["status"]["0"], 4);
  EXPECT_EQ(j["errors"]["timeout"], 2);
  EXPECT_EQ(j["errors"]["dns"], 1);
  EXPECT_EQ(j["errors"]["weird"], 1);
  EXPECT_EQ(j["rejections"]["robots"], 3);
  EXPECT_EQ(j["rejections"]["link-mailto"], 1);
  EXPECT_EQ(j["rejections"]["scope-off-site"], 5);
  EXPECT_FALSE(j["rejections"].contains("scope-depth"));
  EXPECT_DOUBLE_EQ(j["pages_per_s"].get<double>(), 3.5);
  EXPECT_DOUBLE_EQ(j["bytes_per_s"].get<double>(), 80.0);

  std::string table = s.SummaryTable();
  EXPECT_NE(table.find("pages"), std::string::npos);
  EXPECT_NE(table.find("status 404"), std::string::npos);
  EXPECT_NE(table.find("error timeout"), std::string::npos);
  EXPECT_NE(table.find("rejected scope-off-site"), std::string::npos);
}

TEST(CrawlStatsTest, ResumeContinuesTheTotalsOfEarlierSessions) {
  ManualClock clock;
  CrawlStats first(&clock);
  first.RecordPage(Page(200, 100));
  first.RecordPage(Page(0, 0, "timeout: 1000 ms"));
  first.RecordRejection("robots_disallowed", 2);
  clock.Advance(std::chrono::seconds(4));
  CrawlStatsSnapshot recorded = first.Snapshot();
  recorded.AddRejections({{"scope-depth", 3}});  // the scope's counts, kept outside CrawlStats
  EXPECT_EQ(recorded.sessions, 1u);
  EXPECT_EQ(recorded.session_pages, 2u);

  CrawlStats second(&clock);
  second.Resume(recorded);
  second.RecordPage(Page(200, 10));
  second.RecordRejection("robots_disallowed");
  clock.Advance(std::chrono::seconds(1));
  CrawlStatsSnapshot s = second.Snapshot();
  s.AddRejections({{"scope-depth", 1}});
  EXPECT_EQ(s.pages, 3u);
  EXPECT_EQ(s.bytes, 110u);
  EXPECT_EQ(s.status[200], 2u);
  EXPECT_EQ(s.errors["timeout"], 1u);
  EXPECT_EQ(s.rejections["robots_disallowed"], 3u);
  EXPECT_EQ(s.rejections["scope-depth"], 4u);
  EXPECT_EQ(s.sessions, 2u);
  EXPECT_EQ(s.session_pages, 1u);
  EXPECT_DOUBLE_EQ(s.duration_s, 5.0);  // the sessions' running times, summed
  EXPECT_DOUBLE_EQ(s.session_duration_s, 1.0);
  EXPECT_DOUBLE_EQ(s.pages_per_s(), 0.6);
  nlohmann::json j = s.ToJson();
  EXPECT_EQ(j["sessions"], 2);
  EXPECT_EQ(j["session"]["pages"], 1);
  EXPECT_DOUBLE_EQ(j["session"]["duration_s"].get<double>(), 1.0);
}

TEST(CrawlStatsTest, ConcurrentRecording) {
  SystemClock clock;
  CrawlStats stats(&clock);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        stats.RecordPage(Page(200, 1));
        stats.RecordRejection("robots");
      }
    });
  }
  for (auto& th : threads) th.join();
  CrawlStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.pages, 4000u);
  EXPECT_EQ(s.status.at(200), 4000u);
  EXPECT_EQ(s.rejections.at("robots"), 4000u);
}

TEST(CrawlStatsTest, WriteJsonFileIsAtomicAndReadable) {
  testing::ScratchDir dir("urlsieve_stats_test");
  const std::string path = (dir.path() / "stats.json").string();
  ASSERT_TRUE(WriteJsonFile(path, {{"pages", 3}}).ok());
  ASSERT_TRUE(WriteJsonFile(path, {{"pages", 4}}).ok());
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["pages"], 4);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_FALSE(WriteJsonFile("/nonexistent-dir/stats.json", {}).ok());
}

std::string ReadAll(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  return out;
}

TEST(ProgressReporterTest, ThrottledLineWithRate) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ManualClock clock;
  ProgressReporter progress(f, /*enabled=*/true, &clock, std::chrono::milliseconds(250));
  EXPECT_FALSE(progress.Update({5, 1, 1, 0}));  // too soon
  clock.Advance(std::chrono::seconds(1));
  EXPECT_TRUE(progress.Update({10, 7, 2, 1}));
  EXPECT_FALSE(progress.Update({11, 7, 2, 1}));
  clock.Advance(std::chrono::milliseconds(500));
  EXPECT_TRUE(progress.Update({20, 3, 2, 1}));
  progress.Finish({25, 0, 2, 1});
  std::string out = ReadAll(f);
  EXPECT_NE(out.find("\r10 pages  10.0 pages/s  7 queued  2 hosts  1 errors"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\r20 pages  20.0 pages/s  3 queued"), std::string::npos) << out;
  EXPECT_NE(out.find("\r25 pages"), std::string::npos) << out;
  EXPECT_EQ(out.back(), '\n');
  std::fclose(f);
}

TEST(ProgressReporterTest, DisabledPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ManualClock clock;
  ProgressReporter progress(f, /*enabled=*/false, &clock);
  clock.Advance(std::chrono::seconds(10));
  EXPECT_FALSE(progress.Update({1, 1, 1, 1}));
  progress.Finish({1, 1, 1, 1});
  EXPECT_EQ(ReadAll(f), "");
  std::fclose(f);
}

}  // namespace
}  // namespace urlsieve
