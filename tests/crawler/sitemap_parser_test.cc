// SitemapParser and ParseSitemap (crawler/sitemap/sitemap_parser.h): indexes, urlsets, text
// sitemaps, gzip, lastmod, and every hostile input bounded and reported (docs/features/sitemaps.md,
// "Sitemaps").
#include "crawler/sitemap/sitemap_parser.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/crawler/sitemap_invariants.h"
#include "tests/support/fuzz_corpus.h"
#include "tests/support/gzip.h"

namespace urlsieve {
namespace {

using testing::Gzip;

// A gzip bomb: `prefix`, then `megabytes` MB of spaces, as gzip members of 1 MB each (RFC 1952
// §2.2: concatenated members are one file), about a kilobyte per member on the wire.
std::string GzipBomb(std::string_view prefix, int megabytes) {
  const std::string member = Gzip(std::string(1 << 20, ' '));
  std::string out = Gzip(prefix);
  for (int i = 0; i < megabytes; ++i) out += member;
  return out;
}

std::vector<std::string> Locs(const SitemapParse& parse) {
  std::vector<std::string> locs;
  for (const SitemapEntry& e : parse.entries) locs.push_back(e.loc);
  return locs;
}

std::string Urlset(int n, int from = 0) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
  for (int i = from; i < from + n; ++i) {
    xml += "<url><loc>http://a.test/p" + std::to_string(i) + "</loc></url>\n";
  }
  return xml + "</urlset>\n";
}

TEST(SitemapParserTest, ReadsAnIndex) {
  const SitemapParse parse = ParseSitemap(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
      "  <sitemap><loc>http://a.test/s1.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap>\n"
      "  <sitemap>\n    <loc>\n      http://a.test/s2.xml?x=1&amp;y=2\n    </loc>\n  </sitemap>\n"
      "</sitemapindex>\n",
      {});
  EXPECT_EQ(parse.kind, SitemapKind::kIndex);
  EXPECT_EQ(Locs(parse),
            (std::vector<std::string>{"http://a.test/s1.xml.gz", "http://a.test/s2.xml?x=1&y=2"}));
  EXPECT_TRUE(parse.error.empty()) << parse.error;
}

TEST(SitemapParserTest, ReadsAUrlsetWithLastmodsAndIgnoresTheRest) {
  const SitemapParse parse = ParseSitemap(
      "\xEF\xBB\xBF  <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"\n"
      "  xmlns:image=\"http://www.google.com/schemas/sitemap-image/1.1\">\n"
      "<url><loc>http://a.test/a</loc><lastmod>2005-01-01T00:00:00Z</lastmod>"
      "<changefreq>monthly</changefreq><priority>0.8</priority>"
      "<image:image><image:loc>http://a.test/img.png</image:loc></image:image></url>\n"
      "<url><loc>http://a.test/b</loc><lastmod>2004-12-23T18:00:15+01:00</lastmod></url>\n"
      "<url><loc>http://a.test/c</loc><lastmod>yesterday</lastmod></url>\n"
      "<url><lastmod>2004-12-23</lastmod></url>\n"  // no <loc>: nothing
      "</urlset>",
      {});
  EXPECT_EQ(parse.kind, SitemapKind::kUrlset);
  ASSERT_EQ(Locs(parse),
            (std::vector<std::string>{"http://a.test/a", "http://a.test/b", "http://a.test/c"}));
  EXPECT_EQ(parse.entries[0].lastmod, 1104537600);
  EXPECT_EQ(parse.entries[1].lastmod, 1103821215);  // 17:00:15Z
  EXPECT_FALSE(parse.entries[2].lastmod.has_value());
  EXPECT_EQ(parse.bad_lastmods, 1u);
  EXPECT_TRUE(parse.error.empty()) << parse.error;
}

TEST(SitemapParserTest, W3cDatetimes) {
  EXPECT_EQ(ParseW3cDatetime("1997"), 852076800);
  EXPECT_EQ(ParseW3cDatetime("1997-07"), 867715200);
  EXPECT_EQ(ParseW3cDatetime("1997-07-16"), 869011200);
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20+01:00"), 869077200);
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20:30+01:00"), 869077230);
  EXPECT_EQ(ParseW3cDatetime("1997-07-16T19:20:30.45+01:00"), 869077230);
  EXPECT_EQ(ParseW3cDatetime(" 1997-07-16T18:20:30Z "), 869077230);
  EXPECT_EQ(ParseW3cDatetime("2024-02-29"), 1709164800);
  for (const char* bad : {"", "97", "1997-13", "1997-02-30", "2023-02-29", "1997-07-16T19:20",
                          "1997-07-16T25:00Z", "1997-07-16 19:20Z", "1997-07-16T19:20:30.Z",
                          "July 1997", "1997-07-16T19:20+1:00", "1997-07-16Z"}) {
    EXPECT_FALSE(ParseW3cDatetime(bad).has_value()) << bad;
  }
}

TEST(SitemapParserTest, ReadsATextSitemap) {
  const SitemapParse parse =
      ParseSitemap("http://a.test/1\r\n\n  https://a.test/2  \nnot a url\nhttp://a.test/3", {});
  EXPECT_EQ(parse.kind, SitemapKind::kText);
  // Lines after the first are passed on as they are: the crawl's canonicalizer judges them.
  EXPECT_EQ(Locs(parse), (std::vector<std::string>{"http://a.test/1", "https://a.test/2",
                                                   "not a url", "http://a.test/3"}));
  EXPECT_TRUE(parse.error.empty()) << parse.error;
}

TEST(SitemapParserTest, RefusesWhatIsNeitherXmlNorText) {
  for (const std::string& body : {std::string("\x89PNG\r\n\x1a\n\0\0\0", 11),
                                  std::string("{\"urls\": []}"), std::string("   \n\t ")}) {
    const SitemapParse parse = ParseSitemap(body, {});
    EXPECT_EQ(parse.kind, SitemapKind::kUnknown);
    EXPECT_TRUE(parse.entries.empty());
    EXPECT_FALSE(parse.error.empty());
  }
  const SitemapParse html = ParseSitemap("<html><body><a href=/x>x</a></body></html>", {});
  EXPECT_TRUE(html.refused);
  EXPECT_NE(html.error.find("<html>"), std::string::npos) << html.error;
}

TEST(SitemapParserTest, InflatesGzipByItsMagicBytes) {
  const SitemapParse parse = ParseSitemap(Gzip(Urlset(3)), {});
  EXPECT_TRUE(parse.gzip);
  EXPECT_EQ(parse.kind, SitemapKind::kUrlset);
  EXPECT_EQ(Locs(parse),
            (std::vector<std::string>{"http://a.test/p0", "http://a.test/p1", "http://a.test/p2"}));
  // Concatenated members are one stream (RFC 1952 §2.2).
  const std::string xml = Urlset(2);
  const SitemapParse two = ParseSitemap(Gzip(xml.substr(0, 100)) + Gzip(xml.substr(100)), {});
  EXPECT_EQ(two.entries.size(), 2u);
  EXPECT_TRUE(two.error.empty()) << two.error;
  // A gzip text sitemap too.
  EXPECT_EQ(ParseSitemap(Gzip("http://a.test/t\n"), {}).kind, SitemapKind::kText);
}

TEST(SitemapParserTest, ACorruptOrTruncatedGzipKeepsWhatCameBefore) {
  const std::string gz = Gzip(Urlset(1000));
  const SitemapParse cut = ParseSitemap(std::string_view(gz).substr(0, gz.size() / 2), {});
  EXPECT_GT(cut.entries.size(), 0u);
  EXPECT_LT(cut.entries.size(), 1000u);
  EXPECT_NE(cut.error.find("gzip"), std::string::npos) << cut.error;
  std::string bad = gz;
  bad[20] = static_cast<char>(bad[20] ^ 0x55);
  bad[21] = static_cast<char>(bad[21] ^ 0x55);
  const SitemapParse corrupt = ParseSitemap(bad, {});
  EXPECT_FALSE(corrupt.error.empty());
}

TEST(SitemapParserTest, RefusesBillionLaughs) {
  std::string xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n";
  for (int i = 1; i <= 9; ++i) {
    xml += " <!ENTITY lol" + std::to_string(i) + " \"";
    for (int j = 0; j < 10; ++j) {
      xml += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
    }
    xml += "\">\n";
  }
  xml += "]>\n<urlset><url><loc>http://a.test/&lol9;</loc></url></urlset>\n";
  const SitemapParse parse = ParseSitemap(xml, {});
  EXPECT_TRUE(parse.refused);
  EXPECT_NE(parse.error.find("DOCTYPE"), std::string::npos) << parse.error;
  EXPECT_TRUE(parse.entries.empty());
  EXPECT_LT(parse.bytes, 4096u);
}

TEST(SitemapParserTest, RefusesExternalEntities) {
  const SitemapParse parse = ParseSitemap(
      "<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n"
      "<urlset><url><loc>http://a.test/&xxe;</loc></url></urlset>",
      {});
  EXPECT_TRUE(parse.refused);
  EXPECT_TRUE(parse.entries.empty());
  // Without a DOCTYPE, an entity reference is undefined: malformed, never resolved.
  const SitemapParse undefined =
      ParseSitemap("<urlset><url><loc>http://a.test/&xxe;</loc></url></urlset>", {});
  EXPECT_TRUE(undefined.entries.empty());
  EXPECT_FALSE(undefined.refused);
  EXPECT_NE(undefined.error.find("malformed XML at line 1"), std::string::npos) << undefined.error;
}

TEST(SitemapParserTest, CutsPast50000Urls) {
  const SitemapParse parse = ParseSitemap(Urlset(200'000), {});
  EXPECT_EQ(parse.entries.size(), kSitemapMaxEntries);
  EXPECT_EQ(parse.cut_entries, 150'000u);
  EXPECT_EQ(parse.entries.back().loc, "http://a.test/p49999");
  EXPECT_TRUE(parse.error.empty()) << parse.error;
  // A text sitemap too.
  std::string text;
  for (int i = 0; i < 60'000; ++i) text += "http://a.test/t" + std::to_string(i) + "\n";
  const SitemapParse lines = ParseSitemap(text, {});
  EXPECT_EQ(lines.entries.size(), kSitemapMaxEntries);
  EXPECT_EQ(lines.cut_entries, 10'000u);
}

TEST(SitemapParserTest, StopsReadingAt50MegabytesOf100) {
  // 100 MB fed in 1 MB pieces, never held whole: the parser stops taking bytes at 50 MB.
  SitemapParser parser({});
  std::string head = "<urlset>";
  ASSERT_TRUE(parser.Feed(head));
  std::string piece;
  for (int i = 0; piece.size() < (1 << 20); ++i) {
    piece += "<url><loc>http://a.test/big/" + std::to_string(i) + "</loc></url>\n";
  }
  uint64_t fed = head.size();
  int refused_at = -1;
  for (int i = 0; fed < 100ull << 20; ++i) {
    fed += piece.size();
    if (!parser.Feed(piece)) {
      refused_at = i;
      break;
    }
  }
  const SitemapParse parse = parser.Finish();
  EXPECT_GE(refused_at, 0);
  EXPECT_TRUE(parse.cut_bytes);
  EXPECT_EQ(parse.bytes, kSitemapMaxBytes);
  EXPECT_EQ(parse.entries.size(), kSitemapMaxEntries);  // the URL limit came first
  EXPECT_GT(parse.cut_entries, 0u);
  EXPECT_TRUE(parse.error.empty()) << parse.error;  // cut, not malformed
}

TEST(SitemapParserTest, BoundsAGzipBomb) {
  // 1 GiB of spaces inside a urlset, about a megabyte gzip'd: inflation stops at 50 MB.
  const std::string bomb = GzipBomb("<urlset><url><loc>http://a.test/x</loc></url>", 1024);
  ASSERT_LT(bomb.size(), 2u << 20);
  const SitemapParse parse = ParseSitemap(bomb, {});
  EXPECT_TRUE(parse.gzip);
  EXPECT_TRUE(parse.cut_bytes);
  EXPECT_EQ(parse.bytes, kSitemapMaxBytes);
  EXPECT_EQ(Locs(parse), (std::vector<std::string>{"http://a.test/x"}));
  EXPECT_TRUE(parse.error.empty()) << parse.error;
}

TEST(SitemapParserTest, RefusesADepthBomb) {
  std::string xml = "<urlset><url><loc>http://a.test/ok</loc></url>";
  for (int i = 0; i < 100'000; ++i) xml += "<a>";
  const SitemapParse parse = ParseSitemap(xml, {});
  EXPECT_TRUE(parse.refused);
  EXPECT_NE(parse.error.find("nested deeper than 16"), std::string::npos) << parse.error;
  EXPECT_EQ(Locs(parse), (std::vector<std::string>{"http://a.test/ok"}));
}

TEST(SitemapParserTest, MalformedXmlKeepsTheUrlsBeforeTheError) {
  std::string xml = Urlset(10);
  xml.insert(xml.find("<url><loc>http://a.test/p7"), "<url><loc>http://a.test/bad</lo></url>\n");
  const SitemapParse parse = ParseSitemap(xml, {});
  EXPECT_EQ(parse.entries.size(), 7u);
  EXPECT_FALSE(parse.refused);
  EXPECT_NE(parse.error.find("malformed XML at line 10"), std::string::npos) << parse.error;
}

TEST(SitemapParserTest, DropsLocsLongerThanTheLimit) {
  SitemapLimits limits;
  limits.max_loc_length = 40;
  const std::string long_url = "http://a.test/" + std::string(100, 'x');
  const SitemapParse parse =
      ParseSitemap("<urlset><url><loc>  http://a.test/short  </loc></url><url><loc>" + long_url +
                       "</loc></url></urlset>",
                   limits);
  EXPECT_EQ(Locs(parse), (std::vector<std::string>{"http://a.test/short"}));
  EXPECT_EQ(parse.long_locs, 1u);
  const SitemapParse text =
      ParseSitemap("http://a.test/1\n" + long_url + "\nhttp://a.test/2\n", limits);
  EXPECT_EQ(Locs(text), (std::vector<std::string>{"http://a.test/1", "http://a.test/2"}));
  EXPECT_EQ(text.long_locs, 1u);
}

TEST(SitemapParserTest, FeedsByteByByte) {
  const std::string xml = Urlset(5);
  SitemapParser parser({});
  for (char c : xml) ASSERT_TRUE(parser.Feed(std::string_view(&c, 1)));
  const SitemapParse parse = parser.Finish();
  EXPECT_EQ(parse.entries.size(), 5u);
  EXPECT_EQ(parse.bytes, xml.size());
}

// The fuzz_sitemap corpus (seeds and what the fuzzer found) keeps the fuzzer's invariants.
TEST(SitemapParserTest, TheFuzzCorpusKeepsTheInvariants) {
  const auto corpus = testing::FuzzCorpus("sitemap");
  EXPECT_GE(corpus.size(), 6u);
  for (const auto& [name, input] : corpus) {
    EXPECT_EQ(testing::SitemapInvariantViolation(input), "") << name;
  }
}

}  // namespace
}  // namespace urlsieve
