#include "crawler/page/link_extractor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/encoding/text_encoding.h"
#include "tests/crawler/link_invariants.h"
#include "tests/support/fuzz_corpus.h"

namespace urlsieve {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class LinkExtractorTest : public ::testing::Test {
 protected:
  PageLinks Extract(const std::string& html, const std::string& url = "http://example.com/dir/page",
                    LinkExtractor::Options options = {}) {
    LinkExtractor extractor(&canonicalizer_, options);
    return extractor.Extract(html, url);
  }
  static std::vector<std::string> Urls(const PageLinks& page) {
    std::vector<std::string> out;
    for (const ExtractedLink& l : page.links) out.push_back(l.url);
    return out;
  }

  UrlCanonicalizer canonicalizer_;
};

TEST_F(LinkExtractorTest, AnchorsAndAreasResolvedAgainstPageUrl) {
  PageLinks page = Extract(
      "<a href='a.html'>x</a><map><area href='/b'></map><a href='../c?q=1#frag'>y</a>"
      "<a href='//other.org/d'>z</a><a href='https://secure.example.com/'>s</a>");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/a.html", "http://example.com/b",
                                      "http://example.com/c?q=1", "http://other.org/d",
                                      "https://secure.example.com/"));
  EXPECT_EQ(page.links[0].source, LinkSource::kA);
  EXPECT_EQ(page.links[1].source, LinkSource::kArea);
  EXPECT_EQ(page.base, "http://example.com/dir/page");
}

// The page's encoding reaches Resolve: on a GBK page the queries of links (and of <base>) are
// sent in GBK, the paths in UTF-8 (docs/features/canonicalization.md, "Queries in the document's
// encoding").
TEST_F(LinkExtractorTest, QueriesInThePageEncoding) {
  const std::string html =
      "<base href='/b/?q=中'><a href='/搜索/页面.html?q=中文'>a</a><a href='x?q=é‽'>b</a>";
  LinkExtractor extractor(&canonicalizer_, {});
  const PageLinks gbk = extractor.Extract(html, "http://example.com/", EncodingForLabel("gbk"));
  EXPECT_EQ(gbk.base, "http://example.com/b/?q=%D6%D0");
  EXPECT_THAT(
      Urls(gbk),
      ElementsAre("http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html?q=%D6%D0%CE%C4",
                  "http://example.com/b/x?q=%A8%A6%26%238253%3B"));
  const PageLinks utf8 = extractor.Extract(html, "http://example.com/");
  EXPECT_EQ(utf8.base, "http://example.com/b/?q=%E4%B8%AD");
  EXPECT_THAT(
      Urls(utf8),
      ElementsAre(
          "http://example.com/%E6%90%9C%E7%B4%A2/%E9%A1%B5%E9%9D%A2.html?q=%E4%B8%AD%E6%96%87",
          "http://example.com/b/x?q=%C3%A9%E2%80%BD"));
}

TEST_F(LinkExtractorTest, FramesAndIframes) {
  PageLinks page = Extract("<frameset><frame src='f1.html'><frame src='/f2'></frameset>");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/f1.html", "http://example.com/f2"));
  EXPECT_EQ(page.links[0].source, LinkSource::kFrame);
  page = Extract("<body><iframe src='embed'></iframe></body>");
  ASSERT_THAT(Urls(page), ElementsAre("http://example.com/dir/embed"));
  EXPECT_EQ(page.links[0].source, LinkSource::kIframe);
}

TEST_F(LinkExtractorTest, LinkRelTokensAreCaseInsensitiveAndSpaceSeparated) {
  PageLinks page = Extract(
      "<head><link rel='stylesheet' href='s.css'><link rel='ALTERNATE' hreflang=fr href='/fr'>"
      "<link rel=' next\tfoo ' href='p2'><link rel='Prev' href='p0'><link rel='icon' href='i'>"
      "<link rel='alternate stylesheet' href='alt.css'><link rel='nextpage' href='no'>"
      "<link rel='previous' href='p-1'></head>");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/fr", "http://example.com/dir/p2",
                                      "http://example.com/dir/p0", "http://example.com/dir/p-1"));
  EXPECT_EQ(page.links[0].rel, kRelAlternate);
  EXPECT_EQ(page.links[1].rel, kRelNext);
  EXPECT_EQ(page.links[2].rel, kRelPrev);
  for (const ExtractedLink& l : page.links) EXPECT_EQ(l.source, LinkSource::kLink);
}

