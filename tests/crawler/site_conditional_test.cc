// Conditional GET on the test site server (tools/site_server/conditional.h): 304 exactly as RFC
// 9110 §13 says, on the wire; the request log's record of the conditional headers, status and
// body bytes; the ChangingSite the re-crawl tests use; StaticSite's validators.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"
#include "tools/site_server/changing_site.h"
#include "tools/site_server/conditional.h"
#include "tools/site_server/http_date.h"
#include "tools/site_server/site_server.h"
#include "tools/site_server/static_site.h"

namespace urlsieve::site {
namespace {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

// One request on a fresh connection ("Connection: close"), written byte for byte as given, so the
// test controls every header; the answer is read to EOF.
RawResponse RawGet(int port, const std::string& target, const std::string& extra_headers = "") {
  RawResponse out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return out;
  }
  const std::string request = "GET " + target +
                              " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n" +
                              extra_headers + "Connection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return out;
  }
  std::string all;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) all.append(buffer, n);
  ::close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (end == std::string::npos || all.size() < 12) return out;
  out.head = all.substr(0, end);
  out.body = all.substr(end + 4);
  out.status = std::stoi(all.substr(9, 3));
  return out;
}

// The value of `name` in a raw response head, or "" (names as the server writes them).
std::string HeaderIn(const std::string& head, const std::string& name) {
  const std::string key = "\r\n" + name + ": ";
  const size_t at = head.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

SiteResponse WithHeaders(std::vector<std::pair<std::string, std::string>> headers,
                         int status = 200) {
  SiteResponse r;
  r.body = "x";
  r.status = status;
  r.headers = std::move(headers);
  return r;
}

TEST(HttpDateTest, FormatsImfFixdateAndParsesAllThreeForms) {
  EXPECT_EQ(FormatHttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), 784111777);
  EXPECT_EQ(ParseHttpDate(FormatHttpDate(1767225600 + 86400)), 1767225600 + 86400);
  EXPECT_FALSE(ParseHttpDate("yesterday").has_value());
  EXPECT_FALSE(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT"));
  EXPECT_FALSE(ParseHttpDate("").has_value());
}

TEST(ConditionalTest, IfNoneMatchDecidesByWeakComparison) {
  const SiteResponse strong = WithHeaders({{"ETag", "\"v1\""}});
  const SiteResponse weak = WithHeaders({{"ETag", "W/\"v1\""}});
  auto inm = [](const char* value) { return Preconditions{value, std::nullopt}; };
  EXPECT_TRUE(NotModified("GET", inm("\"v1\""), strong));
  EXPECT_TRUE(NotModified("GET", inm("W/\"v1\""), strong));
  EXPECT_TRUE(NotModified("GET", inm("\"v1\""), weak));
  EXPECT_TRUE(NotModified("HEAD", inm("\"a\", \"v1\""), strong));
  EXPECT_TRUE(NotModified("GET", inm("*"), strong));
  EXPECT_FALSE(NotModified("GET", inm("\"v2\""), strong));
  EXPECT_FALSE(NotModified("GET", inm("v1"), strong));  // not an entity-tag
  EXPECT_FALSE(NotModified("POST", inm("\"v1\""), strong));
  // No ETag: If-None-Match cannot match (and If-Modified-Since is then not looked at).
  EXPECT_FALSE(NotModified("GET", inm("\"v1\""), WithHeaders({})));
  // Only a 2xx answer is evaluated: a 404 stays a 404.
  EXPECT_FALSE(NotModified("GET", inm("\"v1\""), WithHeaders({{"ETag", "\"v1\""}}, 404)));
}

TEST(ConditionalTest, IfModifiedSinceAppliesOnlyWithoutIfNoneMatch) {
  const std::string day = FormatHttpDate(1767225600);
  const std::string next_day = FormatHttpDate(1767225600 + 86400);
  const SiteResponse dated = WithHeaders({{"Last-Modified", day}});
  auto ims = [](const std::string& value) { return Preconditions{std::nullopt, value}; };
  EXPECT_TRUE(NotModified("GET", ims(day), dated));
  EXPECT_TRUE(NotModified("GET", ims(next_day), dated));  // modified before that date
  EXPECT_FALSE(NotModified("GET", ims(FormatHttpDate(1767225600 - 1)), dated));
  EXPECT_FALSE(NotModified("GET", ims("not a date"), dated));
  EXPECT_FALSE(NotModified("GET", ims(day + ", " + day), dated));  // several values: ignored
  EXPECT_FALSE(NotModified("GET", ims(day), WithHeaders({})));     // no Last-Modified
  // RFC 9110 §13.2.2: If-None-Match wins. A changed ETag with an old date is modified; an
  // unchanged ETag with a date that would say "modified" is not.
  const SiteResponse both = WithHeaders({{"ETag", "\"v2\""}, {"Last-Modified", day}});
  EXPECT_FALSE(NotModified("GET", Preconditions{"\"v1\"", next_day}, both));
  EXPECT_TRUE(NotModified("GET", Preconditions{"\"v2\"", FormatHttpDate(0)}, both));
}

TEST(ConditionalTest, NotModifiedResponseKeepsTheEtagOrElseTheDateAndNoBody) {
  const std::string day = FormatHttpDate(1767225600);
  SiteResponse both = NotModifiedResponse(WithHeaders({{"ETag", "\"v\""}, {"Last-Modified", day}}));
  EXPECT_EQ(both.status, 304);
  EXPECT_TRUE(both.body.empty());
  EXPECT_EQ(HeaderOf(both, "etag"), "\"v\"");
  EXPECT_FALSE(HeaderOf(both, "Last-Modified").has_value());
  EXPECT_EQ(HeaderOf(both, "Content-Length"), "1");
  SiteResponse dated = NotModifiedResponse(WithHeaders({{"Last-Modified", day}}));
  EXPECT_EQ(HeaderOf(dated, "Last-Modified"), day);
}

TEST(ChangingSiteTest, RoundsChangeTheChosenPagesOnly) {
  ChangingSiteOptions options;
  options.pages = 8;
  options.changed = {0, 1, 2};
  options.revalidated = {4};
  options.gone = {5};
  ChangingSite site(options);
  auto get = [&](const std::string& path) { return site.Handle({0, "GET", path}); };
  std::vector<SiteResponse> before;
  for (int i = 0; i < 8; ++i) before.push_back(get(ChangingSite::PagePath(i)));
  EXPECT_EQ(get(ChangingSite::NewPagePath(0, 1)).status, 404);
  EXPECT_EQ(HeaderOf(before[0], "ETag"), "\"0-0\"");
  EXPECT_FALSE(HeaderOf(before[0], "Last-Modified").has_value());
  EXPECT_FALSE(HeaderOf(before[1], "ETag").has_value());
  EXPECT_TRUE(HeaderOf(before[1], "Last-Modified").has_value());
  EXPECT_TRUE(before[2].headers.empty());
  EXPECT_TRUE(HeaderOf(before[3], "ETag").has_value());
  EXPECT_TRUE(HeaderOf(before[3], "Last-Modified").has_value());

  site.SetRound(1);
  for (int i = 0; i < 8; ++i) {
    const SiteResponse now = get(ChangingSite::PagePath(i));
    SCOPED_TRACE(i);
    if (i <= 2) {  // changed: new body with a link to a new page, new validators
      EXPECT_NE(now.body, before[i].body);
      EXPECT_NE(now.body.find(ChangingSite::NewPagePath(i, 1)), std::string::npos);
      if (!now.headers.empty()) {
        EXPECT_NE(now.headers, before[i].headers);
      }
    } else if (i == 4) {  // revalidated: same body, new validators
      EXPECT_EQ(now.body, before[i].body);
      EXPECT_NE(now.headers, before[i].headers);
    } else if (i == 5) {
      EXPECT_EQ(now.status, 404);
    } else {
      EXPECT_EQ(now.body, before[i].body);
      EXPECT_EQ(now.headers, before[i].headers);
    }
  }
  EXPECT_EQ(get(ChangingSite::NewPagePath(0, 1)).status, 200);
  EXPECT_EQ(get(ChangingSite::NewPagePath(3, 1)).status, 404);  // page 3 did not change
  // A Last-Modified page that changed is newer than it was.
  EXPECT_GT(*ParseHttpDate(*HeaderOf(get("/p/1"), "Last-Modified")),
            *ParseHttpDate(*HeaderOf(before[1], "Last-Modified")));
}

class ConditionalServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ChangingSiteOptions options;
    options.pages = 8;
    options.changed = {0};
    auto server = SiteServer::Start(
        SiteServerOptions{}, [&](const std::vector<std::string>&) -> Result<std::unique_ptr<Site>> {
          auto changing = std::make_unique<ChangingSite>(options);
          site_ = changing.get();
          return std::unique_ptr<Site>(std::move(changing));
        });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  std::unique_ptr<SiteServer> server_;
  ChangingSite* site_ = nullptr;
};

