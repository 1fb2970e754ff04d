// End-to-end crawls with sitemaps (docs/features/sitemaps.md, "Sitemaps"), served by
// tools/site_server (MapSite) on 127.0.0.1: robots.txt Sitemap: lines and --sitemap, an index of
// gzip'd urlsets, loops of indexes, robots.txt rules on sitemaps, --resume, lastmod in state.db,
// and hostile sitemaps bounded. Assertions come from the server's log, stats and state.db.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite_db.h"
#include "crawler/crawl/crawler.h"
#include "crawler/deploy/deployment_factory.h"
#include "crawler/sitemap/sitemap_store.h"
#include "tests/crawler/crawl_watchdog.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/gzip.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/map_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using site::LoggedRequest;
using site::MapSite;
using site::SiteServer;
using testing::Gzip;

// The whole content of a multi-member gzip file (a WARC, one member per record).
std::string GunzipFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), {});
  std::string out;
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string buffer(1 << 16, '\0');
  while (zs.avail_in > 0) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
    zs.avail_out = static_cast<uInt>(buffer.size());
    const int ret = inflate(&zs, Z_NO_FLUSH);
    out.append(buffer.data(), buffer.size() - zs.avail_out);
    if (ret == Z_STREAM_END) {
      if (inflateReset(&zs) != Z_OK) break;
    } else if (ret != Z_OK) {
      ADD_FAILURE() << path << ": gzip error " << ret;
      break;
    }
  }
  inflateEnd(&zs);
  return out;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string Index(const std::vector<std::string>& locs) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (const std::string& loc : locs) xml += "  <sitemap><loc>" + loc + "</loc></sitemap>\n";
  return xml + "</sitemapindex>\n";
}

// <url>s with their lastmod ("" = none).
std::string Urlset(const std::vector<std::pair<std::string, std::string>>& urls) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (const auto& [loc, lastmod] : urls) {
    xml += "  <url><loc>" + loc + "</loc>";
    if (!lastmod.empty()) xml += "<lastmod>" + lastmod + "</lastmod>";
    xml += "</url>\n";
  }
  return xml + "</urlset>\n";
}

class CrawlSitemapTest : public ::testing::Test {
 protected:
  CrawlSitemapTest() : dir_("urlsieve_crawl_sitemap") {
    server_ = testing::StartSite(
        [](const std::vector<std::string>&) { return std::make_unique<MapSite>(); });
    EXPECT_NE(server_, nullptr);
    site_ = static_cast<MapSite*>(&server_->site());
    // The seed has no links: everything else is reachable only through sitemaps.
    Page("/", "home");
    std::ofstream(dir_.path() / "seeds.txt") << Url("/") << "\n";
  }

  std::string Url(const std::string& path) const { return server_->Url(path); }
  void Page(const std::string& path, const std::string& title) {
    site_->Set(path, "text/html; charset=utf-8",
               "<html><head><title>" + title + "</title></head><body>" + title + "</body></html>");
  }
  void Robots(const std::string& text) { site_->Set("/robots.txt", "text/plain", text); }

  CrawlConfig Config() const {
    CrawlConfig c = testing::SmallCrawlConfig(dir_.path() / "seeds.txt", Out(), 3);
    c.politeness.delay_ms = 0;
    c.politeness.per_host_concurrency = 2;
    c.politeness.backoff_ms = 50;
    c.politeness.robots_retries = 0;
    c.fetch.timeout_ms = 20000;
    c.fetch.connect_timeout_ms = 2000;
    return c;
  }
  fs::path Out() const { return dir_.path() / "out"; }

  CrawlSummary Crawl(const CrawlConfig& config) {
    Result<CrawlSummary> summary = testing::RunCrawlWithWatchdog(config);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? *summary : CrawlSummary{};
  }

  // How often each resource was requested.
  std::map<std::string, int> Requested() const {
    std::map<std::string, int> counts;
    for (const LoggedRequest& r : server_->log().Snapshot()) ++counts[r.resource];
    return counts;
  }

  static uint64_t Counter(const CrawlSummary& summary, const std::string& name) {
    const auto it = summary.stats.sitemaps.find(name);
    return it == summary.stats.sitemaps.end() ? 0 : it->second;
  }

  testing::ScratchDir dir_;
  std::unique_ptr<SiteServer> server_;
  MapSite* site_ = nullptr;
};

