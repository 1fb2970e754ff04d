// urlsieve: a web crawler built around a fast, exact URL-seen test. See README.md.
#include <iostream>

#include "crawler/cli/commands.h"

int main(int argc, char** argv) {
  using namespace urlsieve::cli;
  CLI::App app{"urlsieve: a web crawler built around a fast, exact URL-seen test", "urlsieve"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "urlsieve 0.1.0");
  int exit_code = kExitOk;
  AddCrawlCommand(app, &exit_code);
  AddFilterCommand(app, &exit_code);
  AddForgetCommand(app, &exit_code);
  AddCanonCommand(app, &exit_code);
  AddRobotsCommand(app, &exit_code);
  AddStatsCommand(app, &exit_code);
  AddClusterCommand(app, &exit_code);
  AddDupesCommand(app, &exit_code);
  AddRulesCommand(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