TEST_F(ConditionalServerTest, AnswersNotModifiedOnTheWireAndLogsIt) {
  const int port = server_->port();
  const RawResponse full = RawGet(port, "/p/0");
  ASSERT_EQ(full.status, 200) << full.head;
  const std::string etag = HeaderIn(full.head, "ETag");
  ASSERT_EQ(etag, "\"0-0\"");
  const RawResponse hit = RawGet(port, "/p/0", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(hit.status, 304) << hit.head;
  EXPECT_TRUE(hit.body.empty());
  EXPECT_EQ(HeaderIn(hit.head, "ETag"), etag);
  // RFC 9110 §8.6: the Content-Length the 200 had, or none (never the 0 of an empty body).
  EXPECT_EQ(HeaderIn(hit.head, "Content-Length"), std::to_string(full.body.size()));

  const RawResponse dated = RawGet(port, "/p/1");
  const std::string last_modified = HeaderIn(dated.head, "Last-Modified");
  ASSERT_FALSE(last_modified.empty()) << dated.head;
  EXPECT_EQ(RawGet(port, "/p/1", "If-Modified-Since: " + last_modified + "\r\n").status, 304);
  // Two If-None-Match lines are one list.
  EXPECT_EQ(RawGet(port, "/p/0", "If-None-Match: \"x\"\r\nIf-None-Match: " + etag + "\r\n").status,
            304);

  site_->SetRound(1);  // page 0 changes
  const RawResponse changed = RawGet(port, "/p/0", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.body, full.body);
  EXPECT_NE(changed.body.find(ChangingSite::NewPagePath(0, 1)), std::string::npos);
  EXPECT_EQ(RawGet(port, "/p/1", "If-Modified-Since: " + last_modified + "\r\n").status, 304);

  const auto log = server_->log().Snapshot();
  ASSERT_EQ(log.size(), 7u);
  EXPECT_FALSE(log[0].if_none_match.has_value());
  EXPECT_FALSE(log[0].if_modified_since.has_value());
  EXPECT_EQ(log[0].status, 200);
  EXPECT_EQ(log[0].body_bytes, full.body.size());
  EXPECT_EQ(log[1].if_none_match, etag);
  EXPECT_EQ(log[1].status, 304);
  EXPECT_EQ(log[1].body_bytes, 0u);
  EXPECT_EQ(log[3].if_modified_since, last_modified);
  EXPECT_FALSE(log[3].if_none_match.has_value());
  EXPECT_EQ(log[4].if_none_match, "\"x\", " + etag);
  EXPECT_EQ(log[5].status, 200);
  EXPECT_EQ(log[5].body_bytes, changed.body.size());
}

TEST_F(ConditionalServerTest, MirrorsConditionalHeadersStatusAndBytesToTheFile) {
  testing::ScratchDir dir("site_conditional");
  const std::filesystem::path path = dir.path() / "log.tsv";
  ASSERT_TRUE(server_->log().MirrorToFile(path.string()).ok());
  const RawResponse full = RawGet(server_->port(), "/p/0");
  RawGet(server_->port(), "/p/0", "If-None-Match: \"0-0\"\r\n");
  server_->Stop();
  std::ifstream in(path);
  std::string first, second;
  ASSERT_TRUE(std::getline(in, first));
  ASSERT_TRUE(std::getline(in, second));
  EXPECT_TRUE(first.ends_with("\t/p/0\t200\t" + std::to_string(full.body.size()) + "\t-\t-"))
      << first;
  EXPECT_TRUE(second.ends_with("\t/p/0\t304\t0\t\"0-0\"\t-")) << second;
}

TEST(StaticSiteValidatorsTest, FilesCarryAnEtagAndLastModifiedAndGet304) {
  testing::ScratchDir dir("static_validators");
  std::ofstream(dir.path() / "a.html") << "<p>a</p>";
  auto server = SiteServer::Start(
      SiteServerOptions{}, [&](const std::vector<std::string>&) -> Result<std::unique_ptr<Site>> {
        auto site = StaticSite::Open(dir.path());
        if (!site.ok()) return site.status();
        return std::unique_ptr<Site>(std::move(site).value());
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  const RawResponse full = RawGet(port, "/a.html");
  const std::string etag = HeaderIn(full.head, "ETag");
  const std::string last_modified = HeaderIn(full.head, "Last-Modified");
  ASSERT_FALSE(etag.empty()) << full.head;
  ASSERT_TRUE(ParseHttpDate(last_modified).has_value()) << full.head;
  EXPECT_EQ(RawGet(port, "/a.html", "If-None-Match: " + etag + "\r\n").status, 304);
  EXPECT_EQ(RawGet(port, "/a.html", "If-Modified-Since: " + last_modified + "\r\n").status, 304);
  // Changed content: a new ETag, so If-None-Match (which wins over the date) gets the new body.
  std::ofstream(dir.path() / "a.html") << "<p>b</p>";
  const RawResponse changed =
      RawGet(port, "/a.html",
             "If-None-Match: " + etag + "\r\nIf-Modified-Since: " + last_modified + "\r\n");
  EXPECT_EQ(changed.status, 200);
  EXPECT_EQ(changed.body, "<p>b</p>");
}

}  // namespace
}  // namespace urlsieve::site
