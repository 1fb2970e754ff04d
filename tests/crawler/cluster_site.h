// ClusterSite, ClusterSiteServer, AnalyzeCrawl: the multi-host site the crawl-cluster tests crawl
// (tests/crawler/crawl_cluster_test.cc and tests/crawler/cluster/), and what they check on its
// request log: the servers see every request of every node, so the cluster's invariants are
// checked where they matter, at the sites.
//
// The site has two kinds of hosts, one SiteServer port each, on 127.0.0.1:
//   - hosts [0, generated_hosts): the GeneratedSite (tools/site_server/generated_site.h): the main
//     host's traps (spellings, redirects, robots rules, nofollow, 429/500, gzip...) and satellites
//     that differ by robots.txt (404 = allow all, a redirected robots.txt, 503 = disallow all);
//   - the trail hosts after them: robots.txt disallows /t/private/; "/" links /t/1; /t/i links
//     /t/i+1 on its own host *and on the next trail host* (so most trail pages are discovered by
//     two nodes: the seen set decides), and /t/private/i (never to be fetched). Each trail host's
//     work is discovered one page at a time, so every host keeps work for trail_length politeness
//     delays: a node that joins, or takes over a dead node's partitions, mid-crawl always finds
//     hosts still to crawl.
// Seeds(): the main host's "/" and every trail host's "/".
//
// Expected pages come from the site itself (expectations(h), as GeneratedSite's: must_fetch,
// must_not_fetch, may_repeat), for a crawl that denies /calendar/ (the infinite calendar, whose
// depth is the trap guards' business) and has a max depth above the trail length.
//
// Thread-safety: ClusterSite::Handle is thread-safe (the SiteServer calls it concurrently); the
// rest is a test fixture's, one thread.
#ifndef URLSIEVE_TESTS_CRAWLER_CLUSTER_SITE_H_
#define URLSIEVE_TESTS_CRAWLER_CLUSTER_SITE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/site_server/generated_site.h"
#include "tools/site_server/site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve::testing {

struct ClusterSiteOptions {
  int generated_hosts = 4;  // the main host and one satellite of each robots.txt kind
  int trail_hosts = 24;
  int trail_length = 30;  // /t/1 .. /t/N per trail host
  site::GeneratedSiteOptions generated = Generated();

  // The trap site, shrunk to what a cluster test needs: no Crawl-delay (the crawl's delay rules),
  // a short /slow (under the crawl's timeout: fetched once), caps that a small --max-body-bytes
  // exercises.
  static site::GeneratedSiteOptions Generated() {
    site::GeneratedSiteOptions gen;
    gen.page_count = 6;
    gen.satellite_pages = 4;
    gen.large_page_bytes = 512 * 1024;
    gen.gzip_bomb_bytes = 8 * 1024 * 1024;
    gen.slow_delay = std::chrono::milliseconds(200);
    gen.crawl_delay = "";
    return gen;
  }
};

inline bool IsRobotsResource(const std::string& resource) {
  return resource == "/robots.txt" || resource == "/moved-robots.txt";
}

class ClusterSite : public site::Site {
 public:
  ClusterSite(const ClusterSiteOptions& options, const std::vector<std::string>& origins)
      : options_(options), origins_(origins) {
    generated_ = std::make_unique<site::GeneratedSite>(
        options.generated,
        std::vector<std::string>(origins.begin(), origins.begin() + options.generated_hosts));
    for (int h = 0; h < options.generated_hosts; ++h) {
      expectations_.push_back(generated_->expectations(h));
    }
    for (int h = options.generated_hosts; h < hosts(); ++h) BuildTrailHost(h);
  }

  site::SiteResponse Handle(const site::SiteRequest& request) override {
    if (request.host < options_.generated_hosts) return generated_->Handle(request);
    const auto& table = trails_[request.host - options_.generated_hosts];
    if (auto it = table.find(request.resource); it != table.end()) return it->second;
    return site::PlainStatus(404, "no such page");
  }

  int hosts() const { return static_cast<int>(origins_.size()); }
  bool is_trail_host(int h) const { return h >= options_.generated_hosts; }
  const site::HostExpectations& expectations(int h) const { return expectations_.at(h); }
  // Pages a correct crawl fetches, robots.txt aside.
  size_t expected_pages() const {
    size_t n = 0;
    for (const site::HostExpectations& e : expectations_) {
      for (const std::string& r : e.must_fetch) n += IsRobotsResource(r) ? 0 : 1;
    }
    return n;
  }
  std::vector<std::string> Seeds() const {
    std::vector<std::string> seeds = {origins_[0] + "/"};
    for (int h = options_.generated_hosts; h < hosts(); ++h) seeds.push_back(origins_[h] + "/");
    return seeds;
  }

