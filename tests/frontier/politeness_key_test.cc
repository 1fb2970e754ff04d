// The frontier's view of a URL (SplitUrl, PartsOf) and its politeness keys, including the one
// registrable-domain function that the crawl's scope shares (crawler/crawl/scope.h).
#include "frontier/politeness_key.h"

#include <gtest/gtest.h>

#include <string>

#include "url/url_canonicalizer.h"
#include "url/url_parts.h"

namespace urlsieve {
namespace {

TEST(RegistrableDomainTest, NamesFromThePublicSuffixList) {
  EXPECT_EQ(RegistrableDomain("www.example.com"), "example.com");
  EXPECT_EQ(RegistrableDomain("example.com"), "example.com");
  EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
  EXPECT_EQ(RegistrableDomain("user.github.io"), "user.github.io");  // a private suffix
  EXPECT_EQ(RegistrableDomain("x.user.github.io"), "user.github.io");
}

TEST(RegistrableDomainTest, APublicSuffixIsItsOwnDomain) {
  EXPECT_EQ(RegistrableDomain("co.uk"), "co.uk");
  EXPECT_EQ(RegistrableDomain("com"), "com");
  EXPECT_EQ(RegistrableDomain("github.io"), "github.io");
  EXPECT_EQ(RegistrableDomain("localhost"), "localhost");
}

TEST(RegistrableDomainTest, AnIpLiteralIsItsOwnDomain) {
  // The list knows no numeric suffix: it would make "0.1" of both addresses, one key for two
  // servers.
  EXPECT_EQ(RegistrableDomain("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(RegistrableDomain("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(RegistrableDomain("[::1]"), "[::1]");
  EXPECT_EQ(RegistrableDomain("[2001:db8::1]"), "[2001:db8::1]");
  // A name that merely starts with digits is a name.
  EXPECT_EQ(RegistrableDomain("www.1example.com"), "1example.com");
}

TEST(RegistrableDomainTest, PunycodeHostsAndTrailingDots) {
  // Canonical hosts are punycode (IDNA), never Unicode.
  EXPECT_EQ(RegistrableDomain("www.xn--bcher-kva.de"), "xn--bcher-kva.de");  // bücher.de
  EXPECT_EQ(RegistrableDomain("a.b.xn--p1ai"), "b.xn--p1ai");                // .рф
  EXPECT_EQ(RegistrableDomain("xn--p1ai"), "xn--p1ai");                      // the suffix itself
  // Canonical keys keep a trailing dot ("http://example.com./"); so does its domain.
  EXPECT_EQ(RegistrableDomain("a.example.com."), "example.com.");
  EXPECT_EQ(RegistrableDomain("example.com."), "example.com.");
}

TEST(SplitUrlTest, OriginHostAndRest) {
  UrlParts p;
  ASSERT_TRUE(SplitUrl("http://user@a.com:8080/p/q?x=1#frag", &p));
  EXPECT_EQ(p.url, "http://user@a.com:8080/p/q?x=1#frag");
  EXPECT_EQ(p.origin, "http://user@a.com:8080");
  EXPECT_EQ(p.host, "a.com");
  EXPECT_EQ(p.rest, "/p/q?x=1");
  ASSERT_TRUE(SplitUrl("https://[::1]:443?q", &p));
  EXPECT_EQ(p.origin, "https://[::1]:443");
  EXPECT_EQ(p.host, "[::1]");
  EXPECT_EQ(p.rest, "?q");
  ASSERT_TRUE(SplitUrl("http://a.com", &p));
  EXPECT_EQ(p.origin, "http://a.com");
  EXPECT_EQ(p.rest, "");
}

TEST(SplitUrlTest, NoSchemeOrNoHostIsRefused) {
  UrlParts p;
  EXPECT_FALSE(SplitUrl("not a url", &p));
  EXPECT_FALSE(SplitUrl("http:///path", &p));
  EXPECT_FALSE(SplitUrl("//a.com/x", &p));
  EXPECT_FALSE(SplitUrl("1http://a.com/", &p));
  EXPECT_FALSE(SplitUrl("", &p));
}

TEST(SplitUrlTest, AParsedUrlGivesTheSamePartsWithoutParsing) {
  const UrlCanonicalizer canonicalizer;
  for (const char* url : {"http://a.com/p?q=1", "https://[2001:db8::1]:8443/x", "http://a.com./",
                          "http://u:p@10.0.0.1/a/b?"}) {
    Result<CanonicalUrl> parsed = canonicalizer.Canonicalize(url);
    ASSERT_TRUE(parsed.ok()) << url;
    UrlParts split;
    ASSERT_TRUE(SplitUrl(parsed->key(), &split)) << url;
    const UrlParts views = PartsOf(*parsed);
    EXPECT_EQ(views.url, split.url);
    EXPECT_EQ(views.origin, split.origin);
    EXPECT_EQ(views.host, split.host);
    EXPECT_EQ(views.rest, split.rest);
    EXPECT_EQ(views.url.data(), parsed->key().data());  // views into the parsed URL, no copy
  }
}

TEST(PolitenessKeyTest, EachKind) {
  UrlParts url;
  ASSERT_TRUE(SplitUrl("https://www.example.co.uk:8443/a", &url));
  FrontierOptions options;
  EXPECT_EQ(PolitenessKey(options, url), "https://www.example.co.uk:8443");
  options.key_kind = PolitenessKeyKind::kRegistrableDomain;
  EXPECT_EQ(PolitenessKey(options, url), "example.co.uk");
  options.key_kind = PolitenessKeyKind::kCustom;
  options.key_function = [](std::string_view origin) { return "ip-of " + std::string(origin); };
  EXPECT_EQ(PolitenessKey(options, url), "ip-of https://www.example.co.uk:8443");
}

}  // namespace
}  // namespace urlsieve
