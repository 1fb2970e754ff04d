#include "frontier/robots_rules.h"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <string>

#include "tests/frontier/robots_invariants.h"
#include "tests/support/fuzz_corpus.h"

namespace urlsieve {
namespace {

bool Allowed(std::string_view body, std::string_view agent, std::string_view path) {
  return RobotsRules::Parse(body).ForAgent(agent).IsAllowed(path);
}

// RFC 9309 §5.1, "Simple Example".
constexpr std::string_view kRfcSimple =
    "User-Agent: *\n"
    "Disallow: *.gif$\n"
    "Disallow: /example/\n"
    "Allow: /publications/\n"
    "\n"
    "User-Agent: foobot\n"
    "Disallow:/\n"
    "Allow:/example/page.html\n"
    "Allow:/example/allowed.gif\n"
    "\n"
    "User-Agent: barbot\n"
    "User-Agent: bazbot\n"
    "Disallow: /example/page.html\n"
    "\n"
    "User-Agent: quxbot\n"
    "\n"
    "EOF\n";

TEST(RobotsRulesTest, RfcSimpleExampleFoobot) {
  EXPECT_TRUE(Allowed(kRfcSimple, "foobot", "/example/page.html"));
  EXPECT_TRUE(Allowed(kRfcSimple, "foobot", "/example/allowed.gif"));
  EXPECT_FALSE(Allowed(kRfcSimple, "foobot", "/example/other.html"));
  EXPECT_FALSE(Allowed(kRfcSimple, "foobot", "/"));
  EXPECT_FALSE(Allowed(kRfcSimple, "foobot", "/publications/"));
}

TEST(RobotsRulesTest, RfcSimpleExampleBarbotAndBazbotShareAGroup) {
  for (std::string_view agent : {"barbot", "bazbot"}) {
    EXPECT_FALSE(Allowed(kRfcSimple, agent, "/example/page.html")) << agent;
    EXPECT_TRUE(Allowed(kRfcSimple, agent, "/example/other.html")) << agent;
    EXPECT_TRUE(Allowed(kRfcSimple, agent, "/x.gif")) << agent;  // the '*' group does not apply
  }
}

TEST(RobotsRulesTest, RfcSimpleExampleEmptyGroupAllowsAll) {
  EXPECT_TRUE(Allowed(kRfcSimple, "quxbot", "/example/page.html"));
  EXPECT_TRUE(Allowed(kRfcSimple, "quxbot", "/a.gif"));
}

TEST(RobotsRulesTest, RfcSimpleExampleStarGroupForOthers) {
  EXPECT_FALSE(Allowed(kRfcSimple, "otherbot", "/images/a.gif"));
  EXPECT_TRUE(Allowed(kRfcSimple, "otherbot", "/images/a.gif?x"));  // '$' anchors the end
  EXPECT_FALSE(Allowed(kRfcSimple, "otherbot", "/example/"));
  EXPECT_FALSE(Allowed(kRfcSimple, "otherbot", "/example/page.html"));
  EXPECT_TRUE(Allowed(kRfcSimple, "otherbot", "/publications/"));
  EXPECT_TRUE(Allowed(kRfcSimple, "otherbot", "/"));
}

// RFC 9309 §5.2, "Longest Match".
TEST(RobotsRulesTest, RfcLongestMatchExample) {
  constexpr std::string_view body =
      "User-Agent: foobot\n"
      "Allow: /example/page/\n"
      "Disallow: /example/page/disallowed.gif\n";
  EXPECT_TRUE(Allowed(body, "foobot", "/example/page/"));
  EXPECT_TRUE(Allowed(body, "foobot", "/example/page/other.gif"));
  EXPECT_FALSE(Allowed(body, "foobot", "/example/page/disallowed.gif"));
}

TEST(RobotsRulesTest, AllowWinsTiesOfEqualLength) {
  constexpr std::string_view body = "User-agent: *\nDisallow: /page\nAllow: /page\n";
  EXPECT_TRUE(Allowed(body, "x", "/page"));
  constexpr std::string_view reversed = "User-agent: *\nAllow: /pag*\nDisallow: /page\n";
  EXPECT_TRUE(Allowed(reversed, "x", "/page.html"));
}

TEST(RobotsRulesTest, ProductTokenMatchingIsCaseInsensitiveAndIgnoresVersion) {
  constexpr std::string_view body = "User-agent: FooBot\nDisallow: /\n";
  EXPECT_FALSE(Allowed(body, "foobot", "/a"));
  EXPECT_FALSE(Allowed(body, "FOOBOT/2.1 (+https://example.com/bot)", "/a"));
  EXPECT_TRUE(Allowed(body, "foobotx", "/a"));
  constexpr std::string_view versioned = "User-agent: foobot/1.0\nDisallow: /\n";
  EXPECT_FALSE(Allowed(versioned, "FooBot", "/a"));
}

TEST(RobotsRulesTest, MatchingGroupsAreMerged) {
  constexpr std::string_view body =
      "User-agent: foobot\nDisallow: /a\n"
      "User-agent: *\nDisallow: /c\n"
      "User-agent: foobot\nDisallow: /b\n";
  EXPECT_FALSE(Allowed(body, "foobot", "/a"));
  EXPECT_FALSE(Allowed(body, "foobot", "/b"));
  EXPECT_TRUE(Allowed(body, "foobot", "/c"));
  EXPECT_FALSE(Allowed(body, "other", "/c"));
  EXPECT_TRUE(Allowed(body, "other", "/a"));
}

TEST(RobotsRulesTest, NoMatchingGroupAndNoStarAllowsAll) {
  EXPECT_TRUE(Allowed("User-agent: foobot\nDisallow: /\n", "barbot", "/x"));
  EXPECT_TRUE(Allowed("", "barbot", "/x"));
}

TEST(RobotsRulesTest, WildcardsAndEndAnchor) {
  constexpr std::string_view body =
      "User-agent: *\n"
      "Disallow: /*.php$\n"
      "Disallow: /fish*\n"
      "Disallow: /*/private/*/x\n";
  EXPECT_FALSE(Allowed(body, "b", "/index.php"));
  EXPECT_FALSE(Allowed(body, "b", "/folder/a.php"));
  EXPECT_TRUE(Allowed(body, "b", "/index.php?x=1"));
  EXPECT_TRUE(Allowed(body, "b", "/index.php5"));
  EXPECT_FALSE(Allowed(body, "b", "/fish"));
  EXPECT_FALSE(Allowed(body, "b", "/fishheads/yummy.html"));
  EXPECT_TRUE(Allowed(body, "b", "/Fish.asp"));  // matching is case-sensitive
  EXPECT_FALSE(Allowed(body, "b", "/a/private/b/c/x"));
  EXPECT_TRUE(Allowed(body, "b", "/a/private/x"));
  // A pathological pattern is matched in polynomial time.
  const std::string stars = "User-agent: *\nDisallow: /" + std::string(200, '*') + "a*b$\n";
  EXPECT_TRUE(Allowed(stars, "b", "/" + std::string(5000, 'a')));
}

TEST(RobotsRulesTest, PercentEncodingIsNormalizedBeforeMatching) {
  // RFC 9309 §2.2.2 table: UTF-8 in a pattern matches its percent-encoded form and vice versa,
  // encoded unreserved characters match their plain form.
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar/ツ\n", "b", "/foo/bar/%E3%83%84"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "b", "/foo/bar/ツ"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar/%e3%83%84\n", "b", "/foo/bar/%E3%83%84"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar/baz\n", "b", "/foo/bar/%62%61%7A"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar/%62%61%7A\n", "b", "/foo/bar/baz"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /foo/bar?baz=quz\n", "b", "/foo/bar?baz=quz"));
  // A reserved character stays encoded: "%2F" is not "/".
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /a/b\n", "b", "/a%2Fb"));
  EXPECT_EQ(NormalizeRobotsPath("/%7e%41%2f ä"), "/~A%2F%20%C3%A4");
}

TEST(RobotsRulesTest, StrayPercentIsALiteralPercentSign) {
  // Found by fuzz_robots: "/%7%41" normalized to "/%7A", which normalizes again to "/z". A '%'
  // that starts no escape is "%25", as the canonicalizer writes it in the URLs matched.
  EXPECT_EQ(NormalizeRobotsPath("/%7%41"), "/%257A");
  EXPECT_EQ(NormalizeRobotsPath(NormalizeRobotsPath("/%7%41")), "/%257A");
  EXPECT_EQ(NormalizeRobotsPath("/100%"), "/100%25");
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /100%\n", "b", "/100%25off"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /100%25\n", "b", "/100%"));
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /%7%41\n", "b", "/z"));
}

