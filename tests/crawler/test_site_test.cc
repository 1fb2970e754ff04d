// The HTTP site server the crawl tests and the demo use (tools/site_server): it binds 127.0.0.1
// only, logs every request, serves the generated trap site, the bundled demo site and DustSite's
// application, whose ground truth names the page behind each of its spellings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "crawler/fetch/fetcher.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/dust_site.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/site_server.h"
#include "tools/site_server/static_site.h"
#include "url/url_canonicalizer.h"

namespace urlsieve::site {
namespace {

// Every href="..." value of an HTML body, fragment dropped (std::regex trips GCC 12 warnings).
std::vector<std::string> Hrefs(const std::string& html) {
  std::vector<std::string> out;
  const std::string open = "href=\"";
  for (size_t at = html.find(open); at != std::string::npos; at = html.find(open, at)) {
    at += open.size();
    const size_t end = html.find('"', at);
    if (end == std::string::npos) break;
    const std::string href = html.substr(at, end - at);
    out.push_back(href.substr(0, href.find('#')));
  }
  return out;
}

Result<std::unique_ptr<SiteServer>> StartGenerated(int hosts, GeneratedSiteOptions gen = {}) {
  SiteServerOptions options;
  options.hosts = hosts;
  return SiteServer::Start(
      options, [gen](const std::vector<std::string>& origins) -> Result<std::unique_ptr<Site>> {
        return std::unique_ptr<Site>(new GeneratedSite(gen, origins));
      });
}

std::unique_ptr<Fetcher> MakeFetcher() {
  FetcherOptions options;
  options.total_timeout = std::chrono::milliseconds(20'000);
  options.accepted_content_types.clear();
  return std::move(Fetcher::Create(options, nullptr)).value();
}

TEST(SiteServerTest, BindsLoopbackAndLogsEveryRequest) {
  auto server = StartGenerated(1);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  SiteServer& s = **server;
  EXPECT_EQ(s.origin(), "http://127.0.0.1:" + std::to_string(s.port()));
  EXPECT_GT(s.port(), 0);

  auto fetcher = MakeFetcher();
  EXPECT_EQ(fetcher->Fetch(s.Url("/%7Euser/?a=%41")).status, 200);
  EXPECT_EQ(fetcher->Fetch(s.Url("/nope")).status, 404);
  const auto log = s.log().Snapshot();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].method, "GET");
  EXPECT_EQ(log[0].target, "/%7Euser/?a=%41");
  EXPECT_EQ(log[0].resource, "/~user/?a=%41");  // path decoded, query raw
  EXPECT_EQ(log[0].host_header, "127.0.0.1:" + std::to_string(s.port()));
  EXPECT_EQ(log[0].port, s.port());
  EXPECT_EQ(log[0].user_agent, FetcherOptions().user_agent);
  EXPECT_LE(log[0].time, log[1].time);
  EXPECT_EQ(s.log().Count(0, "/nope"), 1u);
  EXPECT_EQ(s.log().Count(0, "/~user/"), 0u);
}

TEST(SiteServerTest, MirrorsTheLogToAFile) {
  auto server = StartGenerated(1);
  ASSERT_TRUE(server.ok());
  urlsieve::testing::ScratchDir scratch("urlsieve_site_log");
  const auto path = scratch.path() / "log.tsv";
  ASSERT_TRUE((*server)->log().MirrorToFile(path.string()).ok());
  EXPECT_EQ(MakeFetcher()->Fetch((*server)->Url("/about")).status, 200);
  (*server)->Stop();
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("\t0\t" + std::to_string((*server)->port()) + "\tGET\t127.0.0.1:"),
            std::string::npos)
      << line;
  // ... then the answer: status, body bytes, and no If-None-Match / If-Modified-Since ("-").
  EXPECT_NE(line.find("\t/about\t200\t"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with("\t-\t-")) << line;
  EXPECT_FALSE((*server)->log().MirrorToFile("/nonexistent-dir/x.tsv").ok());
}

TEST(SiteServerTest, SlowResponsesBlockNeitherOtherRequestsNorStop) {
  GeneratedSiteOptions gen;
  gen.slow_delay = std::chrono::minutes(1);
  auto server = StartGenerated(1, gen);
  ASSERT_TRUE(server.ok());
  SiteServer& s = **server;
  FetchResult slow;
  std::thread waiter([&] { slow = MakeFetcher()->Fetch(s.Url("/slow")); });
  ASSERT_TRUE(s.log().WaitUntil([](const std::vector<LoggedRequest>& log) { return !log.empty(); },
                                std::chrono::seconds(30)));
  EXPECT_EQ(MakeFetcher()->Fetch(s.Url("/about")).status, 200);  // while /slow is pending
  s.Stop();  // wakes the slow handler instead of waiting a minute
  waiter.join();
  EXPECT_TRUE(slow.status == 503 || !slow.ok()) << slow.status << " " << slow.error.ToString();
}

TEST(SiteServerTest, SeveralHostsHaveDistinctPortsAndRobotsBehaviours) {
  auto server = StartGenerated(4);
  ASSERT_TRUE(server.ok());
  SiteServer& s = **server;
  std::set<int> ports;
  for (int h = 0; h < 4; ++h) ports.insert(s.port(h));
  EXPECT_EQ(ports.size(), 4u);
  auto fetcher = MakeFetcher();
  FetchResult main = fetcher->FetchRobots(s.Url("/robots.txt", 0));
  EXPECT_NE(main.body.find("Disallow: /private/"), std::string::npos);
  EXPECT_NE(main.body.find("Crawl-delay: 0.1"), std::string::npos);
  EXPECT_EQ(fetcher->FetchRobots(s.Url("/robots.txt", 1)).status, 404);
  FetchResult moved = fetcher->FetchRobots(s.Url("/robots.txt", 2));
  EXPECT_EQ(moved.status, 301);  // a hop for the frontier to schedule, not followed here
  EXPECT_EQ(moved.location, "/moved-robots.txt");
  FetchResult target = fetcher->FetchRobots(s.Url("/moved-robots.txt", 2));
  EXPECT_NE(target.body.find("Disallow: /s/3"), std::string::npos);
  FetchResult down = fetcher->FetchRobots(s.Url("/robots.txt", 3));
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.retry_after, "2");
  // Host 0 links every other host's root.
  FetchResult index = fetcher->Fetch(s.Url("/", 0));
  for (int h = 1; h < 4; ++h) EXPECT_NE(index.body.find(s.origin(h) + "/"), std::string::npos);
}

