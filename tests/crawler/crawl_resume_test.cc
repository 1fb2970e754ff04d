// --resume against the outputs of a real crawl of the generated trap site (tools/site_server) on
// 127.0.0.1: outputs cut or changed after the checkpoint are refused, touching nothing, and
// stats.json describes the whole crawl, across sessions, stops and kills.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.h"
#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::LoggedRequest;
using testing::ReadFile;
using testing::WriteFile;

// The names of the frontier's rejections (RejectReasonName): each is one line of rejected.jsonl.
const char* const kFrontierReasons[] = {
    "invalid_url",          "max_depth",         "key_budget",
    "total_budget",         "robots_disallowed", "robots_unreachable",
    "crawl_delay_too_long", "key_retired",       "fetch_failed"};

// The XXH3-64 of `bytes` as --resume's messages print it (16 hex digits).
std::string Checksum(std::string_view bytes) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
  return text;
}

class CrawlResumeTest : public testing::CrawlTest {
 protected:
  CrawlResumeTest() : CrawlTest("urlsieve_resume") {}

  void SetUp() override {
    server_ = testing::StartGeneratedSite(testing::TrapSiteOptions(std::chrono::milliseconds(3000)),
                                          /*hosts=*/4);
    ASSERT_NE(server_, nullptr);
    std::ofstream(Seeds()) << server_->Url("/") << "\n";
  }

  CrawlConfig Config(bool resume) const {
    CrawlConfig c = testing::TrapCrawlConfig(Seeds(), Out(), /*threads=*/4, /*delay_ms=*/40);
    c.crawl.resume = resume;
    c.output.warc = warc_;
    return c;
  }

  // Runs one session of the crawl in this process. With stop_after, asks it to stop (as Ctrl-C
  // does) once the server has answered that many requests in all, unless it ends first.
  Result<CrawlSummary> RunSession(bool resume, size_t stop_after = 0) {
    Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(Config(resume));
    if (!crawler.ok()) return crawler.status();
    std::atomic<bool> ended{false};
    std::thread stopper;
    if (stop_after > 0) {
      stopper = std::thread([&] {
        const auto reached = [&](const std::vector<LoggedRequest>& log) {
          return log.size() >= stop_after;
        };
        // A poll that also notices the end of the crawl; the stop itself waits on the log.
        while (!ended.load()) {
          if (server_->log().WaitUntil(reached, std::chrono::milliseconds(100))) {
            (*crawler)->RequestStop();
            return;
          }
        }
      });
    }
    Result<CrawlSummary> summary = (*crawler)->Run();
    ended = true;
    if (stopper.joinable()) stopper.join();
    return summary;
  }

  // Runs `urlsieve crawl` as a child process (a checkpoint after every page).
  std::unique_ptr<testing::CrawlChild> SpawnCrawl(bool resume) const {
    return testing::SpawnCheckpointingCrawl(Dir(), Out(), resume, /*threads=*/2,
                                            /*delay_ms=*/40);
  }

  std::vector<nlohmann::json> ReadJsonl(const std::string& name) const { return ReadOutput(name); }

  nlohmann::json Stats() const {
    return nlohmann::json::parse(ReadFile(Out() / "stats.json"), nullptr, false);
  }

