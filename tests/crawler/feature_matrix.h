// The feature matrix (docs/architecture.md, "One crawl, three deployments"): each feature of a
// crawl, run as a user runs it — `urlsieve crawl` child processes against sites on 127.0.0.1 —
// standalone, over a seen set shared in Redis (--seen-redis) and as a node of a crawl cluster
// (--cluster), with the same expectations on all three. A combination that is refused, or that
// fetches or records anything else, fails. Instantiated over one redis-server
// (crawl_feature_matrix_test.cc) and over a 3-master Redis Cluster
// (cluster/crawl_feature_matrix_cluster_test.cc).
//
// Features:
//   - Recrawl: a crawl of the ChangingSite (tools/site_server/changing_site.h, nothing changed),
//     then `--out DIR --recrawl --revisit-after 0` alone (the rest from the saved options): every
//     page asked again, with the validators it had, and 304 for each; pages.jsonl says so.
//   - Sitemaps: a MapSite whose pages are reachable only through the sitemap its robots.txt
//     names: each sitemap read once, its pages fetched once; the re-crawl reads it once more.
//   - Forget: the ChangingSite crawled with --deletable; `urlsieve forget` (--state, --redis or
//     --cluster, as the deployment keeps its set) forgets one seed; `--out DIR --resume` fetches
//     that seed again, and nothing else.
//   - ContentSeen: DustSite (tools/site_server/dust_site.h) on two hosts serving the same bytes,
//     with --warc: of the two indexes exactly one is first, the other an exact duplicate whose
//     links are not followed; under the first host the mirror, the second stylesheet, the second
//     session of each article and every login form but the first are duplicates of the first
//     copies; the WARC's revisits all refer to response records (warc_check.py); the re-crawl
//     asks every page again and marks nothing more.
// A cluster is deleted at the end (`urlsieve cluster delete`).
//
// Thread-safety: a test fixture's; one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_FEATURE_MATRIX_H_
#define URLSIEVE_TESTS_CRAWLER_FEATURE_MATRIX_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/changing_site.h"
#include "tools/site_server/dust_site.h"
#include "tools/site_server/map_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve::testing {

enum class MatrixDeployment { kLocal, kShared, kCluster };
enum class MatrixFeature { kRecrawl, kSitemaps, kForget, kContentSeen };
using MatrixCase = std::pair<MatrixFeature, MatrixDeployment>;

inline std::vector<MatrixCase> AllMatrixCases() {
  std::vector<MatrixCase> cases;
  for (MatrixFeature f : {MatrixFeature::kRecrawl, MatrixFeature::kSitemaps, MatrixFeature::kForget,
                          MatrixFeature::kContentSeen}) {
    for (MatrixDeployment d :
         {MatrixDeployment::kLocal, MatrixDeployment::kShared, MatrixDeployment::kCluster}) {
      cases.emplace_back(f, d);
    }
  }
  return cases;
}

inline std::string MatrixCaseName(const ::testing::TestParamInfo<MatrixCase>& info) {
  std::string name = info.param.first == MatrixFeature::kRecrawl    ? "Recrawl"
                     : info.param.first == MatrixFeature::kSitemaps ? "Sitemaps"
                     : info.param.first == MatrixFeature::kForget   ? "Forget"
                                                                    : "ContentSeen";
  switch (info.param.second) {
    case MatrixDeployment::kLocal:
      return name + "Standalone";
    case MatrixDeployment::kShared:
      return name + "SharedSeenSet";
    case MatrixDeployment::kCluster:
      return name + "ClusterNode";
  }
  return name;
}

class FeatureMatrix {
 public:
  static constexpr int kHosts = 2;
  static constexpr int kPages = 6;  // per host, besides its index (Recrawl)

  // `redis_url`: the server (or cluster) of the shared and cluster deployments; `name`: the shared
  // set's or cluster's name, one per case (the server outlives a test).
  FeatureMatrix(MatrixCase c, std::string redis_url, std::string name)
      : feature_(c.first),
        deployment_(c.second),
        redis_url_(std::move(redis_url)),
        name_(std::move(name)) {}

  void Run() {
    ServeSite();
    if (::testing::Test::HasFatalFailure()) return;
    {
      CrawlChild first(dir_.path() / "first.err", FirstArgs());
      ASSERT_EQ(first.Wait(), 0) << first.err();
    }
    const size_t first_requests = server_->log().size();
    ExpectPass(0, first_requests, /*again=*/false);
    if (feature_ == MatrixFeature::kForget) {
      ForgetASeed();
      if (::testing::Test::HasFatalFailure()) return;
    }
    {
      // Named alone: the seeds, scope, deployment and the rest come from the saved options.
      std::vector<std::string> args = {"--out", Out().string(), "--recrawl", "--revisit-after",
                                       "0"};
      if (feature_ == MatrixFeature::kForget) args = {"--out", Out().string(), "--resume"};
      CrawlChild again(dir_.path() / "again.err", args);
      ASSERT_EQ(again.Wait(), 0) << again.err();
    }
    ExpectPass(first_requests, server_->log().size(), /*again=*/true);
    if (deployment_ == MatrixDeployment::kCluster) {
      // Done with: `urlsieve cluster delete` removes it (on a Redis Cluster too).
      const ProgramRun deleted = RunUrlsieve(
          {"cluster", "delete", "--cluster", redis_url_, "--cluster-name", name_}, dir_.path(), "");
      EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
      const ProgramRun status = RunUrlsieve(
          {"cluster", "status", "--cluster", redis_url_, "--cluster-name", name_}, dir_.path(), "");
      EXPECT_EQ(status.exit_code, 1) << status.out;
    }
  }

