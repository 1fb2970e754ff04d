#include "crawler/crawl_config.h"

#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

namespace urlsieve {

std::string_view ScopeModeName(ScopeMode mode) {
  switch (mode) {
    case ScopeMode::kHost:
      return "host";
    case ScopeMode::kDomain:
      return "domain";
    case ScopeMode::kAny:
      return "any";
  }
  return "?";
}

Result<ScopeMode> ParseScopeMode(std::string_view name) {
  for (ScopeMode m : {ScopeMode::kHost, ScopeMode::kDomain, ScopeMode::kAny}) {
    if (name == ScopeModeName(m)) return m;
  }
  return Status::InvalidArgument("scope must be \"host\", \"domain\" or \"any\", not \"" +
                                 std::string(name) + "\"");
}

namespace {

// Reads one TOML table strictly: every key must be claimed by a field, with the right type.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, std::string_view source)
      : table_(table), prefix_(std::move(prefix)), source_(source) {}

  void Bool(const char* key, bool* out) {
    Field(key, [&](const toml::node& n) -> Status {
      if (!n.is_boolean()) return TypeError(key, n, "a boolean");
      *out = n.as_boolean()->get();
      return Status::Ok();
    });
  }
  void String(const char* key, std::string* out) {
    Field(key, [&](const toml::node& n) -> Status {
      if (!n.is_string()) return TypeError(key, n, "a string");
      *out = n.as_string()->get();
      return Status::Ok();
    });
  }
  template <typename Int>
  void Integer(const char* key, Int* out, int64_t min, int64_t max) {
    Field(key, [&, min, max](const toml::node& n) -> Status {
      if (!n.is_integer()) return TypeError(key, n, "an integer");
      int64_t v = n.as_integer()->get();
      if (v < min || v > max) {
        return Error(key, n,
                     "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                         std::to_string(v));
      }
      *out = static_cast<Int>(v);
      return Status::Ok();
    });
  }
  void Double(const char* key, double* out) {
    Field(key, [&](const toml::node& n) -> Status {
      if (n.is_integer()) {
        *out = static_cast<double>(n.as_integer()->get());
      } else if (n.is_floating_point()) {
        *out = n.as_floating_point()->get();
      } else {
        return TypeError(key, n, "a number");
      }
      return Status::Ok();
    });
  }
  void StringList(const char* key, std::vector<std::string>* out) {
    Field(key, [&](const toml::node& n) -> Status {
      const toml::array* arr = n.as_array();
      if (arr == nullptr) return TypeError(key, n, "an array of strings");
      out->clear();
      for (const toml::node& item : *arr) {
        if (!item.is_string()) return TypeError(key, item, "an array of strings");
        out->push_back(item.as_string()->get());
      }
      return Status::Ok();
    });
  }
  void Custom(const char* key, std::function<Status(const toml::node&)> fn) {
    Field(key, [&](const toml::node& n) -> Status {
      Status s = fn(n);
      return s.ok() ? s : Error(key, n, s.message());
    });
  }

  // The first error, or an error for the first key that no field claimed.
  Status Finish() {
    if (!status_.ok()) return status_;
    for (auto&& [k, v] : table_) {
      if (!claimed_.count(k.str())) return Error(k.str(), v, "unknown key");
    }
    return Status::Ok();
  }

 private:
  template <typename Fn>
  void Field(const char* key, Fn&& read) {
    claimed_.emplace(key);
    if (!status_.ok()) return;
    if (const toml::node* n = table_.get(key)) status_ = read(*n);
  }
  Status TypeError(std::string_view key, const toml::node& n, const char* want) {
    return Error(key, n, std::string("must be ") + want);
  }
  Status Error(std::string_view key, const toml::node& n, const std::string& what) {
    return Status::InvalidArgument(std::string(source_) + ":" +
                                   std::to_string(n.source().begin.line) + ": " + prefix_ +
                                   std::string(key) + ": " + what);
  }

  const toml::table& table_;
  std::string prefix_;
  std::string_view source_;
  std::set<std::string, std::less<>> claimed_;
  Status status_;
};

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

Status ReadSection(std::string_view name, const toml::table& t, std::string_view source,
                   CrawlConfig* c) {
  TableReader r(t, std::string(name) + ".", source);
  if (name == "crawl") {
    auto& s = c->crawl;
    r.String("seeds", &s.seeds);
    r.String("out_dir", &s.out_dir);
    r.Integer("threads", &s.threads, 1, 1024);
    r.Integer("max_pages", &s.max_pages, 0, kMaxI64);
    r.Integer("max_depth", &s.max_depth, 0, kMaxInt);
    r.Bool("resume", &s.resume);
    r.Bool("exact", &s.exact);
    r.Integer("expected_urls", &s.expected_urls, 1, kMaxI64);
    r.Double("false_positive_rate", &s.false_positive_rate);
    r.Integer("checkpoint_interval_s", &s.checkpoint_interval_s, 0, kMaxInt);
    r.Integer("max_pending_in_memory", &s.max_pending_in_memory, 1000, kMaxI64);
    r.Bool("obey_nofollow", &s.obey_nofollow);
  } else if (name == "politeness") {
    auto& s = c->politeness;
    r.Integer("delay_ms", &s.delay_ms, 0, kMaxInt);
    r.Integer("per_host_concurrency", &s.per_host_concurrency, 1, 1024);
    r.Bool("obey_robots", &s.obey_robots);
    r.Integer("max_crawl_delay_ms", &s.max_crawl_delay_ms, 0, kMaxInt);
    r.Integer("backoff_ms", &s.backoff_ms, 0, kMaxInt);
    r.Integer("max_retries", &s.max_retries, 0, 100);
    r.Integer("robots_retries", &s.robots_retries, 0, 100);
    r.Integer("max_retry_after_s", &s.max_retry_after_s, 0, kMaxInt);
  } else if (name == "scope") {
    auto& s = c->scope;
    r.Custom("mode", [&](const toml::node& n) -> Status {
      if (!n.is_string()) return Status::InvalidArgument("must be a string");
      Result<ScopeMode> m = ParseScopeMode(n.as_string()->get());
      if (!m.ok()) return m.status();
      s.mode = *m;
      return Status::Ok();
    });
    r.StringList("allow", &s.allow);
    r.StringList("deny", &s.deny);
    r.Integer("max_url_length", &s.max_url_length, 16, 1 << 20);
    r.Integer("max_repeated_segments", &s.max_repeated_segments, 0, 1000);
    r.Integer("max_pages_per_host", &s.max_pages_per_host, 0, kMaxI64);
  } else if (name == "output") {
    auto& s = c->output;
    r.Bool("jsonl", &s.jsonl);
    r.Bool("warc", &s.warc);
    r.Bool("progress", &s.progress);
    r.Custom("log_level", [&](const toml::node& n) -> Status {
      if (!n.is_string()) return Status::InvalidArgument("must be a string");
      Result<LogLevel> level = ParseLogLevel(n.as_string()->get());
      if (!level.ok()) return level.status();
      s.log_level = *level;
      return Status::Ok();
    });
  } else if (name == "fetch") {
    auto& s = c->fetch;
    r.String("user_agent", &s.user_agent);
    r.Integer("connect_timeout_ms", &s.connect_timeout_ms, 1, kMaxInt);
    r.Integer("timeout_ms", &s.timeout_ms, 1, kMaxInt);
    r.Integer("max_body_bytes", &s.max_body_bytes, 1, kMaxI64);
    r.String("ca_file", &s.ca_file);
    r.Bool("verify_tls", &s.verify_tls);
  } else if (name == "canonicalize") {
    auto& s = c->canonicalize;
    r.Bool("sort_query", &s.sort_query);
    r.Bool("drop_empty_query", &s.drop_empty_query);
    r.Bool("strip_session_ids", &s.strip_session_ids);
    r.Bool("strip_www", &s.strip_www);
    r.Bool("collapse_slashes", &s.collapse_slashes);
    r.Integer("max_length", &s.max_length, 16, 1 << 20);
  }
  return r.Finish();
}

}  // namespace

Status CrawlConfig::Validate() const {
  if (crawl.seeds.empty()) return Status::InvalidArgument("crawl.seeds: a seeds file is required");
  if (crawl.out_dir.empty()) return Status::InvalidArgument("crawl.out_dir must not be empty");
  if (!(crawl.false_positive_rate > 0 && crawl.false_positive_rate < 1)) {
    return Status::InvalidArgument("crawl.false_positive_rate must be in (0, 1)");
  }
  if (fetch.user_agent.empty())
    return Status::InvalidArgument("fetch.user_agent must not be empty");
  // Flags bypass the file's range checks, so the ranges that matter are checked again here.
  if (crawl.threads < 1) return Status::InvalidArgument("crawl.threads must be >= 1");
  if (crawl.max_pages < 0) return Status::InvalidArgument("crawl.max_pages must be >= 0");
  if (crawl.max_depth < 0) return Status::InvalidArgument("crawl.max_depth must be >= 0");
  if (crawl.checkpoint_interval_s < 0) {
    return Status::InvalidArgument("crawl.checkpoint_interval_s must be >= 0");
  }
  if (politeness.delay_ms < 0) return Status::InvalidArgument("politeness.delay_ms must be >= 0");
  if (politeness.per_host_concurrency < 1) {
    return Status::InvalidArgument("politeness.per_host_concurrency must be >= 1");
  }
  if (fetch.timeout_ms < 1 || fetch.connect_timeout_ms < 1) {
    return Status::InvalidArgument("fetch timeouts must be >= 1 ms");
  }
  if (scope.max_repeated_segments == 1 || scope.max_repeated_segments < 0) {
    return Status::InvalidArgument("scope.max_repeated_segments must be 0 (off) or >= 2");
  }
  if (fetch.max_body_bytes < 1) return Status::InvalidArgument("fetch.max_body_bytes must be >= 1");
  if (politeness.backoff_ms < 0) {
    return Status::InvalidArgument("politeness.backoff_ms must be >= 0");
  }
  if (politeness.robots_retries < 0 || politeness.robots_retries > 100) {
    return Status::InvalidArgument("politeness.robots_retries must be in [0, 100]");
  }
  if (politeness.max_retry_after_s < 0) {
    return Status::InvalidArgument("politeness.max_retry_after_s must be >= 0");
  }
  if (!fetch.ca_file.empty() && !std::ifstream(fetch.ca_file)) {
    // Checked now: libcurl would only notice at the first https fetch, and fail every one.
    return Status::InvalidArgument("fetch.ca_file: cannot read the CA bundle '" + fetch.ca_file +
                                   "'");
  }
  return Status::Ok();
}

Result<CrawlConfig> ParseCrawlConfig(std::string_view toml_text, std::string_view source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(std::string(source) + ":" +
                                   std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  static constexpr const char* kSections[] = {"crawl",  "politeness", "scope",
                                              "output", "fetch",      "canonicalize"};
  CrawlConfig config;
  for (auto&& [key, node] : root) {
    bool known = false;
    for (const char* s : kSections) known = known || key.str() == s;
    std::string where = std::string(source) + ":" + std::to_string(node.source().begin.line) + ": ";
    if (!known)
      return Status::InvalidArgument(where + "unknown section [" + std::string(key.str()) + "]");
    const toml::table* t = node.as_table();
    if (t == nullptr) {
      return Status::InvalidArgument(where + std::string(key.str()) + " must be a [section]");
    }
    URLSIEVE_RETURN_IF_ERROR(ReadSection(key.str(), *t, source, &config));
  }
  return config;
}

Result<CrawlConfig> LoadCrawlConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot open config file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read config file " + path);
  return ParseCrawlConfig(text.str(), path);
}

void AddCrawlFlags(CLI::App* cmd, CrawlFlags* f) {
  auto opt = [cmd](const char* name, auto* slot, const char* help) {
    using T = typename std::remove_reference_t<decltype(*slot)>::value_type;
    cmd->add_option_function<T>(
        name, [slot](const T& v) { *slot = v; }, help);
  };
  auto flag = [cmd](const char* name, std::optional<bool>* slot, bool value, const char* help) {
    cmd->add_flag_function(
        name, [slot, value](int64_t) { *slot = value; }, help);
  };
  opt("-c,--config", &f->config, "TOML config file (see configs/default.toml); flags override it");
  opt("--seeds", &f->seeds, "File with one seed URL per line");
  opt("-o,--out", &f->out_dir, "Output and state directory");
  opt("-t,--threads", &f->threads, "Fetcher threads");
  opt("--delay-ms", &f->delay_ms, "Minimum delay between requests to one host");
  opt("--per-host,--per-host-concurrency", &f->per_host_concurrency, "Parallel requests per host");
  opt("--max-pages", &f->max_pages, "Stop after this many fetches (0 = unlimited)");
  opt("--max-depth", &f->max_depth, "Maximum link depth from the seeds");
  cmd->add_option_function<std::string>(
         "--scope",
         [f](const std::string& v) {
           // check() below has already validated the name.
           f->scope = *ParseScopeMode(v);
         },
         "host | domain | any")
      ->check(CLI::IsMember({"host", "domain", "any"}));
  cmd->add_option("--allow", f->allow, "Regex the canonical URL must match (repeatable)");
  cmd->add_option("--deny", f->deny, "Regex that rejects a canonical URL (repeatable)");
  flag("--exact", &f->exact, true, "Confirm Bloom hits in SQLite (no false 'seen')");
  flag("--warc", &f->warc, true, "Also write <out>/crawl.warc.gz");
  flag("--resume", &f->resume, true, "Continue the crawl whose state is in --out");
  flag("--rebuild", &f->rebuild_bloom, true,
       "With --resume of an --exact crawl: rebuild the Bloom filter from the exact store");
  flag("--ignore-nofollow", &f->obey_nofollow, false, "Follow rel=nofollow and meta nofollow");
  flag("--ignore-robots", &f->obey_robots, false, "Do not fetch or obey robots.txt");
  opt("--user-agent", &f->user_agent, "User-Agent header and robots.txt product token");
  opt("--timeout-ms", &f->timeout_ms, "Whole-transfer timeout");
  opt("--max-body-bytes", &f->max_body_bytes, "Largest body kept (after decompression)");
  opt("--checkpoint-s", &f->checkpoint_interval_s, "Seconds between checkpoints (0: after every page)");
  opt("--backoff-ms", &f->backoff_ms, "First back-off after a failure; doubles per failure");
  opt("--robots-retries", &f->robots_retries,
      "How often an unreachable robots.txt is asked again before its origin is given up");
  opt("--max-retry-after-s", &f->max_retry_after_s,
      "Longest Retry-After waited for; a longer one retires the host");
  opt("--ca-file", &f->ca_file, "PEM CA bundle to verify TLS certificates against");
  flag("--insecure", &f->verify_tls, false,
       "Do not verify TLS certificates or host names (prints a warning)");
  cmd->add_option_function<std::string>(
         "--log-level",
         [f](const std::string& v) {
           // check() below has already validated the name.
           f->log_level = *ParseLogLevel(v);
         },
         "quiet | info (retries and back-offs, the default) | debug (every fetch)")
      ->check(CLI::IsMember({"quiet", "info", "debug"}));
}

void ApplyCrawlFlags(const CrawlFlags& f, CrawlConfig* c) {
  auto set = [](const auto& flag, auto* field) {
    if (flag) *field = *flag;
  };
  set(f.seeds, &c->crawl.seeds);
  set(f.out_dir, &c->crawl.out_dir);
  set(f.threads, &c->crawl.threads);
  set(f.delay_ms, &c->politeness.delay_ms);
  set(f.per_host_concurrency, &c->politeness.per_host_concurrency);
  set(f.max_pages, &c->crawl.max_pages);
  set(f.max_depth, &c->crawl.max_depth);
  set(f.scope, &c->scope.mode);
  c->scope.allow.insert(c->scope.allow.end(), f.allow.begin(), f.allow.end());
  c->scope.deny.insert(c->scope.deny.end(), f.deny.begin(), f.deny.end());
  set(f.exact, &c->crawl.exact);
  set(f.warc, &c->output.warc);
  set(f.resume, &c->crawl.resume);
  set(f.rebuild_bloom, &c->crawl.rebuild_bloom);
  set(f.obey_nofollow, &c->crawl.obey_nofollow);
  set(f.obey_robots, &c->politeness.obey_robots);
  set(f.user_agent, &c->fetch.user_agent);
  set(f.timeout_ms, &c->fetch.timeout_ms);
  set(f.max_body_bytes, &c->fetch.max_body_bytes);
  set(f.checkpoint_interval_s, &c->crawl.checkpoint_interval_s);
  set(f.backoff_ms, &c->politeness.backoff_ms);
  set(f.robots_retries, &c->politeness.robots_retries);
  set(f.max_retry_after_s, &c->politeness.max_retry_after_s);
  set(f.ca_file, &c->fetch.ca_file);
  set(f.verify_tls, &c->fetch.verify_tls);
  set(f.log_level, &c->output.log_level);
}

Result<CrawlConfig> ResolveCrawlConfig(const CrawlFlags& flags) {
  CrawlConfig config;
  if (flags.config) {
    Result<CrawlConfig> loaded = LoadCrawlConfig(*flags.config);
    if (!loaded.ok()) return loaded.status();
    config = std::move(*loaded);
  }
  ApplyCrawlFlags(flags, &config);
  URLSIEVE_RETURN_IF_ERROR(config.Validate());
  return config;
}

}  // namespace urlsieve
