// CrawlConfig: every option of `urlsieve crawl`, loaded from a TOML file and overridden by flags.
//
// Each option is declared once, in the table of crawler/config/crawl_options.h (key, flag, rule,
// help); configs/default.toml documents it. The file's sections map one-to-one onto the nested
// structs below ([crawl], [politeness], [scope], [output], [fetch], [recrawl], [sitemaps],
// [canonicalize]). Loading is strict: an unknown section or key, or a value of the wrong type or
// range, is an error naming the file, the key and the line, because a typo in a crawl config
// silently crawling with defaults is worse than refusing to start. Precedence: built-in defaults <
// config file < command-line flags. Thread-safety: a plain value; load it once, then share it
// read-only.
#ifndef URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_H_
#define URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/logger.h"
#include "base/status.h"
#include "crawler/config/crawl_options.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

// Which hosts a crawl stays on (see crawler/crawl/scope.h).
enum class ScopeMode {
  kHost,    // exactly the seed hosts
  kDomain,  // the seeds' registrable domains (public suffix list): a.example.com -> example.com
  kAny,     // any http(s) host
};
std::string_view ScopeModeName(ScopeMode mode);
Result<ScopeMode> ParseScopeMode(std::string_view name);

struct CrawlConfig {
  struct Crawl {
    std::string seeds;  // file with one seed URL per line (required)
    std::string out_dir = "crawl-out";
    int threads = 8;        // fetcher threads
    int64_t max_pages = 0;  // total fetches; 0 = unlimited
    int max_depth = 10;     // seeds are depth 0
    bool resume = false;    // continue from the state in out_dir
    // Flag only (--recrawl; docs/features/recrawl.md, "Re-crawl"): continue the crawl in out_dir
    // and fetch again, conditionally, every fetched URL whose interval has passed (see [recrawl]).
    bool recrawl = false;
    bool rebuild_bloom = false;  // flag only (--rebuild, with --resume --exact): rebuild the
                                 // Bloom filter from the exact store (dedup/seen_filter.h)
    bool exact = false;          // confirm Bloom "maybe" answers in SQLite: no false "seen"
    bool deletable = false;      // a counting Bloom filter, so that `urlsieve forget` can delete
    uint64_t expected_urls = 10'000'000;  // Bloom filter capacity before it grows a layer
    double false_positive_rate = 1e-6;    // Bloom filter target
    int checkpoint_interval_s = 2;        // state + outputs made consistent on disk this often
                                          // (0: after every page; bench/checkpoint_cost.sh)
    uint64_t max_pending_in_memory = 1'000'000;  // pending URLs past this wait in SQLite
    bool obey_nofollow = true;  // rel=nofollow and <meta name=robots content=nofollow|none>
    // The encoding of an HTML page that declares none (docs/features/encodings.md, "Character
    // encodings"): an Encoding Standard label, checked by Validate.
    std::string default_encoding = "windows-1252";
    // A seen set shared in Redis instead of the one in out_dir/state (crawler/state/crawl_state.h):
    // redis://[[user]:password@]host:port[/db] and the set's name there; both or neither.
    std::string seen_redis;
    std::string seen_redis_name;
    // The Redis password's file (its first line), for a URL without one: not on the command line.
    std::string redis_password_file;
    // A shared set that lost data is repaired at open (RedisSeenSetOptions::accept_loss).
    bool accept_loss = false;
  } crawl;

  struct Politeness {
    int delay_ms = 1000;  // minimum gap between two requests to one host:port
    int per_host_concurrency = 1;
    bool obey_robots = true;          // RFC 9309
    int max_crawl_delay_ms = 30'000;  // cap on a robots.txt Crawl-delay
    int backoff_ms = 5'000;           // first back-off after an error; doubles per failure
    int max_retries = 2;              // a failed fetch is tried again at most this often
    int robots_retries = 4;           // an unreachable robots.txt is asked again this often
    int max_retry_after_s = 600;      // a longer Retry-After retires the host
  } politeness;

  struct Scope {
    ScopeMode mode = ScopeMode::kHost;
    std::vector<std::string> allow;  // ECMAScript regexes on the canonical URL; empty = all
    std::vector<std::string> deny;   // applied after allow; any match rejects
    size_t max_url_length = 2048;    // canonical URL length (fetch form)
    int max_repeated_segments = 3;   // "/a/b/a/b/a/b" repeats "a/b" 3 times; 0 = no limit
    int64_t max_pages_per_host = 0;  // 0 = unlimited
  } scope;

  struct Output {
    bool jsonl = true;  // <out_dir>/pages.jsonl
    bool warc = false;  // <out_dir>/crawl.warc.gz
    // With warc: the bodies of non-HTML responses (docs/features/content-seen.md, "Non-HTML
    // bodies"): "full" (downloaded up to fetch.max_body_bytes and archived) or "truncate" (the
    // transfer stops at the first bytes; the record is marked WARC-Truncated: length).
    std::string warc_non_html = "full";
    bool progress = true;  // a progress line on stderr when it is a terminal
    // What stderr tells: warnings and every retry, back-off or host given up (kInfo).
    LogLevel log_level = LogLevel::kInfo;
    // The Prometheus endpoint (docs/features/metrics.md, "Metrics"): HOST:PORT to serve GET
    // /metrics on during the crawl ("" = none; port 0 = a free port, written to
    // out_dir/metrics.addr), and how long it keeps serving the final figures after the crawl ends
    // (a signal cuts it short).
    std::string metrics_listen;
    std::chrono::seconds metrics_linger{0};
  } output;

