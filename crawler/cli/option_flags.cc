#include "crawler/cli/option_flags.h"

#include <string>

namespace urlsieve::cli {
namespace {

// Records the value of one option given on the command line.
template <typename T>
void AddValueFlag(CLI::App* cmd, const CrawlOptionSpec& spec, CrawlFlags* flags) {
  CLI::Option* option = cmd->add_option_function<T>(
      std::string(spec.flag),
      [flags, &spec](const T& value) { flags->given.emplace_back(&spec, value); },
      std::string(spec.help));
  if (spec.type == OptionType::kChoice) {
    // Checked while parsing, so that a bad name is a usage error naming the flag.
    option->check(
        CLI::IsMember(std::vector<std::string>(spec.choices.begin(), spec.choices.end())));
  }
}

}  // namespace

void AddCrawlFlags(CLI::App* cmd, CrawlFlags* flags) {
  cmd->add_option_function<std::string>(
      "-c,--config", [flags](const std::string& path) { flags->config = path; },
      "TOML config file (see configs/default.toml); flags override it");
  for (const CrawlOptionSpec& spec : CrawlOptionSpecs()) {
    if (spec.flag.empty()) continue;
    switch (spec.type) {
      case OptionType::kBool:
        cmd->add_flag_function(
            std::string(spec.flag),
            [flags, &spec](int64_t) { flags->given.emplace_back(&spec, spec.flag_sets); },
            std::string(spec.help));
        break;
      case OptionType::kInteger:
        AddValueFlag<int64_t>(cmd, spec, flags);
        break;
      case OptionType::kNumber:
        AddValueFlag<double>(cmd, spec, flags);
        break;
      case OptionType::kString:
      case OptionType::kChoice:
      case OptionType::kDuration:
        AddValueFlag<std::string>(cmd, spec, flags);
        break;
      case OptionType::kStringList:
        AddValueFlag<std::vector<std::string>>(cmd, spec, flags);
        break;
    }
  }
}

std::vector<CLI::Option*> AddCanonicalizeRuleFlags(CLI::App* cmd, CanonicalizeOptions* options) {
  std::vector<CLI::Option*> added;
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    added.push_back(
        cmd->add_flag(std::string(rule.flag), options->*rule.member, std::string(rule.help)));
  }
  return added;
}

SeenSetFlags AddSeenSetFlags(CLI::App* cmd, std::string* state_dir, std::string* redis_url,
                             std::string* redis_name, const SeenSetFlagHelp& help) {
  SeenSetFlags flags;
  flags.state = cmd->add_option("--state", *state_dir, help.state);
  flags.redis = cmd->add_option("--redis", *redis_url, help.redis);
  flags.name = cmd->add_option(help.name_flag, *redis_name, help.name);
  flags.state->excludes(flags.redis);
  flags.redis->excludes(flags.state);
  flags.redis->needs(flags.name);
  flags.name->needs(flags.redis);
  return flags;
}

void RequireSeenSet(const SeenSetFlags& flags) {
  if (flags.state->count() == 0 && flags.redis->count() == 0) {
    throw CLI::RequiredError("--state or --redis");
  }
}

}  // namespace urlsieve::cli
