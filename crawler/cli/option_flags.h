// Command-line flags from the option tables: the crawl options (crawler/config/crawl_options.h) and
// the opt-in canonicalization rules (kCanonicalizeRules in url/url_canonicalizer.h). The flag
// names, their help and their checks come from the tables; only CLI11 lives here.
// Thread-safety: registration happens once, before parsing, on one thread.
#ifndef URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_
#define URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_

#include <CLI/CLI.hpp>
#include <vector>

#include "crawler/config/crawl_config.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::cli {

// Registers --config and the flag of every crawl option that has one on `cmd` (e.g. the `crawl`
// subcommand); the values given land in *flags, which must outlive `cmd`.
void AddCrawlFlags(CLI::App* cmd, CrawlFlags* flags);

// Registers one flag per opt-in canonicalization rule, setting its member of *options (which
// must outlive `cmd`). Returns the flags, in kCanonicalizeRules order, so a command can tell
// which were given.
std::vector<CLI::Option*> AddCanonicalizeRuleFlags(CLI::App* cmd, CanonicalizeOptions* options);

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_OPTION_FLAGS_H_