TEST(SiteServerTest, BusyAnswers429ThenRecovers) {
  auto server = StartGenerated(1);
  ASSERT_TRUE(server.ok());
  auto fetcher = MakeFetcher();
  FetchResult first = fetcher->Fetch((*server)->Url("/busy"));
  EXPECT_EQ(first.status, 429);
  EXPECT_EQ(first.retry_after, "1");
  EXPECT_EQ(fetcher->Fetch((*server)->Url("/busy")).status, 200);
}

TEST(GeneratedSiteTest, ExpectationsAreConsistentWithWhatIsServed) {
  GeneratedSite site({}, {"http://127.0.0.1:1000", "http://127.0.0.1:1001", "http://127.0.0.1:1002",
                          "http://127.0.0.1:1003"});
  const std::set<std::string> errors = {"/missing", "/error", "/busy", "/robots.txt"};
  for (int h = 0; h < site.hosts(); ++h) {
    const HostExpectations& e = site.expectations(h);
    EXPECT_FALSE(e.must_fetch.empty());
    for (const std::string& r : e.must_fetch) {
      EXPECT_EQ(e.must_not_fetch.count(r), 0u) << r;
      if (r == "/slow" || r == "/gzip-bomb") continue;  // slow or big: checked over HTTP
      SiteResponse response = site.Handle({h, "GET", r});
      if (errors.count(r) == 0) {
        EXPECT_LT(response.status, 400) << "host " << h << " " << r;
      }
    }
    for (const std::string& r : e.may_repeat) EXPECT_EQ(e.must_fetch.count(r), 1u) << r;
  }
  EXPECT_EQ(site.expectations(0).must_not_fetch.count("/private/secret"), 1u);
  EXPECT_EQ(site.expectations(0).must_fetch.count("/private/public-note"), 1u);
  EXPECT_EQ(site.expectations(2).must_not_fetch.count("/s/3"), 1u);
  EXPECT_EQ(site.expectations(3).must_not_fetch.count("/"), 1u);  // robots.txt 503: disallow all
}

