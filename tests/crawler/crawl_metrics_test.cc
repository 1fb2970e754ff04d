// `urlsieve crawl --metrics-listen` end to end (docs/features/metrics.md, "Metrics"): a real crawl
// of a site on 127.0.0.1 whose pages are held until the test lets them go, so that the crawl is
// scraped at known points while it runs; every scrape is read by prometheus_client's parser. The
// page counter rises between two scrapes, and the final scrape (served during --metrics-linger)
// matches stats.json. A stop ends the endpoint; a bad address and a port in use are errors before
// anything is created.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/crawler/metrics_scrape.h"
#include "tests/support/child_process.h"
#include "tests/support/crawl_fixture.h"
#include "tests/support/file_contents.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

namespace fs = std::filesystem;
using testing::CrawlChild;
using testing::ParsedTotal;
using testing::ParseExposition;
using testing::ScratchDir;

constexpr int kPages = 12;
constexpr auto kDeadline = std::chrono::seconds(120);

// "/" links to /missing (404), /moved (301 to /p0), then /p0 ... /p11, each of which links back
// to "/". A request for /pI is answered once I < allowed (Allow); until then it waits, so the
// crawl (one host, one request at a time) stands still at a known point.
class GatedSite : public site::Site {
 public:
  void Allow(int pages) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      allowed_ = pages;
    }
    cv_.notify_all();
  }
  // Waits until /pI has been asked for; false past the deadline.
  bool WaitRequested(int i) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return requested_ >= i; });
  }

  site::SiteResponse Handle(const site::SiteRequest& request) override {
    const std::string& r = request.resource;
    if (r == "/") {
      std::string links = "<a href=/missing>m</a> <a href=/moved>r</a>";
      for (int i = 0; i < kPages; ++i)
        links += std::string(" <a href=/p").append(std::to_string(i)).append(">p</a>");
      return site::HtmlPage("home", links);
    }
    if (r == "/moved") return site::Redirect(301, "/p0");
    if (r.starts_with("/p")) {
      const int i = std::stoi(r.substr(2));
      std::unique_lock<std::mutex> lock(mu_);
      requested_ = std::max(requested_, i);
      cv_.notify_all();
      cv_.wait(lock, [&] { return i < allowed_; });
      return site::HtmlPage(std::string("page ").append(std::to_string(i)),
                            std::string("<a href=/>home</a> ").append(100 * (i + 1), 'x'));
    }
    return site::PlainStatus(404, "not found");  // /missing, /robots.txt
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int allowed_ = 0;     // guarded by mu_
  int requested_ = -1;  // guarded by mu_: the highest /pI asked for
};

class CrawlMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::StartSite([this](const std::vector<std::string>&) {
      auto created = std::make_unique<GatedSite>();
      site_ = created.get();
      return created;
    });
    ASSERT_NE(server_, nullptr);
    std::ofstream(dir_.path() / "seeds.txt") << server_->Url("/") << "\n";
  }
  void TearDown() override {
    if (site_ != nullptr) site_->Allow(1 << 30);  // no handler left waiting
  }

  fs::path out() const { return dir_.path() / "out"; }
  fs::path err() const { return dir_.path() / "crawl.err"; }

  std::vector<std::string> Args(const std::string& listen) const {
    return {"--seeds",
            (dir_.path() / "seeds.txt").string(),
            "--out",
            out().string(),
            "--threads",
            "2",
            "--delay-ms",
            "0",
            "--timeout-ms",
            "300000",
            "--checkpoint-s",
            "1",
            "--metrics-listen",
            listen};
  }

  // The address in out/metrics.addr once the crawl serves (polled, with a deadline).
  std::string WaitForAddress(const CrawlChild& child) const {
    const auto until = std::chrono::steady_clock::now() + kDeadline;
    while (std::chrono::steady_clock::now() < until) {
      std::ifstream in(out() / "metrics.addr");
      std::string address;
      if (in >> address) return address;
      if (child.exited()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling for the file
    }
    ADD_FAILURE() << "no metrics.addr; stderr:\n" << child.err();
    return "";
  }

  // One scrape, parsed.
  nlohmann::json ScrapeParsed(const std::string& address) {
    testing::ScrapeResult r = testing::Scrape(address);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
    return ParseExposition(r.body, dir_.path());
  }

  static double Sample(const nlohmann::json& parsed, const std::string& family,
                       const std::string& label = "") {
    for (const MetricFamily& f : MetricFamilies()) {
      if (f.name != family) continue;
      const auto samples = testing::ParsedSamples(parsed, f);
      auto it = samples.find(label);
      return it == samples.end() ? -1 : it->second;
    }
    ADD_FAILURE() << "no family " << family;
    return -1;
  }

  ScratchDir dir_{"crawl_metrics"};
  std::unique_ptr<site::SiteServer> server_;
  GatedSite* site_ = nullptr;
};