  // Every output file (not the state), by name, with its size and checksum.
  std::map<std::string, std::string> Outputs() const {
    std::map<std::string, std::string> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(Out())) {
      if (!entry.is_regular_file()) continue;
      const std::string content = ReadFile(entry.path());
      files[entry.path().filename().string()] =
          std::to_string(content.size()) + " bytes, " + Checksum(content);
    }
    return files;
  }

  // stats.json counts exactly what pages.jsonl and rejected.jsonl record.
  void ExpectStatsMatchOutputs() const {
    const nlohmann::json stats = Stats();
    ASSERT_TRUE(stats.is_object());
    const std::vector<nlohmann::json> pages = ReadJsonl("pages.jsonl");
    EXPECT_EQ(stats["pages"], pages.size());
    uint64_t bytes = 0, links_found = 0, links_new = 0;
    std::map<std::string, uint64_t> status, errors;
    for (const nlohmann::json& page : pages) {
      bytes += page["bytes"].get<uint64_t>();
      links_found += page["links_found"].get<uint64_t>();
      links_new += page["links_new"].get<uint64_t>();
      ++status[std::to_string(page["status"].get<int>())];
      if (page.contains("error") && page["error"].is_string()) {
        const std::string error = page["error"];
        ++errors[error.substr(0, error.find(':'))];
      }
    }
    EXPECT_EQ(stats["bytes"], bytes);
    EXPECT_EQ(stats["links_found"], links_found);
    EXPECT_EQ(stats["links_new"], links_new);
    EXPECT_EQ(stats["status"], nlohmann::json(status));
    EXPECT_EQ(stats["errors"], nlohmann::json(errors));
    std::map<std::string, uint64_t> rejected;
    for (const nlohmann::json& line : ReadJsonl("rejected.jsonl")) ++rejected[line["reason"]];
    for (const char* reason : kFrontierReasons) {
      EXPECT_EQ(stats["rejections"].value(reason, uint64_t{0}), rejected[reason]) << reason;
    }
  }

  // A crawl stopped part of the way, with a checkpoint of everything it wrote.
  void StoppedCrawl() {
    Result<CrawlSummary> first = RunSession(false, 20);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_GT(ReadJsonl("pages.jsonl").size(), 0u);
  }

  // Damages one output of a stopped crawl and checks that --resume refuses it, with an error
  // naming the file, and leaves every output as it was.
  Status ResumeAfter(const std::function<void(const fs::path&)>& damage, const std::string& name) {
    damage(Out() / name);
    const std::map<std::string, std::string> before = Outputs();
    const bool existed = fs::exists(Out() / name);
    Result<CrawlSummary> resumed = RunSession(true);
    EXPECT_FALSE(resumed.ok());
    EXPECT_EQ(Outputs(), before) << "the refused --resume changed an output";
    EXPECT_EQ(fs::exists(Out() / name), existed);
    if (resumed.ok()) return Status::Ok();
    EXPECT_NE(resumed.status().message().find((Out() / name).string()), std::string::npos)
        << resumed.status().message();
    return resumed.status();
  }

  bool warc_ = false;
};

TEST_F(CrawlResumeTest, PagesOverwrittenWithSameSizeGarbageIsRefused) {
  StoppedCrawl();
  const std::string original = ReadFile(Out() / "pages.jsonl");
  const std::string garbage(original.size(), '#');
  Status refused = ResumeAfter([&](const fs::path& p) { WriteFile(p, garbage); }, "pages.jsonl");
  // The message gives the checksum the checkpoint recorded and the one the file has now.
  EXPECT_NE(refused.message().find(Checksum(original)), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find(Checksum(garbage)), std::string::npos) << refused.message();
}

TEST_F(CrawlResumeTest, PagesOverwrittenWithLargerGarbageIsRefused) {
  StoppedCrawl();
  const std::string original = ReadFile(Out() / "pages.jsonl");
  Status refused = ResumeAfter(
      [&](const fs::path& p) { WriteFile(p, std::string(original.size() + 4096, '#')); },
      "pages.jsonl");
  EXPECT_NE(refused.message().find("changed"), std::string::npos) << refused.message();
}

