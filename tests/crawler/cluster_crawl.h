// ClusterCrawl: the nodes of one crawl cluster (`urlsieve crawl --cluster`) over a ClusterSite, as
// child processes, for the end-to-end cluster tests (crawl_cluster_test.cc on a Redis server,
// cluster/crawl_redis_cluster_test.cc on a Redis Cluster). Each node has its own --out and its
// stderr in a file; every node gets the same options (the cluster refuses a node whose settings
// differ), and the ones a test varies go in `extra`. Also: a standalone crawl of the same site with
// the same options (the reference of "nothing missing"), `urlsieve cluster status --json`, and
// ExpectCorrectCrawl, the checks every cluster test makes on the servers' request log.
//
// The crawl: politeness delay kDelayMs (long enough for "mid-crawl" events, which tests trigger on
// the request log, never on time), --lease-ttl kLeaseTtlS (a dead node's partitions move within a
// few seconds), kThreads fetcher threads per node, /calendar/ denied and a max depth above the
// trail length, so that what a correct crawl fetches is exactly the site's expectations.
//
// Thread-safety: a test fixture's; one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_CLUSTER_CRAWL_H_
#define URLSIEVE_TESTS_CRAWLER_CLUSTER_CRAWL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/crawler/cluster_site.h"
#include "tests/support/child_process.h"
#include "tests/support/file_contents.h"

namespace urlsieve::testing {

class ClusterCrawl {
 public:
  static constexpr int kDelayMs = 100;
  static constexpr int kLeaseTtlS = 2;
  static constexpr int kThreads = 2;
  // The servers' stamping jitter, allowed by the spacing checks (see ExpectCorrectCrawl).
  static constexpr std::chrono::microseconds kStampJitter{1000};