TEST_F(CrawlMetricsTest, ScrapedDuringTheCrawlAndMatchingStatsJsonAtTheEnd) {
  site_->Allow(3);
  std::vector<std::string> args = Args("127.0.0.1:0");
  args.insert(args.end(), {"--metrics-linger", "1h"});
  CrawlChild child(err(), args);
  const std::string address = WaitForAddress(child);
  ASSERT_FALSE(address.empty());
  EXPECT_TRUE(address.starts_with("127.0.0.1:")) << address;
  EXPECT_NE(child.err().find("metrics: http://" + address + "/metrics"), std::string::npos)
      << child.err();

  // Held at /p3: "/", /missing, /moved, /p0-/p2 are recorded, /p3 is in flight.
  ASSERT_TRUE(site_->WaitRequested(3));
  const nlohmann::json first = ScrapeParsed(address);
  ASSERT_FALSE(first.is_null());
  EXPECT_EQ(ParsedTotal(first, "urlsieve_pages_total"), 6);
  EXPECT_EQ(Sample(first, "urlsieve_pages_total", "2xx"), 4);
  EXPECT_EQ(Sample(first, "urlsieve_pages_total", "3xx"), 1);
  EXPECT_EQ(Sample(first, "urlsieve_pages_total", "4xx"), 1);
  EXPECT_EQ(Sample(first, "urlsieve_frontier_in_flight"), 1);
  EXPECT_EQ(Sample(first, "urlsieve_frontier_pending", "memory"), kPages - 4);
  EXPECT_EQ(Sample(first, "urlsieve_hosts", "active"), 1);
  EXPECT_EQ(Sample(first, "urlsieve_seen_new_total"), 1 + 2 + kPages);
  EXPECT_EQ(Sample(first, "urlsieve_crawl_running"), 1);
  EXPECT_GT(Sample(first, "urlsieve_seen_fill_ratio"), 0);

  // Held at /p8: five more pages.
  site_->Allow(8);
  ASSERT_TRUE(site_->WaitRequested(8));
  const nlohmann::json second = ScrapeParsed(address);
  ASSERT_FALSE(second.is_null());
  EXPECT_GT(ParsedTotal(second, "urlsieve_pages_total"),
            ParsedTotal(first, "urlsieve_pages_total"));
  EXPECT_EQ(ParsedTotal(second, "urlsieve_pages_total"), 11);
  EXPECT_GT(ParsedTotal(second, "urlsieve_bytes_total"),
            ParsedTotal(first, "urlsieve_bytes_total"));
  EXPECT_GE(Sample(second, "urlsieve_crawl_duration_seconds"),
            Sample(first, "urlsieve_crawl_duration_seconds"));

  // The rest: the crawl ends and the endpoint serves its final figures (the linger).
  site_->Allow(kPages);
  nlohmann::json last;
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < until) {
    last = ScrapeParsed(address);
    ASSERT_FALSE(last.is_null());
    if (Sample(last, "urlsieve_crawl_running") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling for the end
  }
  ASSERT_EQ(Sample(last, "urlsieve_crawl_running"), 0) << child.err();
  const nlohmann::json stats = nlohmann::json::parse(testing::ReadFile(out() / "stats.json"));
  testing::ExpectExpositionMatchesJson(last, stats);
  // And against what the crawl recorded, independently of the table.
  const std::string pages_jsonl = testing::ReadFile(out() / "pages.jsonl");
  const auto lines = static_cast<double>(std::count(pages_jsonl.begin(), pages_jsonl.end(), '\n'));
  EXPECT_EQ(ParsedTotal(last, "urlsieve_pages_total"), lines);
  EXPECT_EQ(ParsedTotal(last, "urlsieve_pages_total"), stats["pages"].get<double>());
  EXPECT_EQ(ParsedTotal(last, "urlsieve_pages_total"), 3 + kPages);
  EXPECT_EQ(ParsedTotal(last, "urlsieve_bytes_total"), stats["bytes"].get<double>());
  EXPECT_EQ(Sample(last, "urlsieve_pages_total", "2xx"), 1 + kPages);
  EXPECT_EQ(Sample(last, "urlsieve_pages_total", "2xx"), stats["status"]["200"].get<double>());
  // Links: 2 + kPages on "/", the redirect's target, one on each /pI; all but those of "/" seen.
  EXPECT_EQ(Sample(last, "urlsieve_links_found_total"), 2 + kPages + 1 + kPages);
  EXPECT_EQ(Sample(last, "urlsieve_seen_inserts_total"), 1 + 2 + kPages + 1 + kPages);
  EXPECT_EQ(Sample(last, "urlsieve_seen_new_total"), 1 + 2 + kPages);
  EXPECT_EQ(Sample(last, "urlsieve_frontier_in_flight"), 0);
  EXPECT_EQ(Sample(last, "urlsieve_frontier_pending", "memory"), 0);
  EXPECT_EQ(Sample(last, "urlsieve_hosts", "active"), 0);
  EXPECT_EQ(stats["running"], 0);

  // A signal ends the linger; the address file goes with the endpoint.
  child.Signal(SIGINT);
  EXPECT_EQ(child.Wait(), 0) << child.err();
  EXPECT_FALSE(fs::exists(out() / "metrics.addr"));
  EXPECT_EQ(testing::Scrape(address).status, 0);
}

