// Fetcher against real HTTP servers on 127.0.0.1 (tools/site_server), no mocks.
#include "crawler/fetch/fetcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "crawler/fetch/curl_share.h"
#include "tests/support/scratch_dir.h"
#include "tools/site_server/generated_site.h"
#include "tools/site_server/map_site.h"
#include "tools/site_server/site_server.h"

namespace urlsieve {
namespace {

using site::GeneratedSite;
using site::GeneratedSiteOptions;
using site::SiteServer;

class FetcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GeneratedSiteOptions gen;
    gen.large_page_bytes = 256 * 1024;
    gen.gzip_bomb_bytes = 4 * 1024 * 1024;
    site::SiteServerOptions options;
    options.keep_alive_timeout = std::chrono::seconds(5);  // so keep-alive reuse is deterministic
    auto server = SiteServer::Start(
        options,
        [&](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
          return std::unique_ptr<site::Site>(new GeneratedSite(gen, origins));
        });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value().release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static FetcherOptions TestOptions() {
    FetcherOptions o;
    o.user_agent = "urlsieve-test/1";
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.total_timeout = std::chrono::milliseconds(5000);
    o.max_body_bytes = 64 * 1024;
    return o;
  }
  static std::unique_ptr<Fetcher> MakeFetcher(FetcherOptions options = TestOptions(),
                                              CurlShare* share = nullptr) {
    auto fetcher = Fetcher::Create(std::move(options), share);
    EXPECT_TRUE(fetcher.ok()) << fetcher.status().ToString();
    return fetcher.ok() ? std::move(fetcher).value() : nullptr;
  }
  static std::string Url(const std::string& path) { return server_->Url(path); }

  static SiteServer* server_;
};

SiteServer* FetcherTest::server_ = nullptr;

TEST_F(FetcherTest, FetchesHtmlWithHeadersAndConnectionInfo) {
  auto fetcher = MakeFetcher();
  const size_t before = server_->log().Count(0, "/about");
  FetchResult r = fetcher->Fetch(Url("/about"));
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.url, Url("/about"));
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.media_type, "text/html");
  EXPECT_TRUE(r.content_type_accepted);
  EXPECT_FALSE(r.body_skipped);
  EXPECT_NE(r.body.find("<title>About</title>"), std::string::npos);
  EXPECT_EQ(r.body_wire_bytes, r.body.size());
  EXPECT_EQ(r.primary_ip, "127.0.0.1");
  EXPECT_EQ(r.primary_port, server_->port());
  EXPECT_EQ(r.request_headers.rfind("GET /about HTTP/1.1\r\n", 0), 0u) << r.request_headers;
  EXPECT_NE(r.request_headers.find("User-Agent: urlsieve-test/1\r\n"), std::string::npos);
  EXPECT_NE(r.request_headers.find("Accept-Encoding: "), std::string::npos);
  EXPECT_EQ(r.response_headers.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.response_headers;
  EXPECT_TRUE(r.response_headers.ends_with("\r\n\r\n"));
  EXPECT_EQ(r.header_bytes, r.response_headers.size());
  EXPECT_EQ(server_->log().Count(0, "/about"), before + 1);
  const auto log = server_->log().Snapshot();
  EXPECT_EQ(log.back().user_agent, "urlsieve-test/1");
}

TEST_F(FetcherTest, ReusesTheConnection) {
  auto fetcher = MakeFetcher();
  FetchResult first = fetcher->Fetch(Url("/pages/1"));
  FetchResult second = fetcher->Fetch(Url("/pages/2"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first.new_connections, 1);
  EXPECT_EQ(second.new_connections, 0);
}

TEST_F(FetcherTest, DoesNotFollowRedirects) {
  auto fetcher = MakeFetcher();
  const size_t before = server_->log().Count(0, "/chain/2");
  FetchResult r = fetcher->Fetch(Url("/chain/1"));
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(r.location, "/chain/2");  // raw, unresolved: the crawler resolves it
  EXPECT_EQ(server_->log().Count(0, "/chain/2"), before);

  FetchResult moved = fetcher->Fetch(Url("/redirect/301"));
  EXPECT_EQ(moved.status, 301);
  EXPECT_EQ(moved.location, "/about");
}

TEST_F(FetcherTest, DecodesGzip) {
  auto fetcher = MakeFetcher();
  FetchResult r = fetcher->Fetch(Url("/gzip"));
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.content_encoding, "gzip");
  EXPECT_NE(r.body.find("href=\"/gzip-child\""), std::string::npos);
  EXPECT_LT(r.body_wire_bytes, r.body.size());
}