TEST(RobotsRulesTest, RobotsTxtIsAlwaysAllowed) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow: /\n", "b", "/robots.txt"));
  EXPECT_FALSE(Allowed("User-agent: *\nDisallow: /\n", "b", "/robots.txt.bak"));
  EXPECT_TRUE(RobotsRules::DisallowAll().ForAgent("b").IsAllowed("/robots.txt"));
  EXPECT_FALSE(RobotsRules::DisallowAll().ForAgent("b").IsAllowed("/"));
  EXPECT_TRUE(RobotsRules::AllowAll().ForAgent("b").IsAllowed("/anything"));
}

TEST(RobotsRulesTest, RulesBeforeAnyUserAgentAreIgnored) {
  EXPECT_TRUE(Allowed("Disallow: /\nUser-agent: *\nDisallow: /x\n", "b", "/a"));
  EXPECT_FALSE(Allowed("Disallow: /\nUser-agent: *\nDisallow: /x\n", "b", "/x"));
}

TEST(RobotsRulesTest, EmptyDisallowMatchesNothing) {
  EXPECT_TRUE(Allowed("User-agent: *\nDisallow:\n", "b", "/a"));
}

TEST(RobotsRulesTest, ToleratesBomLineEndingsCommentsAndGarbage) {
  const std::string body =
      "\xEF\xBB\xBFUser-agent: b # the bot\r"
      "Disallow: /cr\r\n"
      "<html>garbage line without separator\n"
      "   Disallow   :   /spaced   \n"
      "Unknown-field: whatever\n"
      "Disallow: /lf # comment\n"
      "# Disallow: /commented\n";
  EXPECT_FALSE(Allowed(body, "b", "/cr"));
  EXPECT_FALSE(Allowed(body, "b", "/spaced"));
  EXPECT_FALSE(Allowed(body, "b", "/lf"));
  EXPECT_TRUE(Allowed(body, "b", "/commented"));
  EXPECT_TRUE(Allowed(body, "b", "/other"));
}