TEST_F(LinkExtractorTest, FirstBaseHrefWins) {
  PageLinks page = Extract(
      "<head><base target=_blank><base href='http://cdn.example.net/root/'>"
      "<base href='http://ignored.example/'></head><a href='x'>x</a><a href='/y'>y</a>");
  EXPECT_EQ(page.base, "http://cdn.example.net/root/");
  EXPECT_THAT(Urls(page), ElementsAre("http://cdn.example.net/root/x", "http://cdn.example.net/y"));
}

TEST_F(LinkExtractorTest, RelativeBaseIsResolvedAgainstPageUrl) {
  // RFC 3986 §5.1.1: the embedded base is itself resolved against the page's URL.
  PageLinks page =
      Extract("<base href='../other/'><a href='z'>z</a>", "http://example.com/a/b/page.html");
  EXPECT_EQ(page.base, "http://example.com/a/other/");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/a/other/z"));
}

TEST_F(LinkExtractorTest, BaseAfterLinksStillApplies) {
  // The document base applies to every URL of the document, wherever the <base> element is.
  PageLinks page = Extract("<a href='x'>x</a><base href='http://b.example/q/'>");
  EXPECT_THAT(Urls(page), ElementsAre("http://b.example/q/x"));
}

TEST_F(LinkExtractorTest, UnusableBaseFallsBackToPageUrl) {
  PageLinks page = Extract("<base href='javascript:void(0)'><a href='x'>x</a>");
  EXPECT_EQ(page.base, "http://example.com/dir/page");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/x"));
  page = Extract("<base href='mailto:a@b'><a href='x'>x</a>");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/x"));
}

TEST_F(LinkExtractorTest, MetaRefresh) {
  PageLinks page = Extract(
      "<meta http-equiv='Refresh' content='5; url=/next'>"
      "<meta http-equiv=refresh content=\"0;URL='quoted.html'\">"
      "<meta http-equiv=refresh content='3'>");
  EXPECT_THAT(Urls(page),
              ElementsAre("http://example.com/next", "http://example.com/dir/quoted.html"));
  EXPECT_EQ(page.links[0].source, LinkSource::kMetaRefresh);
}

TEST(ParseMetaRefreshTest, TolerantForms) {
  EXPECT_EQ(ParseMetaRefresh("5; url=http://a/"), "http://a/");
  EXPECT_EQ(ParseMetaRefresh("5;URL=http://a/"), "http://a/");
  EXPECT_EQ(ParseMetaRefresh("  0 ,  url = 'x y'  "), "x y");
  EXPECT_EQ(ParseMetaRefresh("0; url=\"q\" trailing"), "q");
  EXPECT_EQ(ParseMetaRefresh("1.5; /path"), "/path");
  EXPECT_EQ(ParseMetaRefresh("url=/nodelay"), "/nodelay");
  EXPECT_EQ(ParseMetaRefresh("0; url='unterminated"), "unterminated");
  EXPECT_EQ(ParseMetaRefresh("0; urlish"), "urlish");
  EXPECT_EQ(ParseMetaRefresh("10"), std::nullopt);
  EXPECT_EQ(ParseMetaRefresh(""), std::nullopt);
  EXPECT_EQ(ParseMetaRefresh("0; url="), std::nullopt);
  EXPECT_EQ(ParseMetaRefresh("0; url=''"), std::nullopt);
}

TEST_F(LinkExtractorTest, NonHttpSchemesAreCountedAndDropped) {
  PageLinks page = Extract(
      "<a href='javascript:go()'>1</a><a href=' JavaScript:go()'>2</a>"
      "<a href='java&#10;script:alert(1)'>3</a><a href='mailto:a@example.com'>4</a>"
      "<a href='data:text/html,hi'>5</a><a href='tel:+123'>6</a><a href='ftp://f.example/'>7</a>"
      "<a href='ok'>8</a>");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/ok"));
  EXPECT_EQ(page.dropped_count(LinkDropReason::kJavascript), 3u);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kMailto), 1u);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kData), 1u);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kTel), 1u);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kOtherScheme), 1u);
  auto counts = page.DroppedCounts();
  EXPECT_EQ(counts.size(), 5u);
  EXPECT_EQ(counts[0].first, "link-javascript");
  EXPECT_EQ(counts[0].second, 3u);
}

TEST_F(LinkExtractorTest, SameDocumentReferencesAreCounted) {
  PageLinks page = Extract("<a href=''>1</a><a href='#top'>2</a><a href='  #x '>3</a><a>4</a>");
  EXPECT_THAT(page.links, IsEmpty());
  EXPECT_EQ(page.dropped_count(LinkDropReason::kSameDocument), 3u);  // <a> without href is no link
}