TEST_F(FetcherTest, CapsDecodedBytesOfAGzipBomb) {
  FetcherOptions options = TestOptions();
  options.max_body_bytes = 256 * 1024;
  auto fetcher = MakeFetcher(options);
  FetchResult r = fetcher->Fetch(Url("/gzip-bomb"));  // ~4 KiB on the wire, 4 MiB decoded
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, FetchErrorKind::kBodyTooLarge);
  EXPECT_NE(r.error.message().find("body too large"), std::string::npos) << r.error.ToString();
  EXPECT_EQ(r.status, 200);
  EXPECT_LE(r.body.size(), options.max_body_bytes);
  EXPECT_LT(r.body_wire_bytes, options.max_body_bytes);  // the wire alone would have passed
}

TEST_F(FetcherTest, CapsBodySize) {
  auto fetcher = MakeFetcher();  // 64 KiB cap
  FetchResult exact = fetcher->Fetch(Url("/size/65536"));
  ASSERT_TRUE(exact.ok()) << exact.error.ToString();
  EXPECT_EQ(exact.body.size(), 65536u);

  FetchResult over = fetcher->Fetch(Url("/size/65537"));
  EXPECT_EQ(over.error_kind, FetchErrorKind::kBodyTooLarge) << over.error.ToString();
  FetchResult large = fetcher->Fetch(Url("/large"));
  EXPECT_EQ(large.error_kind, FetchErrorKind::kBodyTooLarge) << large.error.ToString();
  // The handle stays usable after an aborted transfer.
  EXPECT_TRUE(fetcher->Fetch(Url("/about")).ok());
}

TEST_F(FetcherTest, TimesOutOnASlowPage) {
  FetcherOptions options = TestOptions();
  options.total_timeout = std::chrono::milliseconds(300);
  auto fetcher = MakeFetcher(options);
  FetchResult r = fetcher->Fetch(Url("/slow?ms=20000"));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, FetchErrorKind::kTimeout) << r.error.ToString();
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.body.empty());
}

TEST_F(FetcherTest, AbortsATricklingServer) {
  FetcherOptions options = TestOptions();
  options.total_timeout = std::chrono::milliseconds(60'000);
  options.low_speed_bytes_per_second = 100;
  options.low_speed_time = std::chrono::seconds(1);
  auto fetcher = MakeFetcher(options);
  FetchResult r = fetcher->Fetch(Url("/trickle?bytes=1000&ms=200"));  // 5 bytes/s
  EXPECT_EQ(r.error_kind, FetchErrorKind::kTimeout) << r.error.ToString();
  EXPECT_EQ(r.status, 200);
}

TEST_F(FetcherTest, ReportsConnectionRefused) {
  int closed_port = 0;
  {
    auto other = SiteServer::Start(
        {}, [](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
          return std::unique_ptr<site::Site>(new GeneratedSite({}, origins));
        });
    ASSERT_TRUE(other.ok());
    closed_port = (*other)->port();
  }  // stopped: nothing listens there any more
  auto fetcher = MakeFetcher();
  FetchResult r = fetcher->Fetch("http://127.0.0.1:" + std::to_string(closed_port) + "/");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error_kind, FetchErrorKind::kConnect) << r.error.ToString();
  EXPECT_EQ(r.error.code(), StatusCode::kIoError);
  EXPECT_EQ(r.status, 0);
}