 private:
  static std::string Link(const std::string& href) {
    return "<li><a href=\"" + site::HtmlEscape(href) + "\">" + site::HtmlEscape(href) +
           "</a></li>\n";
  }

  void BuildTrailHost(int h) {
    const int first = options_.generated_hosts;
    const int next = first + (h - first + 1) % options_.trail_hosts;
    std::map<std::string, site::SiteResponse> table;
    site::HostExpectations expect;
    site::SiteResponse robots;
    robots.content_type = "text/plain; charset=utf-8";
    robots.body = "User-agent: *\nDisallow: /t/private/\n";
    table["/robots.txt"] = robots;
    expect.must_fetch.insert("/robots.txt");
    table["/"] = site::HtmlPage("Trail host " + std::to_string(h), "<ul>" + Link("/t/1") + "</ul>");
    expect.must_fetch.insert("/");
    const int n = options_.trail_length;
    for (int i = 1; i <= n; ++i) {
      const std::string page = "/t/" + std::to_string(i);
      std::string links = Link("/") + Link("/t/private/" + std::to_string(i));
      if (i < n) {
        links += Link("/t/" + std::to_string(i + 1));
        links += Link(origins_[next] + "/t/" + std::to_string(i + 1));
      }
      table[page] =
          site::HtmlPage("Trail " + std::to_string(h) + " " + page, "<ul>" + links + "</ul>");
      expect.must_fetch.insert(page);
      const std::string hidden = "/t/private/" + std::to_string(i);
      table[hidden] = site::HtmlPage("Disallowed", "");
      expect.must_not_fetch.insert(hidden);
    }
    trails_.push_back(std::move(table));
    expectations_.push_back(std::move(expect));
  }

  const ClusterSiteOptions options_;
  const std::vector<std::string> origins_;
  std::unique_ptr<site::GeneratedSite> generated_;
  std::vector<std::map<std::string, site::SiteResponse>> trails_;  // per trail host, immutable
  std::vector<site::HostExpectations> expectations_;
};

// A ClusterSite served on 127.0.0.1, one port per host.
class ClusterSiteServer {
 public:
  static std::unique_ptr<ClusterSiteServer> Start(const ClusterSiteOptions& options = {}) {
    std::unique_ptr<ClusterSiteServer> server(new ClusterSiteServer);
    site::SiteServerOptions server_options;
    server_options.hosts = options.generated_hosts + options.trail_hosts;
    // Every node's fetcher threads may hold a keep-alive connection to a host, and each holds a
    // server thread.
    server_options.threads_per_host = 8;
    auto started = site::SiteServer::Start(
        server_options,
        [&](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
          auto built = std::make_unique<ClusterSite>(options, origins);
          server->site_ = built.get();
          return std::unique_ptr<site::Site>(std::move(built));
        });
    if (!started.ok()) {
      ADD_FAILURE() << "the cluster site did not start: " << started.status().ToString();
      return nullptr;
    }
    server->server_ = std::move(started).value();
    return server;
  }

  site::SiteServer& server() { return *server_; }
  site::RequestLog& log() { return server_->log(); }
  const ClusterSite& site() const { return *site_; }

  // Blocks until the servers have received `n` requests other than robots.txt (false after
  // `timeout`): the way a test waits for "mid-crawl".
  // `running()` says whether the crawl can still get there (false: give up at once).
  bool WaitForPages(size_t n, const std::function<bool()>& running,
                    std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto reached = [n](const std::vector<site::LoggedRequest>& log) {
      size_t pages = 0;
      for (const site::LoggedRequest& r : log) pages += IsRobotsResource(r.resource) ? 0 : 1;
      return pages >= n;
    };
    while (std::chrono::steady_clock::now() < deadline) {
      // Woken by each request; every 100 ms, whether the crawl is still running.
      if (log().WaitUntil(reached, std::chrono::milliseconds(100))) return true;
      if (!running()) {
        ADD_FAILURE() << "the crawl ended (or a node did) before " << n << " requests";
        return false;
      }
    }
    ADD_FAILURE() << "fewer than " << n << " requests after " << timeout.count() << " s";
    return false;
  }

 private:
  ClusterSiteServer() = default;
  std::unique_ptr<site::SiteServer> server_;
  ClusterSite* site_ = nullptr;
};