// The spellings page is only a trap if each group of spellings really is one canonical URL.
TEST(GeneratedSiteTest, EverySpellingCanonicalizesToOneOfThreePages) {
  const std::string origin = "http://127.0.0.1:1000";
  GeneratedSite site({}, {origin});
  SiteResponse page = site.Handle({0, "GET", "/spellings"});
  const UrlCanonicalizer canonicalizer;
  std::map<std::string, int> keys;
  for (const std::string& href : Hrefs(page.body)) {
    if (href.empty()) continue;  // "#self"
    auto absolute = canonicalizer.Resolve(origin + "/spellings", href);
    ASSERT_TRUE(absolute.ok()) << href << ": " << absolute.status().ToString();
    auto canonical = canonicalizer.Canonicalize(*absolute);
    ASSERT_TRUE(canonical.ok()) << href << ": " << canonical.status().ToString();
    ++keys[std::string(canonical->key())];
  }
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[origin + "/pages/1"], 12);
  EXPECT_EQ(keys[origin + "/~user/"], 4);
  EXPECT_EQ(keys[origin + "/caf%C3%A9"], 2);
}

TEST(GeneratedSiteTest, TheCalendarNeverEnds) {
  GeneratedSite site({}, {"http://127.0.0.1:1000"});
  std::string month = "/calendar/2026/11";
  for (int i = 0; i < 30; ++i) {
    SiteResponse r = site.Handle({0, "GET", month});
    ASSERT_EQ(r.status, 200) << month;
    const std::vector<std::string> hrefs = Hrefs(r.body);
    ASSERT_FALSE(hrefs.empty());
    ASSERT_TRUE(hrefs[0].starts_with("/calendar/")) << hrefs[0];
    month = hrefs[0];
  }
  EXPECT_EQ(month, "/calendar/2029/5");
  EXPECT_EQ(site.Handle({0, "GET", "/calendar/2026/13"}).status, 404);
  EXPECT_EQ(site.Handle({0, "GET", "/calendar/x/1"}).status, 404);
}

// Crawls the demo site in-process (no network) and checks its shape: the README's first command
// crawls it, so it must stay a small, connected site with exactly the traps it advertises.
TEST(StaticSiteTest, DemoSiteIsSmallConnectedAndHasItsRedirectsAnd404) {
  auto site = StaticSite::Open(std::filesystem::path(URLSIEVE_SOURCE_DIR) / "tools/demo_site");
  ASSERT_TRUE(site.ok()) << site.status().ToString();
  std::set<std::string> seen = {"/"};
  std::vector<std::string> queue = {"/"};
  std::map<int, std::set<std::string>> by_status;
  while (!queue.empty()) {
    const std::string path = queue.back();
    queue.pop_back();
    SiteResponse r = (*site)->Handle({0, "GET", path});
    by_status[r.status].insert(path);
    std::vector<std::string> targets;
    if (r.status >= 300 && r.status < 400) targets.push_back(r.headers.at(0).second);
    if (r.status == 200 && r.content_type.starts_with("text/html")) {
      for (const std::string& t : Hrefs(r.body)) targets.push_back(t);
    }
    const std::string dir = path.substr(0, path.rfind('/') + 1);
    for (std::string t : targets) {
      if (t.empty()) continue;
      if (t.starts_with("./")) t = t.substr(2);
      if (t.front() != '/') t = dir + t;
      if (seen.insert(t).second) queue.push_back(t);
    }
  }
  EXPECT_EQ(by_status[404], std::set<std::string>{"/birds/dodo.html"});
  EXPECT_EQ(by_status[301], (std::set<std::string>{"/news.html", "/old/"}));
  EXPECT_EQ(by_status[302], std::set<std::string>{"/birds/heron.html"});
  EXPECT_GE(by_status[200].size(), 30u);
  EXPECT_LE(by_status[200].size(), 60u);
  EXPECT_EQ(by_status[200].count("/drafts/"), 1u);  // linked; robots.txt keeps crawlers out
  SiteResponse robots = (*site)->Handle({0, "GET", "/robots.txt"});
  EXPECT_EQ(robots.content_type, "text/plain; charset=utf-8");
  EXPECT_NE(robots.body.find("Disallow: /drafts/"), std::string::npos);
}