TEST_F(CrawlSitemapTest, ASiteReachableOnlyThroughItsSitemapIndexIsCrawledWhole) {
  Robots("User-agent: *\nDisallow:\n\nSitemap: " + Url("/sitemap_index.xml") + "\n");
  site_->Set("/sitemap_index.xml", "application/xml",
             Index({Url("/sitemaps/a.xml.gz"), Url("/sitemaps/b.xml.gz")}));
  std::vector<std::pair<std::string, std::string>> a, b;
  for (int i = 0; i < 4; ++i) {
    Page("/a/" + std::to_string(i) + ".html", "a" + std::to_string(i));
    Page("/b/" + std::to_string(i) + ".html", "b" + std::to_string(i));
    a.emplace_back(Url("/a/" + std::to_string(i) + ".html"), "2024-05-0" + std::to_string(i + 1));
    b.emplace_back(Url("/b/" + std::to_string(i) + ".html"), "");
  }
  b.emplace_back(Url("/"), "");  // the seed again: seen, not new
  // Served as files, not by Content-Encoding: the body is gzip and says so by its magic bytes.
  site_->Set("/sitemaps/a.xml.gz", "application/x-gzip", Gzip(Urlset(a)));
  site_->Set("/sitemaps/b.xml.gz", "application/x-gzip", Gzip(Urlset(b)));

  CrawlConfig config = Config();
  config.output.warc = true;
  const CrawlSummary summary = Crawl(config);
  EXPECT_FALSE(summary.stopped);
  std::map<std::string, int> expected = {{"/robots.txt", 1},
                                         {"/", 1},
                                         {"/sitemap_index.xml", 1},
                                         {"/sitemaps/a.xml.gz", 1},
                                         {"/sitemaps/b.xml.gz", 1}};
  for (int i = 0; i < 4; ++i) {
    expected["/a/" + std::to_string(i) + ".html"] = 1;
    expected["/b/" + std::to_string(i) + ".html"] = 1;
  }
  EXPECT_EQ(Requested(), expected);
  EXPECT_EQ(summary.stats.pages, 9u);  // sitemaps are not pages (no pages.jsonl line)
  EXPECT_EQ(Counter(summary, "from_robots"), 1u);
  EXPECT_EQ(Counter(summary, "fetched"), 3u);
  EXPECT_EQ(Counter(summary, "indexes"), 1u);
  EXPECT_EQ(Counter(summary, "urlsets"), 2u);
  EXPECT_EQ(Counter(summary, "gzip"), 2u);
  EXPECT_EQ(Counter(summary, "urls"), 9u);
  EXPECT_EQ(Counter(summary, "urls_new"), 8u);
  EXPECT_EQ(Counter(summary, "failed"), 0u);

  // Each sitemap is archived once, like robots.txt (a request and a response record), as fetched.
  const std::string warc = GunzipFile(Out() / "crawl.warc.gz");
  for (const char* path : {"/sitemap_index.xml", "/sitemaps/a.xml.gz", "/sitemaps/b.xml.gz"}) {
    EXPECT_EQ(Occurrences(warc, "WARC-Target-URI: " + Url(path) + "\r\n"), 2u) << path;
  }
  EXPECT_NE(warc.find(Gzip(Urlset(a))), std::string::npos) << "the gzip body, as served";
  // No pages.jsonl line for a sitemap.
  std::ifstream pages(Out() / "pages.jsonl");
  const std::string jsonl((std::istreambuf_iterator<char>(pages)), {});
  for (const char* path : {"/sitemap_index.xml", "/sitemaps/a.xml.gz", "/sitemaps/b.xml.gz"}) {
    EXPECT_EQ(jsonl.find("\"url\":\"" + Url(path) + "\""), std::string::npos) << path;
  }
  // A page listed by a urlset has it as its parent.
  EXPECT_NE(jsonl.find("\"parent\":\"" + Url("/sitemaps/a.xml.gz") + "\""), std::string::npos);

  // The lastmods are in state.db, by URL (fetch form), for the re-crawl.
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((Out() / "state" / "state.db").string());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Result<std::optional<int64_t>> lastmod = SitemapStore::ReadLastmod(**db, Url("/a/2.html"));
  ASSERT_TRUE(lastmod.ok()) << lastmod.status().ToString();
  EXPECT_EQ(*lastmod, 1714694400);  // 2024-05-03
  Result<std::optional<int64_t>> none = SitemapStore::ReadLastmod(**db, Url("/b/2.html"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::vector<SitemapRecord>> records = SitemapStore::ReadAll(**db);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 3u);
  for (const SitemapRecord& r : *records) {
    EXPECT_EQ(r.status, 200) << r.url;
    EXPECT_GT(r.fetched_at, 0) << r.url;
    EXPECT_EQ(r.nesting, r.url == Url("/sitemap_index.xml") ? 0u : 1u) << r.url;
  }
}

TEST_F(CrawlSitemapTest, ASitemapFlagIsReadAsATextSitemap) {
  Robots("User-agent: *\nDisallow:\n");
  site_->Set("/urls.txt", "text/plain", Url("/x.html") + "\n" + Url("/y.html") + "\n");
  Page("/x.html", "x");
  Page("/y.html", "y");
  CrawlConfig config = Config();
  config.sitemaps.urls = {Url("/urls.txt")};
  const CrawlSummary summary = Crawl(config);
  const std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.at("/urls.txt"), 1);
  EXPECT_EQ(requested.at("/x.html"), 1);
  EXPECT_EQ(requested.at("/y.html"), 1);
  EXPECT_EQ(Counter(summary, "texts"), 1u);
  EXPECT_EQ(Counter(summary, "urls_new"), 2u);
}

