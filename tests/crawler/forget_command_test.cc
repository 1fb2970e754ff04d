// Runs the real `urlsieve forget` (docs/features/forgetting.md, "Forgetting") on `filter` states
// and on a crawl's OUT/state: per-URL lines and the summary, invalid lines by number, the exit
// codes, a plain Bloom state refused, a locked state naming the holder's pid, and a forgotten URL
// fetched again by the next crawl run that meets it (a crawl of tools/site_server on 127.0.0.1).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/crawl/crawler.h"
#include "dedup/seen_filter.h"
#include "tests/crawler/crawl_watchdog.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"
#include "tools/site_server/static_site.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::LoggedRequest;
using site::StaticSite;
using testing::ProgramRun;
using testing::ReadFile;

class ForgetCommandTest : public ::testing::Test {
 protected:
  ForgetCommandTest() : dir_("urlsieve_forget_cmd") {}

  // Runs `urlsieve <command> <args>` (a shell command line) with `input` on stdin.
  ProgramRun Urlsieve(const std::string& command, const std::string& input,
                      const std::string& args) {
    return testing::RunShell(std::string(URLSIEVE_BINARY) + " " + command + " " + args, dir_.path(),
                             input);
  }
  std::string State() const { return (dir_.path() / "state").string(); }

  testing::ScratchDir dir_;
};

TEST_F(ForgetCommandTest, ForgetsEachUrlReportsInvalidLinesAndTheFilterPrintsThemAgain) {
  ProgramRun created =
      Urlsieve("filter", "http://a.example/1\nhttp://a.example/2\nhttp://a.example/3\n",
               "--deletable --state '" + State() + "'");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ProgramRun forgot = Urlsieve(
      "forget", "HTTP://A.EXAMPLE/1\n\nnot a url\nhttp://b.example/never\nhttp://a.example/3#x\n",
      "--state '" + State() + "'");
  EXPECT_EQ(forgot.exit_code, 3) << forgot.err;  // some lines were invalid
  EXPECT_EQ(forgot.out,
            "forgotten\tHTTP://A.EXAMPLE/1\n"
            "absent\thttp://b.example/never\n"
            "forgotten\thttp://a.example/3#x\n");
  EXPECT_NE(forgot.err.find("line 3: "), std::string::npos) << forgot.err;
  EXPECT_NE(forgot.err.find("2 forgotten, 1 absent, 1 invalid"), std::string::npos) << forgot.err;
  // Durable: the next filter run prints exactly the forgotten URLs.
  ProgramRun again =
      Urlsieve("filter", "http://a.example/1\nhttp://a.example/2\nhttp://a.example/3\n",
               "--state '" + State() + "'");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "http://a.example/1\nhttp://a.example/3\n");
  // All valid: exit 0; --quiet prints the summary only.
  ProgramRun quiet = Urlsieve("forget", "http://a.example/2\n", "-q --state '" + State() + "'");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_NE(quiet.err.find("1 forgotten, 0 absent, 0 invalid"), std::string::npos) << quiet.err;
}

TEST_F(ForgetCommandTest, AnExactStateForgets) {
  ASSERT_EQ(Urlsieve("filter", "http://a.example/1\nhttp://a.example/2\n",
                     "--exact --state '" + State() + "'")
                .exit_code,
            0);
  ProgramRun forgot =
      Urlsieve("forget", "http://a.example/2\nhttp://a.example/3\n", "--state '" + State() + "'");
  EXPECT_EQ(forgot.exit_code, 0) << forgot.err;
  EXPECT_EQ(forgot.out, "forgotten\thttp://a.example/2\nabsent\thttp://a.example/3\n");
  EXPECT_EQ(
      Urlsieve("filter", "http://a.example/1\nhttp://a.example/2\n", "--state '" + State() + "'")
          .out,
      "http://a.example/2\n");
}

TEST_F(ForgetCommandTest, APlainBloomStateIsRefusedAndUnchanged) {
  ASSERT_EQ(Urlsieve("filter", "http://a.example/1\n", "--state '" + State() + "'").exit_code, 0);
  const std::string db_before = ReadFile(dir_.path() / "state" / "bloom.snap");
  ProgramRun forgot = Urlsieve("forget", "http://a.example/1\n", "--state '" + State() + "'");
  EXPECT_EQ(forgot.exit_code, 1);
  EXPECT_NE(forgot.err.find("--deletable"), std::string::npos) << forgot.err;
  EXPECT_NE(forgot.err.find("--exact"), std::string::npos) << forgot.err;
  EXPECT_EQ(ReadFile(dir_.path() / "state" / "bloom.snap"), db_before);
  EXPECT_EQ(Urlsieve("filter", "http://a.example/1\n", "--state '" + State() + "'").out, "");
}