TEST(StaticSiteTest, ServesFilesIndexesRedirectsAndRefusesTraversal) {
  urlsieve::testing::ScratchDir scratch("urlsieve_static");
  const auto root = scratch.path() / "site";
  std::filesystem::create_directories(root / "sub");
  std::ofstream(root / "index.html") << "<p>home</p>";
  std::ofstream(root / "sub" / "page.html") << "<p>page</p>";
  std::ofstream(root / "data.json") << "{}";
  std::ofstream(root / "_redirects") << "# comment\n/old /sub/page.html\n/tmp /sub/ 302\n";
  std::ofstream(root.parent_path() / "outside.html") << "secret";
  auto site = StaticSite::Open(root);
  ASSERT_TRUE(site.ok()) << site.status().ToString();
  StaticSite& s = **site;
  EXPECT_EQ(s.Handle({0, "GET", "/"}).body, "<p>home</p>");
  EXPECT_EQ(s.Handle({0, "GET", "/sub/page.html?x=1"}).body, "<p>page</p>");
  EXPECT_EQ(s.Handle({0, "GET", "/data.json"}).content_type, "application/json");
  SiteResponse dir = s.Handle({0, "GET", "/sub"});
  EXPECT_EQ(dir.status, 301);
  EXPECT_EQ(dir.headers.at(0).second, "/sub/");
  SiteResponse old = s.Handle({0, "GET", "/old"});
  EXPECT_EQ(old.status, 301);
  EXPECT_EQ(old.headers.at(0), (std::pair<std::string, std::string>("Location", "/sub/page.html")));
  EXPECT_EQ(s.Handle({0, "GET", "/tmp"}).status, 302);
  EXPECT_EQ(s.Handle({0, "GET", "/missing.html"}).status, 404);
  SiteResponse escape = s.Handle({0, "GET", "/../outside.html"});
  EXPECT_EQ(escape.status, 404);
  EXPECT_EQ(escape.body.find("secret"), std::string::npos);

  std::ofstream(root / "_redirects") << "/bad\n";
  EXPECT_EQ(StaticSite::Open(root).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(StaticSite::Open(root / "index.html").ok());
}

// DustSite's application (tools/site_server/dust_site.h, "The application").

std::string DustId(const SiteResponse& r) {
  for (const auto& [name, value] : r.headers) {
    if (name == "X-Dust-Page") return value;
  }
  return "(no X-Dust-Page)";
}

// The links of a DustSite page as the crawler reads them: "&amp;" is "&".
std::vector<std::string> DustLinks(const SiteResponse& r) {
  std::vector<std::string> out;
  for (const std::string& href : Hrefs(r.body)) {
    // Rebuilt rather than replaced in place: GCC 12 -O3 reports a false -Wrestrict on replace().
    std::string link;
    for (size_t i = 0; i < href.size(); ++i) {
      link.push_back(href[i]);
      if (href.compare(i, 5, "&amp;") == 0) i += 4;
    }
    out.push_back(std::move(link));
  }
  return out;
}

bool Links(const SiteResponse& r, const std::string& target) {
  const std::vector<std::string> links = DustLinks(r);
  return std::find(links.begin(), links.end(), target) != links.end();
}

TEST(DustSiteTest, TheContentSeenLayoutIsUnchangedWithoutGroundTruth) {
  DustSite site(DustSiteOptions{});
  SiteResponse index = site.Handle({0, "GET", "/"});
  EXPECT_EQ(DustId(index), "(no X-Dust-Page)");
  EXPECT_TRUE(Links(index, "/mirror/docs/page0.html"));
  EXPECT_TRUE(Links(index, "/article/7?sid=2"));
  EXPECT_EQ(site.Handle({0, "GET", "/__dust/truth"}).status, 404);

  DustSiteOptions options;
  options.ground_truth = true;
  DustSite truth(options);
  EXPECT_EQ(truth.Handle({0, "GET", "/"}).body, index.body);
  EXPECT_EQ(DustId(truth.Handle({0, "GET", "/mirror/docs/page3.html"})), "docs/3");
  EXPECT_EQ(DustId(truth.Handle({0, "GET", "/article/3?sid=1"})), "session-article/3");
  EXPECT_EQ(DustId(truth.Handle({0, "GET", "/copy.css"})), "stylesheet");
  EXPECT_EQ(truth.DistinctPages(), 1 + 8 + 8 + 1 + 1);
}

TEST(DustSiteTest, EverySpellingOfAPageCarriesItsId) {
  DustSite site(DustSiteOptions::App(100));
  const std::string article = site.Handle({0, "GET", "/wiki/Article_7"}).body;
  for (const char* spelling : {"/wiki/Article_7", "/index.php?title=Article_7",
                               "/wiki/Article_7?utm_source=newsletter&utm_campaign=issue3",
                               "/wiki/Article_7?sid=0123abcd", "/print/wiki/Article_7"}) {
    SiteResponse r = site.Handle({0, "GET", spelling});
    EXPECT_EQ(r.status, 200) << spelling;
    EXPECT_EQ(DustId(r), "article/7") << spelling;
  }
  // Aliases and tracking parameters: the same bytes; a session or print: other bytes.
  EXPECT_EQ(site.Handle({0, "GET", "/index.php?title=Article_7"}).body, article);
  EXPECT_EQ(site.Handle({0, "GET", "/wiki/Article_7?utm_source=x"}).body, article);
  EXPECT_NE(site.Handle({0, "GET", "/print/wiki/Article_7"}).body, article);
  EXPECT_EQ(site.Handle({0, "GET", "/docs/sec2/index.html"}).body,
            site.Handle({0, "GET", "/docs/sec2/"}).body);
  for (const char* spelling : {"/docs/sec2/", "/docs/sec2/index.html", "/docs/sec2/?sort=desc",
                               "/docs/sec2/?view=compact&sort=desc"}) {
    EXPECT_EQ(DustId(site.Handle({0, "GET", spelling})), "section/2") << spelling;
  }
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/wiki/Article_100"})), "none");  // pages = 100
  EXPECT_EQ(site.Handle({0, "GET", "/wiki/Article_07"}).status, 404);
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/"})), "main");
}

TEST(DustSiteTest, ASessionIdIsMintedThenKeptOnEveryInternalLink) {
  DustSite site(DustSiteOptions::App(100));
  // Article 7's "next" mints one (every tenth article does); article 8 reached without it has none.
  std::string session;
  for (const std::string& link : DustLinks(site.Handle({0, "GET", "/wiki/Article_7"}))) {
    if (link.starts_with("/wiki/Article_8?sid=")) session = link;
  }
  ASSERT_EQ(session.size(), std::string("/wiki/Article_8?sid=").size() + 8) << session;
  SiteResponse page = site.Handle({0, "GET", session});
  const std::string sid = session.substr(session.find("sid="));
  const std::vector<std::string> links = DustLinks(page);
  EXPECT_GE(links.size(), 8u);
  for (const std::string& link : links) EXPECT_TRUE(link.ends_with(sid)) << link;
  for (const std::string& link : DustLinks(site.Handle({0, "GET", "/wiki/Article_8"}))) {
    EXPECT_EQ(link.find("sid="), std::string::npos) << link;
  }
}

TEST(DustSiteTest, SortAndViewLinksSpellTheirParametersInBothOrders) {
  DustSite site(DustSiteOptions::App(100));
  EXPECT_TRUE(Links(site.Handle({0, "GET", "/docs/sec1/?view=compact"}),
                    "/docs/sec1/?view=compact&sort=desc"));
  EXPECT_TRUE(Links(site.Handle({0, "GET", "/docs/sec1/?sort=desc"}),
                    "/docs/sec1/?sort=desc&view=compact"));
  DustSiteOptions one_order = DustSiteOptions::App(100);
  one_order.param_order = false;
  EXPECT_TRUE(Links(DustSite(one_order).Handle({0, "GET", "/docs/sec1/?view=compact"}),
                    "/docs/sec1/?sort=desc&view=compact"));
  // The same items, in the other order.
  const std::string asc = site.Handle({0, "GET", "/docs/sec1/"}).body;
  const std::string desc = site.Handle({0, "GET", "/docs/sec1/?sort=desc"}).body;
  EXPECT_LT(asc.find("Article 20<"), asc.find("Article 23<"));
  EXPECT_GT(desc.find("Article 20<"), desc.find("Article 23<"));
}

TEST(DustSiteTest, TheCalendarNeverEndsAndItsEmptyMonthsAreOnePage) {
  DustSite site(DustSiteOptions::App(100));
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/calendar?month=2023-05"})), "calendar/2023-05");
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/calendar?month=2024-12"})), "calendar/2024-12");
  std::string month = "/calendar?month=2024-12";
  for (int i = 0; i < 40; ++i) {
    SiteResponse r = site.Handle({0, "GET", month});
    ASSERT_EQ(r.status, 200) << month;
    if (i > 0) {
      EXPECT_EQ(DustId(r), "calendar/empty") << month;
    }
    const std::vector<std::string> links = DustLinks(r);
    ASSERT_FALSE(links.empty());
    month = links.back();  // "Next"
  }
  EXPECT_EQ(month, "/calendar?month=2028-04");
  EXPECT_EQ(site.Handle({0, "GET", "/calendar?month=2023-13"}).status, 404);
  EXPECT_EQ(site.Handle({0, "GET", "/calendar"}).status, 404);
}

TEST(DustSiteTest, FormsAskRobotsNotToIndexOrFollow) {
  DustSite site(DustSiteOptions::App(100));
  SiteResponse article = site.Handle({0, "GET", "/wiki/Article_3"});
  EXPECT_TRUE(Links(article, "/index.php?title=Special:UserLogin&returnto=Article_3"));
  EXPECT_TRUE(Links(article, "/index.php?action=edit&title=Article_3"));  // param order
  EXPECT_TRUE(
      Links(site.Handle({0, "GET", "/wiki/Article_4"}), "/index.php?title=Article_4&action=edit"));
  for (const char* form : {"/index.php?title=Special:UserLogin&returnto=Article_3",
                           "/index.php?action=edit&title=Article_3"}) {
    SiteResponse r = site.Handle({0, "GET", form});
    EXPECT_NE(r.body.find("<meta name=\"robots\" content=\"noindex,nofollow\">"), std::string::npos)
        << form;
  }
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/index.php?title=Article_9&action=edit"})), "form/edit");
  EXPECT_EQ(DustId(site.Handle({0, "GET", "/index.php?title=Special:UserLogin&returnto=X"})),
            "form/login");
}

// The truth's count is what a crawl finds: following every link from /, expanding each distinct
// page once (its other spellings link the same pages), every link answers 200 and the ids found
// are /__dust/truth's distinct_pages.
TEST(DustSiteTest, TheTruthCountsThePagesReachableFromTheMainPage) {
  for (int articles : {1, 30, 250}) {
    DustSite site(DustSiteOptions::App(articles));
    std::set<std::string> seen = {"/"};
    std::set<std::string> ids;
    std::vector<std::string> queue = {"/"};
    size_t spellings = 0;
    while (!queue.empty()) {
      const std::string url = queue.back();
      queue.pop_back();
      SiteResponse r = site.Handle({0, "GET", url});
      ASSERT_EQ(r.status, 200) << url;
      ++spellings;
      if (!ids.insert(DustId(r)).second) continue;
      for (const std::string& link : DustLinks(r)) {
        if (seen.insert(link).second) queue.push_back(link);
      }
    }
    EXPECT_EQ(static_cast<int>(ids.size()), site.DistinctPages()) << articles;
    EXPECT_GT(spellings, ids.size() * 2) << articles;
    SiteResponse truth = site.Handle({0, "GET", "/__dust/truth"});
    EXPECT_EQ(truth.content_type, "application/json");
    EXPECT_NE(truth.body.find("\"distinct_pages\": " + std::to_string(ids.size()) + ","),
              std::string::npos)
        << truth.body;
  }
}

}  // namespace
}  // namespace urlsieve::site
