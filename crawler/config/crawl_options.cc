#include "crawler/config/crawl_options.h"

#include <chrono>
#include <cstdio>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/duration.h"
#include "base/encoding/text_encoding.h"
#include "crawler/config/crawl_config.h"
#include "url/tracking_params.h"

namespace urlsieve {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

// Ten years: far past any useful interval, far from overflowing a time computation.
constexpr std::chrono::seconds kMaxDuration(10LL * 366 * 24 * 3600);

constexpr std::string_view kScopeModes[] = {"host", "domain", "any"};
constexpr std::string_view kLogLevels[] = {"quiet", "info", "debug"};
constexpr std::string_view kFollowSkip[] = {"follow", "skip"};
constexpr std::string_view kWarcNonHtml[] = {"full", "truncate"};
constexpr std::string_view kDustModes[] = {"off", "learn", "apply"};

// An option's key and the member it sets, from one spelling: OPTION_KEY(crawl, threads) is the
// TOML key crawl.threads and the member config.crawl.threads.
template <typename Access>
struct OptionKey {
  std::string_view section;
  std::string_view name;
  Access access;  // a captureless lambda: (const) CrawlConfig& -> the member
};
#define OPTION_KEY(section, name)                                    \
  OptionKey {                                                        \
#section, #name, [](auto& c) -> auto& { return c.section.name; } \
  }

// get/set of a member of type T, reached through Access.
template <typename Access>
void BindMember(CrawlOptionSpec* spec) {
  using T = std::remove_cvref_t<decltype(Access{}(std::declval<CrawlConfig&>()))>;
  spec->get = [](const CrawlConfig& c) -> OptionValue {
    const T& v = Access{}(c);
    if constexpr (std::is_same_v<T, bool>) {
      return v;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<double>(v);
    } else if constexpr (std::is_same_v<T, ScopeMode>) {
      return std::string(ScopeModeName(v));
    } else if constexpr (std::is_same_v<T, LogLevel>) {
      return std::string(LogLevelName(v));
    } else if constexpr (std::is_same_v<T, std::chrono::seconds>) {
      return FormatDuration(v);
    } else {
      return v;  // std::string, std::vector<std::string>
    }
  };
  spec->set = [](CrawlConfig* c, const OptionValue& value) -> Status {
    T& member = Access{}(*c);
    using Held = std::conditional_t<
        std::is_same_v<T, bool>, bool,
        std::conditional_t<
            std::is_integral_v<T>, int64_t,
            std::conditional_t<
                std::is_floating_point_v<T>, double,
                std::conditional_t<std::is_enum_v<T> || std::is_same_v<T, std::chrono::seconds>,
                                   std::string, T>>>>;
    const Held* v = std::get_if<Held>(&value);
    if (v == nullptr) return Status::InvalidArgument("a value of the wrong type");
    if constexpr (std::is_same_v<T, ScopeMode>) {
      Result<ScopeMode> mode = ParseScopeMode(*v);
      if (!mode.ok()) return mode.status();
      member = *mode;
    } else if constexpr (std::is_same_v<T, LogLevel>) {
      Result<LogLevel> level = ParseLogLevel(*v);
      if (!level.ok()) return level.status();
      member = *level;
    } else if constexpr (std::is_same_v<T, std::chrono::seconds>) {
      Result<std::chrono::seconds> duration = ParseDuration(*v);
      if (!duration.ok()) return duration.status();
      member = *duration;
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // The rules keep values in range (crawl_options_test checks); this keeps a bad value in
      // code from wrapping around.
      if (!std::in_range<T>(*v)) return Status::InvalidArgument("out of range");
      member = static_cast<T>(*v);
    } else {
      member = static_cast<T>(*v);
    }
    return Status::Ok();
  };
}

template <typename Access>
CrawlOptionSpec Spec(OptionKey<Access> key, OptionType type, std::string_view flag,
                     std::string_view help) {
  CrawlOptionSpec spec;
  spec.section = key.section;
  spec.name = key.name;
  spec.type = type;
  spec.flag = flag;
  spec.help = help;
  BindMember<Access>(&spec);
  return spec;
}

template <typename Access>
CrawlOptionSpec Bool(OptionKey<Access> key, std::string_view flag, bool flag_sets,
                     std::string_view help) {
  CrawlOptionSpec spec = Spec(key, OptionType::kBool, flag, help);
  spec.flag_sets = flag_sets;
  return spec;
}

// An integer or a duration (in seconds) in [min, max].
CrawlOptionSpec InRange(CrawlOptionSpec spec, int64_t min, int64_t max) {
  spec.min = min;
  spec.max = max;
  return spec;
}

template <typename Access>
CrawlOptionSpec Integer(OptionKey<Access> key, std::string_view flag, std::string_view help,
                        int64_t min, int64_t max) {
  return InRange(Spec(key, OptionType::kInteger, flag, help), min, max);
}

template <typename Access>
CrawlOptionSpec Number(OptionKey<Access> key, std::string_view flag, std::string_view help,
                       double above, double below) {
  CrawlOptionSpec spec = Spec(key, OptionType::kNumber, flag, help);
  spec.above = above;
  spec.below = below;
  return spec;
}

template <typename Access>
CrawlOptionSpec String(OptionKey<Access> key, std::string_view flag, std::string_view help,
                       std::string_view if_empty = {}) {
  CrawlOptionSpec spec = Spec(key, OptionType::kString, flag, help);
  spec.if_empty = if_empty;
  return spec;
}

template <typename Access>
CrawlOptionSpec StringList(OptionKey<Access> key, std::string_view flag, std::string_view help) {
  return Spec(key, OptionType::kStringList, flag, help);
}

template <typename Access>
CrawlOptionSpec Choice(OptionKey<Access> key, std::string_view flag, std::string_view help,
                       std::span<const std::string_view> choices) {
  CrawlOptionSpec spec = Spec(key, OptionType::kChoice, flag, help);
  spec.choices = choices;
  return spec;
}

template <typename Access>
CrawlOptionSpec Duration(OptionKey<Access> key, std::string_view flag, std::string_view help,
                         std::chrono::seconds min, std::chrono::seconds max) {
  return InRange(Spec(key, OptionType::kDuration, flag, help), min.count(), max.count());
}

// crawl.default_encoding: a label of the Encoding Standard that names an encoding a page
// without a declaration can be read in (docs/features/encodings.md, "Character encodings").
std::string CheckDefaultEncoding(std::string_view label) {
  const TextEncoding* encoding = EncodingForLabel(label);
  // Built with append: GCC 12 -O3 reports a false -Wrestrict on assigning a short literal here.
  std::string why(1, '"');
  why.append(label).push_back('"');
  if (encoding == nullptr) {
    return why.append(
        " is not an encoding label of the WHATWG Encoding Standard (e.g. windows-1252, utf-8, "
        "gbk, shift_jis, iso-8859-2)");
  }
  if (encoding == &ReplacementEncoding() || encoding == &Utf16BeEncoding() ||
      encoding == &Utf16LeEncoding()) {
    // An undeclared page is read as ASCII-compatible text, as the HTML prescan assumes.
    return why.append(" names ")
        .append(encoding->name)
        .append(", which cannot be a default: it does not read ASCII as ASCII");
  }
  return {};
}

CrawlOptionSpec Checked(CrawlOptionSpec spec, std::string (*check)(std::string_view)) {
  spec.check = check;
  return spec;
}

CrawlOptionSpec FlagOnly(CrawlOptionSpec spec) {
  spec.in_file = false;
  return spec;
}

CrawlOptionSpec ZeroIsOff(CrawlOptionSpec spec) {
  spec.zero_is_off = true;
  return spec;
}

// [canonicalize]: one boolean key per opt-in rule of url/url_canonicalizer.h.
template <size_t I>
CrawlOptionSpec CanonicalizeRuleOption() {
  constexpr CanonicalizeRule rule = kCanonicalizeRules[I];
  auto access = [](auto& c) -> auto& { return c.canonicalize.*(kCanonicalizeRules[I].member); };
  return Bool(OptionKey{"canonicalize", rule.name, access}, "", true, rule.help);
}

template <size_t... I>
void AddCanonicalizeRuleOptions(std::vector<CrawlOptionSpec>* specs, std::index_sequence<I...>) {
  (specs->push_back(CanonicalizeRuleOption<I>()), ...);
}

// The options with a flag, in --help order.
std::vector<CrawlOptionSpec> FlagOptionSpecs() {
  return {
      String(OPTION_KEY(crawl, seeds), "--seeds",
             "File with one seed URL per line (optional for a node of a --cluster)",
             "a seeds file is required"),
      String(OPTION_KEY(crawl, out_dir), "-o,--out", "Output and state directory",
             "must not be empty"),
      Integer(OPTION_KEY(crawl, threads), "-t,--threads", "Fetcher threads", 1, 1024),
      Integer(OPTION_KEY(politeness, delay_ms), "--delay-ms",
              "Minimum delay between requests to one host", 0, kMaxInt),
      Integer(OPTION_KEY(politeness, per_host_concurrency), "--per-host,--per-host-concurrency",
              "Parallel requests per host", 1, 1024),
      Integer(OPTION_KEY(crawl, max_pages), "--max-pages",
              "Stop after this many fetches (0 = unlimited; per node in a --cluster)", 0, kMaxI64),
      Integer(OPTION_KEY(crawl, max_depth), "--max-depth", "Maximum link depth from the seeds", 0,
              kMaxInt),
      Choice(OPTION_KEY(scope, mode), "--scope", "host | domain | any", kScopeModes),
      StringList(OPTION_KEY(scope, allow), "--allow",
                 "Regex the canonical URL must match (repeatable)"),
      StringList(OPTION_KEY(scope, deny), "--deny",
                 "Regex that rejects a canonical URL (repeatable)"),
      Bool(OPTION_KEY(crawl, exact), "--exact", true,
           "Confirm Bloom hits in SQLite (no false 'seen')"),
      Bool(OPTION_KEY(crawl, deletable), "--deletable", true,
           "Bloom-only: 4-bit counters (4x the memory), so that `urlsieve forget` works on "
           "OUT/state (a new crawl only)"),
      Bool(OPTION_KEY(output, warc), "--warc", true, "Also write <out>/crawl.warc.gz"),
      Bool(OPTION_KEY(content, seen), "--no-content-seen", false,
           "Do not test pages' content against the pages fetched before (no duplicate_of, no "
           "WARC revisits for duplicates)"),
      Bool(OPTION_KEY(content, near), "--no-near-duplicates", false,
           "Test for exact duplicates only (no SimHash of the visible text)"),
      Integer(OPTION_KEY(content, near_distance), "--near-distance",
              "Largest Hamming distance of two pages' 64-bit SimHashes that are near duplicates", 0,
              7),
      Choice(OPTION_KEY(content, duplicate_links), "--duplicate-links",
             "follow | skip: the links of an exact duplicate (skip: an exact copy elsewhere "
             "resolves its relative links elsewhere, the way URL traps grow)",
             kFollowSkip),
      Choice(OPTION_KEY(content, near_duplicate_links), "--near-duplicate-links",
             "follow | skip: the links of a near duplicate", kFollowSkip),
      Choice(OPTION_KEY(dust, mode), "--dust",
             "off | learn | apply: learn which URLs of a site are the same page from the "
             "content-seen test (learn: list them; apply: also stop fetching the copies, once a "
             "rule has support, confidence and a validation sample; docs/features/dust.md)",
             kDustModes),
      // Readable or "": checked by CrawlConfig::Validate, which knows it names a file.
      String(OPTION_KEY(dust, rules_file), "--rules-file",
             "A TOML file of URL rules to pin (always applied) or forbid (never learned)"),
      Choice(OPTION_KEY(output, warc_non_html), "--warc-non-html",
             "With --warc, the body of a non-HTML response (never parsed): full (download and "
             "archive it, up to --max-body-bytes) | truncate (stop at its first bytes, archived "
             "marked WARC-Truncated)",
             kWarcNonHtml),
      Bool(OPTION_KEY(crawl, resume), "--resume", true,
           "Continue the crawl whose state is in --out"),
      FlagOnly(Bool(OPTION_KEY(crawl, rebuild_bloom), "--rebuild", true,
                    "With --resume of an --exact crawl: rebuild the Bloom filter from the exact "
                    "store")),
      FlagOnly(Bool(OPTION_KEY(crawl, recrawl), "--recrawl", true,
                    "Fetch again the URLs of the crawl in --out whose interval has passed, "
                    "conditionally (ETag, Last-Modified); continue a stopped one with --resume")),
      Duration(OPTION_KEY(recrawl, revisit_after), "--revisit-after",
               "With --recrawl: the interval of fetched URLs that have none, and of new ones "
               "(0: every fetched URL is due now), e.g. 7d, 12h",
               std::chrono::seconds(0), kMaxDuration),
      Bool(OPTION_KEY(crawl, obey_nofollow), "--ignore-nofollow", false,
           "Follow rel=nofollow and meta nofollow"),
      Checked(String(OPTION_KEY(crawl, default_encoding), "--default-encoding",
                     "Encoding of an HTML page that declares none (no BOM, HTTP charset or "
                     "<meta charset>): a WHATWG Encoding Standard label"),
              CheckDefaultEncoding),
      Bool(OPTION_KEY(politeness, obey_robots), "--ignore-robots", false,
           "Do not fetch or obey robots.txt"),
      String(OPTION_KEY(fetch, user_agent), "--user-agent",
             "User-Agent header and robots.txt product token", "must not be empty"),
      Integer(OPTION_KEY(fetch, timeout_ms), "--timeout-ms", "Whole-transfer timeout", 1, kMaxInt),
      Integer(OPTION_KEY(fetch, max_body_bytes), "--max-body-bytes",
              "Largest body kept (after decompression)", 1, kMaxI64),
      Integer(OPTION_KEY(crawl, checkpoint_interval_s), "--checkpoint-s",
              "Seconds between checkpoints (0: after every page)", 0, kMaxInt),
      Integer(OPTION_KEY(politeness, backoff_ms), "--backoff-ms",
              "First back-off after a failure; doubles per failure", 0, kMaxInt),
      Integer(OPTION_KEY(politeness, robots_retries), "--robots-retries",
              "How often an unreachable robots.txt is asked again before its origin is given up", 0,
              100),
      Integer(OPTION_KEY(politeness, max_retry_after_s), "--max-retry-after-s",
              "Longest Retry-After waited for; a longer one retires the host", 0, kMaxInt),
      // Readable or "": checked by CrawlConfig::Validate, which knows it names a file.
      String(OPTION_KEY(fetch, ca_file), "--ca-file",
             "PEM CA bundle to verify TLS certificates against"),
      Bool(OPTION_KEY(fetch, verify_tls), "--insecure", false,
           "Do not verify TLS certificates or host names (prints a warning)"),
      String(OPTION_KEY(crawl, seen_redis), "--seen-redis",
             "Share the seen set in Redis, redis://[:password@]host:port[/db] (with --name): "
             "crawls with disjoint seeds on one set fetch each URL once in total"),
      String(OPTION_KEY(crawl, seen_redis_name), "--name,--seen-redis-name",
             "The name of the shared seen set in --seen-redis"),
      String(OPTION_KEY(crawl, redis_password_file), "--redis-password-file",
             "Read the Redis password from this file's first line (else URLSIEVE_REDIS_PASSWORD "
             "or REDISCLI_AUTH), so that it is not on the command line"),
      Bool(OPTION_KEY(crawl, accept_loss), "--accept-loss", true,
           "Repair a shared seen set that lost data (its lost parts made again, empty: their "
           "URLs are fetched again) instead of stopping"),
      String(
          OPTION_KEY(cluster, url), "--cluster",
          "Crawl as a node of a cluster coordinated in Redis, redis://[:password@]host:port[/db] "
          "(with --cluster-name); each node has its own --out"),
      String(OPTION_KEY(cluster, name), "--cluster-name", "The name of the crawl cluster"),
      String(OPTION_KEY(cluster, node_id), "--node-id",
             "This node's id in the cluster (default: kept in the state; for a new crawl, the "
             "host name and 6 random hex digits)"),
      Integer(OPTION_KEY(cluster, partitions), "--partitions",
              "Partitions of the URL space (by politeness key) for a new cluster", 1, 65536),
      Integer(OPTION_KEY(cluster, lease_ttl_s), "--lease-ttl",
              "Seconds a node's partition lease lasts without a heartbeat", 1, 3600),
      StringList(OPTION_KEY(sitemaps, urls), "--sitemap",
                 "A sitemap (or sitemap index) URL to read URLs from (repeatable); the Sitemap: "
                 "lines of robots.txt are read too"),
      Integer(OPTION_KEY(sitemaps, max_total), "--max-sitemaps",
              "Most sitemaps fetched in a crawl (robots.txt, --sitemap and index children)", 0,
              kMaxInt),
      Choice(OPTION_KEY(output, log_level), "--log-level",
             "quiet | info (retries and back-offs, the default) | debug (every fetch)", kLogLevels),
      // Checked by CrawlConfig::Validate, which parses the address (MetricsAddress).
      String(OPTION_KEY(output, metrics_listen), "--metrics-listen",
             "Serve Prometheus metrics at http://HOST:PORT/metrics during the crawl (port 0: a "
             "free port, written to <out>/metrics.addr), e.g. 127.0.0.1:9100"),
      Duration(OPTION_KEY(output, metrics_linger), "--metrics-linger",
               "With --metrics-listen: keep serving the final metrics this long after the crawl "
               "ends (a signal ends it sooner), e.g. 30s",
               std::chrono::seconds(0), std::chrono::seconds(24 * 3600)),
  };
}

// The config-file keys without a flag, section by section.
std::vector<CrawlOptionSpec> FileOnlyOptionSpecs() {
  std::vector<CrawlOptionSpec> specs = {
      Integer(OPTION_KEY(crawl, expected_urls), "",
              "Bloom filter capacity; past it the filter grows a layer", 1, kMaxI64),
      Number(OPTION_KEY(crawl, false_positive_rate), "",
             "Target false-positive rate of the Bloom filter", 0, 1),
      Integer(OPTION_KEY(crawl, max_pending_in_memory), "",
              "Pending URLs kept in RAM; the rest wait in state/spill.db", 1000, kMaxI64),
      Integer(OPTION_KEY(politeness, max_crawl_delay_ms), "",
              "Cap on a robots.txt Crawl-delay, in milliseconds", 0, kMaxInt),
      Integer(OPTION_KEY(politeness, max_retries), "",
              "A failed fetch is tried again at most this many times", 0, 100),
      Integer(OPTION_KEY(scope, max_url_length), "", "Longest canonical URL followed, in bytes", 16,
              1 << 20),
      ZeroIsOff(Integer(OPTION_KEY(scope, max_repeated_segments), "",
                        "Reject a path where one run of segments repeats this often (0: off)", 2,
                        1000)),
      Integer(OPTION_KEY(scope, max_pages_per_host), "",
              "Most pages fetched from one host (0 = unlimited; per node in a cluster)", 0,
              kMaxI64),
      Bool(OPTION_KEY(output, jsonl), "", true, "One JSON object per fetch in pages.jsonl"),
      Bool(OPTION_KEY(output, progress), "", true,
           "A progress line on stderr, only when stderr is a terminal"),
      Integer(OPTION_KEY(fetch, connect_timeout_ms), "", "Connection timeout, in milliseconds", 1,
              kMaxInt),
  };
  // [recrawl] (docs/features/recrawl.md, "Re-crawl"): the adaptive interval, as Nutch's
  // AdaptiveFetchSchedule.
  specs.push_back(Duration(OPTION_KEY(recrawl, min_interval), "",
                           "Shortest interval between two fetches of a URL",
                           std::chrono::seconds(1), kMaxDuration));
  specs.push_back(Duration(OPTION_KEY(recrawl, max_interval), "",
                           "Longest interval between two fetches of a URL", std::chrono::seconds(1),
                           kMaxDuration));
  specs.push_back(Number(OPTION_KEY(recrawl, unchanged_factor), "",
                         "A URL found unchanged has its interval multiplied by this", 0, 1000));
  specs.push_back(Number(OPTION_KEY(recrawl, changed_factor), "",
                         "A URL found changed has its interval multiplied by this", 0, 1000));
  // [dust] (docs/features/dust.md, "Learned URL rules").
  specs.push_back(Integer(OPTION_KEY(dust, min_support), "",
                          "Pairs of copies a candidate rule explains before it is validated", 1,
                          kMaxInt));
  specs.push_back(Number(OPTION_KEY(dust, min_confidence), "",
                         "Share of a candidate's observed pairs it explains (no counter-example)",
                         0, 1.0000001));
  specs.push_back(ZeroIsOff(Number(OPTION_KEY(dust, min_confidence_bound), "",
                                   "Lower bound at 95 % (Wilson score) of that share before a "
                                   "candidate is validated (0.8: 16 pairs without a "
                                   "counter-example; 0: none)",
                                   0, 1)));
  specs.push_back(Integer(OPTION_KEY(dust, validation_sample), "",
                          "URLs a rule would suppress, fetched as checks before it does", 0, 1000));
  specs.push_back(ZeroIsOff(Integer(OPTION_KEY(dust, check_every), "",
                                    "An active rule fetches the 4th and 16th, then every Nth "
                                    "URL it covers as a check (0: off)",
                                    2, kMaxInt)));
  specs.push_back(Number(OPTION_KEY(dust, max_check_share), "",
                         "Checks (validation and spot) stay under this share of the pages fetched "
                         "(at least 10)",
                         0, 1.0000001));
  // [sitemaps] (docs/features/sitemaps.md, "Sitemaps").
  specs.push_back(Integer(OPTION_KEY(sitemaps, max_nesting), "",
                          "Deepest sitemap index nesting followed (0: no index child)", 0, 64));
  AddCanonicalizeRuleOptions(&specs, std::make_index_sequence<std::size(kCanonicalizeRules)>());
  specs.push_back(Checked(StringList(OPTION_KEY(canonicalize, tracking_exceptions), "",
                                     "With strip_tracking_params: \"HOST:NAME\" keeps the "
                                     "tracking parameter NAME on HOST and the hosts under it"),
                          CheckTrackingException));
  specs.push_back(Integer(OPTION_KEY(canonicalize, max_length), "",
                          "Longer URLs are rejected before canonicalization", 16, 1 << 20));
  return specs;
}

std::vector<CrawlOptionSpec> BuildCrawlOptionSpecs() {
  std::vector<CrawlOptionSpec> specs = FlagOptionSpecs();
  std::vector<CrawlOptionSpec> file_only = FileOnlyOptionSpecs();
  specs.insert(specs.end(), std::make_move_iterator(file_only.begin()),
               std::make_move_iterator(file_only.end()));
  return specs;
}

#undef OPTION_KEY

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

std::string CrawlOptionSpec::key() const {
  std::string key(section);
  key += '.';
  key += name;
  return key;
}

std::span<const CrawlOptionSpec> CrawlOptionSpecs() {
  static const std::vector<CrawlOptionSpec> specs = BuildCrawlOptionSpecs();
  return specs;
}

std::string CheckOptionValue(const CrawlOptionSpec& spec, const OptionValue& value) {
  switch (spec.type) {
    case OptionType::kInteger: {
      const int64_t* v = std::get_if<int64_t>(&value);
      if (v == nullptr) return "must be an integer";
      if (*v >= spec.min && *v <= spec.max) return "";
      if (spec.zero_is_off && *v == 0) return "";
      // Appended, not "x" + std::string&&: GCC 12 -O3 reports a false -Wrestrict on that.
      std::string message = spec.zero_is_off ? "must be 0 (off) or in [" : "must be in [";
      message += std::to_string(spec.min);
      message += ", ";
      message += std::to_string(spec.max);
      message += "], got ";
      message += std::to_string(*v);
      return message;
    }
    case OptionType::kNumber: {
      const double* v = std::get_if<double>(&value);
      if (v == nullptr) return "must be a number";
      if (*v > spec.above && *v < spec.below) return "";
      if (spec.zero_is_off && *v == 0) return "";
      std::string message = spec.zero_is_off ? "must be 0 (off) or in (" : "must be in (";
      message += FormatNumber(spec.above);
      message += ", ";
      message += FormatNumber(spec.below);
      message += "), got ";
      message += FormatNumber(*v);
      return message;
    }
    case OptionType::kChoice: {
      const std::string* v = std::get_if<std::string>(&value);
      if (v == nullptr) return "must be a string";
      for (std::string_view choice : spec.choices) {
        if (*v == choice) return "";
      }
      std::string names;
      for (std::string_view choice : spec.choices) {
        names += names.empty() ? "" : ", ";
        names += choice;
      }
      return "must be one of " + names + ", not \"" + *v + "\"";
    }
    case OptionType::kDuration: {
      const std::string* v = std::get_if<std::string>(&value);
      if (v == nullptr) return "must be a duration such as \"7d\"";
      Result<std::chrono::seconds> duration = ParseDuration(*v);
      if (!duration.ok()) return duration.status().message();
      if (duration->count() >= spec.min && duration->count() <= spec.max) return "";
      std::string message = "must be in [";
      message += FormatDuration(std::chrono::seconds(spec.min));
      message += ", ";
      message += FormatDuration(std::chrono::seconds(spec.max));
      message += "], got ";
      message += *v;
      return message;
    }
    case OptionType::kString: {
      const std::string* v = std::get_if<std::string>(&value);
      if (v == nullptr) return "must be a string";
      return spec.check != nullptr ? spec.check(*v) : "";
    }
    case OptionType::kStringList: {
      const std::vector<std::string>* v = std::get_if<std::vector<std::string>>(&value);
      if (v == nullptr) return "must be a list of strings";
      if (spec.check == nullptr) return "";
      for (const std::string& item : *v) {
        std::string why = spec.check(item);
        if (!why.empty()) return why;
      }
      return "";
    }
    case OptionType::kBool:
      return "";
  }
  return "";
}

Status StoreOption(const CrawlOptionSpec& spec, const OptionValue& value, CrawlConfig* config) {
  // A name that is not a choice is explained by the choice's own parser (ParseScopeMode).
  if (spec.type != OptionType::kChoice) {
    std::string why = CheckOptionValue(spec, value);
    if (!why.empty()) return Status::InvalidArgument(why);
  }
  return spec.set(config, value);
}

}  // namespace urlsieve