TEST(RobotsRulesTest, AcceptsCommonTypos) {
  EXPECT_FALSE(Allowed("useragent: b\ndisallow: /a\n", "b", "/a"));
  EXPECT_FALSE(Allowed("user agent: b\ndissallow: /a\n", "b", "/a"));
  EXPECT_FALSE(Allowed("User-Agent: b\ndisalow: /a\n", "b", "/a"));
  EXPECT_FALSE(Allowed("USER-AGENT: b\nDISALLOW /a\n", "b", "/a"));  // no colon
  EXPECT_FALSE(Allowed("user agent b\nDisallow: /a\n", "b", "/a"));
  EXPECT_FALSE(Allowed("User-agent: b\nDisallow /a:b\n", "b", "/a:b"));  // colon in the value
  EXPECT_TRUE(Allowed("User-agent: b\nNoindex: /a\nDisallow /x\n", "b", "/a"));
}

TEST(RobotsRulesTest, ParsesAtMost500KiB) {
  std::string body = "User-agent: *\n";
  while (body.size() < kRobotsParseLimit - 100) body += "Disallow: /filler/padding/line\n";
  body += "Disallow: /inside\n";
  body.resize(kRobotsParseLimit - 5, '\n');
  body += "Disallow: /straddles\n";  // crosses the limit: dropped, not cut to "/str"
  body += "Disallow: /beyond\n";
  const RobotsRules rules = RobotsRules::Parse(body);
  EXPECT_TRUE(rules.truncated());
  const RobotsPolicy policy = rules.ForAgent("b");
  EXPECT_FALSE(policy.IsAllowed("/inside"));
  EXPECT_TRUE(policy.IsAllowed("/beyond"));
  EXPECT_TRUE(policy.IsAllowed("/str"));
}

