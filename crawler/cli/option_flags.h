// Command-line flags from the option tables: the crawl options (crawler/config/crawl_options.h) and
// the opt-in canonicalization rules (kCanonicalizeRules in url/url_canonicalizer.h). The flag
// names, their help and their checks come from the tables; only CLI11 lives here. Also the flags
// that say where a seen set is, shared by filter, forget and stats.
// Thread-safety: registration happens once, before parsing, on one thread.
#ifndef URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_
#define URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "crawler/config/crawl_config.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::cli {

// Registers --config and the flag of every crawl option that has one on `cmd` (e.g. the `crawl`
// subcommand); the values given land in *flags, which must outlive `cmd`.
void AddCrawlFlags(CLI::App* cmd, CrawlFlags* flags);

// Registers one flag per opt-in canonicalization rule, setting its member of *options (which
// must outlive `cmd`), and --keep-tracking-param HOST:NAME (repeatable, with
// --strip-tracking-params), appending to options->tracking_exceptions. Returns the flags, in
// kCanonicalizeRules order and then --keep-tracking-param, so a command can tell which were given.
inline constexpr std::string_view kKeepTrackingParamFlag = "--keep-tracking-param";
std::vector<CLI::Option*> AddCanonicalizeRuleFlags(CLI::App* cmd, CanonicalizeOptions* options);

// Where a seen set is: --state DIR, or --redis URL with --name NAME; --state excludes --redis,
// and --redis and --name need each other. The help texts are the command's; `name_flag` is the
// spelling of --name (e.g. "--name,--redis-name").
struct SeenSetFlags {
  CLI::Option* state;
  CLI::Option* redis;
  CLI::Option* name;
};
// What every command that may reach Redis also takes (AddSeenSetFlags fills it when given).
struct RedisFlagValues {
  bool writes = true;         // the command writes to the set: it takes --accept-loss
  std::string password_file;  // --redis-password-file
  bool accept_loss = false;   // --accept-loss
};
// Reads the first line of `path` as the Redis password of every address parsed afterwards that
// names none (it goes into URLSIEVE_REDIS_PASSWORD, redis/redis_address.h). "" does nothing.
Status UseRedisPasswordFile(const std::string& path);
// --redis-password-file, applied (UseRedisPasswordFile) as the flags are parsed.
void AddRedisPasswordFileFlag(CLI::App* cmd, std::string* path);

struct SeenSetFlagHelp {
  const char* state;
  const char* redis;
  const char* name;
  const char* name_flag = "--name";
};
// `redis_values` (may be null): --redis-password-file (applied as the flags are parsed) and
// --accept-loss.
SeenSetFlags AddSeenSetFlags(CLI::App* cmd, std::string* state_dir, std::string* redis_url,
                             std::string* redis_name, const SeenSetFlagHelp& help,
                             RedisFlagValues* redis_values = nullptr);
// In a command's callback: a usage error (CLI::RequiredError) when neither --state nor --redis
// was given.
void RequireSeenSet(const SeenSetFlags& flags);

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_