TEST_F(CrawlResumeTest, PagesTruncatedByOneByteIsRefused) {
  StoppedCrawl();
  const std::string original = ReadFile(Out() / "pages.jsonl");
  Status refused =
      ResumeAfter([&](const fs::path& p) { WriteFile(p, original.substr(0, original.size() - 1)); },
                  "pages.jsonl");
  EXPECT_NE(refused.message().find("truncated"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find(std::to_string(original.size())), std::string::npos)
      << refused.message();
}

TEST_F(CrawlResumeTest, DeletedPagesIsRefusedAndNotRecreated) {
  StoppedCrawl();
  Status refused = ResumeAfter([](const fs::path& p) { fs::remove(p); }, "pages.jsonl");
  EXPECT_NE(refused.message().find("missing"), std::string::npos) << refused.message();
}

TEST_F(CrawlResumeTest, RejectedLogAndWarcAreCheckedToo) {
  warc_ = true;
  Result<CrawlSummary> whole = RunSession(false);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const std::string rejected = ReadFile(Out() / "rejected.jsonl");
  ASSERT_FALSE(rejected.empty());
  const std::string warc = ReadFile(Out() / "crawl.warc.gz");
  std::string flipped = warc;
  flipped[flipped.size() / 2] ^= 0x01;
  ResumeAfter([&](const fs::path& p) { WriteFile(p, flipped); }, "crawl.warc.gz");
  WriteFile(Out() / "crawl.warc.gz", warc);
  ResumeAfter([&](const fs::path& p) { WriteFile(p, 'x' + rejected.substr(1)); }, "rejected.jsonl");
}

TEST_F(CrawlResumeTest, UntouchedOutputsResumeAndFinish) {
  StoppedCrawl();
  const size_t lines = ReadJsonl("pages.jsonl").size();
  Result<CrawlSummary> resumed = RunSession(true);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_FALSE(resumed->stopped);
  EXPECT_GT(ReadJsonl("pages.jsonl").size(), lines);
  ExpectStatsMatchOutputs();
}

// A state written before checksums and counters were recorded: crawl_outputs with sizes only, no
// crawl_counters. It resumes (sizes checked) with notices; from then on checksums are recorded.
TEST_F(CrawlResumeTest, CheckpointWithoutChecksumsResumesWithANoticeAndRecordsThem) {
  StoppedCrawl();
  {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((Out() / "state" / "state.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE(
        (*db)
            ->Exec("CREATE TABLE old AS SELECT id, pages, rejected, warc FROM crawl_outputs;"
                   "DROP TABLE crawl_outputs;"
                   "CREATE TABLE crawl_outputs(id INTEGER PRIMARY KEY CHECK (id = 1),"
                   " pages INTEGER NOT NULL, rejected INTEGER NOT NULL,"
                   " warc INTEGER NOT NULL);"
                   "INSERT INTO crawl_outputs SELECT * FROM old; DROP TABLE old;"
                   "DROP TABLE crawl_counters")
            .ok());
  }
  const std::string original = ReadFile(Out() / "pages.jsonl");
  // Sizes are still checked.
  WriteFile(Out() / "pages.jsonl", original.substr(0, original.size() - 1));
  EXPECT_FALSE(RunSession(true).ok());
  WriteFile(Out() / "pages.jsonl", original);

  {
    Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(Config(true));
    ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
    std::string notices;
    for (const std::string& notice : (*crawler)->notices()) notices += notice + "\n";
    EXPECT_NE(notices.find("no checksums of pages.jsonl"), std::string::npos) << notices;
    EXPECT_NE(notices.find("no crawl counters"), std::string::npos) << notices;
    ASSERT_TRUE((*crawler)->Run().ok());
  }
  // The checkpoints of that run recorded checksums: same-size garbage is now refused.
  const std::string finished = ReadFile(Out() / "pages.jsonl");
  ResumeAfter([&](const fs::path& p) { WriteFile(p, std::string(finished.size(), '#')); },
              "pages.jsonl");
}

TEST_F(CrawlResumeTest, StatsDescribeTheWholeCrawlAcrossResumes) {
  uint64_t last_pages = 0;
  uint64_t last_scope_depth = 0;
  double last_duration = 0;
  // Two stopped sessions, one that finishes, one with nothing left to fetch.
  const size_t stops[] = {20, 45, 0, 0};
  for (size_t session = 0; session < 4; ++session) {
    SCOPED_TRACE("session " + std::to_string(session + 1));
    const size_t lines_before = session == 0 ? 0 : ReadJsonl("pages.jsonl").size();
    Result<CrawlSummary> summary = RunSession(session > 0, stops[session]);
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    ExpectStatsMatchOutputs();
    const nlohmann::json stats = Stats();
    const size_t lines = ReadJsonl("pages.jsonl").size();
    EXPECT_EQ(stats["sessions"], session + 1);
    EXPECT_EQ(stats["session"]["pages"], lines - lines_before);
    EXPECT_EQ(summary->stats.pages, lines);
    EXPECT_GE(stats["pages"].get<uint64_t>(), last_pages);
    // Counts kept by the scope (not in any output) carry over too.
    const uint64_t scope_depth = stats["rejections"].value("scope-depth", uint64_t{0});
    EXPECT_GE(scope_depth, last_scope_depth);
    EXPECT_GE(stats["duration_s"].get<double>(), last_duration);
    EXPECT_GE(stats["duration_s"].get<double>(), stats["session"]["duration_s"].get<double>());
    last_pages = stats["pages"];
    last_scope_depth = scope_depth;
    last_duration = stats["duration_s"];
  }
  EXPECT_EQ(Stats()["session"]["pages"], 0);
  EXPECT_GT(Stats()["pages"], 0);
  EXPECT_GT(last_scope_depth, 0u);
}

// After a kill -9, the fetches written after the last checkpoint are cut from the outputs and
// fetched again: they are counted once.
TEST_F(CrawlResumeTest, StatsAfterKillNineCountEachRecordedFetchOnce) {
  std::unique_ptr<testing::CrawlChild> crawl = SpawnCrawl(false);
  ASSERT_TRUE(server_->log().WaitUntil(
      [](const std::vector<LoggedRequest>& log) { return log.size() >= 40; },
      std::chrono::seconds(60)));
  ASSERT_NO_FATAL_FAILURE(crawl->Signal(SIGKILL));
  EXPECT_EQ(crawl->Wait(), 128 + SIGKILL);
  crawl = SpawnCrawl(true);
  EXPECT_EQ(crawl->Wait(), 0);
  ExpectStatsMatchOutputs();
  EXPECT_EQ(Stats()["sessions"], 2);
}

}  // namespace
}  // namespace urlsieve
