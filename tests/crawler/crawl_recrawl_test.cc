// `urlsieve crawl --recrawl` end to end (issue 14; docs/features/recrawl.md, "Re-crawl"): a crawl
// of the ChangingSite (tools/site_server/changing_site.h) on 127.0.0.1, then the site changes (some
// pages get a new body and a link to a new page, one validator-only change, one page becomes a
// 404) and `urlsieve crawl --out DIR --recrawl --revisit-after 0` runs over the same directory.
// Crawls run as child processes, as users run them. What the crawler sent and what it got comes
// from the server's own request log; what it recorded from pages.jsonl and the WARC files.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/changing_site.h"
#include "tools/site_server/conditional.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::ChangingSite;
using site::ChangingSiteOptions;
using site::LoggedRequest;
using site::SiteServer;
using testing::CrawlChild;
using testing::ReadJsonl;
using testing::ScratchDir;

constexpr int kPages = 16;
// Page i's validators are ChangingSite::ValidatorsOf(i): i % 4 = ETag, Last-Modified, neither,
// both. 0-3 change (one of each kind), 4 (ETag) gets new validators for the same body, 5
// (Last-Modified) turns into a 404; the others stay as they were.
const std::set<int> kChanged = {0, 1, 2, 3};
const std::set<int> kRevalidated = {4};
const std::set<int> kGone = {5};

const char kNotModifiedProfile[] = "/revisit/server-not-modified";
const char kIdenticalProfile[] = "/revisit/identical-payload-digest";

// A string field of a record, "" when it is null or absent.
std::string Field(const nlohmann::json& record, const char* key) {
  return record.contains(key) && record[key].is_string() ? record[key].get<std::string>() : "";
}

// Runs `command`, returns its exit code; its stdout goes to `out`.
int RunCommand(const std::string& command, const fs::path& out) {
  return std::system((command + " > " + out.string() + " 2>&1").c_str());
}

class CrawlRecrawlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.pages = kPages;
    options_.changed = kChanged;
    options_.revalidated = kRevalidated;
    options_.gone = kGone;
    server_ = testing::StartSite([&](const std::vector<std::string>&) {
      auto changing = std::make_unique<ChangingSite>(options_);
      site_ = changing.get();
      return changing;
    });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
    std::ofstream(dir_.path() / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                              << "[politeness]\nbackoff_ms = 50\n"
                                              << "[fetch]\nconnect_timeout_ms = 1000\n"
                                              << "[output]\nprogress = false\n";
  }

  fs::path Out() const { return dir_.path() / "out"; }
  fs::path Err() const { return dir_.path() / "crawl.err"; }
  // A crawl of the seeds (the index) into Out(); the re-crawl too takes the seeds (its scope).
  std::vector<std::string> Args(int delay_ms, std::vector<std::string> extra) const {
    std::vector<std::string> args = {"--seeds",
                                     (dir_.path() / "seeds.txt").string(),
                                     "--out",
                                     Out().string(),
                                     "--threads",
                                     "2",
                                     "--delay-ms",
                                     std::to_string(delay_ms),
                                     "--max-depth",
                                     "8",
                                     "--timeout-ms",
                                     "5000",
                                     "--warc",
                                     "--config",
                                     (dir_.path() / "crawl.toml").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::vector<std::string> RecrawlArgs(int delay_ms, std::vector<std::string> extra = {}) const {
    extra.insert(extra.begin(), {"--recrawl", "--revisit-after", "0"});
    return Args(delay_ms, std::move(extra));
  }

  // The first crawl, then round 1 of the site. Returns where the re-crawl's requests start in
  // the server log.
  void FirstCrawl() {
    CrawlChild first(Err(), Args(0, {}));
    ASSERT_EQ(first.Wait(), 0) << first.err();
    first_requests_ = server_->log().size();
    first_pages_ = ReadJsonl(Out() / "pages.jsonl").size();
    ASSERT_EQ(first_pages_, static_cast<size_t>(kPages + 1));  // the index and every page
    for (const fs::path& file : WarcFiles()) first_warc_files_.insert(file);
    first_warc_ = WarcRecords();
    site_->SetRound(1);
  }
  void FirstCrawlAndRecrawl() {
    FirstCrawl();
    if (HasFatalFailure()) return;
    CrawlChild recrawl(Err(), RecrawlArgs(0));
    ASSERT_EQ(recrawl.Wait(), 0) << recrawl.err();
  }

  // The re-crawl's requests, robots.txt aside, by resource.
  std::map<std::string, std::vector<LoggedRequest>> RecrawlRequests() const {
    std::map<std::string, std::vector<LoggedRequest>> by_resource;
    const std::vector<LoggedRequest> log = server_->log().Snapshot();
    for (size_t i = first_requests_; i < log.size(); ++i) {
      if (log[i].resource != "/robots.txt") by_resource[log[i].resource].push_back(log[i]);
    }
    return by_resource;
  }

  // What the first crawl got for `path` (round 0): the validators the re-crawl must send back.
  site::SiteResponse FirstAnswer(const std::string& path) const {
    ChangingSite round0(options_);
    return round0.Handle({0, "GET", path});
  }

  // The WARC files of the output: those of the first crawl first (a revisit record refers to a
  // record of an earlier file), then by name.
  std::vector<fs::path> WarcFiles() const {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(Out())) {
      if (entry.path().filename().string().ends_with(".warc.gz")) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
      const bool a_first = first_warc_files_.count(a) > 0, b_first = first_warc_files_.count(b) > 0;
      return a_first != b_first ? a_first : a < b;
    });
    EXPECT_FALSE(files.empty()) << "no WARC file in " << Out();
    return files;
  }
  std::string WarcFileList() const {
    std::string list;
    for (const fs::path& file : WarcFiles()) {
      list.append(" ").append(file.string());  // not " " + ...: GCC 12 -O3 false -Wrestrict
    }
    return list;
  }

  // Every record of every WARC file of the output, in file order (warc_records.py).
  std::vector<nlohmann::json> WarcRecords() const {
    const fs::path listing = dir_.path() / "records.jsonl";
    EXPECT_EQ(RunCommand("python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                             "/tests/crawler/warc_records.py" + WarcFileList(),
                         listing),
              0)
        << testing::ReadFile(listing);
    return ReadJsonl(listing);
  }

  // The WARC files pass the independent checker (which follows every revisit record's
  // WARC-Refers-To to a response record of these files), and every revisit record refers to the
  // latest response record of its URL before it: the payload a replay would serve.
  void ExpectWarcConsistent() const {
    const fs::path listing = dir_.path() / "check.txt";
    EXPECT_EQ(RunCommand("python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                             "/tests/crawler/warc_check.py" + WarcFileList(),
                         listing),
              0)
        << testing::ReadFile(listing);
    std::map<std::string, std::string> latest;  // target URI -> id of its latest response record
    for (const nlohmann::json& r : WarcRecords()) {
      const std::string target = Field(r, "target");
      if (r["type"] == "response") latest[target] = Field(r, "id");
      if (r["type"] != "revisit") continue;
      EXPECT_TRUE(latest.count(target)) << "a revisit before any response: " << r;
      EXPECT_EQ(Field(r, "refers_to"), latest[target]) << r;
    }
  }

  static std::string PagePath(int i) { return ChangingSite::PagePath(i); }
  std::string Url(const std::string& path) const { return server_->Url(path); }

  ScratchDir dir_{"crawl_recrawl"};
  ChangingSiteOptions options_;
  std::unique_ptr<SiteServer> server_;
  ChangingSite* site_ = nullptr;
  size_t first_requests_ = 0;
  size_t first_pages_ = 0;
  std::set<fs::path> first_warc_files_;
  std::vector<nlohmann::json> first_warc_;
};