TEST_F(CrawlMetricsTest, AStopEndsTheEndpointWithoutTheLingerAndResumeContinuesTheCounters) {
  site_->Allow(2);
  std::vector<std::string> args = Args("localhost:0");
  args.insert(args.end(), {"--metrics-linger", "1h"});
  CrawlChild child(err(), args);
  const std::string address = WaitForAddress(child);
  ASSERT_FALSE(address.empty());
  ASSERT_TRUE(site_->WaitRequested(2));
  const nlohmann::json during = ScrapeParsed(address);
  ASSERT_FALSE(during.is_null());
  EXPECT_EQ(ParsedTotal(during, "urlsieve_pages_total"), 5);
  child.Signal(SIGINT);  // the fetch of /p2 finishes, then the crawl stops
  const auto until = std::chrono::steady_clock::now() + kDeadline;
  while (child.err().find("urlsieve: stopping") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling for the signal's note
  }
  site_->Allow(kPages);
  EXPECT_EQ(child.Wait(), 0) << child.err();
  EXPECT_FALSE(fs::exists(out() / "metrics.addr"));
  EXPECT_EQ(testing::Scrape(address).status, 0);
  // Stopped with URLs pending (the stop is asked right after the note, before /p2 is let go, so
  // almost always 6 pages; a late one may let a few more through).
  const nlohmann::json stats = nlohmann::json::parse(testing::ReadFile(out() / "stats.json"));
  EXPECT_GE(stats["pages"], 6);
  EXPECT_LT(stats["pages"], 3 + kPages);
  EXPECT_EQ(stats["pages"].get<int>() + stats["frontier"]["pending"]["memory"].get<int>(),
            3 + kPages);
  EXPECT_EQ(stats["running"], 0);

  // --resume continues the new counters from the checkpoint: the totals are those of one crawl
  // (plus the seed, asked again by the second run).
  std::vector<std::string> resume = Args("127.0.0.1:0");
  resume.push_back("--resume");
  CrawlChild resumed(err(), resume);
  EXPECT_EQ(resumed.Wait(), 0) << resumed.err();
  const nlohmann::json total = nlohmann::json::parse(testing::ReadFile(out() / "stats.json"));
  EXPECT_EQ(total["sessions"], 2);
  EXPECT_EQ(total["pages"], 3 + kPages);
  EXPECT_EQ(total["pages_by_status_class"]["2xx"], 1 + kPages);
  EXPECT_EQ(total["seen"]["new"], 1 + 2 + kPages);
  EXPECT_EQ(total["seen"]["inserts"], 1 + 2 + kPages + 1 + kPages + 1);
  uint64_t bytes = 0;
  for (const auto& [status_class, n] : total["bytes_by_status_class"].items()) {
    bytes += n.get<uint64_t>();
  }
  EXPECT_EQ(bytes, total["bytes"].get<uint64_t>());
  EXPECT_FALSE(fs::exists(out() / "metrics.addr"));
}

TEST_F(CrawlMetricsTest, ABadAddressIsAUsageError) {
  for (const std::string bad : {"127.0.0.1", "nohost.example:9100", "127.0.0.1:70000"}) {
    CrawlChild child(err(), Args(bad));
    EXPECT_EQ(child.Wait(), 2) << bad;
    const std::string error = child.err();
    EXPECT_NE(error.find("output.metrics_listen"), std::string::npos) << error;
    EXPECT_NE(error.find("'" + bad + "'"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(out())) << bad;
  }
  // --metrics-linger alone means nothing.
  std::vector<std::string> args = Args("127.0.0.1:0");
  args.resize(args.size() - 2);
  args.insert(args.end(), {"--metrics-linger", "10s"});
  CrawlChild child(err(), args);
  EXPECT_EQ(child.Wait(), 2);
  EXPECT_NE(child.err().find("--metrics-linger needs --metrics-listen"), std::string::npos)
      << child.err();
}

TEST_F(CrawlMetricsTest, APortInUseFailsBeforeTheCrawlStarts) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string taken = std::string("127.0.0.1:").append(std::to_string(ntohs(addr.sin_port)));
  CrawlChild child(err(), Args(taken));
  const int code = child.Wait();
  ::close(fd);
  EXPECT_EQ(code, 1);
  EXPECT_NE(child.err().find("cannot listen on " + taken), std::string::npos) << child.err();
  EXPECT_FALSE(fs::exists(out()));  // nothing was created
}

}  // namespace
}  // namespace urlsieve