  ClusterCrawl(std::filesystem::path dir, std::string redis_url, std::string name,
               ClusterSiteServer* site)
      : dir_(std::move(dir)),
        redis_url_(std::move(redis_url)),
        name_(std::move(name)),
        site_(site) {
    std::filesystem::create_directories(dir_);
    // Checkpoints every second: what a node killed mid-crawl fetched before its last checkpoint
    // is acknowledged (the kill -9 tests bound what is fetched again by what came after it).
    std::ofstream(dir_ / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                       << "checkpoint_interval_s = 1\n"
                                       << "[politeness]\nbackoff_ms = 50\n"
                                       << "[fetch]\nconnect_timeout_ms = 1000\n"
                                       << "[output]\nprogress = false\n";
    std::ofstream seeds(dir_ / "seeds.txt");
    for (const std::string& seed : site_->site().Seeds()) seeds << seed << "\n";
  }

  const std::string& name() const { return name_; }
  const std::string& redis_url() const { return redis_url_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path Out(const std::string& node) const { return dir_ / ("out-" + node); }
  std::filesystem::path Err(const std::string& node) const { return dir_ / (node + ".err"); }
  std::filesystem::path config() const { return dir_ / "crawl.toml"; }
  std::filesystem::path seeds() const { return dir_ / "seeds.txt"; }

  // The options every crawl of the site gets, cluster or not. Each crawl (node) has its own
  // User-Agent, "urlsieve/<name>", so that the request log says who sent what; their robots.txt
  // product token, "urlsieve", is one (the cluster's shared settings compare it).
  std::vector<std::string> CrawlArgs(const std::string& out_name) const {
    return {"--out",
            (dir_ / ("out-" + out_name)).string(),
            "--user-agent",
            "urlsieve/" + out_name,
            "--threads",
            std::to_string(kThreads),
            "--delay-ms",
            std::to_string(kDelayMs),
            "--max-depth",
            "100",
            "--deny",
            "/calendar/",
            "--timeout-ms",
            "1000",
            "--max-body-bytes",
            "262144",
            "--config",
            config().string()};
  }
  // A node's arguments: with the seeds unless `with_seeds` is false (it joins and waits for work).
  std::vector<std::string> NodeArgs(const std::string& node, bool with_seeds = true,
                                    const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = CrawlArgs(node);
    args.insert(args.end(), {"--cluster", redis_url_, "--cluster-name", name_, "--node-id", node,
                             "--lease-ttl", std::to_string(kLeaseTtlS)});
    if (with_seeds) args.insert(args.end(), {"--seeds", seeds().string()});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::unique_ptr<CrawlChild> StartNode(const std::string& node, bool with_seeds = true,
                                        const std::vector<std::string>& extra = {}) const {
    return std::make_unique<CrawlChild>(Err(node), NodeArgs(node, with_seeds, extra),
                                        dir_ / (node + ".out"));
  }
  // A standalone crawl (no --cluster) of the same site with the same options, into out-<tag>.
  std::unique_ptr<CrawlChild> StartStandalone(const std::string& tag) const {
    std::vector<std::string> args = CrawlArgs(tag);
    args.insert(args.end(), {"--seeds", seeds().string()});
    return std::make_unique<CrawlChild>(Err(tag), args, dir_ / (tag + ".out"));
  }

  // The node's stats.json (null when it has none).
  nlohmann::json Stats(const std::string& node) const {
    const std::string text = ReadFile(Out(node) / "stats.json");
    if (text.empty()) return nullptr;
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
  // Lines of the node's pages.jsonl: its recorded fetches.
  size_t RecordedPages(const std::string& node) const {
    std::ifstream in(Out(node) / "pages.jsonl");
    size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
    return n;
  }

  struct CommandResult {
    int exit = -1;
    std::string out;
    std::string err;
    nlohmann::json json;  // `out` parsed, when it is JSON
  };
  // `urlsieve cluster status --cluster URL --cluster-name NAME --json` (another name: `name`).
  CommandResult Status(const std::string& name = "") const {
    const std::string tag = "status-" + std::to_string(++commands_);
    const std::filesystem::path out = dir_ / (tag + ".out");
    const std::filesystem::path err = dir_ / (tag + ".err");
    UrlsieveChild status({"cluster", "status", "--cluster", redis_url_, "--cluster-name",
                          name.empty() ? name_ : name, "--json"},
                         err, out);
    CommandResult result;
    result.exit = status.Wait(std::chrono::seconds(60));
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    result.json = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
    return result;
  }
  // The node's entry in a status's "nodes" (null when it is not there).
  static nlohmann::json NodeOf(const nlohmann::json& status, const std::string& node) {
    if (!status.is_object() || !status.contains("nodes")) return nullptr;
    for (const nlohmann::json& n : status["nodes"]) {
      if (n.value("id", "") == node) return n;
    }
    return nullptr;
  }

  // The checks every cluster test makes on what the servers saw: every expected page fetched,
  // nothing disallowed or unexpected, at most `allowed_duplicates` requests repeated, and no two
  // requests to one host closer than the delay, whichever nodes sent them.
  CrawlAnalysis ExpectCorrectCrawl(size_t allowed_duplicates) const {
    CrawlAnalysis a = AnalyzeCrawl(site_->site(), site_->log().Snapshot());
    EXPECT_TRUE(a.missing.empty())
        << a.missing.size() << " pages never fetched:" << a.Describe(a.missing) << Diagnostics();
    EXPECT_TRUE(a.disallowed.empty()) << "fetched though disallowed:" << a.Describe(a.disallowed);
    EXPECT_TRUE(a.unexpected.empty())
        << "fetched, not in the site's expectations:" << a.Describe(a.unexpected);
    EXPECT_LE(a.duplicates, allowed_duplicates)
        << "requests repeated:" << a.DescribeDuplicates() << Diagnostics();
    // Politeness, as the servers saw it (they stamp a request once its headers are read). The
    // frontier hands a host's next page out one delay after the end of the previous fetch, so
    // one node's requests are at least the delay apart at the server; a host changing hands
    // waits out the delay after the old owner released it, which is after its last request
    // completed (or, for a dead node, after its lease lapsed). 1 ms is left for the stamping.
    // Not checked: one crawl's retries of an unreachable robots.txt, which the frontier spaces
    // from their hand-out (Frontier::Next sets next_due = now + delay), so that the time a first
    // attempt takes to reach the server shortens the gap the server sees: a standalone crawl's
    // retries arrived 54 to 100.6 ms apart on this loaded 2-core machine (--delay-ms 100).
    EXPECT_GE(a.same_agent.min, std::chrono::milliseconds(kDelayMs) - kStampJitter)
        << "closest requests of one node: " << a.same_agent.closest;
    EXPECT_GE(a.across_agents.min, std::chrono::milliseconds(kDelayMs) - kStampJitter)
        << "closest requests of two nodes: " << a.across_agents.closest;
    return a;
  }

  // The nodes' stderr and stdout files, for failure messages.
  std::string Diagnostics() const {
    std::string text;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string file = entry.path().filename().string();
      const std::string extension = entry.path().extension().string();
      if ((extension != ".err" && extension != ".out") || file.starts_with("status-")) continue;
      const std::string err = ReadFile(entry.path());
      if (err.empty()) continue;
      text += "\n--- " + file + " (last 3000 bytes) ---\n";
      text += err.size() > 3000 ? err.substr(err.size() - 3000) : err;
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string file = entry.path().filename().string();
      if (!file.starts_with("out-")) continue;
      const nlohmann::json stats = Stats(file.substr(4));
      if (!stats.is_object()) continue;
      text += "\n--- " + file + "/stats.json: pages " +
              stats.value("pages", nlohmann::json()).dump() + ", rejections " +
              stats.value("rejections", nlohmann::json()).dump() + ", errors " +
              stats.value("errors", nlohmann::json()).dump();
    }
    return text;
  }

 private:
  std::filesystem::path dir_;
  std::string redis_url_;
  std::string name_;
  ClusterSiteServer* site_;
  mutable int commands_ = 0;
};

// Test 1 of issue 13, on whatever Redis `crawl` names (a server or a Cluster): three nodes, all
// given the seeds (seeding is idempotent), crawl the site; every page once in total, nothing
// disallowed, the delay kept across nodes, each node's stats.json names it, the nodes' pages add
// up to the fetches, and the status at the end lists the nodes with nothing pending.
inline void ExpectThreeNodesCrawlEachPageOnce(const ClusterCrawl& crawl) {
  const std::vector<std::string> nodes = {"n1", "n2", "n3"};
  std::vector<std::unique_ptr<CrawlChild>> children;
  for (const std::string& node : nodes) children.push_back(crawl.StartNode(node));
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(children[i]->Wait(), 0) << nodes[i] << ": " << children[i]->err();
  }
  const CrawlAnalysis a = crawl.ExpectCorrectCrawl(0);

  uint64_t recorded = 0;
  for (const std::string& node : nodes) {
    const nlohmann::json stats = crawl.Stats(node);
    ASSERT_TRUE(stats.is_object()) << node << " wrote no stats.json";
    EXPECT_EQ(stats.value("node_id", ""), node);
    ASSERT_TRUE(stats.contains("cluster")) << stats.dump();
    EXPECT_EQ(stats["cluster"].value("name", ""), crawl.name()) << stats.dump();
    EXPECT_NE(stats["cluster"].value("server", "").find(crawl.redis_url().substr(8)),
              std::string::npos)
        << stats.dump();
    EXPECT_EQ(stats.value("pages", uint64_t{0}), crawl.RecordedPages(node)) << node;
    recorded += stats.value("pages", uint64_t{0});
  }
  // Each request is recorded by the node that made it (a retry of /busy's 429 or /error's 500 as
  // well: one record per attempt, as a standalone crawl counts them).
  EXPECT_EQ(recorded, a.page_requests);

  const ClusterCrawl::CommandResult status = crawl.Status();
  ASSERT_EQ(status.exit, 0) << status.err;
  ASSERT_TRUE(status.json.is_object()) << status.out;
  EXPECT_EQ(status.json.value("name", ""), crawl.name());
  EXPECT_EQ(status.json.value("pending", -1), 0) << status.out;
  EXPECT_EQ(status.json.value("in_flight", -1), 0) << status.out;
  EXPECT_TRUE(status.json.value("seeded", false)) << status.out;
  EXPECT_EQ(status.json.value("pages", uint64_t{0}), recorded) << status.out;
  for (const std::string& node : nodes) {
    const nlohmann::json entry = ClusterCrawl::NodeOf(status.json, node);
    ASSERT_TRUE(entry.is_object()) << node << " not in " << status.out;
    EXPECT_EQ(entry.value("state", ""), "finished") << status.out;
    EXPECT_EQ(entry.value("partitions", -1), 0) << status.out;
  }
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_CLUSTER_CRAWL_H_
