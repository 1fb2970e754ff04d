// A crawl whose spill file (state/spill.db, the frontier's scratch space for pending URLs past
// max_pending_in_memory) fails: it fails the crawl with an error naming the file and what was
// being done, rather than being lost. Real failures, no mocks: a directory where the file should
// be, and the kernel's file size limit (RLIMIT_FSIZE) as a disk that is full. A real server on
// 127.0.0.1 (tools/site_server).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_size_limit.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;

// "/" links to kLinks pages whose paths are about 2 KB long; every other resource is a 404.
class ManyLongLinksSite : public site::Site {
 public:
  static constexpr int kLinks = 6000;

  site::SiteResponse Handle(const site::SiteRequest& request) override {
    if (request.resource != "/") return site::PlainStatus(404, "not found");
    const std::string filler(1990, 'x');
    std::string body;
    for (int i = 0; i < kLinks; ++i) {
      body +=
          "<a href=\"/" + std::to_string(i) + "/" + filler + "\">" + std::to_string(i) + "</a>\n";
    }
    return site::HtmlPage("many long links", body);
  }
};

class CrawlSpillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartSite(
        [](const std::vector<std::string>&) { return std::make_unique<ManyLongLinksSite>(); });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
  }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", out(), 1);
    c.crawl.max_depth = 1;
    c.crawl.max_pending_in_memory = 1000;  // the smallest budget: the rest of the links spill
    c.crawl.checkpoint_interval_s = 3600;  // only the final checkpoint
    c.politeness.delay_ms = 0;
    c.fetch.max_body_bytes = 32 << 20;
    return c;
  }
  fs::path out() const { return dir_.path() / "out"; }
  std::string spill_path() const { return (out() / "state" / "spill.db").string(); }

  urlsieve::testing::ScratchDir dir_{"urlsieve_spill"};
  std::unique_ptr<site::SiteServer> server_;
};

TEST_F(CrawlSpillTest, ASpillFileThatCannotBeOpenedFailsTheCrawlBeforeItStarts) {
  fs::create_directories(spill_path());  // a directory where the file should be
  Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(Config());
  ASSERT_FALSE(crawler.ok());
  EXPECT_NE(crawler.status().message().find(spill_path()), std::string::npos)
      << crawler.status().ToString();
  EXPECT_EQ(server_->log().size(), 0u) << "nothing is fetched";
}

TEST_F(CrawlSpillTest, ASpillFileThatCannotGrowFailsTheCrawl) {
  Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(Config());
  ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
  std::optional<Result<CrawlSummary>> summary;
  {
    // The page's 6000 links are 12 MB of URLs, 10 MB of them past the RAM budget: more than the
    // spill's 8 MiB page cache, so SQLite must write them to spill.db, which cannot grow past
    // 1 MiB. (The crawl's other files stay far below it until the final checkpoint.)
    testing::FileSizeLimit limit(1 << 20);
    summary = (*crawler)->Run();
  }
  ASSERT_FALSE(summary->ok()) << "a spill failure must not end the crawl as if it were done";
  const std::string& message = summary->status().message();
  EXPECT_NE(message.find("frontier: spilling a pending URL"), std::string::npos) << message;
  EXPECT_NE(message.find(spill_path()), std::string::npos) << message;
}

}  // namespace
}  // namespace urlsieve
