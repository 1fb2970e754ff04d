// `urlsieve stats`: what a filter's state directory holds (dedup/seen_filter.h), as a table or as
// one JSON object. It opens the state read-only (SeenFilterOptions::read_only): it writes nothing,
// works on a read-only directory, and fails (naming the pid) while a writer has the state open.
// `--redis URL --name NAME`: the same for a seen set shared in Redis (dedup/redis_seen_set.h),
// plus what it costs there (RedisSeenSet::Usage: bytes, keys, masters; bytes per URL). Read-only
// too: a set that is not there is an error (NotFound), and nothing is created.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/duration.h"
#include "crawler/cli/commands.h"
#include "crawler/cli/option_flags.h"
#include "crawler/cluster/cluster_keys.h"
#include "dedup/redis_seen_set.h"
#include "dedup/seen_filter.h"
#include "redis/redis_address.h"
#include "url/tracking_params.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::cli {
namespace {

struct StatsFlags {
  std::string state_dir;
  std::string redis_url;  // with redis_name: a shared set instead of state_dir
  std::string redis_name;
  RedisFlagValues redis{.writes = false, .password_file = {}, .accept_loss = false};
  bool json = false;
};

std::string EncodeCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    if (!(o.*rule.member)) continue;
    if (!s.empty()) s += ",";
    s += rule.flag.substr(2);  // "sort-query"
  }
  if (o.strip_tracking_params) {  // "keep-tracking-param=example.com:ref", as the flag is given
    for (const std::string& exception : NormalizeTrackingExceptions(o.tracking_exceptions)) {
      s += ",";
      s += kKeepTrackingParamFlag.substr(2);
      s += "=" + exception;
    }
  }
  return s.empty() ? "default" : s;
}

double PerKey(uint64_t bytes, uint64_t keys) {
  return keys ? static_cast<double>(bytes) / static_cast<double>(keys) : 0.0;
}

const char* BloomMode(const SeenStats& s) {
  return s.deletable ? "Bloom only, deletable (4-bit counters)" : "Bloom only";
}

// The --json form of PrintStats.
void PrintStatsJson(const StatsFlags& flags, const SeenStats& s, const std::string& canon,
                    const RedisSeenSetUsage* usage) {
  const bool redis = usage != nullptr;
  nlohmann::json j;
  if (redis) {
    j["redis"] = RedisAddress::Parse(flags.redis_url)->ToString();  // parsed before
    j["name"] = flags.redis_name;
  } else {
    j["state_dir"] = flags.state_dir;
  }
  j["mode"] = s.exact ? "exact" : "bloom";
  j["deletable"] = s.deletable;
  j["capacity"] = s.capacity;
  j["fp_rate"] = s.fp_rate;
  j["canonicalize"] = canon;
  if (!redis) j["generation"] = s.generation;
  if (s.revisit_after_s > 0) {  // docs/features/generational.md, "The generational seen set"
    j["revisit_after"] = FormatDuration(std::chrono::seconds(s.revisit_after_s));
    j["revisit_after_seconds"] = s.revisit_after_s;
    if (s.generations > 0) {  // a local exact state ages by first-seen times, not generations
      j["generations"] = s.generations;
      j["live_generations"] = s.live_generations;
    }
  }
  j["identity"] = s.identity.ToHex();
  j["keys"] = s.bloom_inserted;
  j["bloom"] = {{"inserted", s.bloom_inserted},     {"capacity", s.bloom_capacity},
                {"layers", s.bloom_layers},         {"bytes", s.bloom_bytes},
                {"fill_ratio", s.bloom_fill_ratio}, {"expected_fp_rate", s.bloom_expected_fp_rate}};
  j["bloom"]["bits_per_key"] = 8.0 * PerKey(s.bloom_bytes, s.bloom_inserted);
  if (s.exact) {
    j["exact_store"] = {{"stored_keys", s.stored_keys},
                        {"maybe_lookups", s.maybe_lookups},
                        {"false_positives", s.false_positives}};
  }
  if (redis) {
    j["redis_memory"] = {{"bytes", usage->bytes},
                         {"keys", usage->keys},
                         {"masters", usage->masters},
                         {"bytes_per_url", PerKey(usage->bytes, s.bloom_inserted)}};
    if (usage->inbox_streams > 0) {  // a routed set's inboxes: the crawl cluster's work queue
      j["inboxes"] = {{"streams", usage->inbox_streams},
                      {"entries", usage->inbox_entries},
                      {"bytes", usage->inbox_bytes}};
    }
  }
  printf("%s\n", j.dump().c_str());
}