  struct Fetch {
    std::string user_agent = "urlsieve/0.1";
    int connect_timeout_ms = 10'000;
    int timeout_ms = 30'000;            // whole transfer
    int64_t max_body_bytes = 10 << 20;  // also enforced after decompression
    std::string ca_file;                // PEM CA bundle instead of the system's ("" = system)
    bool verify_tls = true;             // false (--insecure): no certificate or host check
  } fetch;

  // The re-crawl schedule (crawler/state/recrawl_schedule.h): each fetched URL's interval adapts as
  // in Nutch's AdaptiveFetchSchedule, within [min_interval, max_interval].
  struct Recrawl {
    // With --recrawl: the interval of records that have none (0: every fetched URL is due now);
    // always: the first interval of a URL fetched for the first time.
    std::chrono::seconds revisit_after{7 * 24 * 3600};
    std::chrono::seconds min_interval{3600};
    std::chrono::seconds max_interval{90 * 24 * 3600};
    double unchanged_factor = 1.5;  // the interval of a URL found unchanged is multiplied by it
    double changed_factor = 0.5;    // and of one found changed
  } recrawl;

  // Sitemaps (docs/features/sitemaps.md, "Sitemaps"): besides these, the Sitemap: lines of every
  // robots.txt the crawl fetches.
  struct Sitemaps {
    std::vector<std::string> urls;  // --sitemap URL (repeatable): fetched at nesting level 0
    int max_total = 10'000;         // sitemaps fetched per crawl, all sources and levels
    int max_nesting = 4;            // an index's children are one level deeper; past this: cut
  } sitemaps;

  // The content-seen test (docs/features/content-seen.md, "In the crawl"): each page's payload
  // digest and the SimHash of its visible text against the pages fetched before (this crawl's and
  // its earlier runs'; with --seen-redis or --cluster, every crawl's on the set).
  struct Content {
    bool seen = true;       // false (--no-content-seen): no test, no fingerprint kept
    bool near = true;       // false (--no-near-duplicates): exact duplicates only
    int near_distance = 3;  // the largest Hamming distance of a near duplicate, 0..7
    // Whether the links of an exact, resp. near duplicate are followed: "follow" | "skip".
    std::string duplicate_links = "skip";
    std::string near_duplicate_links = "follow";
  } content;

  // Learned URL rules (docs/features/dust.md, "Learned URL rules"): which URLs are the same page,
  // learned from the content-seen test's collisions while the crawl runs (url/dust_learner.h).
  struct Dust {
    std::string mode = "apply";  // off | learn | apply (--dust)
    std::string rules_file;      // TOML: rules to pin or forbid (--rules-file)
    int min_support = 5;         // pairs before a candidate is validated
    double min_confidence = 0.95;
    double min_confidence_bound = 0.8;  // and its lower bound at 95 % (Wilson)
    int validation_sample = 3;          // checks fetched before a rule suppresses anything
    // An active rule fetches its 4th, 16th, then every Nth covered URL as a check.
    int check_every = 50;
    double max_check_share = 0.015;  // checks stay under this share of the pages (at least 10)
  } dust;

  CanonicalizeOptions canonicalize;

  // A crawl cluster (docs/features/cluster.md, "The crawl cluster";
  // crawler/cluster/cluster_coordinator.h): several nodes crawl together through Redis, each with
  // its own out_dir. url empty: a standalone crawl.
  struct Cluster {
    std::string url;   // redis://[[user]:password@]host:port[/db] (--cluster)
    std::string name;  // the cluster's name there (--cluster-name), required with url
    // This node's id (--node-id); "" = the one kept in the state, or for a new crawl a generated
    // one (host name + 6 random hex digits).
    std::string node_id;
    uint32_t partitions = 1024;  // for a new cluster; must match an existing one
    int lease_ttl_s = 10;        // partition lease TTL; politeness.delay_ms must be below half
  } cluster;

  bool cluster_mode() const { return !cluster.url.empty(); }

  // Checks every option against its rule in the table (crawler/config/crawl_options.h), that the
  // required ones are set, that ca_file is readable and the cluster rules (a cluster needs its
  // name, excludes --seen-redis, wants delay_ms below lease_ttl / 2; seeds are optional only in a
  // cluster); compiles nothing. Errors name the key.
  Status Validate() const;
};

// Parses TOML text; `source` (a file name) prefixes error messages. Missing keys keep defaults.
Result<CrawlConfig> ParseCrawlConfig(std::string_view toml_text, std::string_view source);
Result<CrawlConfig> LoadCrawlConfig(const std::string& path);

// Options given on the command line (crawler/cli/option_flags.h fills it); each one given
// overrides the config file.
struct CrawlFlags {
  std::optional<std::string> config;  // --config FILE
  // Each option given, with its value; a kStringList's values are appended to the file's list.
  std::vector<std::pair<const CrawlOptionSpec*, OptionValue>> given;
};

// Copies every flag that was given into *config.
Status ApplyCrawlFlags(const CrawlFlags& flags, CrawlConfig* config);
// The whole sequence: defaults, then flags.config (if any; else, continuing a crawl, the options it
// saved: crawl_config_file.h), then the flags, then Validate().
Result<CrawlConfig> ResolveCrawlConfig(const CrawlFlags& flags);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CONFIG_CRAWL_CONFIG_H_
