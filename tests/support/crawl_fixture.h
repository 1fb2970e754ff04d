// The set-up the crawl tests share: a test site served on loopback (tools/site_server), its seeds
// file, a crawl's configuration (in process: CrawlConfig; as a child: `urlsieve crawl` flags and a
// crawl.toml), and the outputs read back (crawl_outputs: pages.jsonl, stats.json ...).
//   - StartSite: a SiteServer serving whatever site a factory builds once the ports are known.
//   - TrapSiteOptions / StartGeneratedSite: the generated trap site of the end-to-end crawls.
//   - CrawlTest: a fixture with a ScratchDir, the server, seeds.txt and out/ in it.
// Thread-safety: a test's; one thread (the servers serve on their own threads).
#ifndef URLSIEVE_TESTS_SUPPORT_CRAWL_FIXTURE_H_
#define URLSIEVE_TESTS_SUPPORT_CRAWL_FIXTURE_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "crawler/config/crawl_config.h"
#include "tests/support/child_process.h"
#include "tests/support/file_contents.h"
#include "tests/support/jsonl.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve::testing {

namespace crawl_fixture_internal {
template <typename SiteType>
Result<std::unique_ptr<site::Site>> AsSite(std::unique_ptr<SiteType> made) {
  return std::unique_ptr<site::Site>(std::move(made));
}
template <typename SiteType>
Result<std::unique_ptr<site::Site>> AsSite(Result<std::unique_ptr<SiteType>> made) {
  if (!made.ok()) return made.status();
  return std::unique_ptr<site::Site>(std::move(*made));
}
}  // namespace crawl_fixture_internal

// Serves the site `make(origins)` returns (a std::unique_ptr to a site, or a Result of one). A
// server that does not start fails the test and returns null.
template <typename MakeSite>
std::unique_ptr<site::SiteServer> StartSite(MakeSite make,
                                            const site::SiteServerOptions& options = {}) {
  auto server = site::SiteServer::Start(
      options, [&](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
        return crawl_fixture_internal::AsSite(make(origins));
      });
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(*server) : nullptr;
}

// The trap site of the end-to-end crawls (tools/site_server/generated_site.h): 12 pages, a 512 KiB
// page and an 8 MiB gzip bomb (both over the crawls' 256 KiB cap), Crawl-delay 0.05 s; its slow
// page answers after `slow_delay`.
inline site::GeneratedSiteOptions TrapSiteOptions(std::chrono::milliseconds slow_delay) {
  site::GeneratedSiteOptions gen;
  gen.page_count = 12;
  gen.large_page_bytes = 512 * 1024;
  gen.gzip_bomb_bytes = 8 * 1024 * 1024;
  gen.slow_delay = slow_delay;
  gen.crawl_delay = "0.05";
  return gen;
}

// Serves GeneratedSite(gen) on `hosts` hosts; `*site`, when given, is set to it (the server owns
// it: its expectations say what a correct crawl fetches).
inline std::unique_ptr<site::SiteServer> StartGeneratedSite(const site::GeneratedSiteOptions& gen,
                                                            site::SiteServerOptions options,
                                                            site::GeneratedSite** site = nullptr) {
  return StartSite(
      [&](const std::vector<std::string>& origins) {
        auto generated = std::make_unique<site::GeneratedSite>(gen, origins);
        if (site != nullptr) *site = generated.get();
        return generated;
      },
      options);
}
inline std::unique_ptr<site::SiteServer> StartGeneratedSite(const site::GeneratedSiteOptions& gen,
                                                            int hosts,
                                                            site::GeneratedSite** site = nullptr) {
  site::SiteServerOptions options;
  options.hosts = hosts;
  return StartGeneratedSite(gen, options, site);
}

// robots.txt and the file one host of the trap site redirects its robots.txt to: fetched again
// after a 5xx or a restart, by design.
inline bool IsRobots(const std::string& resource) {
  return resource == "/robots.txt" || resource == "/moved-robots.txt";
}

// Writes a seeds file: one URL a line.
inline void WriteSeeds(const std::filesystem::path& file, const std::vector<std::string>& urls) {
  std::ofstream out(file);
  for (const std::string& url : urls) out << url << "\n";
}

// The crawl.toml of the `urlsieve crawl` children, for the options that have no flag.
inline void WriteChildCrawlToml(const std::filesystem::path& file, bool progress) {
  std::ofstream out(file);
  out << "[crawl]\nexpected_urls = 10000\n"
      << "[politeness]\nbackoff_ms = 50\n"
      << "[fetch]\nconnect_timeout_ms = 1000\n";
  if (!progress) out << "[output]\nprogress = false\n";
}

