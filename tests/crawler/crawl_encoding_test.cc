// The crawl reads pages as a browser does and requests what a browser requests (issue 15;
// docs/features/encodings.md, "Character encodings"), end to end: `urlsieve crawl` (the real
// binary, as a child process) over EncodedSite (tools/site_server/encoded_site.h) on 127.0.0.1,
// pages in GBK, Shift_JIS, windows-1251, ISO-8859-1, UTF-16LE/BE with BOM and UTF-8, each linking
// non-ASCII paths and queries; a page whose HTTP charset and <meta> disagree, one with no
// declaration, one with a <meta> inside a comment, one with an undecodable byte.
//
// The oracle is independent of the crawler: tests/crawler/encoded_site.py, run at test time, makes
// the pages' bytes with Python's codecs and the request targets with urllib.parse.quote (path in
// UTF-8; query in the page's output encoding, "&#N;" for what it cannot represent). The site serves
// a linked page only under those exact bytes (any other spelling is a 404), and the assertions
// come from the server's own request log (the raw request targets), pages.jsonl and stats.json.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crawler/fetch/fetcher.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/encoded_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::EncodedSite;
using site::LoggedRequest;
using site::SiteServer;
using testing::CrawlChild;
using testing::ReadFile;
using testing::ScratchDir;

// U+FFFD in UTF-8, percent-encoded: what a crawler sends for bytes it decoded in the wrong
// encoding (the issue's `/%EF%BF%BD%EF%BF%BD...`).
constexpr char kReplacementCharacter[] = "%EF%BF%BD";

