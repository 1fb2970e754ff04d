// urlsieve-demo-site: serves the demo site (a directory) or the generated trap site on 127.0.0.1
// until SIGINT/SIGTERM. Prints one line per host, "http://127.0.0.1:<port>", once it is listening.
//   urlsieve-demo-site --root tools/demo_site --port 0
//   urlsieve-demo-site --generated --hosts 3 --log requests.tsv
//   urlsieve-demo-site --dust 200       (tools/site_server/dust_site.h: duplicates of known kinds)
//   urlsieve-demo-site --dust 1200 --dust-kinds all   (its application, with the ground truth)
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "tools/site_server/dust_site.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"
#include "tools/site_server/static_site.h"

int main(int argc, char** argv) {
  using namespace urlsieve::site;
  CLI::App app{"Serves the urlsieve demo site (or the generated test site) on 127.0.0.1",
               "urlsieve-demo-site"};
  std::string root;
  bool generated = false;
  std::vector<int> ports;
  int hosts = 1;
  std::string log_path;
  GeneratedSiteOptions gen;
  long long slow_ms = gen.slow_delay.count();
  auto* root_opt = app.add_option("--root", root, "Directory to serve (e.g. tools/demo_site)")
                       ->check(CLI::ExistingDirectory);
  auto* generated_opt =
      app.add_flag("--generated", generated, "Serve the generated crawler-trap site instead")
          ->excludes(root_opt);
  DustSiteOptions dust;
  dust.pages = 0;
  app.add_option("--dust", dust.pages, "Serve DustSite with this many articles instead")
      ->check(CLI::Range(1, 1'000'000))
      ->excludes(root_opt)
      ->excludes(generated_opt);
  std::string dust_kinds;
  app.add_option("--dust-kinds", dust_kinds,
                 "With --dust: serve its application with these kinds of DUST and the ground "
                 "truth (X-Dust-Page, /__dust/truth): all, none, or a comma-separated list of "
                 "session-ids, tracking, sort-view, param-order, aliases, printable, calendar, "
                 "forms");
  app.add_option("--port", ports, "Port per host (0 = ephemeral; repeat for several hosts)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--hosts", hosts, "Number of hosts (ports) of the generated site")
      ->check(CLI::Range(1, 16));
  app.add_option("--log", log_path, "Write the request log to this file (tab-separated)");
  app.add_option("--crawl-delay", gen.crawl_delay, "Crawl-delay of the generated robots.txt");
  app.add_option("--slow-ms", slow_ms, "How long /slow waits (generated site)")
      ->check(CLI::Range(0, 60'000));
  CLI11_PARSE(app, argc, argv);
  if (root.empty() && !generated && dust.pages == 0) {
    std::cerr << "urlsieve-demo-site: give --root DIR, --generated or --dust N\n";
    return 2;
  }
  gen.slow_delay = std::chrono::milliseconds(slow_ms);
  if (!dust_kinds.empty()) {
    if (dust.pages == 0) {
      std::cerr << "urlsieve-demo-site: --dust-kinds needs --dust N\n";
      return 2;
    }
    const DustSiteOptions all = DustSiteOptions::App(dust.pages);
    DustSiteOptions none = all;
    none.session_ids = none.tracking = none.sort_view = none.param_order = false;
    none.aliases = none.printable = none.calendar = none.forms = false;
    dust = dust_kinds == "all" ? all : none;
    const std::map<std::string, bool DustSiteOptions::*> kinds = {
        {"session-ids", &DustSiteOptions::session_ids},
        {"tracking", &DustSiteOptions::tracking},
        {"sort-view", &DustSiteOptions::sort_view},
        {"param-order", &DustSiteOptions::param_order},
        {"aliases", &DustSiteOptions::aliases},
        {"printable", &DustSiteOptions::printable},
        {"calendar", &DustSiteOptions::calendar},
        {"forms", &DustSiteOptions::forms}};
    std::stringstream list(dust_kinds == "all" || dust_kinds == "none" ? "" : dust_kinds);
    for (std::string kind; std::getline(list, kind, ',');) {
      auto it = kinds.find(kind);
      if (it == kinds.end()) {
        std::cerr << "urlsieve-demo-site: unknown --dust-kinds entry: " << kind << "\n";
        return 2;
      }
      dust.*(it->second) = true;
    }
  }

  // Block the stop signals before any thread starts, so that sigwait below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  SiteServerOptions options;
  options.hosts = generated ? std::max<int>(hosts, static_cast<int>(ports.size())) : 1;
  options.ports = ports;
  auto server = SiteServer::Start(
      options,
      [&](const std::vector<std::string>& origins) -> urlsieve::Result<std::unique_ptr<Site>> {
        if (generated) return std::unique_ptr<Site>(new GeneratedSite(gen, origins));
        if (dust.pages > 0) return std::unique_ptr<Site>(new DustSite(dust));
        auto site = StaticSite::Open(root);
        if (!site.ok()) return site.status();
        return std::unique_ptr<Site>(std::move(site).value());
      });
  if (!server.ok()) {
    std::cerr << "urlsieve-demo-site: " << server.status().ToString() << "\n";
    return 1;
  }
  if (!log_path.empty()) {
    if (auto status = (*server)->log().MirrorToFile(log_path); !status.ok()) {
      std::cerr << "urlsieve-demo-site: " << status.ToString() << "\n";
      return 1;
    }
  }
  for (int h = 0; h < (*server)->hosts(); ++h) std::cout << (*server)->origin(h) << "\n";
  std::cout.flush();

  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
  return 0;
}
