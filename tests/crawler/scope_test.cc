#include "crawler/crawl/scope.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace urlsieve {
namespace {

class ScopeTest : public ::testing::Test {
 protected:
  CanonicalUrl Url(std::string_view s) {
    Result<CanonicalUrl> u = canonicalizer_.Canonicalize(s);
    EXPECT_TRUE(u.ok()) << s << ": " << u.status().ToString();
    return u.ok() ? *u : CanonicalUrl();
  }
  std::unique_ptr<Scope> Make(ScopeOptions options,
                              std::vector<std::string> seeds = {"http://www.example.com/"}) {
    std::vector<CanonicalUrl> urls;
    for (const auto& s : seeds) urls.push_back(Url(s));
    Result<std::unique_ptr<Scope>> scope = Scope::Create(options, urls);
    EXPECT_TRUE(scope.ok()) << scope.status().ToString();
    return scope.ok() ? std::move(*scope) : nullptr;
  }
  ScopeReason Check(const Scope& scope, std::string_view url, int depth = 1) {
    return scope.Check(Url(url), depth).reason;
  }

  UrlCanonicalizer canonicalizer_;
};

TEST_F(ScopeTest, HostModeKeepsExactlyTheSeedHosts) {
  auto scope = Make({}, {"http://www.example.com/", "https://docs.example.org:8443/start"});
  EXPECT_EQ(Check(*scope, "http://www.example.com/a"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "https://WWW.EXAMPLE.COM:444/b"), ScopeReason::kAccept);  // port ignored
  EXPECT_EQ(Check(*scope, "http://docs.example.org/x"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://example.com/"), ScopeReason::kOffSite);
  EXPECT_EQ(Check(*scope, "http://blog.example.com/"), ScopeReason::kOffSite);
  EXPECT_EQ(Check(*scope, "http://other.org/"), ScopeReason::kOffSite);
  EXPECT_EQ(scope->rejections(ScopeReason::kOffSite), 3u);
}

TEST_F(ScopeTest, DomainModeUsesRegistrableDomains) {
  ScopeOptions options;
  options.mode = ScopeMode::kDomain;
  auto scope = Make(options, {"http://www.example.com/", "http://shop.example.co.uk/"});
  EXPECT_EQ(Check(*scope, "http://example.com/"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://a.b.example.com/"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://news.example.co.uk/"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://other.co.uk/"), ScopeReason::kOffSite);  // not just the suffix
  EXPECT_EQ(Check(*scope, "http://notexample.com/"), ScopeReason::kOffSite);
  EXPECT_EQ(Check(*scope, "http://example.com.evil.net/"), ScopeReason::kOffSite);
}

TEST(RegistrableDomainTest, PublicSuffixList) {
  EXPECT_EQ(RegistrableDomain("www.example.com"), "example.com");
  EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
  EXPECT_EQ(RegistrableDomain("user.github.io"), "user.github.io");  // a private suffix
  EXPECT_EQ(RegistrableDomain("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(RegistrableDomain("[::1]"), "[::1]");
  EXPECT_EQ(RegistrableDomain("co.uk"), "co.uk");
}

TEST_F(ScopeTest, AnyModeAcceptsEveryHost) {
  ScopeOptions options;
  options.mode = ScopeMode::kAny;
  auto scope = Make(options, {});
  EXPECT_EQ(Check(*scope, "http://anything.example/"), ScopeReason::kAccept);
}

TEST_F(ScopeTest, SeedsRequiredUnlessAny) { EXPECT_FALSE(Scope::Create({}, {}).ok()); }

TEST_F(ScopeTest, DepthLimit) {
  ScopeOptions options;
  options.max_depth = 2;
  auto scope = Make(options);
  EXPECT_EQ(Check(*scope, "http://www.example.com/", 0), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://www.example.com/a", 2), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://www.example.com/b", 3), ScopeReason::kDepth);
  EXPECT_EQ(scope->rejections(ScopeReason::kDepth), 1u);
}

TEST_F(ScopeTest, UrlLengthLimit) {
  ScopeOptions options;
  options.max_url_length = 40;
  auto scope = Make(options);
  EXPECT_EQ(Check(*scope, "http://www.example.com/short"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://www.example.com/" + std::string(30, 'x')),
            ScopeReason::kUrlLength);
}

TEST(HasRepeatedSegmentsTest, Runs) {
  EXPECT_TRUE(HasRepeatedSegments("/a/b/a/b/a/b", 3));
  EXPECT_FALSE(HasRepeatedSegments("/a/b/a/b", 3));
  EXPECT_TRUE(HasRepeatedSegments("/a/b/a/b", 2));
  EXPECT_TRUE(HasRepeatedSegments("/x/a/a/a", 3));
  EXPECT_TRUE(HasRepeatedSegments("/p/x/y/z/x/y/z/x/y/z/q", 3));
  EXPECT_FALSE(HasRepeatedSegments("/2024/01/01/post", 3));
  EXPECT_FALSE(HasRepeatedSegments("/a/b/c/a/b/c/d/a/b/c", 3));  // not consecutive
  EXPECT_TRUE(HasRepeatedSegments("/a/b/a/b/a/b/", 3));          // a trailing empty segment
  EXPECT_FALSE(HasRepeatedSegments("/", 3));
  EXPECT_FALSE(HasRepeatedSegments("", 3));
  EXPECT_FALSE(HasRepeatedSegments("/a/a/a/a", 0));  // off
}

TEST_F(ScopeTest, RepeatedSegmentsTrap) {
  auto scope = Make({});
  EXPECT_EQ(Check(*scope, "http://www.example.com/cal/2024/cal/2024/cal/2024/"),
            ScopeReason::kRepeatedSegments);
  EXPECT_EQ(Check(*scope, "http://www.example.com/cal/2024/cal/2024/"), ScopeReason::kAccept);
  ScopeOptions off;
  off.max_repeated_segments = 0;
  auto lenient = Make(off);
  EXPECT_EQ(Check(*lenient, "http://www.example.com/a/a/a/a/a"), ScopeReason::kAccept);
  off.max_repeated_segments = 1;
  EXPECT_FALSE(Scope::Create(off, {Url("http://a.example/")}).ok());
}

TEST_F(ScopeTest, AllowAndDenyPatterns) {
  ScopeOptions options;
  options.allow = {"^https?://www\\.example\\.com/(docs|blog)/"};
  options.deny = {"\\.pdf$", "[?&]sessionid="};
  auto scope = Make(options);
  EXPECT_EQ(Check(*scope, "http://www.example.com/docs/intro"), ScopeReason::kAccept);
  EXPECT_EQ(Check(*scope, "http://www.example.com/shop/"), ScopeReason::kNotAllowed);
  EXPECT_EQ(Check(*scope, "http://www.example.com/docs/manual.pdf"), ScopeReason::kDenied);
  EXPECT_EQ(Check(*scope, "http://www.example.com/blog/?a=1&sessionid=2"), ScopeReason::kDenied);
  // Patterns see the canonical key: the host is lowercase, default port gone.
  EXPECT_EQ(Check(*scope, "HTTP://WWW.EXAMPLE.COM:80/blog/x"), ScopeReason::kAccept);
}

TEST_F(ScopeTest, InvalidPatternIsAnError) {
  ScopeOptions options;
  options.deny = {"(unclosed"};
  Result<std::unique_ptr<Scope>> scope = Scope::Create(options, {Url("http://a.example/")});
  ASSERT_FALSE(scope.ok());
  EXPECT_NE(scope.status().message().find("(unclosed"), std::string::npos);
}

TEST_F(ScopeTest, ExternalRejectionsAndNames) {
  auto scope = Make({});
  scope->Record(ScopeReason::kInvalidUrl, 5);
  scope->Record(ScopeReason::kInvalidUrl);
  Check(*scope, "http://other.example/");
  auto counts = scope->Rejections();  // only the non-zero counts, in ScopeReason order
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].first, "scope-off-site");
  EXPECT_EQ(counts[0].second, 1u);
  EXPECT_EQ(counts[1].first, "scope-invalid-url");
  EXPECT_EQ(counts[1].second, 6u);
  EXPECT_EQ(ScopeDecision{}.name(), "accept");
  for (int r = 0; r < static_cast<int>(ScopeReason::kCount); ++r) {
    EXPECT_NE(ScopeReasonName(static_cast<ScopeReason>(r)), "?");
  }
}

TEST_F(ScopeTest, ConcurrentChecksCountExactly) {
  auto scope = Make({});
  CanonicalUrl off = Url("http://other.example/");
  CanonicalUrl on = Url("http://www.example.com/ok");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        scope->Check(off, 1);
        scope->Check(on, 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(scope->rejections(ScopeReason::kOffSite), 20000u);
  EXPECT_EQ(scope->rejections(ScopeReason::kAccept), 0u);
}

TEST_F(ScopeTest, FromConfig) {
  CrawlConfig config;
  config.scope.mode = ScopeMode::kDomain;
  config.scope.deny = {"x"};
  config.crawl.max_depth = 7;
  ScopeOptions o = ScopeOptions::FromConfig(config);
  EXPECT_EQ(o.mode, ScopeMode::kDomain);
  EXPECT_EQ(o.deny.size(), 1u);
  EXPECT_EQ(o.max_depth, 7);
}

}  // namespace
}  // namespace urlsieve