TEST_F(CrawlRecrawlTest, SendsConditionalRequestsExactlyWhereTheFirstCrawlGotValidators) {
  FirstCrawlAndRecrawl();
  if (HasFatalFailure()) return;
  // The first crawl sent no conditional request.
  const std::vector<LoggedRequest> log = server_->log().Snapshot();
  for (size_t i = 0; i < first_requests_; ++i) {
    EXPECT_FALSE(log[i].if_none_match.has_value()) << log[i].resource;
    EXPECT_FALSE(log[i].if_modified_since.has_value()) << log[i].resource;
  }

  const auto requests = RecrawlRequests();
  std::vector<std::string> known = {"/"};
  for (int i = 0; i < kPages; ++i) known.push_back(PagePath(i));
  for (const std::string& path : known) {
    SCOPED_TRACE(path);
    auto it = requests.find(path);
    ASSERT_TRUE(it != requests.end()) << "not fetched again";
    ASSERT_EQ(it->second.size(), 1u);
    const LoggedRequest& r = it->second.front();
    const site::SiteResponse first = FirstAnswer(path);
    // If-None-Match where an ETag came, If-Modified-Since where a Last-Modified came (both for a
    // page that had both), each with the value the server sent; neither elsewhere.
    EXPECT_EQ(r.if_none_match, site::HeaderOf(first, "ETag"));
    EXPECT_EQ(r.if_modified_since, site::HeaderOf(first, "Last-Modified"));
  }

  // The answers: 304 for an unchanged page with validators (no body sent), 200 otherwise, 404
  // for the page that went away.
  for (int i = 0; i < kPages; ++i) {
    SCOPED_TRACE(i);
    const LoggedRequest& r = requests.at(PagePath(i)).front();
    const bool validators = ChangingSite::ValidatorsOf(i) != site::Validators::kNone;
    if (kGone.count(i)) {
      EXPECT_EQ(r.status, 404);
    } else if (kChanged.count(i) || kRevalidated.count(i) || !validators) {
      EXPECT_EQ(r.status, 200);
      EXPECT_GT(r.body_bytes, 0u);
    } else {
      EXPECT_EQ(r.status, 304);
      EXPECT_EQ(r.body_bytes, 0u);
    }
  }
  EXPECT_EQ(requests.at("/").front().status, 304);

  // The changed pages' new links were crawled (as new URLs: unconditionally), and nothing else.
  std::set<std::string> expected(known.begin(), known.end());
  for (int i : kChanged) {
    const std::string path = ChangingSite::NewPagePath(i, 1);
    expected.insert(path);
    auto it = requests.find(path);
    ASSERT_TRUE(it != requests.end()) << path << " (linked from a changed page) not crawled";
    EXPECT_EQ(it->second.size(), 1u) << path;
    EXPECT_EQ(it->second.front().status, 200) << path;
    EXPECT_FALSE(it->second.front().if_none_match.has_value()) << path;
    EXPECT_FALSE(it->second.front().if_modified_since.has_value()) << path;
  }
  for (const auto& [path, list] : requests) EXPECT_TRUE(expected.count(path)) << path;
}

// Issue 24: a server's 431 to a conditional request replaced the URL's good fetch record. A 4xx
// to a conditional request is asked once more without the validators, after the key's delay;
// the record stays good meanwhile (and is then renewed by the answer).
TEST_F(CrawlRecrawlTest, AServerThatRefusesValidatorsIsAskedOnceMoreWithoutThem) {
  FirstCrawl();
  if (HasFatalFailure()) return;
  server_->RefuseValidators(431);
  CrawlChild recrawl(Err(), RecrawlArgs(0));
  ASSERT_EQ(recrawl.Wait(), 0) << recrawl.err();
  server_->RefuseValidators(0);
  const auto requests = RecrawlRequests();
  for (int i = 0; i < kPages; ++i) {
    SCOPED_TRACE(i);
    const std::string path = PagePath(i);
    ASSERT_TRUE(requests.count(path)) << path << " not fetched again";
    const std::vector<LoggedRequest>& asked = requests.at(path);
    const bool validators = ChangingSite::ValidatorsOf(i) != site::Validators::kNone;
    ASSERT_EQ(asked.size(), validators ? 2u : 1u);
    if (validators) {
      EXPECT_EQ(asked[0].status, 431);
      EXPECT_TRUE(asked[0].if_none_match || asked[0].if_modified_since);
    }
    const LoggedRequest& last = asked.back();
    EXPECT_FALSE(last.if_none_match || last.if_modified_since);
    EXPECT_NE(last.status, 431);
  }
  // The records are good: a third crawl asks conditionally again, and nothing is refused.
  const size_t before = server_->log().size();
  CrawlChild again(Err(), RecrawlArgs(0));
  ASSERT_EQ(again.Wait(), 0) << again.err();
  const std::vector<LoggedRequest> log = server_->log().Snapshot();
  int conditional = 0;
  for (size_t j = before; j < log.size(); ++j) {
    EXPECT_NE(log[j].status, 431) << log[j].resource;
    conditional += log[j].if_none_match || log[j].if_modified_since ? 1 : 0;
  }
  EXPECT_GT(conditional, 0);
}

