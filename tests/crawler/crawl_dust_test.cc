// Learned URL rules in a crawl (docs/features/dust.md): `urlsieve crawl` over a site whose pages
// are reached under session ids and whose login forms (noindex) hang off every article. The crawl
// learns "drop-param sid" from the content-seen test's pairs and a skip rule from the forms,
// validates them, stops fetching what they cover (rejected.jsonl "dust"), never loses a distinct
// page, retires a rule a later check contradicts and fetches what it suppressed, keeps its rules
// across --resume, and lists them (`urlsieve rules`).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/crawler/session_site.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::CrawlChild;
using testing::ReadJsonl;

constexpr int kArticles = 40;

std::string Field(const nlohmann::json& record, const char* key) {
  return record.contains(key) && record[key].is_string() ? record[key].get<std::string>() : "";
}

class CrawlDustTest : public ::testing::Test {
 protected:
  void Serve(int sid_selects_from = kArticles, int articles = kArticles) {
    server_ = testing::StartSite([&](const std::vector<std::string>&) {
      auto made = std::make_unique<testing::SessionSite>(articles, sid_selects_from);
      server_site_ = made.get();
      return made;
    });
    ASSERT_NE(server_, nullptr);
    testing::WriteSeeds(dir_.path() / "seeds.txt", {server_->Url("/a0")});
    testing::WriteChildCrawlToml(dir_.path() / "crawl.toml", /*progress=*/false);
    // Rules on five pairs: the site is small (the lower bound is url/dust_learner_test.cc's).
    std::ofstream(dir_.path() / "crawl.toml", std::ios::app)
        << "[dust]\nmin_confidence_bound = 0\n";
  }

  fs::path Out() const { return dir_.path() / "out"; }
  std::string Url(const std::string& path) const { return server_->Url(path); }

  // One fetcher: the site is fetched in link order.
  int Crawl(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--seeds",     (dir_.path() / "seeds.txt").string(),
                                     "--out",       Out().string(),
                                     "--threads",   "1",
                                     "--delay-ms",  "0",
                                     "--max-depth", "1000",
                                     "--config",    (dir_.path() / "crawl.toml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    CrawlChild crawl(dir_.path() / "crawl.err", args);
    return crawl.Wait();
  }

  std::set<std::string> Fetched() const {
    std::set<std::string> urls;
    for (const nlohmann::json& page : ReadJsonl(Out() / "pages.jsonl")) {
      EXPECT_TRUE(urls.insert(Field(page, "url")).second) << "fetched twice: " << page;
    }
    return urls;
  }

  // rejected.jsonl's "dust" lines: URL → rule id.
  std::map<std::string, std::string> Suppressed() const {
    std::map<std::string, std::string> urls;
    for (const nlohmann::json& line : ReadJsonl(Out() / "rejected.jsonl")) {
      if (Field(line, "reason") != "dust") continue;
      EXPECT_FALSE(Field(line, "rule").empty()) << line;
      urls[Field(line, "url")] = Field(line, "rule");
    }
    return urls;
  }

  // `urlsieve rules --state out --json --all`: form → rule.
  std::map<std::string, nlohmann::json> Rules() const {
    testing::ProgramRun run =
        testing::RunUrlsieve({"rules", "--state", Out().string(), "--json", "--all"}, dir_.path());
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::map<std::string, nlohmann::json> rules;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      nlohmann::json rule = nlohmann::json::parse(line);
      rules[Field(rule, "form")] = rule;
    }
    return rules;
  }

  nlohmann::json Stats() const {
    std::ifstream in(Out() / "stats.json");
    return nlohmann::json::parse(in);
  }

  std::string Err() const { return testing::ReadFile(dir_.path() / "crawl.err"); }

  testing::ScratchDir dir_{"crawl_dust"};
  std::unique_ptr<site::SiteServer> server_;
  testing::SessionSite* server_site_ = nullptr;
};

