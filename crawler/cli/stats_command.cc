// `urlsieve stats`: what a filter's state directory holds (dedup/seen_filter.h), as a table or as
// one JSON object. It opens the state read-only (SeenFilterOptions::read_only): it writes nothing,
// works on a read-only directory, and fails (naming the pid) while a writer has the state open.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "crawler/cli/commands.h"
#include "dedup/seen_filter.h"
#include "dedup/url_canonicalizer.h"

namespace urlsieve::cli {
namespace {

struct StatsFlags {
  std::string state_dir;
  bool json = false;
};

std::string EncodeCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    if (!(o.*rule.member)) continue;
    if (!s.empty()) s += ",";
    s += rule.flag.substr(2);  // "sort-query"
  }
  return s.empty() ? "default" : s;
}

int RunStats(const StatsFlags& flags) {
  SeenFilterOptions options;
  options.state_dir = flags.state_dir;
  options.read_only = true;  // creates nothing, not even a state where there is none
  auto opened = SeenFilter::Open(options);
  if (!opened.ok()) {
    fprintf(stderr, "urlsieve stats: %s\n", opened.status().ToString().c_str());
    return kExitFailure;
  }
  const SeenFilter& filter = **opened;
  const SeenStats s = filter.Stats();
  const std::string canon = EncodeCanonicalize(filter.options().canonicalize);
  if (flags.json) {
    nlohmann::json j = {
        {"state_dir", flags.state_dir},
        {"mode", s.exact ? "exact" : "bloom"},
        {"capacity", s.capacity},
        {"fp_rate", s.fp_rate},
        {"canonicalize", canon},
        {"generation", s.generation},
        {"identity", s.identity.ToHex()},
        {"keys", s.bloom_inserted},
        {"bloom",
         {{"inserted", s.bloom_inserted},
          {"capacity", s.bloom_capacity},
          {"layers", s.bloom_layers},
          {"bytes", s.bloom_bytes},
          {"fill_ratio", s.bloom_fill_ratio},
          {"expected_fp_rate", s.bloom_expected_fp_rate}}},
    };
    if (s.exact) {
      j["exact_store"] = {{"stored_keys", s.stored_keys},
                          {"maybe_lookups", s.maybe_lookups},
                          {"false_positives", s.false_positives}};
    }
    printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  printf("state directory   %s\n", flags.state_dir.c_str());
  printf("mode              %s\n", s.exact ? "exact (Bloom + SQLite)" : "Bloom only");
  printf("capacity          %llu\n", static_cast<unsigned long long>(s.capacity));
  printf("fp rate bound     %g\n", s.fp_rate);
  printf("canonicalize      %s\n", canon.c_str());
  printf("generation        %llu\n", static_cast<unsigned long long>(s.generation));
  printf("identity          %s\n", s.identity.ToHex().c_str());
  printf("keys              %llu\n", static_cast<unsigned long long>(s.bloom_inserted));
  printf("bloom layers      %u (capacity %llu)\n", s.bloom_layers,
         static_cast<unsigned long long>(s.bloom_capacity));
  printf("bloom bytes       %llu (%.1f bits/key)\n", static_cast<unsigned long long>(s.bloom_bytes),
         s.bloom_inserted
             ? 8.0 * static_cast<double>(s.bloom_bytes) / static_cast<double>(s.bloom_inserted)
             : 0.0);
  printf("fill ratio        %.4f\n", s.bloom_fill_ratio);
  printf("expected fp rate  %.3g\n", s.bloom_expected_fp_rate);
  if (s.exact) {
    printf("stored keys       %llu\n", static_cast<unsigned long long>(s.stored_keys));
    printf("maybe lookups     %llu\n", static_cast<unsigned long long>(s.maybe_lookups));
    printf("false positives   %llu (confirmed new by the exact store)\n",
           static_cast<unsigned long long>(s.false_positives));
  }
  return kExitOk;
}

}  // namespace

void AddStatsCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<StatsFlags>();
  CLI::App* cmd = app.add_subcommand("stats", "Print the statistics of a filter state directory");
  cmd->add_option("--state", flags->state_dir, "State directory")->required();
  cmd->add_flag("--json", flags->json, "One JSON object instead of a table");
  cmd->callback([flags, exit_code] { *exit_code = RunStats(*flags); });
}

}  // namespace urlsieve::cli