TEST_F(CrawlSitemapTest, IndexLoopsAreFetchedOnceEach) {
  // /self.xml lists itself and /a.xml; /a.xml and /b.xml list each other (and /self.xml).
  Robots("User-agent: *\nDisallow:\nSitemap: " + Url("/self.xml") +
         "\nSitemap: " + Url("/self.xml") + "\n");
  site_->Set("/self.xml", "application/xml", Index({Url("/self.xml"), Url("/a.xml")}));
  site_->Set("/a.xml", "application/xml", Index({Url("/b.xml")}));
  site_->Set("/b.xml", "application/xml",
             Index({Url("/a.xml"), Url("/self.xml"), Url("/leaf.xml")}));
  site_->Set("/leaf.xml", "application/xml", Urlset({{Url("/p.html"), ""}}));
  Page("/p.html", "p");
  CrawlConfig config = Config();
  config.sitemaps.urls = {Url("/a.xml")};  // named by the user as well
  const CrawlSummary summary = Crawl(config);
  EXPECT_FALSE(summary.stopped);
  const std::map<std::string, int> requested = Requested();
  for (const char* path : {"/self.xml", "/a.xml", "/b.xml", "/leaf.xml", "/p.html"}) {
    EXPECT_EQ(requested.count(path) ? requested.at(path) : 0, 1) << path;
  }
  EXPECT_EQ(Counter(summary, "fetched"), 4u);
  // Named again: self.xml (robots twice, itself, b), a.xml (self, b; --sitemap came first).
  EXPECT_EQ(Counter(summary, "repeated"), 5u);
}

TEST_F(CrawlSitemapTest, NestingIsBounded) {
  Robots("User-agent: *\nDisallow:\nSitemap: " + Url("/n0.xml") + "\n");
  for (int i = 0; i < 6; ++i) {
    site_->Set("/n" + std::to_string(i) + ".xml", "application/xml",
               Index({Url("/n" + std::to_string(i + 1) + ".xml")}));
  }
  CrawlConfig config = Config();
  config.sitemaps.max_nesting = 2;
  const CrawlSummary summary = Crawl(config);
  const std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.count("/n2.xml"), 1u);
  EXPECT_EQ(requested.count("/n3.xml"), 0u);
  EXPECT_EQ(Counter(summary, "nesting_cut"), 1u);
}

TEST_F(CrawlSitemapTest, ASitemapDisallowedByRobotsIsNotFetched) {
  Robots("User-agent: *\nDisallow: /private/\nSitemap: " + Url("/private/sitemap.xml") + "\n");
  site_->Set("/private/sitemap.xml", "application/xml", Urlset({{Url("/q.html"), ""}}));
  Page("/q.html", "q");
  const CrawlSummary summary = Crawl(Config());
  const std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.count("/private/sitemap.xml"), 0u);
  EXPECT_EQ(requested.count("/q.html"), 0u);
  EXPECT_EQ(Counter(summary, "disallowed"), 1u);
  EXPECT_EQ(Counter(summary, "fetched"), 0u);
  // rejected.jsonl says so, as a sitemap.
  std::ifstream rejected(Out() / "rejected.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(rejected, line));
  EXPECT_NE(line.find("\"kind\":\"sitemap\""), std::string::npos) << line;
  EXPECT_NE(line.find("robots_disallowed"), std::string::npos) << line;
}

