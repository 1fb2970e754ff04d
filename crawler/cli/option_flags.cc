#include "crawler/cli/option_flags.h"

#include <cstdlib>
#include <string>

#include "redis/redis_address.h"
#include "url/tracking_params.h"

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
  CLI::Option* strip_tracking = nullptr;
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    added.push_back(
        cmd->add_flag(std::string(rule.flag), options->*rule.member, std::string(rule.help)));
    if (rule.member == &CanonicalizeOptions::strip_tracking_params) strip_tracking = added.back();
  }
  added.push_back(
      cmd->add_option(std::string(kKeepTrackingParamFlag), options->tracking_exceptions,
                      "With --strip-tracking-params: keep the tracking parameter NAME on HOST "
                      "and the hosts under it (repeatable)")
          ->type_name("HOST:NAME")
          ->allow_extra_args(false)
          ->check(CLI::Validator(
              [](std::string& exception) { return CheckTrackingException(exception); },
              "HOST:NAME"))
          ->needs(strip_tracking));
  return added;
}

Status UseRedisPasswordFile(const std::string& path) {
  if (path.empty()) return Status::Ok();
  Result<std::string> password = ReadRedisPasswordFile(path);
  if (!password.ok()) return password.status();
  ::setenv(kRedisPasswordVariable, password->c_str(), /*overwrite=*/1);
  return Status::Ok();
}

void AddRedisPasswordFileFlag(CLI::App* cmd, std::string* path) {
  cmd->add_option("--redis-password-file", *path,
                  "Read the Redis password from this file's first line (else "
                  "URLSIEVE_REDIS_PASSWORD or REDISCLI_AUTH), so that it is not on the command "
                  "line")
      ->each([](const std::string& file) {
        if (Status used = UseRedisPasswordFile(file); !used.ok()) {
          throw CLI::ValidationError("--redis-password-file", used.message());
        }
      });
}

SeenSetFlags AddSeenSetFlags(CLI::App* cmd, std::string* state_dir, std::string* redis_url,
                             std::string* redis_name, const SeenSetFlagHelp& help,
                             RedisFlagValues* redis_values) {
  SeenSetFlags flags;
  if (redis_values != nullptr) {
    AddRedisPasswordFileFlag(cmd, &redis_values->password_file);
    if (redis_values->writes) {
      cmd->add_flag("--accept-loss", redis_values->accept_loss,
                    "Repair a Redis seen set that lost data (its lost parts made again, empty: "
                    "their URLs are new again) instead of stopping");
    }
  }
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