TEST_F(LinkExtractorTest, RelNofollowDroppedWhenObeyed) {
  const std::string html =
      "<a rel='NoFollow' href='/hidden'>h</a><a rel='external nofollow' href='/h2'>h</a>"
      "<a href='/shown'>s</a>";
  PageLinks page = Extract(html);
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/shown"));
  EXPECT_FALSE(page.links[0].nofollow);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kNofollow), 2u);

  LinkExtractor::Options ignore;
  ignore.obey_nofollow = false;
  page = Extract(html, "http://example.com/dir/page", ignore);
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/hidden", "http://example.com/h2",
                                      "http://example.com/shown"));
  EXPECT_TRUE(page.links[0].nofollow);
  EXPECT_TRUE(page.links[0].rel & kRelNofollow);
  EXPECT_FALSE(page.links[2].nofollow);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kNofollow), 0u);
}

TEST_F(LinkExtractorTest, MetaRobotsNofollowAppliesToWholePage) {
  PageLinks page = Extract("<meta name='ROBOTS' content='index, NoFollow'><a href='/a'>a</a>");
  EXPECT_TRUE(page.nofollow);
  EXPECT_FALSE(page.noindex);
  EXPECT_THAT(page.links, IsEmpty());
  EXPECT_EQ(page.dropped_count(LinkDropReason::kNofollow), 1u);

  LinkExtractor::Options ignore;
  ignore.obey_nofollow = false;
  page = Extract("<meta name='robots' content='nofollow'><a href='/a'>a</a>", "http://example.com/",
                 ignore);
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_TRUE(page.links[0].nofollow);
}

TEST_F(LinkExtractorTest, MetaRobotsNoneAndNoindex) {
  PageLinks page = Extract("<meta name=robots content=none><a href='/a'>a</a>");
  EXPECT_TRUE(page.noindex);
  EXPECT_TRUE(page.nofollow);
  EXPECT_THAT(page.links, IsEmpty());
  page = Extract("<meta name=robots content='noindex'><a href='/a'>a</a>");
  EXPECT_TRUE(page.noindex);
  EXPECT_FALSE(page.nofollow);
  EXPECT_EQ(page.links.size(), 1u);
  page = Extract("<meta name=description content='nofollow noindex'><a href='/a'>a</a>");
  EXPECT_FALSE(page.noindex);
  EXPECT_FALSE(page.nofollow);
}

TEST_F(LinkExtractorTest, CanonicalIsRecordedNotFollowed) {
  PageLinks page = Extract(
      "<link rel='canonical' href='/canon?id=1'><link rel=canonical href='/second'>"
      "<a href='x'>x</a>");
  EXPECT_EQ(page.canonical, "http://example.com/canon?id=1");
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/dir/x"));
  EXPECT_FALSE(Extract("<p>no canonical</p>").canonical.has_value());
}

TEST_F(LinkExtractorTest, EntitiesAndWhitespaceInAttributes) {
  PageLinks page = Extract("<a href='  /p?a=1&amp;b=2\n'>x</a><a href='/q?x=1&y=2'>y</a>");
  EXPECT_THAT(Urls(page),
              ElementsAre("http://example.com/p?a=1&b=2", "http://example.com/q?x=1&y=2"));
}

TEST_F(LinkExtractorTest, LinksInsideTemplatesAndNoscriptAreFound) {
  PageLinks page = Extract(
      "<template><a href='/t'>t</a></template><noscript><a href='/n'>n</a></noscript>"
      "<svg><a href='/svg'>s</a></svg>");
  EXPECT_THAT(Urls(page), ::testing::Contains("http://example.com/t"));
}

TEST_F(LinkExtractorTest, TooManyAndTooLongAreCounted) {
  LinkExtractor::Options options;
  options.max_links = 2;
  PageLinks page = Extract("<a href=/1>1</a><a href=/2>2</a><a href=/3>3</a><a href=/" +
                               std::string(3000, 'x') + ">4</a>",
                           "http://example.com/", options);
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/1", "http://example.com/2"));
  EXPECT_EQ(page.dropped_count(LinkDropReason::kTooMany), 1u);
  EXPECT_EQ(page.dropped_count(LinkDropReason::kTooLong), 1u);
}

TEST_F(LinkExtractorTest, UnresolvableIsCounted) {
  // Each part is short enough, the resolved URL is not.
  const std::string page_url = "http://example.com/" + std::string(2000, 'p') + "/";
  PageLinks page = Extract("<a href='" + std::string(100, 'r') + "'>r</a>", page_url);
  EXPECT_THAT(page.links, IsEmpty());
  EXPECT_EQ(page.dropped_count(LinkDropReason::kUnresolvable), 1u);
}