// The table form of PrintStats.
void PrintStatsTable(const StatsFlags& flags, const SeenStats& s, const std::string& canon,
                     const RedisSeenSetUsage* usage) {
  const bool redis = usage != nullptr;
  if (redis) {
    printf("redis             %s\n", RedisAddress::Parse(flags.redis_url)->ToString().c_str());
    printf("name              %s\n", flags.redis_name.c_str());
    printf("mode              %s\n", s.exact ? "exact (Bloom + fingerprints)" : BloomMode(s));
  } else {
    printf("state directory   %s\n", flags.state_dir.c_str());
    printf("mode              %s\n", s.exact ? "exact (Bloom + SQLite)" : BloomMode(s));
  }
  printf("capacity          %llu\n", static_cast<unsigned long long>(s.capacity));
  printf("fp rate bound     %g\n", s.fp_rate);
  printf("canonicalize      %s\n", canon.c_str());
  if (!redis) printf("generation        %llu\n", static_cast<unsigned long long>(s.generation));
  if (s.revisit_after_s > 0 && s.generations > 0) {
    printf("revisit after     %s in %u generations (%u live)\n",
           FormatDuration(std::chrono::seconds(s.revisit_after_s)).c_str(), s.generations,
           s.live_generations);
  } else if (s.revisit_after_s > 0) {
    printf("revisit after     %s (by each key's first-seen time)\n",
           FormatDuration(std::chrono::seconds(s.revisit_after_s)).c_str());
  }
  printf("identity          %s\n", s.identity.ToHex().c_str());
  printf("keys              %llu\n", static_cast<unsigned long long>(s.bloom_inserted));
  printf("bloom layers      %u (capacity %llu)\n", s.bloom_layers,
         static_cast<unsigned long long>(s.bloom_capacity));
  printf("bloom bytes       %llu (%.1f bits/key)\n", static_cast<unsigned long long>(s.bloom_bytes),
         8.0 * PerKey(s.bloom_bytes, s.bloom_inserted));
  printf("fill ratio        %.4f\n", s.bloom_fill_ratio);
  printf("expected fp rate  %.3g\n", s.bloom_expected_fp_rate);
  if (s.exact) {
    printf("stored keys       %llu\n", static_cast<unsigned long long>(s.stored_keys));
    printf("maybe lookups     %llu\n", static_cast<unsigned long long>(s.maybe_lookups));
    printf("false positives   %llu (confirmed new by the exact store)\n",
           static_cast<unsigned long long>(s.false_positives));
  }
  if (redis) {
    printf("redis memory      %llu bytes in %llu keys on %llu master%s\n",
           static_cast<unsigned long long>(usage->bytes),
           static_cast<unsigned long long>(usage->keys),
           static_cast<unsigned long long>(usage->masters), usage->masters == 1 ? "" : "s");
    printf("bytes per URL     %.2f\n", PerKey(usage->bytes, s.bloom_inserted));
    if (usage->inbox_streams > 0) {
      printf(
          "inboxes           %llu entries in %llu stream%s, %llu bytes (the crawl cluster's "
          "work queue, not in the memory above)\n",
          static_cast<unsigned long long>(usage->inbox_entries),
          static_cast<unsigned long long>(usage->inbox_streams),
          usage->inbox_streams == 1 ? "" : "s",
          static_cast<unsigned long long>(usage->inbox_bytes));
    }
  }
}

// Where the set is, its parameters and counts, and for a Redis set (usage non-null) what it costs
// there: a table, or one JSON object.
int PrintStats(const StatsFlags& flags, const SeenStats& s, const CanonicalizeOptions& canonicalize,
               const RedisSeenSetUsage* usage) {
  const std::string canon = EncodeCanonicalize(canonicalize);
  if (flags.json) {
    PrintStatsJson(flags, s, canon, usage);
  } else {
    PrintStatsTable(flags, s, canon, usage);
  }
  return kExitOk;
}

int Fail(const Status& status) {
  fprintf(stderr, "urlsieve stats: %s\n", status.ToString().c_str());
  return kExitFailure;
}

int RunRedisStats(const StatsFlags& flags) {
  Result<RedisAddress> address = RedisAddress::Parse(flags.redis_url);
  if (!address.ok()) return Fail(address.status());
  RedisSeenSetOptions options;
  options.address = *address;
  options.name = flags.redis_name;
  options.read_only = true;  // NotFound for a set that is not there; creates nothing
  options.front_cache_keys = 0;
  // A crawl cluster's set: its inboxes are counted apart (Usage).
  options.new_key_stream = {std::string(kClusterInboxSuffix), std::string(kClusterInboxGroup)};
  std::vector<SeenNotice> notices;
  auto opened = RedisSeenSet::Open(options, &notices);
  if (!opened.ok()) return Fail(opened.status());
  const RedisSeenSet& set = **opened;
  Result<RedisSeenSetUsage> usage = set.Usage();
  if (!usage.ok()) return Fail(usage.status());
  return PrintStats(flags, set.Stats(), set.parameters().canonicalize, &*usage);
}

int RunStats(const StatsFlags& flags) {
  if (!flags.redis_url.empty()) return RunRedisStats(flags);
  SeenFilterOptions options;
  options.state_dir = flags.state_dir;
  options.read_only = true;  // creates nothing, not even a state where there is none
  auto opened = SeenFilter::Open(options);
  if (!opened.ok()) return Fail(opened.status());
  const SeenFilter& filter = **opened;
  return PrintStats(flags, filter.Stats(), filter.options().canonicalize, nullptr);
}

}  // namespace

void AddStatsCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<StatsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "stats", "Print the statistics of a filter state directory, or of a seen set in Redis");
  const SeenSetFlags set =
      AddSeenSetFlags(cmd, &flags->state_dir, &flags->redis_url, &flags->redis_name,
                      {.state = "State directory",
                       .redis = "A seen set shared in Redis instead: "
                                "redis://[[user]:password@]host:port[/db] (with --name)",
                       .name = "The set's name in --redis"},
                      &flags->redis);
  cmd->add_flag("--json", flags->json, "One JSON object instead of a table");
  cmd->callback([flags, exit_code, set] {
    RequireSeenSet(set);
    *exit_code = RunStats(*flags);
  });
}

}  // namespace urlsieve::cli
