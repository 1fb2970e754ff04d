// `urlsieve rules --state OUT` (or `--redis URL --name NAME`): the URL rules a crawl learned
// (docs/features/dust.md, "Listing rules"), read from OUT/state/state.db
// (crawler/state/dust_rule_store.h): per rule its origin, form, state, support, confidence, checks
// passed and made, URLs it suppressed, and the pair that proposed it. A table, or --json (one
// object per line). Read-only: it writes nothing and may run while the crawl does (SQLite's WAL
// lets a reader see the last committed checkpoint). With
// --redis: the rules the crawls on that shared set adopted and retired (state, origin, form).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/sqlite_db.h"
#include "crawler/cli/commands.h"
#include "crawler/cli/line_io.h"
#include "crawler/cli/option_flags.h"
#include "crawler/crawl/rule_exchange.h"
#include "crawler/state/dust_rule_store.h"

namespace urlsieve::cli {
namespace {

struct RulesFlags {
  std::string out_dir;
  std::string redis_url;  // with redis_name: the rules shared on a seen set in Redis
  std::string redis_name;
  std::string password_file;
  bool json = false;
  bool all = false;  // also rejected and retired rules
};

// --redis: what the crawls on a shared set have adopted and retired (evidence stays with each
// crawl's state).
int RunSharedRules(const RulesFlags& flags) {
  Result<std::unique_ptr<RuleExchange>> exchange =
      RuleExchange::Open(flags.redis_url, flags.redis_name);
  if (!exchange.ok()) {
    std::fprintf(stderr, "urlsieve rules: %s\n", exchange.status().message().c_str());
    return kExitFailure;
  }
  Result<std::vector<RuleExchange::SharedRule>> rules = (*exchange)->List();
  if (!rules.ok()) {
    std::fprintf(stderr, "urlsieve rules: %s\n", rules.status().message().c_str());
    return kExitFailure;
  }
  LineWriter out(STDOUT_FILENO);
  for (const RuleExchange::SharedRule& rule : *rules) {
    if (flags.json) {
      const nlohmann::ordered_json j = {
          {"origin", rule.origin}, {"form", rule.form}, {"state", rule.state}};
      out.WriteLine(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    } else if (flags.all || rule.state == "active") {
      out.WriteLine(rule.state + "  " + rule.origin + "  " + rule.form);
    }
  }
  if (!out.Flush()) {
    std::fprintf(stderr, "urlsieve rules: cannot write stdout\n");
    return kExitFailure;
  }
  return kExitOk;
}

int RunRules(const RulesFlags& flags) {
  if (!flags.redis_url.empty()) return RunSharedRules(flags);
  namespace fs = std::filesystem;
  // OUT (a crawl's output directory) or OUT/state.
  fs::path db_path = fs::path(flags.out_dir) / "state" / "state.db";
  std::error_code error;
  if (!fs::exists(db_path, error)) db_path = fs::path(flags.out_dir) / "state.db";
  if (!fs::exists(db_path, error)) {
    std::fprintf(stderr, "urlsieve rules: no crawl state in %s (no state/state.db)\n",
                 flags.out_dir.c_str());
    return kExitFailure;
  }
  SqliteDb::Options options;
  options.create_if_missing = false;
  options.read_only = true;
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(db_path.string(), options);
  if (!db.ok()) {
    std::fprintf(stderr, "urlsieve rules: %s\n", db.status().message().c_str());
    return kExitFailure;
  }
  Result<StoredDustRules> stored = DustRuleStore::Read(**db);
  if (!stored.ok()) {
    std::fprintf(stderr, "urlsieve rules: %s\n", stored.status().message().c_str());
    return kExitFailure;
  }
  LineWriter out(STDOUT_FILENO);
  char line[512];
  if (!flags.json) {
    std::snprintf(line, sizeof(line), "%-9s %-10s %-8s %8s %6s %9s %10s  %s", "id", "state",
                  "support", "confid.", "checks", "passed", "suppressed", "origin  form");
    out.WriteLine(line);
  }
  for (const RuleRecord& r : stored->rules) {
    const bool dead = r.state == RuleState::kRetired || r.state == RuleState::kRejected;
    if (dead && !flags.all) continue;
    const std::string state = std::string(RuleStateName(r.state)) + (r.pinned      ? "*"
                                                                     : r.forbidden ? "!"
                                                                                   : "");
    if (flags.json) {
      nlohmann::ordered_json j = {{"id", r.id},
                                  {"origin", r.origin},
                                  {"form", r.rule.Form()},
                                  {"state", RuleStateName(r.state)},
                                  {"pinned", r.pinned},
                                  {"forbidden", r.forbidden},
                                  {"support", r.support},
                                  {"contradictions", r.contradictions},
                                  {"confidence", r.confidence()},
                                  {"validated", r.validated},
                                  {"checks", r.checks},
                                  {"suppressed", r.suppressed},
                                  {"example", r.example}};
      out.WriteLine(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      continue;
    }
    std::snprintf(line, sizeof(line), "%-9s %-10s %-8llu %8.3f %6llu %9llu %10llu  ", r.id.c_str(),
                  state.c_str(), static_cast<unsigned long long>(r.support), r.confidence(),
                  static_cast<unsigned long long>(r.checks),
                  static_cast<unsigned long long>(r.validated),
                  static_cast<unsigned long long>(r.suppressed));
    out.WriteLine(std::string(line) + r.origin + "  " + r.rule.Form());
    out.WriteLine("          e.g. " + r.example);
  }
  if (!flags.json) {
    const DustCounters& c = stored->counters;
    std::snprintf(line, sizeof(line),
                  "%llu URLs suppressed, %llu validation fetches, %llu queued again "
                  "(* pinned, ! forbidden by a --rules-file)",
                  static_cast<unsigned long long>(c.suppressed),
                  static_cast<unsigned long long>(c.validation_fetches),
                  static_cast<unsigned long long>(c.requeued));
    out.WriteLine(line);
  }
  if (!out.Flush()) {
    std::fprintf(stderr, "urlsieve rules: cannot write stdout\n");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void AddRulesCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<RulesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "rules", "List the URL rules a crawl learned (which URLs are the same page), with evidence");
  CLI::Option* state =
      cmd->add_option("--state", flags->out_dir, "The crawl's --out directory (or its state/)");
  CLI::Option* redis =
      cmd->add_option("--redis", flags->redis_url,
                      "The rules shared by the crawls on a seen set in Redis instead: "
                      "redis://[[user]:password@]host:port[/db] (with --name)");
  CLI::Option* name = cmd->add_option("--name", flags->redis_name, "The shared set's name");
  redis->needs(name)->excludes(state);
  name->needs(redis);
  AddRedisPasswordFileFlag(cmd, &flags->password_file);
  cmd->add_flag("--json", flags->json, "One JSON object per rule");
  cmd->add_flag("--all", flags->all, "Also the retired and rejected rules");
  cmd->callback([flags, exit_code, state, redis] {
    if (state->count() == 0 && redis->count() == 0) {
      std::fprintf(stderr, "urlsieve rules: give --state OUT or --redis URL --name NAME\n");
      *exit_code = kExitUsage;
      return;
    }
    *exit_code = RunRules(*flags);
  });
}

}  // namespace urlsieve::cli