TEST(RobotsRulesTest, CrawlDelayAndSitemaps) {
  const RobotsRules rules = RobotsRules::Parse(
      "Sitemap: https://example.com/sitemap.xml\n"
      "User-agent: b\nCrawl-delay: 2.5\nDisallow: /x\n"
      "User-agent: *\nCrawl-delay: 10\n"
      "User-agent: c\nCrawl-delay: nonsense\n"
      "sitemap: https://example.com/news.xml\n");
  EXPECT_EQ(rules.ForAgent("b").crawl_delay(), 2.5);
  EXPECT_EQ(rules.ForAgent("other").crawl_delay(), 10);
  EXPECT_FALSE(rules.ForAgent("c").crawl_delay().has_value());
  ASSERT_EQ(rules.sitemaps().size(), 2u);
  EXPECT_EQ(rules.sitemaps()[0], "https://example.com/sitemap.xml");
  EXPECT_EQ(rules.sitemaps()[1], "https://example.com/news.xml");
}

TEST(RobotsRulesTest, MatchReportsTheDecidingLine) {
  const RobotsPolicy policy =
      RobotsRules::Parse("User-agent: *\nDisallow: /a # no\nAllow: /a/b\n").ForAgent("x");
  RobotsMatch match = policy.Match("/a/b/c");
  EXPECT_TRUE(match.allowed);
  ASSERT_NE(match.rule, nullptr);
  EXPECT_EQ(match.rule->line, 3u);
  EXPECT_EQ(match.rule->text, "Allow: /a/b");
  match = policy.Match("/a/x");
  EXPECT_FALSE(match.allowed);
  ASSERT_NE(match.rule, nullptr);
  EXPECT_EQ(match.rule->text, "Disallow: /a");
  EXPECT_EQ(policy.Match("/z").rule, nullptr);
}

TEST(RobotsRulesTest, RandomInputNeverBreaksTheParserOrMatcher) {
  // Bodies and paths built from robots.txt fragments and raw bytes; run under ASan/UBSan this
  // doubles as a small fuzzer.
  const char* pieces[] = {
      "User-agent:", "user agent ", "*",        "bot", "Disallow:",    "Allow:",
      "/",           "$",           "%",        "%4",  "%41",          "\r",
      "\n",          "\r\n",        "#",        " ",   "\xEF\xBB\xBF", "Crawl-delay:",
      "1e309",       "-1",          "Sitemap:", "\0",  "\xff"};
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string body, path = "/";
    for (int i = static_cast<int>(rng() % 60); i > 0; --i)
      body += pieces[rng() % std::size(pieces)];
    for (int i = static_cast<int>(rng() % 12); i > 0; --i)
      path += pieces[rng() % std::size(pieces)];
    const RobotsRules rules = RobotsRules::Parse(body);
    const RobotsPolicy policy = rules.ForAgent(round % 2 ? "bot" : "other");
    const RobotsMatch match = policy.Match(path);
    if (match.rule != nullptr) {
      EXPECT_EQ(match.allowed, match.rule->allow);
    }
    EXPECT_GE(policy.crawl_delay().value_or(0), 0);
  }
}

// The fuzz_robots corpus (seeds and what the fuzzer found) keeps the fuzzer's invariants.
TEST(RobotsRulesTest, FuzzCorpusKeepsInvariants) {
  const auto corpus = testing::FuzzCorpus("robots");
  EXPECT_GE(corpus.size(), 3u);
  for (const auto& [name, body] : corpus) {
    EXPECT_EQ(testing::RobotsInvariantViolation(body), "") << name;
  }
}

}  // namespace
}  // namespace urlsieve