TEST_F(FetcherTest, HttpErrorsAreResultsNotTransferErrors) {
  auto fetcher = MakeFetcher();
  FetchResult missing = fetcher->Fetch(Url("/status/404"));
  EXPECT_TRUE(missing.ok());
  EXPECT_EQ(missing.status, 404);
  FetchResult broken = fetcher->Fetch(Url("/status/500"));
  EXPECT_TRUE(broken.ok());
  EXPECT_EQ(broken.status, 500);
  FetchResult busy = fetcher->Fetch(Url("/status/429"));
  EXPECT_TRUE(busy.ok());
  EXPECT_EQ(busy.status, 429);
  EXPECT_EQ(busy.retry_after, "2");
}

TEST_F(FetcherTest, ReportsButSkipsNonAcceptedContentTypes) {
  auto fetcher = MakeFetcher();
  FetchResult png = fetcher->Fetch(Url("/image.png"));
  EXPECT_TRUE(png.ok()) << png.error.ToString();
  EXPECT_EQ(png.status, 200);
  EXPECT_EQ(png.media_type, "image/png");
  EXPECT_FALSE(png.content_type_accepted);
  EXPECT_TRUE(png.body_skipped);
  EXPECT_TRUE(png.body.empty());
  FetchResult pdf = fetcher->Fetch(Url("/doc.pdf"));
  EXPECT_EQ(pdf.media_type, "application/pdf");
  EXPECT_TRUE(pdf.body_skipped);

  FetcherOptions all = TestOptions();
  all.accepted_content_types.clear();  // accept everything
  FetchResult kept = MakeFetcher(all)->Fetch(Url("/image.png"));
  EXPECT_TRUE(kept.content_type_accepted);
  EXPECT_FALSE(kept.body_skipped);
  EXPECT_EQ(kept.body.substr(1, 3), "PNG");
}

// A robots.txt redirect is returned, not followed: the frontier schedules each hop on its clock
// (RFC 9309 §2.3.1.2 hops are counted there; tests/frontier/frontier_robots_test.cc).
TEST_F(FetcherTest, RobotsRedirectIsReturnedForTheFrontierToSchedule) {
  auto fetcher = MakeFetcher();
  const size_t before = server_->log().Count(0, "/robots-hops/4");
  FetchResult r = fetcher->FetchRobots(Url("/robots-hops/5"));
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.status, 301);
  EXPECT_EQ(r.location, "/robots-hops/4");
  EXPECT_EQ(server_->log().Count(0, "/robots-hops/4"), before);

  FetchResult hop = fetcher->FetchRobots(Url("/robots-hops/0"));
  ASSERT_TRUE(hop.ok()) << hop.error.ToString();
  EXPECT_EQ(hop.status, 200);
  EXPECT_EQ(hop.media_type, "text/plain");
  EXPECT_NE(hop.body.find("Disallow: /hidden/"), std::string::npos);
  EXPECT_EQ(hop.request_headers.rfind("GET /robots-hops/0 ", 0), 0u) << hop.request_headers;
  EXPECT_EQ(hop.response_headers.rfind("HTTP/1.1 200", 0), 0u) << hop.response_headers;

  FetchResult plain = fetcher->FetchRobots(Url("/robots.txt"));
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(plain.body.find("Disallow: /private/"), std::string::npos);
}

TEST_F(FetcherTest, RobotsBodyIsTruncatedAt500KiB) {
  auto fetcher = MakeFetcher();
  FetchResult r = fetcher->FetchRobots(Url("/size/600000"));
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_TRUE(r.body_truncated);
  EXPECT_EQ(r.body.size(), Fetcher::kRobotsMaxBytes);
}