TEST_F(ForgetCommandTest, ALockedStateNamesTheHolderAndAMissingOneIsAnError) {
  ASSERT_EQ(
      Urlsieve("filter", "http://a.example/1\n", "--deletable --state '" + State() + "'").exit_code,
      0);
  {
    SeenFilterOptions o;
    o.state_dir = State();
    auto holder = SeenFilter::Open(o);  // this process holds the lock
    ASSERT_TRUE(holder.ok()) << holder.status().ToString();
    ProgramRun forgot = Urlsieve("forget", "http://a.example/1\n", "--state '" + State() + "'");
    EXPECT_EQ(forgot.exit_code, 1);
    EXPECT_NE(forgot.err.find(std::to_string(::getpid())), std::string::npos) << forgot.err;
  }
  ProgramRun missing = Urlsieve("forget", "http://a.example/1\n",
                                "--state '" + (dir_.path() / "nope").string() + "'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no state"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "nope"));
  EXPECT_EQ(Urlsieve("forget", "", "").exit_code, 2);  // neither --state nor --redis
}

// A crawl with --deletable or --exact, then `urlsieve forget --state OUT`, then --resume: the
// forgotten seed is queued again (seeds are offered to the seen set on every run) and fetched, and
// so is the forgotten page it links to; the page that was not forgotten is not fetched again.
class ForgetCrawlTest : public ForgetCommandTest, public ::testing::WithParamInterface<bool> {};

TEST_P(ForgetCrawlTest, AForgottenUrlIsFetchedAgainByTheNextRunThatMeetsIt) {
  fs::create_directories(dir_.path() / "site");
  std::ofstream(dir_.path() / "site" / "index.html") << "<a href=a.html>a</a> <a href=b.html>b</a>";
  std::ofstream(dir_.path() / "site" / "a.html") << "<a href=index.html>home</a>";
  std::ofstream(dir_.path() / "site" / "b.html") << "<a href=a.html>a</a>";
  auto server = testing::StartSite(
      [&](const std::vector<std::string>&) { return StaticSite::Open(dir_.path() / "site"); });
  ASSERT_NE(server, nullptr);
  std::ofstream(dir_.path() / "seeds.txt") << server->Url("/index.html") << "\n";
  CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", dir_.path() / "out", 2);
  c.crawl.deletable = !GetParam();
  c.crawl.exact = GetParam();
  c.politeness.delay_ms = 10;
  c.fetch.timeout_ms = 5000;
  auto fetches = [&] {
    std::map<std::string, int> count;
    for (const LoggedRequest& r : server->log().Snapshot()) ++count[r.resource];
    return count;
  };
  auto first = testing::RunCrawlWithWatchdog(c);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::map<std::string, int> before = fetches();
  ASSERT_EQ(before["/index.html"], 1);
  ASSERT_EQ(before["/a.html"], 1);
  ASSERT_EQ(before["/b.html"], 1);

  ProgramRun forgot =
      Urlsieve("forget", server->Url("/index.html") + "\n" + server->Url("/b.html") + "\n",
               "--state '" + c.crawl.out_dir + "'");  // OUT, taken as OUT/state
  ASSERT_EQ(forgot.exit_code, 0) << forgot.err;
  EXPECT_NE(forgot.err.find("2 forgotten, 0 absent"), std::string::npos) << forgot.err;

  c.crawl.resume = true;
  auto second = testing::RunCrawlWithWatchdog(c);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  std::map<std::string, int> after = fetches();
  EXPECT_EQ(after["/index.html"], 2);
  EXPECT_EQ(after["/b.html"], 2);
  EXPECT_EQ(after["/a.html"], 1);
  // The content-seen set holds their first fetch: fetched again under the same URL, each is that
  // page again (a first), not a duplicate of itself (docs/features/content-seen.md, "In the
  // crawl").
  const std::vector<nlohmann::json> pages =
      testing::ReadJsonl(fs::path(c.crawl.out_dir) / "pages.jsonl");
  ASSERT_EQ(pages.size(), 5u);
  for (const nlohmann::json& page : pages) {
    EXPECT_FALSE(page.contains("duplicate_of") || page.contains("near_duplicate_of")) << page;
  }
  // Without forgetting, a third run fetches nothing again.
  auto third = testing::RunCrawlWithWatchdog(c);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  std::map<std::string, int> last = fetches();
  for (const char* page : {"/index.html", "/a.html", "/b.html"}) EXPECT_EQ(last[page], after[page]);
}

INSTANTIATE_TEST_SUITE_P(Modes, ForgetCrawlTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return std::string(param.param ? "Exact" : "Deletable");
                         });

}  // namespace
}  // namespace urlsieve
