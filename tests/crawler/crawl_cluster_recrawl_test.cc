// A re-crawl on a crawl cluster (docs/features/cluster.md, "Re-crawl"): the fetch records travel
// with their partitions. A node crawls the ChangingSite (tools/site_server/changing_site.h) on
// several hosts of 127.0.0.1 alone; then it re-crawls (`--out --recrawl` only: the rest comes from
// its saved options), is killed mid-way, and a node that never crawled the site joins and takes
// every partition over. Its requests must carry the validators the first node stored (read from
// the server's request log), and the unchanged pages answer 304. Against a real redis-server on
// a random loopback port; the nodes are `urlsieve crawl` child processes.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "redis/redis_connection.h"
#include "tests/crawler/pages_after_checkpoint.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/redis_server.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/changing_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::ChangingSite;
using site::LoggedRequest;
using site::SiteServer;
using testing::CrawlChild;
using testing::ReadJsonl;
using testing::RedisServer;
using testing::ScratchDir;

constexpr int kHosts = 6;
constexpr int kPages = 8;  // per host, besides its index
constexpr int kThreads = 2;

bool IsConditional(const LoggedRequest& r) {
  return r.if_none_match.has_value() || r.if_modified_since.has_value();
}

class CrawlClusterRecrawlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = RedisServer::Start(dir_.path() / "redis");
    ASSERT_NE(redis_, nullptr);
    site::ChangingSiteOptions options;
    options.pages = kPages;
    site::SiteServerOptions server_options;
    server_options.hosts = kHosts;
    server_ = testing::StartSite(
        [&](const std::vector<std::string>&) { return std::make_unique<ChangingSite>(options); },
        server_options);
    ASSERT_NE(server_, nullptr);
    std::ofstream seeds(dir_.path() / "seeds.txt");
    for (int h = 0; h < kHosts; ++h) seeds << server_->Url("/", h) << "\n";
    std::ofstream(dir_.path() / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                              << "[politeness]\nbackoff_ms = 50\n"
                                              << "[fetch]\nconnect_timeout_ms = 1000\n"
                                              << "[output]\nprogress = false\n";
  }

  fs::path Out(const std::string& node) const { return dir_.path() / ("out-" + node); }
  fs::path Err(const std::string& node, int run) const {
    return dir_.path() / (node + "-" + std::to_string(run) + ".err");
  }
  // Everything a node of this cluster is given on its first run.
  std::vector<std::string> NodeArgs(const std::string& node, bool seeds) const {
    std::vector<std::string> args = {"--out",          Out(node).string(),
                                     "--user-agent",   "urlsieve/" + node,
                                     "--threads",      std::to_string(kThreads),
                                     "--delay-ms",     "100",
                                     "--max-depth",    "8",
                                     "--timeout-ms",   "5000",
                                     "--cluster",      redis_->url(),
                                     "--cluster-name", "recrawl",
                                     "--node-id",      node,
                                     "--partitions",   "16",
                                     "--lease-ttl",    "2",
                                     "--config",       (dir_.path() / "crawl.toml").string()};
    if (seeds) args.insert(args.end(), {"--seeds", (dir_.path() / "seeds.txt").string()});
    return args;
  }

  ScratchDir dir_{"crawl_cluster_recrawl"};
  std::unique_ptr<RedisServer> redis_;
  std::unique_ptr<SiteServer> server_;
};

