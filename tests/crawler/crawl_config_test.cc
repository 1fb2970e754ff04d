#include "crawler/config/crawl_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "crawler/cli/option_flags.h"
#include "crawler/config/component_options.h"
#include "crawler/config/crawl_config_file.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

Result<CrawlConfig> Parse(const std::string& toml) { return ParseCrawlConfig(toml, "test.toml"); }

std::string ErrorOf(const std::string& toml) {
  Result<CrawlConfig> c = Parse(toml);
  return c.ok() ? "" : c.status().message();
}

// Checkpoints write only what changed (dedup/bloom/bloom_delta_log.h), so they are cheap enough to
// take every few seconds: a kill -9 then loses seconds of work, not half a minute
// (bench/checkpoint_cost.sh measures the cost).
TEST(CrawlConfigTest, DefaultCheckpointIntervalIsAFewSeconds) {
  const CrawlConfig defaults;
  EXPECT_GE(defaults.crawl.checkpoint_interval_s, 1);
  EXPECT_LE(defaults.crawl.checkpoint_interval_s, 5);
}

TEST(CrawlConfigTest, DefaultTomlLoadsAndMatchesBuiltInDefaults) {
  Result<CrawlConfig> loaded =
      LoadCrawlConfig(std::string(URLSIEVE_SOURCE_DIR) + "/configs/default.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const CrawlConfig defaults;
  const CrawlConfig& c = *loaded;
  // The documented file and the struct must not drift apart.
  EXPECT_EQ(c.crawl.out_dir, defaults.crawl.out_dir);
  EXPECT_EQ(c.crawl.threads, defaults.crawl.threads);
  EXPECT_EQ(c.crawl.max_pages, defaults.crawl.max_pages);
  EXPECT_EQ(c.crawl.max_depth, defaults.crawl.max_depth);
  EXPECT_EQ(c.crawl.exact, defaults.crawl.exact);
  EXPECT_EQ(c.crawl.expected_urls, defaults.crawl.expected_urls);
  EXPECT_EQ(c.crawl.false_positive_rate, defaults.crawl.false_positive_rate);
  EXPECT_EQ(c.crawl.checkpoint_interval_s, defaults.crawl.checkpoint_interval_s);
  EXPECT_EQ(c.crawl.obey_nofollow, defaults.crawl.obey_nofollow);
  EXPECT_EQ(c.politeness.delay_ms, defaults.politeness.delay_ms);
  EXPECT_EQ(c.politeness.per_host_concurrency, defaults.politeness.per_host_concurrency);
  EXPECT_EQ(c.politeness.obey_robots, defaults.politeness.obey_robots);
  EXPECT_EQ(c.politeness.max_crawl_delay_ms, defaults.politeness.max_crawl_delay_ms);
  EXPECT_EQ(c.politeness.backoff_ms, defaults.politeness.backoff_ms);
  EXPECT_EQ(c.politeness.max_retries, defaults.politeness.max_retries);
  EXPECT_EQ(c.politeness.robots_retries, defaults.politeness.robots_retries);
  EXPECT_EQ(c.politeness.max_retry_after_s, defaults.politeness.max_retry_after_s);
  EXPECT_EQ(c.output.log_level, defaults.output.log_level);
  EXPECT_EQ(c.fetch.ca_file, defaults.fetch.ca_file);
  EXPECT_EQ(c.fetch.verify_tls, defaults.fetch.verify_tls);
  EXPECT_EQ(c.scope.mode, defaults.scope.mode);
  EXPECT_EQ(c.scope.max_url_length, defaults.scope.max_url_length);
  EXPECT_EQ(c.scope.max_repeated_segments, defaults.scope.max_repeated_segments);
  EXPECT_EQ(c.scope.max_pages_per_host, defaults.scope.max_pages_per_host);
  EXPECT_EQ(c.output.jsonl, defaults.output.jsonl);
  EXPECT_EQ(c.output.warc, defaults.output.warc);
  EXPECT_EQ(c.output.progress, defaults.output.progress);
  EXPECT_EQ(c.fetch.user_agent, defaults.fetch.user_agent);
  EXPECT_EQ(c.fetch.connect_timeout_ms, defaults.fetch.connect_timeout_ms);
  EXPECT_EQ(c.fetch.timeout_ms, defaults.fetch.timeout_ms);
  EXPECT_EQ(c.fetch.max_body_bytes, defaults.fetch.max_body_bytes);
  EXPECT_EQ(c.canonicalize.max_length, defaults.canonicalize.max_length);
  EXPECT_EQ(c.canonicalize.sort_query, defaults.canonicalize.sort_query);
  EXPECT_EQ(c.crawl.seeds, "seeds.txt");
  EXPECT_TRUE(c.Validate().ok());
}

TEST(CrawlConfigTest, ParsesEverySection) {
  Result<CrawlConfig> c = Parse(R"(
[crawl]
seeds = "s.txt"
threads = 3
max_pages = 1_000
exact = true
false_positive_rate = 0.001
[politeness]
delay_ms = 0
[scope]
mode = "domain"
allow = ["^https://a/"]
deny = ["\\.pdf$", "logout"]
[output]
warc = true
[fetch]
user_agent = "bot/1"
[canonicalize]
sort_query = true
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->crawl.seeds, "s.txt");
  EXPECT_EQ(c->crawl.threads, 3);
  EXPECT_EQ(c->crawl.max_pages, 1000);
  EXPECT_TRUE(c->crawl.exact);
  EXPECT_DOUBLE_EQ(c->crawl.false_positive_rate, 0.001);
  EXPECT_EQ(c->politeness.delay_ms, 0);
  EXPECT_EQ(c->scope.mode, ScopeMode::kDomain);
  EXPECT_EQ(c->scope.allow, std::vector<std::string>{"^https://a/"});
  EXPECT_EQ(c->scope.deny, (std::vector<std::string>{"\\.pdf$", "logout"}));
  EXPECT_TRUE(c->output.warc);
  EXPECT_EQ(c->fetch.user_agent, "bot/1");
  EXPECT_TRUE(c->canonicalize.sort_query);
  EXPECT_EQ(c->crawl.max_depth, CrawlConfig().crawl.max_depth);  // untouched keys keep defaults
}

TEST(CrawlConfigTest, WaitsTlsAndLoggingDefaultsAndKeys) {
  const CrawlConfig defaults;
  EXPECT_EQ(defaults.politeness.max_retry_after_s, 600);  // 10 minutes
  EXPECT_EQ(defaults.politeness.robots_retries, 4);       // 5+10+20+40 s of back-off
  EXPECT_TRUE(defaults.fetch.verify_tls);                 // verification stays on by default
  EXPECT_EQ(defaults.fetch.ca_file, "");
  EXPECT_EQ(defaults.output.log_level, LogLevel::kInfo);
  // Every key is documented in configs/default.toml, with its default value.
  std::ifstream in(std::string(URLSIEVE_SOURCE_DIR) + "/configs/default.toml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* line :
       {"\nrobots_retries = 4\n", "\nmax_retry_after_s = 600\n", "\nlog_level = \"info\"\n",
        "\nca_file = \"\"\n", "\nverify_tls = true\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }

  Result<CrawlConfig> c = Parse(R"(
[politeness]
robots_retries = 0
max_retry_after_s = 30
[output]
log_level = "debug"
[fetch]
verify_tls = false
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->politeness.robots_retries, 0);
  EXPECT_EQ(c->politeness.max_retry_after_s, 30);
  EXPECT_EQ(c->output.log_level, LogLevel::kDebug);
  EXPECT_FALSE(c->fetch.verify_tls);
  EXPECT_EQ(ErrorOf("[output]\nlog_level = \"loud\"\n"),
            "test.toml:2: output.log_level: log level must be \"quiet\", \"info\" or \"debug\", "
            "not \"loud\"");
  EXPECT_EQ(ErrorOf("[politeness]\nrobots_retries = -1\n"),
            "test.toml:2: politeness.robots_retries: must be in [0, 100], got -1");
  EXPECT_EQ(ErrorOf("[politeness]\nmax_retry_after_s = -1\n"),
            "test.toml:2: politeness.max_retry_after_s: must be in [0, 2147483647], got -1");
}

TEST(CrawlConfigTest, AnUnreadableCaFileIsRefusedUpFront) {
  CrawlConfig c;
  c.crawl.seeds = "s";
  c.fetch.ca_file = "/nonexistent/ca.pem";
  const Status status = c.Validate();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("fetch.ca_file"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("/nonexistent/ca.pem"), std::string::npos) << status.ToString();
}

TEST(CrawlConfigTest, UnknownKeysAndSectionsAreErrorsWithLocation) {
  EXPECT_EQ(ErrorOf("[crawl]\nthreads = 2\nthread = 4\n"),
            "test.toml:3: crawl.thread: unknown key");
  EXPECT_EQ(ErrorOf("[crawler]\nthreads = 2\n"), "test.toml:1: unknown section [crawler]");
  EXPECT_EQ(ErrorOf("threads = 2\n"), "test.toml:1: unknown section [threads]");
  EXPECT_NE(ErrorOf("[scope]\nmode = \"host\"\n[scope.extra]\nx = 1\n").find("scope.extra"),
            std::string::npos);
}

TEST(CrawlConfigTest, WrongTypesAndRangesAreErrors) {
  EXPECT_EQ(ErrorOf("[crawl]\nthreads = \"8\"\n"),
            "test.toml:2: crawl.threads: must be an integer");
  EXPECT_EQ(ErrorOf("[crawl]\nthreads = 0\n"),
            "test.toml:2: crawl.threads: must be in [1, 1024], got 0");
  EXPECT_EQ(ErrorOf("[crawl]\nexact = 1\n"), "test.toml:2: crawl.exact: must be a boolean");
  EXPECT_EQ(ErrorOf("[scope]\ndeny = [\"a\", 2]\n"),
            "test.toml:2: scope.deny: must be an array of strings");
  EXPECT_EQ(ErrorOf("[scope]\nmode = \"site\"\n"),
            "test.toml:2: scope.mode: scope must be \"host\", \"domain\" or \"any\", not \"site\"");
  EXPECT_EQ(ErrorOf("[crawl]\nfalse_positive_rate = \"x\"\n"),
            "test.toml:2: crawl.false_positive_rate: must be a number");
  EXPECT_EQ(ErrorOf("[output]\n[output]\n").substr(0, 12), "test.toml:2:");  // TOML syntax error
  EXPECT_EQ(ErrorOf("[crawl\n").substr(0, 12), "test.toml:1:");
}

TEST(CrawlConfigTest, ValidateChecksRequiredAndRanges) {
  CrawlConfig c;
  EXPECT_FALSE(c.Validate().ok());  // no seeds
  c.crawl.seeds = "s";
  EXPECT_TRUE(c.Validate().ok());
  c.crawl.false_positive_rate = 1.5;
  EXPECT_FALSE(c.Validate().ok());
  c.crawl.false_positive_rate = 0.01;
  c.scope.max_repeated_segments = 1;
  EXPECT_FALSE(c.Validate().ok());
  c.scope.max_repeated_segments = 0;
  c.crawl.threads = 0;  // flags bypass the file's range checks
  EXPECT_FALSE(c.Validate().ok());
}

TEST(CrawlConfigTest, LoadMissingFileIsIoError) {
  Result<CrawlConfig> c = LoadCrawlConfig("/nonexistent/urlsieve.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kIoError);
}

class CrawlFlagsTest : public ::testing::Test {
 protected:
  Result<CrawlConfig> Run(std::vector<std::string> args) {
    CLI::App app("test");
    cli::AddCrawlFlags(&app, &flags_);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);  // CLI11 takes a reversed argument vector
    return ResolveCrawlConfig(flags_);
  }

  CrawlFlags flags_;
};

TEST_F(CrawlFlagsTest, FlagsOverrideTheFile) {
  testing::ScratchDir dir("urlsieve_flags_test");
  const std::string path = (dir.path() / "crawl.toml").string();
  {
    std::ofstream out(path);
    out << "[crawl]\nseeds = \"file-seeds\"\nthreads = 2\nmax_depth = 4\n"
           "[scope]\ndeny = [\"a\"]\n[output]\nwarc = false\n";
  }
  Result<CrawlConfig> c =
      Run({"--config", path, "--threads", "16", "--warc", "--scope", "any", "--deny", "b",
           "--ignore-nofollow", "--delay-ms", "250", "--user-agent", "x/2"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->crawl.seeds, "file-seeds");  // from the file
  EXPECT_EQ(c->crawl.max_depth, 4);         // from the file
  EXPECT_EQ(c->crawl.threads, 16);          // flag wins
  EXPECT_TRUE(c->output.warc);
  EXPECT_EQ(c->scope.mode, ScopeMode::kAny);
  EXPECT_EQ(c->scope.deny, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(c->crawl.obey_nofollow);
  EXPECT_EQ(c->politeness.delay_ms, 250);
  EXPECT_EQ(c->fetch.user_agent, "x/2");
}

// docs/features/content-seen.md, "Non-HTML bodies": --warc-non-html full | truncate, saved with
// the crawl's options (a continuation archives the same way), and turned into the fetcher's.
TEST_F(CrawlFlagsTest, WarcNonHtmlIsAChoiceKeptWithTheCrawl) {
  Result<CrawlConfig> c = Run({"--seeds", "s.txt", "--warc", "--warc-non-html", "truncate"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->output.warc_non_html, "truncate");
  EXPECT_NE(SavedCrawlConfigText(*c).find("warc_non_html = 'truncate'"), std::string::npos)
      << SavedCrawlConfigText(*c);
  EXPECT_EQ(FetcherOptionsFrom(*c).other_bodies, FetcherOptions::OtherBodies::kFirstBytes);
  EXPECT_TRUE(FetcherOptionsFrom(*c).keep_cut_bodies);
  c->output.warc_non_html = "full";
  EXPECT_EQ(FetcherOptionsFrom(*c).other_bodies, FetcherOptions::OtherBodies::kDownload);
  c->output.warc = false;  // no archive: nothing to keep a body for
  EXPECT_EQ(FetcherOptionsFrom(*c).other_bodies, FetcherOptions::OtherBodies::kSkip);
  EXPECT_FALSE(FetcherOptionsFrom(*c).keep_cut_bodies);
  EXPECT_TRUE(c->Validate().ok());
  c->output.warc_non_html = "truncate";
  EXPECT_EQ(c->Validate().message(), "output.warc_non_html: --warc-non-html truncate needs --warc");
  EXPECT_THROW(Run({"--seeds", "s.txt", "--warc", "--warc-non-html", "some"}),
               CLI::ValidationError);
}

// Issue 24: `--resume` and `--recrawl` needed --seeds (and every scope flag) again. A crawl's
// options are saved in OUT/crawl.toml; continuing takes --out alone, and flags given override.
TEST_F(CrawlFlagsTest, ContinuingACrawlTakesTheOptionsItSaved) {
  testing::ScratchDir dir("urlsieve_saved_options");
  const std::string out = (dir.path() / "out").string();
  std::filesystem::create_directories(out);
  std::ofstream(dir.path() / "seeds.txt") << "http://127.0.0.1:1/\n";
  Result<CrawlConfig> first =
      Run({"--seeds", (dir.path() / "seeds.txt").string(), "--out", out, "--deny", "/private/",
           "--delay-ms", "250", "--exact", "--accept-loss"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(SaveCrawlConfig(*first).ok());
  const std::string saved = SavedCrawlConfigText(*first);
  EXPECT_EQ(saved.find("accept_loss ="), std::string::npos) << "a one-time request is not kept";
  EXPECT_EQ(saved.find("resume ="), std::string::npos);

  for (const char* how : {"--resume", "--recrawl"}) {
    SCOPED_TRACE(how);
    flags_ = CrawlFlags();
    Result<CrawlConfig> continued = Run({"--out", out, how, "--delay-ms", "300"});
    ASSERT_TRUE(continued.ok()) << continued.status().ToString();
    EXPECT_EQ(continued->crawl.seeds, first->crawl.seeds);
    EXPECT_EQ(continued->scope.deny, std::vector<std::string>{"/private/"});
    EXPECT_TRUE(continued->crawl.exact);
    EXPECT_FALSE(continued->crawl.accept_loss);
    EXPECT_EQ(continued->politeness.delay_ms, 300);  // the flag given now wins
  }
  // A new crawl (no --resume) into the same directory does not read it.
  flags_ = CrawlFlags();
  EXPECT_FALSE(Run({"--out", out}).ok());
}

TEST_F(CrawlFlagsTest, WaitTlsAndLoggingFlags) {
  testing::ScratchDir dir("urlsieve_flags_ca");
  const std::string ca = (dir.path() / "ca.pem").string();
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\n";  // readable is all Validate checks
  Result<CrawlConfig> c =
      Run({"--seeds", "s", "--backoff-ms", "10", "--robots-retries", "1", "--max-retry-after-s",
           "60", "--ca-file", ca, "--insecure", "--log-level", "quiet"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->politeness.backoff_ms, 10);
  EXPECT_EQ(c->politeness.robots_retries, 1);
  EXPECT_EQ(c->politeness.max_retry_after_s, 60);
  EXPECT_EQ(c->fetch.ca_file, ca);
  EXPECT_FALSE(c->fetch.verify_tls);
  EXPECT_EQ(c->output.log_level, LogLevel::kQuiet);

  CLI::App app("test");
  CrawlFlags flags;
  cli::AddCrawlFlags(&app, &flags);
  EXPECT_THROW(app.parse(std::vector<std::string>{"loud", "--log-level"}), CLI::ValidationError);
  // Flags bypass the file's range checks; Validate catches them.
  const std::pair<const char*, const char*> kNegatives[] = {
      {"--robots-retries", "politeness.robots_retries"},
      {"--max-retry-after-s", "politeness.max_retry_after_s"},
      {"--backoff-ms", "politeness.backoff_ms"}};
  for (const auto& [flag, key] : kNegatives) {
    CLI::App negative("test");
    CrawlFlags given;
    cli::AddCrawlFlags(&negative, &given);
    negative.parse(std::vector<std::string>{"-1", flag, "s", "--seeds"});
    Result<CrawlConfig> resolved = ResolveCrawlConfig(given);
    ASSERT_FALSE(resolved.ok()) << flag;
    EXPECT_NE(resolved.status().message().find(key), std::string::npos)
        << resolved.status().message();
  }
}

TEST_F(CrawlFlagsTest, FlagsAloneWithoutFile) {
  Result<CrawlConfig> c = Run({"--seeds", "s.txt", "-o", "out", "--max-pages", "10", "--exact"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->crawl.seeds, "s.txt");
  EXPECT_EQ(c->crawl.out_dir, "out");
  EXPECT_EQ(c->crawl.max_pages, 10);
  EXPECT_TRUE(c->crawl.exact);
  EXPECT_EQ(c->crawl.threads, CrawlConfig().crawl.threads);
}

TEST_F(CrawlFlagsTest, RebuildIsAFlagOnly) {
  EXPECT_FALSE(CrawlConfig().crawl.rebuild_bloom);
  Result<CrawlConfig> c = Run({"--seeds", "s.txt", "--resume", "--exact", "--rebuild"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->crawl.rebuild_bloom);
}

TEST_F(CrawlFlagsTest, ClusterFlagsAndTheirSection) {
  Result<CrawlConfig> c =
      Run({"--cluster", "redis://127.0.0.1:1", "--cluster-name", "c1", "--node-id", "n-1",
           "--partitions", "64", "--lease-ttl", "6", "--delay-ms", "2999"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();  // no --seeds: a node may wait for work
  EXPECT_TRUE(c->cluster_mode());
  EXPECT_EQ(c->cluster.url, "redis://127.0.0.1:1");
  EXPECT_EQ(c->cluster.name, "c1");
  EXPECT_EQ(c->cluster.node_id, "n-1");
  EXPECT_EQ(c->cluster.partitions, 64u);
  EXPECT_EQ(c->cluster.lease_ttl_s, 6);
  EXPECT_TRUE(c->crawl.seeds.empty());

  Result<CrawlConfig> file = ParseCrawlConfig(
      "[cluster]\nurl = \"redis://h:2\"\nname = \"x\"\npartitions = 8\nlease_ttl_s = 30\n",
      "test.toml");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->cluster.url, "redis://h:2");
  EXPECT_EQ(file->cluster.partitions, 8u);
  EXPECT_EQ(file->cluster.lease_ttl_s, 30);
  EXPECT_TRUE(file->Validate().ok()) << file->Validate().ToString();
  EXPECT_FALSE(ParseCrawlConfig("[cluster]\npartitions = 0\n", "test.toml").ok());
  EXPECT_FALSE(ParseCrawlConfig("[cluster]\nlease_ttl_s = 0\n", "test.toml").ok());
}

TEST(CrawlConfigTest, ClusterRules) {
  auto error = [](const CrawlConfig& c) { return c.Validate().message(); };
  CrawlConfig c;
  c.cluster.url = "redis://127.0.0.1:1";
  // The name is required with the server.
  EXPECT_NE(error(c).find("cluster.name"), std::string::npos) << error(c);
  c.cluster.name = "c";
  EXPECT_TRUE(c.Validate().ok()) << error(c);  // and seeds are optional
  // A cluster keeps its seen set in its own Redis.
  c.crawl.seen_redis = "redis://127.0.0.1:2";
  c.crawl.seen_redis_name = "s";
  EXPECT_NE(error(c).find("--seen-redis"), std::string::npos) << error(c);
  c.crawl.seen_redis.clear();
  c.crawl.seen_redis_name.clear();
  // The hand-over cool-down (the delay) must fit well inside a lease.
  c.cluster.lease_ttl_s = 2;
  c.politeness.delay_ms = 1000;
  EXPECT_NE(error(c).find("below half the lease TTL"), std::string::npos) << error(c);
  c.politeness.delay_ms = 999;
  EXPECT_TRUE(c.Validate().ok()) << error(c);
  c.crawl.rebuild_bloom = true;
  EXPECT_FALSE(c.Validate().ok());
  c.crawl.rebuild_bloom = false;

  // Without a server: seeds are required, and the other cluster options mean nothing.
  CrawlConfig standalone;
  EXPECT_NE(error(standalone).find("seeds"), std::string::npos) << error(standalone);
  standalone.crawl.seeds = "s";
  standalone.cluster.name = "c";
  EXPECT_NE(error(standalone).find("--cluster"), std::string::npos) << error(standalone);
  standalone.cluster.name.clear();
  standalone.cluster.node_id = "n";
  EXPECT_NE(error(standalone).find("--cluster"), std::string::npos) << error(standalone);
}

TEST_F(CrawlFlagsTest, InvalidFlagValuesAreErrors) {
  EXPECT_FALSE(Run({"--threads", "0", "--seeds", "s"}).ok());
  CLI::App app("test");
  CrawlFlags flags;
  cli::AddCrawlFlags(&app, &flags);
  EXPECT_THROW(app.parse(std::vector<std::string>{"site", "--scope"}), CLI::ValidationError);
  EXPECT_THROW(app.parse(std::vector<std::string>{"many", "--threads"}), CLI::ConversionError);
}

TEST_F(CrawlFlagsTest, BadConfigFileIsReported) {
  Result<CrawlConfig> c = Run({"--config", "/nonexistent.toml"});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent.toml"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve

namespace urlsieve {
namespace {

TEST(CrawlConfigTest, RecrawlSectionReadsDurationsAndFactors) {
  Result<CrawlConfig> c = ParseCrawlConfig(
      "[crawl]\nseeds = \"s\"\n[recrawl]\nrevisit_after = \"12h\"\nmin_interval = \"90m\"\n"
      "max_interval = \"2w\"\nunchanged_factor = 2\nchanged_factor = 0.25\n",
      "r.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->recrawl.revisit_after, std::chrono::hours(12));
  EXPECT_EQ(c->recrawl.min_interval, std::chrono::minutes(90));
  EXPECT_EQ(c->recrawl.max_interval, std::chrono::hours(24 * 14));
  EXPECT_EQ(c->recrawl.unchanged_factor, 2.0);
  EXPECT_EQ(c->recrawl.changed_factor, 0.25);
  EXPECT_FALSE(c->crawl.recrawl);
  EXPECT_TRUE(c->Validate().ok());

  // A duration is a string with a unit; each mistake names the key and its line.
  const std::pair<const char*, const char*> kBad[] = {
      {"revisit_after = 7", "must be a duration"},
      {"revisit_after = \"7 days\"", "bad duration"},
      {"min_interval = \"0\"", "must be in [1s"},
      {"changed_factor = 0", "must be in (0, 1000)"},
  };
  for (const auto& [line, why] : kBad) {
    Result<CrawlConfig> bad = ParseCrawlConfig(
        std::string("[crawl]\nseeds = \"s\"\n[recrawl]\n") + line + "\n", "r.toml");
    ASSERT_FALSE(bad.ok()) << line;
    EXPECT_NE(bad.status().message().find("recrawl."), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find(why), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find("r.toml"), std::string::npos) << bad.status().message();
  }
  Result<CrawlConfig> crossed = ParseCrawlConfig(
      "[crawl]\nseeds = \"s\"\n[recrawl]\nmin_interval = \"2d\"\nmax_interval = \"1d\"\n",
      "r.toml");
  Status valid = crossed.ok() ? crossed->Validate() : crossed.status();
  ASSERT_FALSE(valid.ok());
  EXPECT_NE(valid.message().find("recrawl.min_interval (2d)"), std::string::npos)
      << valid.message();
}

TEST_F(CrawlFlagsTest, RecrawlIsAFlagAndRevisitAfterTakesADuration) {
  Result<CrawlConfig> c = Run({"--seeds", "s.txt", "--recrawl", "--revisit-after", "0"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->crawl.recrawl);
  EXPECT_EQ(c->recrawl.revisit_after, std::chrono::seconds(0));
  c = Run({"--seeds", "s.txt", "--revisit-after", "3d"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->recrawl.revisit_after, std::chrono::hours(72));
  Result<CrawlConfig> bad = Run({"--seeds", "s.txt", "--revisit-after", "3x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("recrawl.revisit_after"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace urlsieve