// What the servers saw of a crawl: the request log checked against the site's expectations.
struct CrawlAnalysis {
  using Resource = std::pair<int, std::string>;  // (host, resource)
  std::map<Resource, int> requests;              // every request, robots.txt included
  std::set<Resource> fetched;                    // requested at least once, robots.txt aside
  size_t page_requests = 0;                      // requests other than robots.txt
  std::vector<Resource> missing;                 // must_fetch, never requested
  std::vector<Resource> disallowed;              // must_not_fetch, requested
  std::vector<Resource> unexpected;              // requested, robots.txt aside, and not expected
  // Requests beyond the first of a resource, robots.txt and may_repeat resources aside (a new owner
  // of a host fetches its robots.txt again: by design).
  size_t duplicates = 0;
  std::vector<std::string> duplicated;  // "host h resource by agent agent..."
  std::vector<Resource> duplicated_resources;
  std::map<Resource, std::vector<std::string>> agents;  // the User-Agent of each request, in order
  std::map<std::string, size_t> requests_by;            // requests per User-Agent
  // The smallest gap between consecutive requests to one host, over every host, and which requests.
  std::chrono::microseconds min_spacing = std::chrono::microseconds::max();
  std::string closest;

  // The first 20, for messages.
  static std::string Describe(const std::vector<Resource>& resources) {
    std::ostringstream out;
    for (size_t i = 0; i < resources.size() && i < 20; ++i) {
      out << " host " << resources[i].first << " " << resources[i].second << ";";
    }
    if (resources.size() > 20) out << " and " << resources.size() - 20 << " more";
    return out.str();
  }
  std::string DescribeDuplicates() const {
    std::ostringstream out;
    for (size_t i = 0; i < duplicated.size() && i < 20; ++i) out << " " << duplicated[i] << ";";
    if (duplicated.size() > 20) out << " and " << duplicated.size() - 20 << " more";
    return out.str();
  }
};

inline CrawlAnalysis AnalyzeCrawl(const ClusterSite& site,
                                  const std::vector<site::LoggedRequest>& log) {
  CrawlAnalysis a;
  std::map<int, std::vector<size_t>> times;  // per host, indexes into `log`
  for (size_t i = 0; i < log.size(); ++i) {
    const site::LoggedRequest& r = log[i];
    ++a.requests[{r.host, r.resource}];
    a.agents[{r.host, r.resource}].push_back(r.user_agent);
    ++a.requests_by[r.user_agent];
    times[r.host].push_back(i);
    if (IsRobotsResource(r.resource)) continue;
    ++a.page_requests;
    a.fetched.insert({r.host, r.resource});
  }
  for (int h = 0; h < site.hosts(); ++h) {
    const site::HostExpectations& expect = site.expectations(h);
    for (const std::string& resource : expect.must_fetch) {
      if (a.requests.count({h, resource}) == 0) a.missing.push_back({h, resource});
    }
    for (const std::string& resource : expect.must_not_fetch) {
      if (a.requests.count({h, resource}) != 0) a.disallowed.push_back({h, resource});
    }
  }
  for (const auto& [key, n] : a.requests) {
    const site::HostExpectations& expect = site.expectations(key.first);
    if (IsRobotsResource(key.second)) continue;
    if (expect.must_fetch.count(key.second) == 0 && expect.may_repeat.count(key.second) == 0 &&
        expect.must_not_fetch.count(key.second) == 0) {
      a.unexpected.push_back(key);
    }
    if (n > 1 && expect.may_repeat.count(key.second) == 0) {
      a.duplicates += n - 1;
      std::string by;
      for (const std::string& agent : a.agents[key]) by += " " + agent;
      a.duplicated.push_back("host " + std::to_string(key.first) + " " + key.second + " by" + by);
      a.duplicated_resources.push_back(key);
    }
  }
  const auto start = log.empty() ? std::chrono::steady_clock::time_point() : log.front().time;
  auto at = [&](const site::LoggedRequest& r) {
    return r.resource + " by " + r.user_agent + " at " +
           std::to_string(std::chrono::duration<double, std::milli>(r.time - start).count()) +
           " ms";
  };
  for (auto& [h, t] : times) {
    std::stable_sort(t.begin(), t.end(),
                     [&](size_t x, size_t y) { return log[x].time < log[y].time; });
    for (size_t i = 1; i < t.size(); ++i) {
      const auto gap = std::chrono::duration_cast<std::chrono::microseconds>(log[t[i]].time -
                                                                             log[t[i - 1]].time);
      if (gap < a.min_spacing) {
        a.min_spacing = gap;
        a.closest = "host " + std::to_string(h) + ": requests " + std::to_string(i - 1) + " and " +
                    std::to_string(i) + " of " + std::to_string(t.size()) + ", " +
                    at(log[t[i - 1]]) + ", then " + at(log[t[i]]);
      }
    }
  }
  return a;
}

}  // namespace urlsieve::testing

#endif  // URLSIEVE_TESTS_CRAWLER_CLUSTER_SITE_H_
