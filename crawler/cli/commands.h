// The subcommands of the `urlsieve` executable. Each Add*Command registers one CLI11 subcommand
// whose callback runs the command and stores its exit code (0 ok, 1 failure, 2 usage error) in
// *exit_code (3: partly done, e.g. some input damaged). One file per command in crawler/cli/.
#ifndef URLSIEVE_CRAWLER_CLI_COMMANDS_H_
#define URLSIEVE_CRAWLER_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace urlsieve::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// One file per command in crawler/cli/<name>_command.cc, listed in `urlsieve --help` order.
void AddCrawlCommand(CLI::App& app, int* exit_code);    // crawl from a seed list
void AddFilterCommand(CLI::App& app, int* exit_code);   // URLs from stdin never seen before
void AddForgetCommand(CLI::App& app, int* exit_code);   // forget URLs from stdin
void AddCanonCommand(CLI::App& app, int* exit_code);    // canonical keys of URLs from stdin
void AddRobotsCommand(CLI::App& app, int* exit_code);   // check URLs against a robots.txt
void AddStatsCommand(CLI::App& app, int* exit_code);    // statistics of a state directory
void AddClusterCommand(CLI::App& app, int* exit_code);  // `cluster status` of a crawl cluster
void AddDupesCommand(CLI::App& app, int* exit_code);    // duplicate groups in WARC files
void AddRulesCommand(CLI::App& app, int* exit_code);    // learned URL rules of a crawl

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_COMMANDS_H_