TEST_F(CrawlDustTest, LearnsTheSessionIdAndTheFormsAndStopsFetchingTheirCopies) {
  Serve();
  ASSERT_EQ(Crawl({}), 0) << Err();
  const std::set<std::string> fetched = Fetched();
  const std::map<std::string, std::string> suppressed = Suppressed();
  // Every distinct page is fetched: each article, and one login form.
  for (int i = 0; i < kArticles; ++i)
    EXPECT_TRUE(fetched.count(Url("/a" + std::to_string(i)))) << i;
  int sessions = 0, logins = 0;
  for (const std::string& url : fetched) {
    sessions += url.find("?sid=") != std::string::npos;
    logins += url.find("/login") != std::string::npos;
  }
  // The rules come after their support and validation: the later copies are not fetched.
  EXPECT_LT(sessions, kArticles / 2);
  EXPECT_LT(logins, kArticles / 2);
  EXPECT_GE(logins, 1);
  // What was not fetched is in rejected.jsonl, with its rule.
  for (int i = 1; i < kArticles; ++i) {
    const std::string session =
        Url("/a" + std::to_string(i) + "?sid=s" + std::to_string(i - 1) + "x");
    EXPECT_TRUE(fetched.count(session) + suppressed.count(session) == 1) << session;
  }
  for (int i = 0; i < kArticles; ++i) {
    const std::string login = Url("/login?return=/a" + std::to_string(i));
    EXPECT_TRUE(fetched.count(login) + suppressed.count(login) == 1) << login;
  }

  const std::map<std::string, nlohmann::json> rules = Rules();
  ASSERT_TRUE(rules.count("drop-param sid")) << testing::ReadFile(Out() / "rejected.jsonl");
  const nlohmann::json& sid = rules.at("drop-param sid");
  EXPECT_EQ(sid["state"], "active") << sid;
  EXPECT_EQ(sid["origin"], Url("/").substr(0, Url("/").size() - 1));
  EXPECT_GE(sid["support"].get<int>(), 5) << sid;
  EXPECT_GT(sid["suppressed"].get<int>(), 0) << sid;
  EXPECT_NE(Field(sid, "example").find("?sid="), std::string::npos) << sid;
  std::set<std::string> suppressing;
  for (const auto& [url, rule] : suppressed) suppressing.insert(rule);
  EXPECT_TRUE(suppressing.count(Field(sid, "id")));
  EXPECT_GE(suppressing.size(), 2u);  // sid, and a rule for the forms

  // stats.json (and /metrics) count them.
  const nlohmann::json stats = Stats();
  EXPECT_EQ(stats["dust"]["mode"], "apply");
  EXPECT_EQ(stats["dust"]["suppressed"].get<size_t>(), suppressed.size()) << stats["dust"];
  EXPECT_GE(stats["dust"]["rules"]["active"].get<int>(), 2) << stats["dust"];
  EXPECT_EQ(stats["rejections"]["dust"].get<size_t>(), suppressed.size());
  size_t checks = 0;
  for (const nlohmann::json& page : ReadJsonl(Out() / "pages.jsonl")) {
    checks += !Field(page, "dust_check").empty();
  }
  EXPECT_EQ(stats["dust"]["validation_fetches"].get<size_t>(), checks);
}

TEST_F(CrawlDustTest, OffFetchesEveryCopyAndLearnOnlyLists) {
  Serve();
  ASSERT_EQ(Crawl({"--dust", "off"}), 0) << Err();
  EXPECT_EQ(Fetched().size(), static_cast<size_t>(3 * kArticles - 1));
  EXPECT_TRUE(Suppressed().empty());
  EXPECT_TRUE(Rules().empty());

  fs::remove_all(Out());
  ASSERT_EQ(Crawl({"--dust", "learn"}), 0) << Err();
  EXPECT_EQ(Fetched().size(), static_cast<size_t>(3 * kArticles - 1));
  EXPECT_TRUE(Suppressed().empty());
  const std::map<std::string, nlohmann::json> rules = Rules();
  ASSERT_TRUE(rules.count("drop-param sid"));
  EXPECT_EQ(rules.at("drop-param sid")["state"], "active");
  EXPECT_EQ(Stats()["dust"]["validation_fetches"], 0);
}

TEST_F(CrawlDustTest, ARuleALaterCheckContradictsIsRetiredAndWhatItSuppressedIsFetched) {
  // From article 25 on, a session id shows another page: sid selects content there.
  Serve(/*sid_selects_from=*/25);
  std::ofstream(dir_.path() / "crawl.toml", std::ios::app)
      << "check_every = 2\nmax_check_share = 1\n";  // in [dust], the file's last table
  ASSERT_EQ(Crawl({}), 0) << Err();
  const std::set<std::string> fetched = Fetched();
  for (int i = 25; i < kArticles; ++i) {
    const std::string session =
        Url("/a" + std::to_string(i) + "?sid=s" + std::to_string(i - 1) + "x");
    EXPECT_TRUE(fetched.count(session)) << session << " is a distinct page";
  }
  const std::map<std::string, nlohmann::json> rules = Rules();
  ASSERT_TRUE(rules.count("drop-param sid"));
  EXPECT_EQ(rules.at("drop-param sid")["state"], "retired") << rules.at("drop-param sid");
  const nlohmann::json stats = Stats();
  EXPECT_GE(stats["dust"]["rules"]["retired"].get<int>(), 1) << stats["dust"];
  // What it suppressed before its check failed was queued again and fetched.
  for (const auto& [url, rule] : Suppressed()) {
    if (rule == Field(rules.at("drop-param sid"), "id")) {
      EXPECT_TRUE(fetched.count(url)) << url;
    }
  }
  EXPECT_EQ(stats["dust"]["requeued"].get<uint64_t>(),
            rules.at("drop-param sid")["suppressed"].get<uint64_t>());
}

