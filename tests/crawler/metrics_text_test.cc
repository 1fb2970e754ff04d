// The metrics (docs/features/metrics.md, "Metrics"): the exposition text of a snapshot, read back
// by a real Prometheus parser (prometheus_client); the same figures in stats.json; the new counters
// through a checkpoint; HOST:PORT parsing; the server's answers over real HTTP.
#include "crawler/metrics/metrics_text.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <string>

#include "base/sqlite_db.h"
#include "crawler/state/crawl_checkpoint.h"
#include "crawler/metrics/metrics_server.h"
#include "tests/crawler/metrics_scrape.h"
#include "tests/support/scratch_dir.h"

namespace urlsieve {
namespace {

using testing::ParsedSamples;
using testing::ParseExposition;
using testing::ScratchDir;

// A snapshot with something in every family, label values that need escaping among them.
MetricsSnapshot FullSnapshot() {
  MetricsSnapshot m;
  CrawlStatsSnapshot& s = m.stats;
  s.pages = 9;
  s.bytes = 1234;
  s.links_found = 40;
  s.links_new = 12;
  s.duration_s = 3.25;
  s.status = {{200, 5}, {301, 1}, {404, 1}, {503, 1}, {0, 1}};
  s.bytes_by_status_class = {{"2xx", 1000}, {"3xx", 34}, {"4xx", 100}, {"5xx", 100}};
  s.errors = {{"timeout", 1}, {"odd \"kind\" \\ with\nnewline", 2}};
  s.rejections = {{"robots_disallowed", 3}, {"scope-depth", 4}};
  s.refetches = {{"changed", 2}};
  s.encodings = {{"windows-1252", 4}, {"UTF-8", 1}};
  s.sitemaps = {{"fetched", 2}, {"urls", 17}, {"a counter from part \"sitemap\"", 1}};
  s.seen_inserts = 52;
  s.seen_new = 13;
  m.pending_in_memory = 7;
  m.pending_spilled = 3;
  m.in_flight = 2;
  m.hosts_active = 2;
  m.hosts_waiting = 5;
  m.hosts_retired = 1;
  m.seen_fill_ratio = 0.0123456789;
  m.seen_expected_fp_rate = 1.5e-9;
  m.checkpoint_age_s = 1.75;
  m.node_id = "node-1";
  return m;
}

TEST(MetricsTextTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue(""), "");
}

TEST(MetricsTextTest, TableNamesAreUniqueAndWellFormed) {
  std::set<std::string_view> names;
  std::set<std::string_view> places;
  for (const MetricFamily& family : MetricFamilies()) {
    SCOPED_TRACE(std::string(family.name));
    EXPECT_TRUE(names.insert(family.name).second);
    EXPECT_TRUE(places.insert(family.json).second);
    EXPECT_TRUE(family.name.starts_with("urlsieve_"));
    EXPECT_EQ(family.type == MetricType::kCounter, family.name.ends_with("_total"));
    EXPECT_TRUE(family.json.starts_with("/"));
    EXPECT_FALSE(family.help.empty());
    for (char c : family.name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << c;
    }
  }
}

TEST(MetricsTextTest, EveryFamilyHasHelpAndTypeAndParses) {
  ScratchDir dir("metrics_text");
  const MetricsSnapshot snapshot = FullSnapshot();
  const std::string text = MetricsText(snapshot);
  for (const MetricFamily& family : MetricFamilies()) {
    EXPECT_NE(text.find(std::string("# HELP ").append(family.name).append(" ")), std::string::npos)
        << family.name;
    EXPECT_NE(text.find(std::string("# TYPE ").append(family.name).append(" ")), std::string::npos)
        << family.name;
  }
  const nlohmann::json parsed = ParseExposition(text, dir.path());
  ASSERT_FALSE(parsed.is_null());
  EXPECT_EQ(parsed["families"].size(), MetricFamilies().size());
  // The label values come back as they were, escaping and all.
  for (const MetricFamily& family : MetricFamilies()) {
    if (family.name != "urlsieve_errors_total") continue;
    const auto samples = ParsedSamples(parsed, family);
    EXPECT_EQ(samples.at("odd \"kind\" \\ with\nnewline"), 2);
    EXPECT_EQ(samples.at("timeout"), 1);
  }
  // stats.json's keys for the same snapshot hold the same figures.
  nlohmann::json json = snapshot.stats.ToJson();
  AddMetricsJson(snapshot, &json);
  testing::ExpectExpositionMatchesJson(parsed, json);
  EXPECT_EQ(json["seen"]["inserts"], 52);
  EXPECT_EQ(json["frontier"]["pending"]["spilled"], 3);
  EXPECT_EQ(json["hosts"]["retired"], 1);
  EXPECT_EQ(json["pages_by_status_class"]["none"], 1);
  EXPECT_EQ(json["node_id"], "node-1");
  EXPECT_EQ(json["sitemaps"]["a counter from part \"sitemap\""], 1);
}

TEST(MetricsTextTest, EmptySnapshotParsesWithEveryFamily) {
  ScratchDir dir("metrics_text");
  MetricsSnapshot empty;
  const nlohmann::json parsed = ParseExposition(MetricsText(empty), dir.path());
  ASSERT_FALSE(parsed.is_null());
  EXPECT_EQ(parsed["families"].size(), MetricFamilies().size());
  nlohmann::json json = empty.stats.ToJson();
  AddMetricsJson(empty, &json);
  testing::ExpectExpositionMatchesJson(parsed, json);
  EXPECT_FALSE(json.contains("node_id"));  // a standalone crawl has no node
  // The classes of a response are there from the start, at 0.
  for (const char* name : {"1xx", "2xx", "3xx", "4xx", "5xx", "none"}) {
    EXPECT_EQ(json["pages_by_status_class"][name], 0) << name;
  }
}

TEST(MetricsTextTest, KeepsTheExistingStatsJsonKeys) {
  const MetricsSnapshot snapshot = FullSnapshot();
  const nlohmann::json before = snapshot.stats.ToJson();
  nlohmann::json after = before;
  AddMetricsJson(snapshot, &after);
  for (const auto& [key, value] : before.items()) {
    EXPECT_EQ(after[key], value) << key;
  }
  // Counts stay integers in stats.json.
  EXPECT_TRUE(after["errors"]["timeout"].is_number_unsigned());
  EXPECT_TRUE(after["bytes_by_status_class"]["2xx"].is_number_unsigned());
}

TEST(MetricsTextTest, FormatsValues) {
  MetricsSnapshot m;
  m.seen_fill_ratio = 0.1;
  m.checkpoint_age_s = 2;
  m.stats.pages = 18446744073709551615ull;
  const std::string text = MetricsText(m);
  EXPECT_NE(text.find("\nurlsieve_seen_fill_ratio 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nurlsieve_checkpoint_age_seconds 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nurlsieve_crawl_running 1\n"), std::string::npos) << text;
}

TEST(MetricsTextTest, NewCountersSurviveTheCheckpoint) {
  ScratchDir dir("metrics_text");
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open((dir.path() / "state.db").string());
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  CrawlStatsSnapshot counters = FullSnapshot().stats;
  ASSERT_TRUE(WriteCrawlCounters(**db, counters).ok());
  Result<CrawlStatsSnapshot> back = ReadCrawlCounters(**db);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->seen_inserts, 52u);
  EXPECT_EQ(back->seen_new, 13u);
  EXPECT_EQ(back->bytes_by_status_class, counters.bytes_by_status_class);
  EXPECT_EQ(back->sitemaps, counters.sitemaps);
  EXPECT_EQ(back->encodings, counters.encodings);
}