TEST_F(CrawlSitemapTest, AResumedCrawlDoesNotFetchASitemapAgain) {
  // 40 slow pages listed by one sitemap: the crawl is stopped once the sitemap is done and a page
  // was fetched, then resumed.
  Robots("User-agent: *\nDisallow:\nSitemap: " + Url("/sitemap.xml") + "\n");
  std::vector<std::pair<std::string, std::string>> urls;
  for (int i = 0; i < 40; ++i) {
    // Built with append: GCC 12 -O3 reports a false -Wrestrict on "s" + std::string&&.
    const std::string name = std::string(1, 's').append(std::to_string(i));
    const std::string path = std::string("/s/").append(std::to_string(i)).append(".html");
    site::SiteResponse page = site::HtmlPage(name, "slow");
    page.delay = std::chrono::milliseconds(50);
    site_->Set(path, std::move(page));
    urls.emplace_back(Url(path), "");
  }
  site_->Set("/sitemap.xml", "application/xml", Urlset(urls));
  CrawlConfig config = Config();
  config.crawl.threads = 1;
  config.politeness.per_host_concurrency = 1;
  config.sitemaps.urls = {Url("/sitemap.xml")};
  {
    Result<std::unique_ptr<Crawler>> crawler = OpenCrawler(config);
    ASSERT_TRUE(crawler.ok()) << crawler.status().ToString();
    std::optional<Result<CrawlSummary>> ran;
    std::thread run([&] { ran.emplace((*crawler)->Run()); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool fetched_a_page = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (Requested().count("/s/0.html") > 0) {
        fetched_a_page = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a poll, with a deadline
    }
    (*crawler)->RequestStop();
    run.join();
    ASSERT_TRUE(fetched_a_page) << "the crawl never fetched a page";
    ASSERT_TRUE(ran.has_value());
    const Result<CrawlSummary>& first = *ran;
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_TRUE(first->stopped);
    EXPECT_GT(first->pending, 0u);
  }
  config.crawl.resume = true;
  const CrawlSummary second = Crawl(config);
  EXPECT_FALSE(second.stopped);
  const std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.at("/sitemap.xml"), 1);
  for (int i = 0; i < 40; ++i) {
    EXPECT_GE(requested.count("/s/" + std::to_string(i) + ".html"), 1u) << i;
  }
  EXPECT_EQ(Counter(second, "fetched"), 1u);  // the counters are resumed, not fetched again
}

// docs/features/sitemaps.md, "Sitemaps": a re-crawl is a new pass that reads the sitemaps again
// (finding new URLs and lastmods); a lastmod newer than a page's last fetch makes it due at the
// next --recrawl.
TEST_F(CrawlSitemapTest, ARecrawlReadsSitemapsAgainAndALastmodMakesAPageDue) {
  Robots("User-agent: *\nDisallow:\nSitemap: " + Url("/sm.xml") + "\n");
  Page("/p.html", "p");
  Page("/new.html", "new");
  site_->Set("/sm.xml", "application/xml", Urlset({{Url("/p.html"), ""}}));
  CrawlConfig config = Config();
  Crawl(config);
  EXPECT_EQ(Requested().at("/p.html"), 1);

  // An hour later (the fetch record is moved back instead of waiting), the sitemap says /p.html
  // changed half an hour ago, and lists a new page.
  const auto db_path = (Out() / "state" / "state.db").string();
  {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(db_path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->Exec("UPDATE crawl_fetch_records SET fetch_time = fetch_time - 3600").ok());
  }
  const std::time_t changed = std::time(nullptr) - 1800;
  std::tm utc{};
  gmtime_r(&changed, &utc);
  char lastmod[32];
  std::strftime(lastmod, sizeof(lastmod), "%Y-%m-%dT%H:%M:%SZ", &utc);
  site_->Set("/sm.xml", "application/xml",
             Urlset({{Url("/p.html"), lastmod}, {Url("/new.html"), ""}}));

  config.crawl.recrawl = true;  // revisit_after 7d: nothing is due by its interval
  Crawl(config);
  std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.at("/sm.xml"), 2);  // read again in the new pass
  EXPECT_EQ(requested.at("/new.html"), 1);
  EXPECT_EQ(requested.at("/p.html"), 1);  // its lastmod was learnt after the due URLs were taken
  {
    Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(db_path);
    ASSERT_TRUE(db.ok());
    Result<std::optional<int64_t>> stored = SitemapStore::ReadLastmod(**db, Url("/p.html"));
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(*stored, static_cast<int64_t>(changed));
  }

  Crawl(config);  // the next re-crawl: /p.html is due by its lastmod
  requested = Requested();
  EXPECT_EQ(requested.at("/p.html"), 2);
  EXPECT_EQ(requested.at("/new.html"), 1);
  EXPECT_EQ(requested.at("/sm.xml"), 3);
}