TEST_F(FetcherTest, RejectsBadUrlsAndOptions) {
  auto fetcher = MakeFetcher();
  for (const char* url : {"ftp://127.0.0.1/", "file:///etc/passwd", "http://[::1", ""}) {
    FetchResult r = fetcher->Fetch(url);
    EXPECT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error_kind, FetchErrorKind::kInvalidUrl) << url << ": " << r.error.ToString();
    EXPECT_EQ(r.error.code(), StatusCode::kInvalidArgument);
  }
  FetcherOptions bad = TestOptions();
  bad.max_body_bytes = 0;
  EXPECT_EQ(Fetcher::Create(bad, nullptr).status().code(), StatusCode::kInvalidArgument);
  bad = TestOptions();
  bad.total_timeout = std::chrono::milliseconds(0);
  EXPECT_FALSE(Fetcher::Create(bad, nullptr).ok());
}

TEST_F(FetcherTest, ThreadsFetchConcurrentlyThroughOneShare) {
  auto share = CurlShare::Create();
  ASSERT_TRUE(share.ok()) << share.status().ToString();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20;
  std::vector<std::vector<FetchResult>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto fetcher = Fetcher::Create(TestOptions(), share->get());
      if (!fetcher.ok()) return;
      for (int i = 0; i < kPerThread; ++i) {
        const int page = (t * kPerThread + i) % 20 + 1;
        results[t].push_back((*fetcher)->Fetch(Url("/pages/" + std::to_string(page))));
      }
      results[t].push_back((*fetcher)->Fetch(Url("/gzip")));
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(results[t].size(), kPerThread + 1u) << "thread " << t;
    for (const FetchResult& r : results[t]) {
      EXPECT_TRUE(r.ok()) << r.url << ": " << r.error.ToString();
      EXPECT_EQ(r.status, 200) << r.url;
      EXPECT_NE(r.body.find("</html>"), std::string::npos) << r.url;
    }
  }
}

TEST(FetcherTlsTest, OnlyCertificateErrorsArePermanent) {
  EXPECT_TRUE(IsPermanent(FetchErrorKind::kTls));
  for (FetchErrorKind kind : {FetchErrorKind::kNone, FetchErrorKind::kDns, FetchErrorKind::kConnect,
                              FetchErrorKind::kTimeout, FetchErrorKind::kTlsHandshake,
                              FetchErrorKind::kBodyTooLarge, FetchErrorKind::kNetwork}) {
    EXPECT_FALSE(IsPermanent(kind)) << FetchErrorKindName(kind);
  }
}