TEST(MetricsTextTest, CountsSeenAndBytesByClass) {
  ManualClock clock;
  CrawlStats stats(&clock);
  PageRecord page;
  page.status = 200;
  page.bytes = 10;
  stats.RecordPage(page);
  page.status = 0;
  page.bytes = 0;
  stats.RecordPage(page);
  page.status = 404;
  page.bytes = 7;
  stats.RecordPage(page);
  stats.RecordSeen(5, 2);
  stats.RecordSeen(3, 0);
  const CrawlStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.seen_inserts, 8u);
  EXPECT_EQ(s.seen_new, 2u);
  const std::map<std::string, uint64_t> bytes = {{"2xx", 10}, {"4xx", 7}, {"none", 0}};
  EXPECT_EQ(s.bytes_by_status_class, bytes);
  const std::map<std::string, uint64_t> pages = {{"2xx", 1}, {"4xx", 1}, {"none", 1}};
  EXPECT_EQ(s.PagesByStatusClass(), pages);
  EXPECT_EQ(StatusClassName(103), "1xx");
  EXPECT_EQ(StatusClassName(599), "5xx");
  EXPECT_EQ(StatusClassName(600), "other");
  EXPECT_EQ(StatusClassName(42), "other");
}

TEST(MetricsAddressTest, ParsesHostAndPort) {
  Result<MetricsAddress> a = MetricsAddress::Parse("127.0.0.1:9100");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9100);
  EXPECT_EQ(a->ToString(), "127.0.0.1:9100");
  Result<MetricsAddress> local = MetricsAddress::Parse("localhost:0");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->host, "127.0.0.1");
  EXPECT_EQ(local->port, 0);
  Result<MetricsAddress> v6 = MetricsAddress::Parse("[::1]:65535");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 65535);
  EXPECT_EQ(v6->ToString(), "[::1]:65535");
  ASSERT_TRUE(MetricsAddress::Parse("0.0.0.0:9100").ok());
}