// The `urlsieve crawl` flags the children over the trap site share: depth 8, a 1 s timeout, the
// 256 KiB body cap, and `config` (WriteChildCrawlToml).
inline std::vector<std::string> ChildCrawlFlags(int delay_ms, const std::filesystem::path& config) {
  // clang-format off
  return {"--delay-ms", std::to_string(delay_ms),
          "--max-depth", "8",
          "--timeout-ms", "1000",
          "--max-body-bytes", "262144",
          "--config", config.string()};
  // clang-format on
}

// A `urlsieve crawl` child over the trap site, for the tests that kill a crawl with SIGKILL and
// resume it: it crawls the seeds in dir/seeds.txt into `out`, checkpointing after every page,
// with dir/crawl.toml for the options that have no flag; its stderr is appended to dir/crawl.err.
inline std::unique_ptr<CrawlChild> SpawnCheckpointingCrawl(const std::filesystem::path& dir,
                                                           const std::filesystem::path& out,
                                                           bool resume, int threads, int delay_ms) {
  WriteChildCrawlToml(dir / "crawl.toml", /*progress=*/true);
  // clang-format off
  std::vector<std::string> args = {"--seeds", (dir / "seeds.txt").string(),
                                   "--out", out.string(),
                                   "--threads", std::to_string(threads),
                                   "--checkpoint-s", "0"};
  // clang-format on
  for (std::string& flag : ChildCrawlFlags(delay_ms, dir / "crawl.toml")) {
    args.push_back(std::move(flag));
  }
  if (resume) args.push_back("--resume");
  return std::make_unique<CrawlChild>(dir / "crawl.err", std::move(args));
}

// The in-process crawls' configuration over the trap site: seeds and outputs as given, depth 8,
// a checkpoint a second, the 256 KiB body cap, 1 s timeouts, no progress line.
inline CrawlConfig TrapCrawlConfig(const std::filesystem::path& seeds,
                                   const std::filesystem::path& out, int threads, int delay_ms) {
  CrawlConfig c;
  c.crawl.seeds = seeds.string();
  c.crawl.out_dir = out.string();
  c.crawl.threads = threads;
  c.crawl.max_depth = 8;
  c.crawl.expected_urls = 10'000;
  c.crawl.checkpoint_interval_s = 1;
  c.politeness.delay_ms = delay_ms;
  c.politeness.backoff_ms = 50;
  c.fetch.timeout_ms = 1000;
  c.fetch.connect_timeout_ms = 1000;
  c.fetch.max_body_bytes = 256 * 1024;
  c.output.progress = false;
  return c;
}

// The in-process crawls' configuration over a small site: seeds and outputs as given, room for
// 1000 URLs, no progress line, a quiet log. Tests set what they exercise.
inline CrawlConfig SmallCrawlConfig(const std::filesystem::path& seeds,
                                    const std::filesystem::path& out, int threads) {
  CrawlConfig c;
  c.crawl.seeds = seeds.string();
  c.crawl.out_dir = out.string();
  c.crawl.threads = threads;
  c.crawl.expected_urls = 1000;
  c.output.progress = false;
  c.output.log_level = LogLevel::kQuiet;
  return c;
}

// A crawl test's directory: seeds.txt, out/ and whatever else the test writes, in a ScratchDir;
// server_ is the site the test starts (StartSite ...).
class CrawlTest : public ::testing::Test {
 protected:
  explicit CrawlTest(const std::string& prefix) : dir_(prefix) {}

  std::filesystem::path Dir() const { return dir_.path(); }
  std::filesystem::path Seeds() const { return dir_.path() / "seeds.txt"; }
  std::filesystem::path Out() const { return dir_.path() / "out"; }
  // Starts `make`'s site (StartSite) with seeds.txt its `seed` path.
  template <typename MakeSite>
  void Serve(MakeSite make, const std::string& seed = "/",
             const site::SiteServerOptions& options = {}) {
    server_ = StartSite(std::move(make), options);
    ASSERT_NE(server_, nullptr);
    WriteSeeds(Seeds(), {server_->Url(seed)});
  }
  // The lines of out/`name` (pages.jsonl, rejected.jsonl ...).
  std::vector<nlohmann::json> ReadOutput(const std::string& name) const {
    return ReadJsonl(Out() / name);
  }

  ScratchDir dir_;
  std::unique_ptr<site::SiteServer> server_;
};

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_SUPPORT_CRAWL_FIXTURE_H_