 private:
  std::filesystem::path Out() const { return dir_.path() / "out"; }

  // `urlsieve forget` of host 0's index, where the deployment keeps its seen set.
  void ForgetASeed() const {
    std::vector<std::string> args = {"forget"};
    switch (deployment_) {
      case MatrixDeployment::kLocal:
        args.insert(args.end(), {"--state", Out().string()});
        break;
      case MatrixDeployment::kShared:
        args.insert(args.end(), {"--redis", redis_url_, "--name", name_});
        break;
      case MatrixDeployment::kCluster:
        args.insert(args.end(), {"--cluster", redis_url_, "--cluster-name", name_});
        break;
    }
    const ProgramRun run = RunUrlsieve(args, dir_.path(), server_->Url("/", 0) + "\n");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "forgotten\t" + server_->Url("/", 0) + "\n") << run.err;
  }

  void ServeSite() {
    site::SiteServerOptions options;
    options.hosts = kHosts;
    if (feature_ == MatrixFeature::kContentSeen) {
      site::DustSiteOptions dust;
      dust.pages = kPages / 2;
      server_ = StartSite(
          [&](const std::vector<std::string>&) { return std::make_unique<site::DustSite>(dust); },
          options);
      if (server_ == nullptr) return;
    } else if (feature_ != MatrixFeature::kSitemaps) {
      site::ChangingSiteOptions changing;
      changing.pages = kPages;
      server_ = StartSite(
          [&](const std::vector<std::string>&) {
            return std::make_unique<site::ChangingSite>(changing);
          },
          options);
      if (server_ == nullptr) return;
    } else {
      server_ = StartSite(
          [](const std::vector<std::string>&) { return std::make_unique<site::MapSite>(); },
          options);
      if (server_ == nullptr) return;
      auto& map = static_cast<site::MapSite&>(server_->site());
      map.Set("/robots.txt", "text/plain", "User-agent: *\nDisallow:\nSitemap: /sitemap.txt\n");
      std::string listed;
      for (int h = 0; h < kHosts; ++h) listed += server_->Url("/o/1.html", h) + "\n";
      map.Set("/sitemap.txt", "text/plain", listed);
      for (const char* path : {"/", "/o/1.html"}) {
        map.Set(path, "text/html", "<html><body>no links</body></html>");
      }
    }
    std::ofstream seeds(dir_.path() / "seeds.txt");
    for (int h = 0; h < kHosts; ++h) seeds << server_->Url("/", h) << "\n";
    std::ofstream(dir_.path() / "crawl.toml") << "[crawl]\nexpected_urls = 10000\n"
                                              << "[politeness]\nbackoff_ms = 50\n"
                                              << "[output]\nprogress = false\n";
  }

  std::vector<std::string> FirstArgs() const {
    std::vector<std::string> args = {"--seeds",      (dir_.path() / "seeds.txt").string(),
                                     "--out",        Out().string(),
                                     "--threads",    "2",
                                     "--delay-ms",   "20",
                                     "--max-depth",  "8",
                                     "--timeout-ms", "5000",
                                     "--config",     (dir_.path() / "crawl.toml").string()};
    if (feature_ == MatrixFeature::kForget) args.push_back("--deletable");
    if (feature_ == MatrixFeature::kContentSeen) args.push_back("--warc");
    switch (deployment_) {
      case MatrixDeployment::kLocal:
        break;
      case MatrixDeployment::kShared:
        args.insert(args.end(), {"--seen-redis", redis_url_, "--name", name_});
        break;
      case MatrixDeployment::kCluster:
        args.insert(args.end(), {"--cluster", redis_url_, "--cluster-name", name_, "--node-id",
                                 "only", "--partitions", "16", "--lease-ttl", "2"});
        break;
    }
    return args;
  }
  // The log entries [from, to): every page (and sitemap) once; on the second pass every page
  // with validators asked with them and answered 304.
  void ExpectPass(size_t from, size_t to, bool again) const {
    if (feature_ == MatrixFeature::kContentSeen) return ExpectContentPass(from, to, again);
    std::map<std::pair<int, std::string>, int> asked;
    size_t conditional = 0, not_modified = 0;
    const std::vector<site::LoggedRequest> log = server_->log().Snapshot();
    for (size_t i = from; i < to && i < log.size(); ++i) {
      const site::LoggedRequest& r = log[i];
      if (r.resource == "/robots.txt") continue;
      ++asked[{r.host, r.resource}];
      const bool is_conditional = r.if_none_match.has_value() || r.if_modified_since.has_value();
      if (feature_ == MatrixFeature::kRecrawl && again) {
        const bool has_validators =
            r.resource == "/" || site::ChangingSite::ValidatorsOf(
                                     std::stoi(r.resource.substr(3))) != site::Validators::kNone;
        EXPECT_EQ(is_conditional, has_validators) << r.host << " " << r.resource;
      } else {
        EXPECT_FALSE(is_conditional) << r.host << " " << r.resource;
      }
      conditional += is_conditional ? 1 : 0;
      not_modified += r.status == 304 ? 1 : 0;
    }
    std::map<std::pair<int, std::string>, int> expected;
    for (int h = 0; h < kHosts; ++h) {
      if (feature_ == MatrixFeature::kForget && again) {
        expected[{0, "/"}] = 1;  // the seed forgotten, and only it
        break;
      }
      expected[{h, "/"}] = 1;
      if (feature_ != MatrixFeature::kSitemaps) {
        for (int i = 0; i < kPages; ++i) expected[{h, site::ChangingSite::PagePath(i)}] = 1;
      } else {
        expected[{h, "/sitemap.txt"}] = 1;
        expected[{h, "/o/1.html"}] = 1;
      }
    }
    EXPECT_EQ(asked, expected) << (again ? "the re-crawl" : "the first crawl");
    EXPECT_EQ(not_modified, conditional);
    if (feature_ == MatrixFeature::kRecrawl && again) {
      EXPECT_GT(conditional, 0u);
      size_t recorded = 0;
      for (const nlohmann::json& page : ReadJsonl(Out() / "pages.jsonl")) {
        recorded += page.value("refetch", "") == "not_modified" ? 1 : 0;
      }
      EXPECT_EQ(recorded, conditional) << "pages.jsonl's not_modified re-fetches";
    }
  }

  // ContentSeen: see the header comment.
  void ExpectContentPass(size_t from, size_t to, bool again) const {
    const std::vector<nlohmann::json> pages = ReadJsonl(Out() / "pages.jsonl");
    std::map<std::string, std::string> exact, near;  // URL -> the first copy's URL
    for (const nlohmann::json& page : pages) {
      if (page.contains("duplicate_of")) exact[page["url"]] = page["duplicate_of"];
      if (page.contains("near_duplicate_of")) near[page["url"]] = page["near_duplicate_of"];
    }
    // The host whose index is first crawls its tree; the other stops at its index.
    const int first = exact.count(server_->Url("/", 1)) ? 0 : 1;
    ASSERT_EQ(exact[server_->Url("/", 1 - first)], server_->Url("/", first));
    std::map<std::pair<int, std::string>, int> expected;
    expected[{1 - first, "/"}] = 1;
    std::map<std::string, std::string> expected_exact = {
        {server_->Url("/", 1 - first), server_->Url("/", first)},
        {server_->Url("/mirror/docs/page0.html", first), server_->Url("/docs/page0.html", first)},
        {server_->Url("/copy.css", first), server_->Url("/style.css", first)}};
    std::map<std::string, std::string> expected_near;
    for (const char* path : {"/", "/mirror/docs/page0.html", "/style.css", "/copy.css"}) {
      expected[{first, path}] = 1;
    }
    for (int i = 0; i < kPages / 2; ++i) {
      const std::string n = std::to_string(i);
      const std::string article = "/article/" + n;
      const std::string login = "/login?return=/docs/page" + n + ".html";
      for (const std::string& path :
           {"/docs/page" + n + ".html", article + "?sid=1", article + "?sid=2", login}) {
        expected[{first, path}] = 1;
      }
      expected_near[server_->Url(article + "?sid=2", first)] =
          server_->Url(article + "?sid=1", first);
      if (i > 0) {
        expected_near[server_->Url(login, first)] =
            server_->Url("/login?return=/docs/page0.html", first);
      }
    }
    std::map<std::pair<int, std::string>, int> asked;
    const std::vector<site::LoggedRequest> log = server_->log().Snapshot();
    for (size_t i = from; i < to && i < log.size(); ++i) {
      if (log[i].resource != "/robots.txt") ++asked[{log[i].host, log[i].resource}];
    }
    EXPECT_EQ(asked, expected) << (again ? "the re-crawl" : "the first crawl");
    // The re-crawl found every page unchanged: it marks nothing more.
    EXPECT_EQ(exact, expected_exact);
    EXPECT_EQ(near, expected_near);
    const std::string check = "python3 " + std::string(URLSIEVE_SOURCE_DIR) +
                              "/tests/crawler/warc_check.py " + (Out() / "crawl.warc.gz").string() +
                              " > " + (dir_.path() / "check.txt").string() + " 2>&1";
    EXPECT_EQ(std::system(check.c_str()), 0) << ReadFile(dir_.path() / "check.txt");
  }

  const MatrixFeature feature_;
  const MatrixDeployment deployment_;
  const std::string redis_url_;
  const std::string name_;
  ScratchDir dir_{"feature_matrix"};
  std::unique_ptr<site::SiteServer> server_;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_FEATURE_MATRIX_H_