TEST(FetcherTlsTest, TlsToAPlainHttpServerIsAHandshakeErrorNotACertificateError) {
  site::SiteServerOptions options;  // plain HTTP
  auto server = SiteServer::Start(
      options, [](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
        return std::unique_ptr<site::Site>(new GeneratedSite({}, origins));
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string url = "https://127.0.0.1:" + std::to_string((*server)->port()) + "/about";
  auto r = Fetcher::Create(FetcherOptions{}, nullptr).value()->Fetch(url);
  EXPECT_EQ(r.error_kind, FetchErrorKind::kTlsHandshake) << r.error.ToString();
  EXPECT_FALSE(IsPermanent(r.error_kind));
  EXPECT_EQ(r.error.message().rfind("tls handshake: ", 0), 0u) << r.error.message();
}

TEST(FetcherTlsTest, VerifiesCertificatesUnlessToldNotTo) {
  site::SiteServerOptions options;
  options.tls = true;
  auto server = SiteServer::Start(
      options, [](const std::vector<std::string>& origins) -> Result<std::unique_ptr<site::Site>> {
        return std::unique_ptr<site::Site>(new GeneratedSite({}, origins));
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string url = (*server)->Url("/about");
  ASSERT_EQ(url.rfind("https://127.0.0.1:", 0), 0u);

  FetcherOptions strict;
  auto rejected = Fetcher::Create(strict, nullptr).value()->Fetch(url);  // self-signed: refused
  EXPECT_EQ(rejected.error_kind, FetchErrorKind::kTls) << rejected.error.ToString();
  EXPECT_EQ(rejected.status, 0);
  EXPECT_TRUE(IsPermanent(rejected.error_kind));  // the crawler does not retry it
  // The kind prefix appears once, added by the fetcher.
  EXPECT_EQ(rejected.error.message().rfind("tls: ", 0), 0u) << rejected.error.message();
  EXPECT_EQ(rejected.error.message().find("tls: tls"), std::string::npos);

  testing::ScratchDir dir("urlsieve_ca");
  const auto ca = dir.path() / "ca.pem";
  std::ofstream(ca) << (*server)->tls_certificate_pem();
  FetcherOptions trusting;
  trusting.ca_file = ca.string();
  auto trusted = Fetcher::Create(trusting, nullptr).value()->Fetch(url);
  EXPECT_TRUE(trusted.ok()) << trusted.error.ToString();
  EXPECT_EQ(trusted.status, 200);

  FetcherOptions lax;
  lax.verify_tls = false;
  auto unverified = Fetcher::Create(lax, nullptr).value()->Fetch(url);
  EXPECT_TRUE(unverified.ok()) << unverified.error.ToString();
  EXPECT_NE(unverified.body.find("<title>About</title>"), std::string::npos);
}

}  // namespace
}  // namespace urlsieve

namespace urlsieve {
namespace {

TEST_F(FetcherTest, AConditionalRequestSendsTheValidatorsAndOnlyForThatFetch) {
  auto fetcher = MakeFetcher();
  FetchResult r =
      fetcher->Fetch(Url("/about"), ConditionalRequest{"\"abc\"", "Sat, 21 Nov 2026 22:30:06 GMT"});
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_NE(r.request_headers.find("\r\nIf-None-Match: \"abc\"\r\n"), std::string::npos)
      << r.request_headers;
  EXPECT_NE(r.request_headers.find("\r\nIf-Modified-Since: Sat, 21 Nov 2026 22:30:06 GMT\r\n"),
            std::string::npos)
      << r.request_headers;
  // Only what is recorded is sent, and the next fetch is a plain GET again.
  r = fetcher->Fetch(Url("/about"), ConditionalRequest{"\"abc\"", ""});
  EXPECT_NE(r.request_headers.find("If-None-Match"), std::string::npos);
  EXPECT_EQ(r.request_headers.find("If-Modified-Since"), std::string::npos) << r.request_headers;
  r = fetcher->Fetch(Url("/about"));
  EXPECT_EQ(r.request_headers.find("If-"), std::string::npos) << r.request_headers;
  // A validator with a line break would inject a header: it is not sent.
  r = fetcher->Fetch(Url("/about"), ConditionalRequest{"\"a\"\r\nX-Injected: 1", ""});
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.request_headers.find("X-Injected"), std::string::npos) << r.request_headers;
  // A validator past kMaxValidatorBytes (kept by an older build) is not sent: a server's 431
  // would replace the URL's good record. One of exactly the limit is.
  const std::string longest = "\"" + std::string(kMaxValidatorBytes - 2, 'v') + "\"";
  r = fetcher->Fetch(Url("/about"), ConditionalRequest{longest, ""});
  EXPECT_NE(r.request_headers.find("If-None-Match: " + longest), std::string::npos);
  r = fetcher->Fetch(Url("/about"), ConditionalRequest{longest + "w", longest + "w"});
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  EXPECT_EQ(r.request_headers.find("If-"), std::string::npos) << r.request_headers.substr(0, 200);
}

// The bodies of types that are not parsed (docs/features/content-seen.md, "Non-HTML bodies"):
// skipped, their first bytes kept, or downloaded; a cut body keeps its first max_body_bytes.
class OtherBodiesTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kCap = 64 * 1024;

  void SetUp() override {
    for (size_t i = 0; i < 200 * 1024; ++i) big_.push_back(static_cast<char>((i * 7919) >> 3));
    mid_ = big_.substr(0, 48 * 1024);
    auto server = site::SiteServer::Start(
        {}, [&](const std::vector<std::string>&) -> Result<std::unique_ptr<site::Site>> {
          auto map = std::make_unique<site::MapSite>();
          map->Set("/style.css", "text/css", css_);
          map->Set("/mid.js", "application/javascript", mid_);
          map->Set("/big.bin", "application/octet-stream", big_);
          map->Set("/big.html", "text/html", std::string(kCap + 1, 'x'));
          return std::unique_ptr<site::Site>(std::move(map));
        });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  FetchResult Fetch(FetcherOptions::OtherBodies other, bool keep_cut, const std::string& path) {
    FetcherOptions o;
    o.max_body_bytes = kCap;
    o.other_bodies = other;
    o.keep_cut_bodies = keep_cut;
    auto fetcher = Fetcher::Create(o, nullptr);
    EXPECT_TRUE(fetcher.ok());
    return (*fetcher)->Fetch(server_->Url(path));
  }

  const std::string css_ = "body { color: black }\n";
  std::string mid_;
  std::string big_;
  std::unique_ptr<site::SiteServer> server_;
};

TEST_F(OtherBodiesTest, SkipDownloadsNothingWhateverTheSize) {
  using enum FetcherOptions::OtherBodies;
  FetchResult css = Fetch(kSkip, false, "/style.css");
  EXPECT_TRUE(css.ok()) << css.error.ToString();
  EXPECT_TRUE(css.body_skipped);
  EXPECT_FALSE(css.content_type_accepted);
  EXPECT_EQ(css.body, "");
  // Its Content-Length is past the cap: still a skipped body, not a body too large.
  FetchResult big = Fetch(kSkip, false, "/big.bin");
  EXPECT_TRUE(big.ok()) << big.error.ToString();
  EXPECT_TRUE(big.body_skipped);
  EXPECT_EQ(big.status, 200);
  EXPECT_EQ(big.body, "");
}

TEST_F(OtherBodiesTest, DownloadKeepsTheWholeBodyUpToTheCap) {
  using enum FetcherOptions::OtherBodies;
  FetchResult js = Fetch(kDownload, true, "/mid.js");
  ASSERT_TRUE(js.ok()) << js.error.ToString();
  EXPECT_FALSE(js.body_skipped);
  EXPECT_FALSE(js.content_type_accepted);  // never parsed
  EXPECT_EQ(js.body, mid_);
  FetchResult big = Fetch(kDownload, true, "/big.bin");
  EXPECT_EQ(big.error_kind, FetchErrorKind::kBodyTooLarge) << big.error.ToString();
  EXPECT_EQ(big.status, 200);
  EXPECT_EQ(big.body, big_.substr(0, kCap));  // its first max_body_bytes, exactly
  // Without keep_cut_bodies the Content-Length stops it before any byte.
  FetchResult early = Fetch(kDownload, false, "/big.bin");
  EXPECT_EQ(early.error_kind, FetchErrorKind::kBodyTooLarge) << early.error.ToString();
  EXPECT_EQ(early.body, "");
  // An accepted type is cut the same way.
  FetchResult html = Fetch(kDownload, true, "/big.html");
  EXPECT_EQ(html.error_kind, FetchErrorKind::kBodyTooLarge);
  EXPECT_EQ(html.body.size(), kCap);
}

TEST_F(OtherBodiesTest, FirstBytesKeepsWhatCameFirst) {
  using enum FetcherOptions::OtherBodies;
  // A body that came whole with the first write is whole: not skipped.
  FetchResult css = Fetch(kFirstBytes, true, "/style.css");
  ASSERT_TRUE(css.ok()) << css.error.ToString();
  EXPECT_FALSE(css.body_skipped);
  EXPECT_EQ(css.body, css_);
  FetchResult js = Fetch(kFirstBytes, true, "/mid.js");
  ASSERT_TRUE(js.ok()) << js.error.ToString();
  EXPECT_TRUE(js.body_skipped);
  EXPECT_GT(js.body.size(), 0u);
  EXPECT_LT(js.body.size(), mid_.size());
  EXPECT_EQ(js.body, mid_.substr(0, js.body.size()));
}

}  // namespace
}  // namespace urlsieve