TEST_F(CrawlClusterRecrawlTest, TheNextOwnerReCrawlsWithTheStoredValidators) {
  const size_t site_pages = kHosts * (kPages + 1);
  {
    CrawlChild first(Err("a", 1), NodeArgs("a", /*seeds=*/true));
    ASSERT_EQ(first.Wait(), 0) << first.err();
  }
  ASSERT_EQ(ReadJsonl(Out("a") / "pages.jsonl").size(), site_pages);
  const size_t first_requests = server_->log().size();

  // The re-crawl names only its --out (and what it asks of the round); killed once it has made
  // a few conditional requests, so that most of the round is left to the next owner.
  CrawlChild recrawl(Err("a", 2),
                     {"--out", Out("a").string(), "--recrawl", "--revisit-after", "0"});
  auto a_conditional = [&](const std::vector<LoggedRequest>& log) {
    size_t n = 0;
    for (size_t i = first_requests; i < log.size(); ++i) n += IsConditional(log[i]) ? 1 : 0;
    return n >= 6;
  };
  bool reached = false;
  while (!reached && !recrawl.exited()) {
    reached = server_->log().WaitUntil(a_conditional, std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(reached) << "the re-crawl ended before its sixth conditional request: "
                       << recrawl.err();
  recrawl.Signal(SIGKILL);
  EXPECT_EQ(recrawl.Wait(), 128 + SIGKILL);

  CrawlChild next(Err("b", 1), NodeArgs("b", /*seeds=*/false));
  ASSERT_EQ(next.Wait(), 0) << next.err();

  // What the round asked of the site, by resource: every page again, the next owner's requests
  // conditional wherever the first answer had validators, and unchanged pages answered 304.
  std::map<std::pair<int, std::string>, int> asked;
  size_t by_a = 0, by_b = 0, b_conditional = 0, conditional = 0, not_modified = 0;
  const std::vector<LoggedRequest> log = server_->log().Snapshot();
  for (size_t i = first_requests; i < log.size(); ++i) {
    const LoggedRequest& r = log[i];
    if (r.resource == "/robots.txt") continue;
    ++asked[{r.host, r.resource}];
    by_a += r.user_agent == "urlsieve/a" ? 1 : 0;
    if (IsConditional(r)) {
      ++conditional;
      not_modified += r.status == 304 ? 1 : 0;
    }
    if (r.user_agent != "urlsieve/b") continue;
    ++by_b;
    const bool has_validators =
        r.resource == "/" ||
        ChangingSite::ValidatorsOf(std::stoi(r.resource.substr(3))) != site::Validators::kNone;
    EXPECT_EQ(IsConditional(r), has_validators) << "host " << r.host << " " << r.resource;
    b_conditional += IsConditional(r) ? 1 : 0;
  }
  EXPECT_EQ(asked.size(), site_pages) << "pages not asked again";
  size_t twice = 0;
  for (const auto& [page, n] : asked) twice += n > 1 ? 1 : 0;
  // Asked again: at most what a fetched after its last checkpoint (its page requests of the
  // round, less the pages of the round its last checkpoint holds).
  const uint64_t a_checkpointed = testing::CheckpointedPages(Out("a")) - site_pages;
  ASSERT_GE(by_a, a_checkpointed);
  EXPECT_LE(twice, by_a - a_checkpointed)
      << "asked twice: more than a fetched after its last checkpoint";
  EXPECT_GT(b_conditional, 0u) << by_b << " requests of b";
  EXPECT_GE(not_modified * 100, conditional * 95) << not_modified << " of " << conditional;
  std::cout << "re-crawl after a hand-over: " << by_b << " requests by the next owner, "
            << b_conditional << " conditional; " << not_modified << " of " << conditional
            << " conditional requests answered 304\n";

  // b's pages.jsonl says what they were.
  size_t b_not_modified = 0;
  for (const nlohmann::json& page : ReadJsonl(Out("b") / "pages.jsonl")) {
    b_not_modified += page.value("refetch", "") == "not_modified" ? 1 : 0;
  }
  EXPECT_EQ(b_not_modified, b_conditional);

  // `urlsieve cluster status` says the round is through, and how many records the cluster keeps.
  const testing::ProgramRun status = testing::RunUrlsieve(
      {"cluster", "status", "--cluster", redis_->url(), "--cluster-name", "recrawl", "--json"},
      dir_.path(), "");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const nlohmann::json json = nlohmann::json::parse(status.out, nullptr, false);
  EXPECT_EQ(json.value("fetch_records", 0u), site_pages) << status.out;
  ASSERT_TRUE(json.contains("recrawl")) << status.out;
  EXPECT_EQ(json["recrawl"].value("round", 0), 1) << status.out;
  EXPECT_EQ(json["recrawl"].value("partitions_scanned", 0), 16) << status.out;

  // Redis memory per fetch record (MEMORY USAGE of every partition's records hash).
  auto redis = RedisConnection::Open(redis_->address(), {1.0, 5.0});
  ASSERT_TRUE(redis.ok()) << redis.status().ToString();
  long long bytes = 0, records = 0;
  for (int p = 0; p < 16; ++p) {
    const std::string key = "urlsieve:{recrawl:" + std::to_string(p) + "}:records";
    auto usage = (*redis)->Run({{"MEMORY", "USAGE", key, "SAMPLES", "0"}, -1});
    auto count = (*redis)->Run({{"HLEN", key}, -1});
    ASSERT_TRUE(usage.ok() && count.ok());
    bytes += usage->integer;
    records += count->integer;
  }
  EXPECT_EQ(records, static_cast<long long>(site_pages));
  std::cout << "Redis memory of the fetch records: " << bytes << " bytes for " << records
            << " records (" << (records ? bytes / records : 0) << " bytes each)\n";
}

}  // namespace
}  // namespace urlsieve