TEST_F(LinkExtractorTest, EveryReferenceIsKeptOrCounted) {
  // Nothing silently lost: kept + dropped == references seen.
  PageLinks page = Extract(
      "<a href=/a>a</a><a href='#'>b</a><a href='mailto:x'>c</a><a rel=nofollow href=/d>d</a>"
      "<iframe src=/e></iframe><link rel=next href=/f><meta http-equiv=refresh content='0;/g'>");
  uint64_t dropped = 0;
  for (auto [name, n] : page.DroppedCounts()) dropped += n;
  EXPECT_EQ(page.links.size() + dropped, 7u);
}

// Hostile HTML: none of these may crash, hang or leak (run under ASan).

TEST_F(LinkExtractorTest, HostileDeepNesting) {
  std::string html;
  for (int i = 0; i < 20000; ++i) html += "<div>";
  html += "<a href='/deep'>d</a>";
  PageLinks page = Extract(html);
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/deep"));
  std::string spans;
  for (int i = 0; i < 20000; ++i) spans += "<span><i><b>";
  spans += "<a href='/x'>x</a>";
  EXPECT_EQ(Extract(spans).links.size(), 1u);
}

TEST_F(LinkExtractorTest, HostileHugeAttributeAndManyAttributes) {
  std::string html = "<a href='/" + std::string(2 << 20, 'a') + "' title='" +
                     std::string(1 << 20, 't') + "'>x</a><a ";
  // 'x' + s, not "x" + s: GCC 12 at -O3 warns -Wrestrict wrongly on a 1-char literal + string&&.
  for (int i = 0; i < 10000; ++i) html += 'x' + std::to_string(i) + "=1 ";
  html += "href=/ok>ok</a>";
  PageLinks page = Extract(html);
  EXPECT_THAT(Urls(page), ElementsAre("http://example.com/ok"));
  EXPECT_EQ(page.dropped_count(LinkDropReason::kTooLong), 1u);
}

TEST_F(LinkExtractorTest, HostileInvalidUtf8AndNulBytes) {
  std::string html = "<a href='/p\xff\xfe\xc3'>x</a>";
  html += std::string("<a href='/n\0ul'>y</a>", 21);
  html += "\xed\xa0\x80<a href='/after'>z</a>";
  PageLinks page = Extract(html);
  ASSERT_EQ(page.links.size(), 3u);
  EXPECT_EQ(page.links[2].url, "http://example.com/after");
  for (const ExtractedLink& l : page.links) {
    EXPECT_EQ(l.url.find('\0'), std::string::npos);
  }
}

TEST_F(LinkExtractorTest, HostileTruncatedDocuments) {
  const std::string full =
      "<html><head><base href='http://b.example/'><meta http-equiv=refresh content='0;url=/r'>"
      "</head><body><a href=\"/one\" rel=\"nofollow\">one</a><a href='/two'>two</a></body></html>";
  for (size_t n = 0; n <= full.size(); ++n) {
    PageLinks page = Extract(full.substr(0, n));
    EXPECT_LE(page.links.size(), 3u) << n;
  }
  EXPECT_EQ(Extract("").links.size(), 0u);
  EXPECT_EQ(Extract("<a href='/x").links.size(), 0u);  // an unterminated tag is not an element
  EXPECT_EQ(Extract("<a href=/x>").links.size(), 1u);
}

TEST_F(LinkExtractorTest, HostileBinaryGarbage) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245 + 12345;
    garbage.push_back(static_cast<char>(x >> 16));
    if (i % 997 == 0) garbage += "<a href=/g>";
  }
  PageLinks page = Extract(garbage);
  EXPECT_GT(page.links.size(), 0u);
}

TEST_F(LinkExtractorTest, ManyUnclosedFormattingElementsFinish) {
  // The adoption agency algorithm is where HTML5 parsers go quadratic; it must still finish.
  std::string html;
  for (int i = 0; i < 5000; ++i) html += "<a href=/" + std::to_string(i) + "><b><p>";
  PageLinks page = Extract(html);
  EXPECT_GE(page.links.size(), 5000u);
}

// The fuzz_links corpus (seeds and what the fuzzer found) keeps the fuzzer's invariants.
TEST(LinkExtractorCorpusTest, FuzzCorpusKeepsInvariants) {
  const auto corpus = testing::FuzzCorpus("links");
  EXPECT_GE(corpus.size(), 2u);
  for (const auto& [name, input] : corpus) {
    EXPECT_EQ(testing::LinkInvariantViolation(input), "") << name;
  }
}

}  // namespace
}  // namespace urlsieve
