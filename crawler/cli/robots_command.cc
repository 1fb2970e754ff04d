// `urlsieve robots --agent NAME --robots FILE [--explain] URL...`: checks URLs against a
// robots.txt file (RFC 9309) the way the crawler does. Prints "allowed URL" or "disallowed URL"
// per URL (with --explain, a tab and the deciding line); exits 0 when all are allowed, 1 when any
// is disallowed, 2 on a usage or I/O error.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "crawler/cli/commands.h"
#include "frontier/robots_rules.h"

namespace urlsieve::cli {
namespace {

struct RobotsArgs {
  std::string agent;
  std::string robots_path;
  bool explain = false;
  std::vector<std::string> urls;
};

// The robots.txt match target of a URL: its path and query (RFC 9309 §2.2.2), without the
// fragment. A bare path ("/a?b") is accepted as is.
bool MatchTarget(const std::string& url, std::string* target) {
  std::string_view rest = url;
  if (rest.empty() || rest.front() != '/') {
    const size_t scheme_end = rest.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
    rest.remove_prefix(scheme_end + 3);
    const size_t path = rest.find_first_of("/?#");
    rest = path == std::string_view::npos ? std::string_view() : rest.substr(path);
  }
  rest = rest.substr(0, rest.find('#'));
  target->assign(rest.empty() || rest.front() != '/' ? "/" : "");
  target->append(rest);
  return true;
}

int RunRobots(const RobotsArgs& args) {
  std::ifstream in(args.robots_path, std::ios::binary);
  if (!in) {
    std::cerr << "urlsieve robots: cannot read " << args.robots_path << "\n";
    return kExitUsage;
  }
  std::ostringstream body;
  body << in.rdbuf();
  if (in.bad()) {
    std::cerr << "urlsieve robots: error reading " << args.robots_path << "\n";
    return kExitUsage;
  }
  const RobotsPolicy policy = RobotsRules::Parse(body.str()).ForAgent(args.agent);

  std::vector<std::string> targets(args.urls.size());
  for (size_t i = 0; i < args.urls.size(); ++i) {
    if (!MatchTarget(args.urls[i], &targets[i])) {
      std::cerr << "urlsieve robots: not an absolute URL or a path: " << args.urls[i] << "\n";
      return kExitUsage;
    }
  }
  int exit_code = kExitOk;
  std::string out;
  for (size_t i = 0; i < args.urls.size(); ++i) {
    const RobotsMatch match = policy.Match(targets[i]);
    out += match.allowed ? "allowed " : "disallowed ";
    out += args.urls[i];
    if (args.explain) {
      out += '\t';
      if (match.rule != nullptr) {
        out += "line " + std::to_string(match.rule->line) + ": " + match.rule->text;
      } else {
        out += "no matching rule";
      }
    }
    out += '\n';
    if (!match.allowed) exit_code = kExitFailure;
  }
  std::cout << out << std::flush;
  return exit_code;
}

}  // namespace

void AddRobotsCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RobotsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "robots", "Check URLs against a robots.txt file (RFC 9309); exit 1 if any is disallowed");
  cmd->add_option("--agent", args->agent, "User agent (product token) to match groups against")
      ->required();
  cmd->add_option("--robots", args->robots_path, "The robots.txt file")->required();
  cmd->add_flag("--explain", args->explain, "Also print the deciding line of robots.txt");
  cmd->add_option("urls", args->urls, "URLs (or paths) to check")->required();
  cmd->callback([args, exit_code] { *exit_code = RunRobots(*args); });
}

}  // namespace urlsieve::cli