TEST_F(CrawlRecrawlTest, PagesJsonlRecordsNotModifiedChangedGoneAndNewPages) {
  FirstCrawlAndRecrawl();
  if (HasFatalFailure()) return;
  const std::vector<nlohmann::json> all = ReadJsonl(Out() / "pages.jsonl");
  ASSERT_GT(all.size(), first_pages_) << "the re-crawl recorded nothing";
  std::map<std::string, nlohmann::json> records;  // the re-crawl's, by URL
  for (size_t i = first_pages_; i < all.size(); ++i) {
    const std::string url = all[i].value("url", "");
    EXPECT_EQ(records.count(url), 0u) << url << " recorded twice by the re-crawl";
    records[url] = all[i];
  }
  auto not_modified = [](const nlohmann::json& record) {
    return record.contains("not_modified") && record["not_modified"] == true;
  };
  for (int i = 0; i < kPages; ++i) {
    SCOPED_TRACE(i);
    auto it = records.find(Url(PagePath(i)));
    ASSERT_TRUE(it != records.end()) << "no re-crawl record";
    const nlohmann::json& record = it->second;
    const bool validators = ChangingSite::ValidatorsOf(i) != site::Validators::kNone;
    if (kGone.count(i)) {
      EXPECT_EQ(record["status"], 404) << record;
      EXPECT_FALSE(not_modified(record)) << record;
      EXPECT_EQ(record.value("refetch", ""), "changed") << record;  // a new status
    } else if (kChanged.count(i)) {
      EXPECT_EQ(record["status"], 200) << record;
      EXPECT_FALSE(not_modified(record)) << record;
      EXPECT_EQ(record.value("refetch", ""), "changed") << record;
    } else if (kRevalidated.count(i) || !validators) {
      EXPECT_EQ(record["status"], 200) << record;
      EXPECT_FALSE(not_modified(record)) << record;
      EXPECT_EQ(record.value("refetch", ""), "unchanged") << record;  // the same payload
    } else {
      EXPECT_TRUE(not_modified(record)) << record;
      EXPECT_EQ(record.value("refetch", ""), "not_modified") << record;
    }
  }
  ASSERT_TRUE(records.count(Url("/")));
  EXPECT_TRUE(not_modified(records[Url("/")])) << records[Url("/")];
  for (int i : kChanged) {
    auto it = records.find(Url(ChangingSite::NewPagePath(i, 1)));
    ASSERT_TRUE(it != records.end()) << ChangingSite::NewPagePath(i, 1);
    EXPECT_EQ(it->second["status"], 200);
    EXPECT_EQ(it->second["parent"], Url(PagePath(i))) << it->second;
    EXPECT_FALSE(it->second.contains("refetch")) << it->second;  // a first fetch
  }
}

TEST_F(CrawlRecrawlTest, WarcRevisitRecordsReferToTheirOriginals) {
  FirstCrawlAndRecrawl();
  if (HasFatalFailure()) return;
  ExpectWarcConsistent();

  // The first crawl's response records are the originals.
  std::map<std::string, nlohmann::json> originals;  // by target URI
  std::set<std::string> first_ids;
  for (const nlohmann::json& r : first_warc_) {
    first_ids.insert(Field(r, "id"));
    if (r["type"] == "response") originals[r["target"]] = r;
  }
  std::map<std::string, std::vector<nlohmann::json>> second;  // the re-crawl's, by target URI
  for (const nlohmann::json& r : WarcRecords()) {
    if (first_ids.count(Field(r, "id"))) continue;
    if (r["type"] == "response" || r["type"] == "revisit") second[r["target"]].push_back(r);
  }

  auto expect_revisit = [&](const std::string& path, const std::string& profile) {
    SCOPED_TRACE(path);
    const std::string url = Url(path);
    ASSERT_TRUE(originals.count(url)) << "no original response record";
    const nlohmann::json& original = originals[url];
    ASSERT_EQ(second[url].size(), 1u);
    const nlohmann::json& revisit = second[url].front();
    EXPECT_EQ(revisit["type"], "revisit") << revisit;
    EXPECT_TRUE(Field(revisit, "profile").ends_with(profile)) << revisit;
    EXPECT_EQ(revisit["refers_to"], original["id"]) << revisit;
    EXPECT_EQ(revisit["refers_to_target"], url) << revisit;
    EXPECT_EQ(revisit["refers_to_date"], original["date"]) << revisit;
    EXPECT_EQ(revisit["payload_digest"], original["payload_digest"]) << revisit;
    // The block is the answer's HTTP head: the 304, or the 200 whose payload is the original's.
    EXPECT_EQ(revisit["http_status"], profile == kNotModifiedProfile ? 304 : 200) << revisit;
  };
  auto expect_response = [&](const std::string& path, int status) {
    SCOPED_TRACE(path);
    const std::string url = Url(path);
    ASSERT_EQ(second[url].size(), 1u);
    const nlohmann::json& response = second[url].front();
    EXPECT_EQ(response["type"], "response") << response;
    EXPECT_EQ(response["http_status"], status) << response;
    if (originals.count(url)) {
      EXPECT_NE(response["payload_digest"], originals[url]["payload_digest"]) << response;
    }
  };

  expect_revisit("/", kNotModifiedProfile);
  for (int i = 0; i < kPages; ++i) {
    const bool validators = ChangingSite::ValidatorsOf(i) != site::Validators::kNone;
    if (kGone.count(i)) {
      expect_response(PagePath(i), 404);
    } else if (kChanged.count(i)) {
      expect_response(PagePath(i), 200);
    } else if (kRevalidated.count(i) || !validators) {
      // 200 with the body the first crawl archived.
      expect_revisit(PagePath(i), kIdenticalProfile);
    } else {
      expect_revisit(PagePath(i), kNotModifiedProfile);
    }
  }
  for (int i : kChanged) expect_response(ChangingSite::NewPagePath(i, 1), 200);
}