// Runs `command` in a shell; returns its exit code. Its stdout goes to `out`, its stderr to `err`
// (or to `out` too).
int RunShell(const std::string& command, const fs::path& out, const fs::path& err = {}) {
  std::string line = command;
  line.append(" > '").append(out.string()).append("'");
  if (err.empty()) {
    line.append(" 2>&1");
  } else {
    line.append(" 2> '").append(err.string()).append("'");
  }
  const int status = std::system(line.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool ContainsIgnoreCase(std::string text, std::string part) {
  for (std::string* s : {&text, &part}) {
    for (char& c : *s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return text.find(part) != std::string::npos;
}

class CrawlEncodingTest : public ::testing::Test {
 protected:
  CrawlEncodingTest() : dir_("urlsieve_crawl_encoding") {}

  // Generates the site and the expectations (encoded_site.py), then serves the site.
  void SetUp() override {
    const fs::path generated = dir_.path() / "generated";
    const fs::path log = dir_.path() / "generator.log";
    std::string generate = "/usr/bin/python3 '";
    generate.append(URLSIEVE_SOURCE_DIR).append("/tests/crawler/encoded_site.py' '");
    generate.append(generated.string()).append("'");
    ASSERT_EQ(RunShell(generate, log), 0) << generate << "\n" << ReadFile(log);
    expected_ = nlohmann::json::parse(ReadFile(generated / "expected.json"), nullptr, false);
    ASSERT_TRUE(expected_.is_object()) << generated / "expected.json";
    server_ = testing::StartSite(
        [&](const std::vector<std::string>&) { return EncodedSite::Open(generated / "site"); });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
    std::ofstream(dir_.path() / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                              << "[politeness]\nbackoff_ms = 50\n"
                                              << "[fetch]\nconnect_timeout_ms = 2000\n"
                                              << "[output]\nprogress = false\n";
  }

  fs::path Out() const { return dir_.path() / "out"; }

  // One crawl of the whole site, run to its end.
  void Crawl() {
    CrawlChild crawl(dir_.path() / "crawl.err",
                     {"--seeds", (dir_.path() / "seeds.txt").string(), "--out", Out().string(),
                      "--threads", "2", "--delay-ms", "0", "--max-depth", "8", "--timeout-ms",
                      "5000", "--config", (dir_.path() / "crawl.toml").string()});
    ASSERT_EQ(crawl.Wait(), 0) << crawl.err();
  }

  // expected.json's "requests": every target the crawl must request (exactly these bytes), and
  // the encoding the page there is read in (null for robots.txt).
  std::map<std::string, std::string> ExpectedPages() const {
    std::map<std::string, std::string> pages;
    for (const auto& [target, encoding] : expected_["requests"].items()) {
      if (encoding.is_string()) pages[target] = encoding.get<std::string>();
    }
    return pages;
  }

  ScratchDir dir_;
  nlohmann::json expected_;
  std::unique_ptr<SiteServer> server_;
};

// The oracle and the site agree, whatever the crawler does: a client that sends the expected
// targets byte for byte (libcurl sends a URL's path and query as given) gets each one with 200,
// and the mangled spelling, or the right bytes with the query in another encoding, a 404.
TEST_F(CrawlEncodingTest, TheSiteServesExactlyTheExpectedTargets) {
  // The issue's own example, computed independently of it by encoded_site.py.
  ASSERT_TRUE(
      expected_["requests"].contains("/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html?q=%D6%D0%CE%C4"));
  FetcherOptions options;
  options.accepted_content_types.clear();  // every type
  auto fetcher = Fetcher::Create(options, nullptr);
  ASSERT_TRUE(fetcher.ok()) << fetcher.status().ToString();
  for (const auto& [target, encoding] : expected_["requests"].items()) {
    EXPECT_EQ((*fetcher)->Fetch(server_->Url(target)).status, 200) << target;
  }
  const std::vector<std::string> wrong = {
      // What urlsieve requested before issue 15 (the GBK bytes read as UTF-8).
      "/%EF%BF%BD%EF%BF%BD%EF%BF%BD%EF%BF%BD/%D2%B3%EF%BF%BD%EF%BF%BD.html?q=%EF%BF%BD%EF%BF%BD"
      "%EF%BF%BD%EF%BF%BD",
      // The right path, the query in UTF-8 rather than in the page's GBK.
      "/gbk/%E5%AD%90%E9%A1%B5.html?q=%E4%B8%AD%E6%96%87&%E9%A1%B5=2",
      // An unrepresentable code point as "&%23233;" ('&' and ';' raw, as quote(s.encode(enc,
      // 'xmlcharrefreplace')) would have it) instead of %26%23233%3B.
      "/%D0%BF%D0%BE%D0%B8%D1%81%D0%BA/caf%C3%A9.html?%E3%EE%F0%EE%E4=%CC%EE%F1%EA%E2%E0&%E7%ED%E0"
      "%EA=&%23233;&%E1%F3%EA%E2%E0=%C6",
  };
  for (const std::string& target : wrong) {
    EXPECT_EQ((*fetcher)->Fetch(server_->Url(target)).status, 404) << target;
  }
  std::vector<std::string> sent;
  for (const LoggedRequest& r : server_->log().Snapshot()) sent.push_back(r.target);
  std::vector<std::string> targets;
  for (const auto& [target, encoding] : expected_["requests"].items()) targets.push_back(target);
  targets.insert(targets.end(), wrong.begin(), wrong.end());
  EXPECT_EQ(sent, targets);  // as sent, byte for byte
}

// From the server's log: every target a browser requests, byte for byte, each once and answered
// 200 (the site has nothing under any other spelling), and nothing else; never a U+FFFD.
TEST_F(CrawlEncodingTest, RequestsExactlyWhatABrowserRequests) {
  ASSERT_NO_FATAL_FAILURE(Crawl());
  std::map<std::string, std::vector<int>> statuses;  // raw target -> the status of each request
  for (const LoggedRequest& r : server_->log().Snapshot()) {
    statuses[r.target].push_back(r.status);
    EXPECT_FALSE(ContainsIgnoreCase(r.target, kReplacementCharacter))
        << "requested " << r.target << ": a page was decoded in the wrong encoding";
  }
  for (const auto& [target, encoding] : expected_["requests"].items()) {
    const auto it = statuses.find(target);
    if (it == statuses.end()) {
      ADD_FAILURE() << "never requested: " << target;
      continue;
    }
    EXPECT_EQ(it->second, std::vector<int>{200}) << target;
  }
  for (const auto& [target, answers] : statuses) {
    EXPECT_TRUE(expected_["requests"].contains(target))
        << "requested " << target << " (status " << answers.front()
        << "), which a browser does not request";
  }
  EXPECT_EQ(statuses.size(), expected_["requests"].size());
}

// pages.jsonl records the encoding each page was read in; stats.json counts pages by encoding.
TEST_F(CrawlEncodingTest, RecordsEachPagesEncoding) {
  ASSERT_NO_FATAL_FAILURE(Crawl());
  std::map<std::string, nlohmann::json> recorded;  // url -> its pages.jsonl line
  std::ifstream in(Out() / "pages.jsonl");
  for (std::string line; std::getline(in, line);) {
    nlohmann::json page = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(page.is_object()) << line;
    const std::string url = page.value("url", "");
    recorded[url] = std::move(page);
  }
  const std::map<std::string, std::string> expected = ExpectedPages();
  for (const auto& [target, encoding] : expected) {
    const auto it = recorded.find(server_->Url(target));
    if (it == recorded.end()) {
      ADD_FAILURE() << "no line in pages.jsonl for " << target;
      continue;
    }
    EXPECT_EQ(it->second.value("status", 0), 200) << it->second;
    EXPECT_EQ(it->second.value("encoding", ""), encoding) << it->second;
  }
  EXPECT_EQ(recorded.size(), expected.size());

  const nlohmann::json stats =
      nlohmann::json::parse(ReadFile(Out() / "stats.json"), nullptr, false);
  ASSERT_TRUE(stats.is_object()) << "no stats.json in " << Out();
  EXPECT_EQ(stats["encodings"], expected_["encodings"]);
  EXPECT_EQ(stats["pages"], expected.size());
}

// `urlsieve canon --encoding LABEL --base BASE` resolves references with the same rule (the
// path in UTF-8, the query in the encoding).
TEST_F(CrawlEncodingTest, CanonEncodesTheQueryInTheGivenEncoding) {
  for (const nlohmann::json& c : expected_["canon"]) {
    const fs::path in = dir_.path() / "canon.in";
    const fs::path out = dir_.path() / "canon.out";
    const fs::path err = dir_.path() / "canon.err";
    {
      std::ofstream refs(in, std::ios::binary);
      for (const nlohmann::json& ref : c["refs"]) refs << ref.get<std::string>() << "\n";
    }
    const std::string command = std::string(URLSIEVE_BINARY) + " canon --encoding " +
                                c["encoding"].get<std::string>() + " --base '" +
                                c["base"].get<std::string>() + "' < '" + in.string() + "'";
    ASSERT_EQ(RunShell(command, out, err), 0) << command << "\n" << ReadFile(err);
    std::string keys;
    for (const nlohmann::json& key : c["keys"]) keys.append(key.get<std::string>()).append("\n");
    EXPECT_EQ(ReadFile(out), keys) << command;
  }
}

// EncodedSite serves each listed resource byte for byte with its Content-Type, 404s the rest, and
// refuses a manifest it cannot read with the file and line.
TEST(EncodedSiteTest, ServesListedResourcesExactlyAndNamesABadManifestLine) {
  ScratchDir dir("urlsieve_encoded_site");
  fs::create_directories(dir.path() / "bodies");
  testing::WriteFile(dir.path() / "bodies/a", std::string("\xff\xfe"
                                                          "A\0",
                                                          4));
  testing::WriteFile(dir.path() / "manifest.tsv",
                     "/a\xc3\xa9?q=%D6\ttext/html\tbodies/a\n/b\ttext/plain\tbodies/a\n");
  auto site = EncodedSite::Open(dir.path());
  ASSERT_TRUE(site.ok()) << site.status().ToString();
  const site::SiteResponse a = (*site)->Handle({0, "GET", "/a\xc3\xa9?q=%D6"});
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "text/html");
  EXPECT_EQ(a.body, std::string("\xff\xfe"
                                "A\0",
                                4));
  EXPECT_EQ((*site)->Handle({0, "GET", "/b"}).content_type, "text/plain");
  EXPECT_EQ((*site)->Handle({0, "GET", "/a\xc3\xa9?q=%d6"}).status, 404);
  EXPECT_EQ((*site)->Handle({0, "GET", "/a\xc3\xa9"}).status, 404);

  const std::pair<std::string, std::string> bad[] = {
      {"/a\ttext/html\tbodies/a\n/b text/html bodies/a\n", ":2: expected"},
      {"/a\ttext/html\tbodies/missing\n", ":1: cannot open"},
      {"/a\ttext/html\tbodies/a\n/a\ttext/html\tbodies/a\n", ":2: resource listed twice"},
      {"", ": no resource"},
  };
  for (const auto& [manifest, error] : bad) {
    testing::WriteFile(dir.path() / "manifest.tsv", manifest);
    auto refused = EncodedSite::Open(dir.path());
    ASSERT_FALSE(refused.ok()) << manifest;
    EXPECT_NE(refused.status().message().find("manifest.tsv" + error), std::string::npos)
        << refused.status().ToString();
  }
  EXPECT_FALSE(EncodedSite::Open(dir.path() / "nowhere").ok());
}

}  // namespace
}  // namespace urlsieve
