// The subcommands of the `urlsieve` executable. Each Add*Command registers one CLI11 subcommand
// whose callback runs the command and stores its exit code (0 ok, 1 failure, 2 usage error) in
// *exit_code. One file per command in crawler/cli/.
#ifndef URLSIEVE_CRAWLER_CLI_COMMANDS_H_
#define URLSIEVE_CRAWLER_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace urlsieve::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// urlsieve canon: canonical keys for URLs on stdin (canon_command.cc).
void AddCanonCommand(CLI::App& app, int* exit_code);
// urlsieve filter: URLs from stdin never seen before, with a persistent seen set
// (filter_command.cc).
void AddFilterCommand(CLI::App& app, int* exit_code);
// urlsieve stats: statistics of a filter's state directory (stats_command.cc).
void AddStatsCommand(CLI::App& app, int* exit_code);

}  // namespace urlsieve::cli

#endif  // URLSIEVE_CRAWLER_CLI_COMMANDS_H_