TEST_F(CrawlRecrawlTest, AThirdCrawlSendsTheLatestValidatorsEvenThoseA304DidNotRepeat) {
  FirstCrawlAndRecrawl();
  if (HasFatalFailure()) return;
  // The site stays as it is in round 1. A 304 carries the ETag only (RFC 9110 §15.4.5), so a page
  // with both validators must keep its stored Last-Modified; a changed page's record has the new
  // validators.
  first_requests_ = server_->log().size();
  CrawlChild third(Err(), RecrawlArgs(0));
  ASSERT_EQ(third.Wait(), 0) << third.err();
  const auto requests = RecrawlRequests();
  ChangingSite round1(options_);
  round1.SetRound(1);
  for (int i = 0; i < kPages; ++i) {
    if (kGone.count(i)) continue;  // a 404 may be retried or not: its record has no validators
    SCOPED_TRACE(i);
    auto it = requests.find(PagePath(i));
    ASSERT_TRUE(it != requests.end()) << "not fetched by the third crawl";
    const LoggedRequest& r = it->second.front();
    const site::SiteResponse latest = round1.Handle({0, "GET", PagePath(i)});
    EXPECT_EQ(r.if_none_match, site::HeaderOf(latest, "ETag"));
    EXPECT_EQ(r.if_modified_since, site::HeaderOf(latest, "Last-Modified"));
    const bool validators = ChangingSite::ValidatorsOf(i) != site::Validators::kNone;
    EXPECT_EQ(r.status, validators ? 304 : 200);
  }
  // A page changed in round 1 has its re-crawl's response as its original now.
  ExpectWarcConsistent();
}

TEST_F(CrawlRecrawlTest, AStoppedRecrawlResumesAndFetchesEachDuePageOnce) {
  FirstCrawl();
  if (HasFatalFailure()) return;
  // A politeness delay makes the re-crawl last a few seconds; it is stopped (Ctrl-C) once it has
  // made a few requests, then resumed.
  const size_t stop_at = first_requests_ + 6;
  {
    CrawlChild recrawl(Err(), RecrawlArgs(150));
    ASSERT_TRUE(server_->log().WaitUntil(
        [&](const std::vector<LoggedRequest>& log) { return log.size() >= stop_at; },
        std::chrono::seconds(60)));
    recrawl.Signal(SIGINT);
    ASSERT_EQ(recrawl.Wait(), 0) << recrawl.err();
  }
  const size_t stopped_at = server_->log().size();
  ASSERT_LT(stopped_at, first_requests_ + kPages) << "the re-crawl ended before it was stopped";
  CrawlChild resumed(Err(), Args(0, {"--resume"}));
  ASSERT_EQ(resumed.Wait(), 0) << resumed.err();

  // Between the two sessions, every page was fetched again, each once (a page in flight at the
  // stop may be fetched twice), and the changed pages' new links were crawled.
  const auto requests = RecrawlRequests();
  std::vector<std::string> due = {"/"};
  for (int i = 0; i < kPages; ++i) due.push_back(PagePath(i));
  for (int i : kChanged) due.push_back(ChangingSite::NewPagePath(i, 1));
  for (const std::string& path : due) {
    auto it = requests.find(path);
    ASSERT_TRUE(it != requests.end()) << path << " not fetched by the stopped and resumed re-crawl";
    EXPECT_LE(it->second.size(), 2u) << path;
  }
  size_t twice = 0;
  for (const auto& [path, list] : requests) twice += list.size() > 1;
  EXPECT_LE(twice, 2u) << "more pages fetched twice than the threads had in flight";
  ExpectWarcConsistent();
  // The resumed session did not start over: it fetched fewer pages than a whole re-crawl.
  EXPECT_LT(server_->log().size() - stopped_at, due.size());
}

}  // namespace
}  // namespace urlsieve