TEST(MetricsAddressTest, RefusesBadValuesNamingThem) {
  for (const char* bad : {"", "9100", ":9100", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
                          "127.0.0.1:-1", "127.0.0.1:9x", "example.com:80", "::1:9100", "[::1]",
                          "[::1]9100", "[nope]:80", "300.1.1.1:80", "127.0.0.1:80 "}) {
    Result<MetricsAddress> parsed = MetricsAddress::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(std::string("'").append(bad).append("'")),
              std::string::npos)
        << parsed.status().message();
  }
}

TEST(MetricsServerTest, ServesMetricsAndNothingElse) {
  Result<MetricsAddress> address = MetricsAddress::Parse("127.0.0.1:0");
  ASSERT_TRUE(address.ok());
  Result<std::unique_ptr<MetricsServer>> server = MetricsServer::Bind(*address);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string bound = (*server)->address().ToString();
  EXPECT_GT((*server)->address().port, 0);
  EXPECT_EQ((*server)->url(), "http://" + bound + "/metrics");
  std::atomic<int> renders{0};
  ASSERT_TRUE((*server)
                  ->Start([&renders] {
                    return "# HELP x_total a\n# TYPE x_total counter\nx_total " +
                           std::to_string(++renders) + "\n";
                  })
                  .ok());
  testing::ScrapeResult first = testing::Scrape(bound);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(first.body, "# HELP x_total a\n# TYPE x_total counter\nx_total 1\n");
  // Rendered again for each scrape.
  EXPECT_EQ(testing::Scrape(bound).body, "# HELP x_total a\n# TYPE x_total counter\nx_total 2\n");
  EXPECT_EQ(testing::Scrape(bound, "/").status, 404);
  EXPECT_EQ(testing::Scrape(bound, "/metrics/x").status, 404);
  EXPECT_EQ(testing::Scrape(bound, "/other").status, 404);
  (*server)->Stop();
  (*server)->Stop();                            // idempotent
  EXPECT_EQ(testing::Scrape(bound).status, 0);  // nothing listens any more
  EXPECT_EQ(renders.load(), 2);
}

TEST(MetricsServerTest, APortInUseIsAnErrorNamingTheAddress) {
  // A plain listening socket, as another server holds one.
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
  Result<MetricsAddress> address = MetricsAddress::Parse(taken);
  ASSERT_TRUE(address.ok());
  Result<std::unique_ptr<MetricsServer>> server = MetricsServer::Bind(*address);
  ::close(fd);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kIoError);
  EXPECT_NE(server.status().message().find(taken), std::string::npos) << server.status().message();
  EXPECT_NE(server.status().message().find("in use"), std::string::npos)
      << server.status().message();
}

TEST(MetricsServerTest, StopsWithoutStartAndRightAfterStart) {
  Result<MetricsAddress> address = MetricsAddress::Parse("127.0.0.1:0");
  ASSERT_TRUE(address.ok());
  {
    Result<std::unique_ptr<MetricsServer>> bound_only = MetricsServer::Bind(*address);
    ASSERT_TRUE(bound_only.ok());
  }  // destroyed without Start
  for (int i = 0; i < 20; ++i) {
    Result<std::unique_ptr<MetricsServer>> server = MetricsServer::Bind(*address);
    ASSERT_TRUE(server.ok());
    ASSERT_TRUE((*server)->Start([] { return std::string(); }).ok());
  }  // destroyed (Stop) right after Start: joins, never hangs
}

}  // namespace
}  // namespace urlsieve