TEST_F(CrawlDustTest, RulesSurviveARecrawl) {
  // The first crawl learns the rules on 20 articles; the site then grows to 40, and the re-crawl
  // (a continuation, as --resume is: the state's rules are loaded) finds the new ones through the
  // changed last article.
  Serve(kArticles, kArticles / 2);
  ASSERT_EQ(Crawl({"--checkpoint-s", "0"}), 0) << Err();
  std::map<std::string, nlohmann::json> rules = Rules();
  ASSERT_TRUE(rules.count("drop-param sid"));
  ASSERT_EQ(rules.at("drop-param sid")["state"], "active");
  const int before = rules.at("drop-param sid")["suppressed"].get<int>();
  const size_t pages_before = ReadJsonl(Out() / "pages.jsonl").size();

  server_site_->set_articles(kArticles);
  ASSERT_EQ(Crawl({"--recrawl", "--revisit-after", "0"}), 0) << Err();
  rules = Rules();
  EXPECT_EQ(rules.at("drop-param sid")["state"], "active");
  EXPECT_GT(rules.at("drop-param sid")["suppressed"].get<int>(), before);
  // The new articles' session copies are suppressed from the start (a check at most).
  const std::vector<nlohmann::json> pages = ReadJsonl(Out() / "pages.jsonl");
  std::set<std::string> refetched;
  int new_sessions = 0;
  for (size_t i = pages_before; i < pages.size(); ++i) {
    const std::string url = Field(pages[i], "url");
    refetched.insert(url);
    if (!Field(pages[i], "dust_check").empty()) continue;
    for (int k = kArticles / 2; k < kArticles; ++k) {
      new_sessions += url.starts_with(Url("/a" + std::to_string(k) + "?sid="));
    }
  }
  EXPECT_EQ(new_sessions, 0);
  for (int i = kArticles / 2; i < kArticles; ++i) {
    EXPECT_TRUE(refetched.count(Url("/a" + std::to_string(i)))) << i;
  }
}

TEST_F(CrawlDustTest, ARulesFilePinsAndForbids) {
  Serve();
  const std::string origin = Url("/").substr(0, Url("/").size() - 1);
  std::ofstream(dir_.path() / "rules.toml")
      << "[[pin]]\norigin = \"" << origin << "\"\nrule = \"drop-param sid\"\n"
      << "[[forbid]]\norigin = \"" << origin << "\"\nrule = \"skip-path /login\"\n";
  ASSERT_EQ(Crawl({"--rules-file", (dir_.path() / "rules.toml").string()}), 0) << Err();
  for (const std::string& url : Fetched()) {
    EXPECT_EQ(url.find("?sid="), std::string::npos) << url << ": pinned from the start";
  }
  const std::map<std::string, nlohmann::json> rules = Rules();
  ASSERT_TRUE(rules.count("skip-path /login"));
  EXPECT_TRUE(rules.at("skip-path /login")["forbidden"].get<bool>());
  EXPECT_NE(rules.at("skip-path /login")["state"], "active");
  EXPECT_TRUE(rules.at("drop-param sid")["pinned"].get<bool>());
}

TEST_F(CrawlDustTest, ABadRulesFileIsAnErrorNamingIt) {
  Serve();
  const fs::path file = dir_.path() / "rules.toml";
  std::ofstream(file) << "[[pin]]\norigin = \"http://127.0.0.1\"\nrule = \"drop-everything\"\n";
  EXPECT_NE(Crawl({"--rules-file", file.string()}), 0);
  EXPECT_NE(Err().find(file.string()), std::string::npos) << Err();
  EXPECT_NE(Err().find("drop-everything"), std::string::npos) << Err();
  EXPECT_FALSE(fs::exists(Out() / "pages.jsonl"));
}

}  // namespace
}  // namespace urlsieve