TEST_F(CrawlSitemapTest, HostileSitemapsAreBoundedAndCounted) {
  Robots("User-agent: *\nDisallow:\nSitemap: " + Url("/hostile.xml") + "\n");
  site_->Set("/hostile.xml", "application/xml",
             Index({Url("/laughs.xml"), Url("/deep.xml"), Url("/big.xml"), Url("/bomb.xml.gz"),
                    Url("/broken.xml"), Url("/junk.bin")}));
  std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">";
  for (int i = 1; i <= 9; ++i) {
    laughs += "<!ENTITY lol" + std::to_string(i) + " \"";
    for (int j = 0; j < 10; ++j) {
      laughs += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    }
    laughs += "\">";
  }
  site_->Set("/laughs.xml", "application/xml",
             laughs + "]>\n<urlset><url><loc>" + Url("/&lol9;") + "</loc></url></urlset>");
  std::string deep = "<urlset>";
  for (int i = 0; i < 50'000; ++i) deep += "<x>";
  site_->Set("/deep.xml", "application/xml", deep);
  // 100 MB, generated as it is sent: URLs of another host (out of scope), so nothing is crawled.
  site::SiteResponse big;
  big.content_type = "application/xml";
  big.generated_size = 100ull << 20;
  const std::string head = "<urlset>";
  const std::string entry = "<url><loc>http://elsewhere.invalid/p</loc></url>\n";
  big.generate = [head, entry](uint64_t offset, size_t length) {
    std::string piece;
    piece.reserve(length);
    for (uint64_t at = offset; piece.size() < length && at < (100ull << 20);) {
      if (at < head.size()) {
        piece += head[at];
        ++at;
      } else {
        const uint64_t in_entry = (at - head.size()) % entry.size();
        const size_t n = std::min<uint64_t>(entry.size() - in_entry, length - piece.size());
        piece.append(entry, in_entry, n);
        at += n;
      }
    }
    return piece;
  };
  site_->Set("/big.xml", std::move(big));
  // A gzip bomb: 200 MB of spaces after one URL, about 200 KB on the wire (1 MB gzip members,
  // RFC 1952 §2.2).
  {
    std::string bomb = Gzip("<urlset><url><loc>" + Url("/from-bomb.html") + "</loc></url>");
    const std::string member = Gzip(std::string(1 << 20, ' '));
    for (int i = 0; i < 200; ++i) bomb += member;
    site_->Set("/bomb.xml.gz", "application/x-gzip", std::move(bomb));
  }
  Page("/from-bomb.html", "bomb");
  site_->Set("/broken.xml", "application/xml",
             "<urlset><url><loc>" + Url("/ok1.html") + "</loc></url><url><loc>" + Url("/ok2.html") +
                 "</loc></url><url><loc>" + Url("/lost.html") + "</lo></url></urlset>");
  Page("/ok1.html", "ok1");
  Page("/ok2.html", "ok2");
  site_->Set("/junk.bin", "application/octet-stream", std::string("\0\1\2garbage", 10));

  const CrawlSummary summary = Crawl(Config());
  EXPECT_FALSE(summary.stopped);
  const std::map<std::string, int> requested = Requested();
  EXPECT_EQ(requested.at("/from-bomb.html"), 1);
  EXPECT_EQ(requested.at("/ok1.html"), 1);
  EXPECT_EQ(requested.at("/ok2.html"), 1);
  EXPECT_EQ(requested.count("/lost.html"), 0u);
  EXPECT_EQ(Counter(summary, "fetched"), 7u);
  EXPECT_EQ(Counter(summary, "refused"), 3u);             // laughs (DOCTYPE), deep, junk
  EXPECT_EQ(Counter(summary, "malformed"), 1u);           // broken
  EXPECT_EQ(Counter(summary, "cut_bytes"), 2u);           // big (by the fetch), bomb (inflated)
  EXPECT_GT(Counter(summary, "cut_urls"), 1'000'000u);    // big: the URLs past 50,000
  EXPECT_EQ(Counter(summary, "urls_rejected"), 50'000u);  // big's, out of scope
}

}  // namespace
}  // namespace urlsieve
