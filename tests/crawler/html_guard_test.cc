#include "crawler/page/html_guard.h"

#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

#include "crawler/page/link_extractor.h"

namespace urlsieve {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

bool Changed(std::string_view html, const HtmlGuardLimits& limits, std::string* out) {
  return GuardHtml(html, limits, out).changed;
}

TEST(HtmlGuardTest, OrdinaryPagesAreLeftAlone) {
  std::string out = "untouched";
  const std::string page =
      "<!DOCTYPE html><html><head><title>t</title><script>if (a < b) { x = '<div>'; }</script>"
      "</head><body><div class=a><p>para<p>para<ul><li>1<li>2</ul><table><tr><td>x<td>y</table>"
      "<a href=/x>x</a><img src=i.png><br></div><!-- <div><div> --></body></html>";
  EXPECT_FALSE(Changed(page, {}, &out));
  EXPECT_EQ(out, "untouched");
}

TEST(HtmlGuardTest, FlattensPastMaxDepthKeepingLinkElements) {
  HtmlGuardLimits limits;
  limits.max_depth = 3;
  std::string out;
  ASSERT_TRUE(Changed("<div><div><div><div><a href=/x>x</a><span>s</span>", limits, &out));
  EXPECT_EQ(out, "<div><div><div>     <a href=/x>x</a>      s</span>");
}

TEST(HtmlGuardTest, ClosedElementsDoNotAccumulate) {
  HtmlGuardLimits limits;
  limits.max_depth = 3;
  std::string out;
  EXPECT_FALSE(Changed(Repeat("<div><span>x</span></div>", 1000), limits, &out));
  EXPECT_FALSE(Changed(Repeat("<p>x<li>y<br><img src=a>", 1000), limits, &out));
}

TEST(HtmlGuardTest, StrayAndMisnestedEndTagsDoNotHideDepth) {
  HtmlGuardLimits limits;
  limits.max_depth = 10;
  std::string out;
  // "</span>" closes nothing in a browser, and "</b>" after "<div>" runs the adoption agency
  // algorithm, which leaves the stack as deep as before: neither may lower the estimate.
  EXPECT_TRUE(Changed(Repeat("<div></span>", 100), limits, &out));
  EXPECT_TRUE(Changed(Repeat("<b><div></b>", 100), limits, &out));
}

TEST(HtmlGuardTest, CapsAttributesButKeepsTheOnesLinksNeed) {
  HtmlGuardLimits limits;
  limits.max_attributes = 2;
  std::string out;
  ASSERT_TRUE(Changed("<a x=1 y='2' z=\"3>\" href=/h rel=next href=/dup w>t</a>", limits, &out));
  EXPECT_EQ(out, "<a x=1 y='2'        href=/h rel=next            >t</a>");
}

TEST(HtmlGuardTest, RawTextIsNotMarkup) {
  HtmlGuardLimits limits;
  limits.max_depth = 2;
  std::string out;
  EXPECT_FALSE(Changed("<script>" + Repeat("<div>", 100) + "</SCRIPT><div>x</div>", limits, &out));
  EXPECT_FALSE(Changed("<plaintext>" + Repeat("<div>", 100), limits, &out));
  EXPECT_FALSE(Changed("<!--" + Repeat("<div>", 100) + "-->", limits, &out));
}

TEST(HtmlGuardTest, ForeignContentNests) {
  HtmlGuardLimits limits;
  limits.max_depth = 3;
  std::string out;
  // In <svg> every element nests (even <link>); written self-closing it does not.
  EXPECT_TRUE(Changed("<svg>" + Repeat("<link>", 10), limits, &out));
  EXPECT_FALSE(
      Changed("<svg>" + Repeat("<link/>", 10) + "</svg>" + Repeat("<link>", 10), limits, &out));
  // <a> nests there too: kept up to twice the limit, then removed and counted.
  HtmlGuardResult r = GuardHtml("<svg>" + Repeat("<a href=/x>", 10), limits, &out);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.removed_links, 10u - 5u);
}

// Trees that would be millions of elements deep: gumbo frees its tree recursively, so without the
// guard these overflow the stack.
TEST(HtmlGuardTest, MillionDeepTreesDoNotOverflowTheStack) {
  UrlCanonicalizer canonicalizer;
  LinkExtractor extractor(&canonicalizer, {});
  for (const std::string& unit : {std::string("<svg>"), std::string("<table><tr><td>"),
                                  std::string("<template>"), std::string("<rt>")}) {
    PageLinks page = extractor.Extract(
        Repeat(unit, (1 << 20) / static_cast<int>(unit.size())) + "<a href=/end>e</a>",
        "http://example.com/");
    EXPECT_TRUE(page.guarded) << unit;
  }
  PageLinks page =
      extractor.Extract("<svg>" + Repeat("<a href=/x>", 200000), "http://example.com/");
  EXPECT_GT(page.dropped_count(LinkDropReason::kTooDeep), 190000u);
  EXPECT_GT(page.links.size(), 0u);
}

TEST(HtmlGuardTest, TruncatedInputIsSafe) {
  const std::string doc = "<div a='1' b=\"2\"><script>x</scr<!-- c --><a href=/x>";
  std::string out;
  for (size_t n = 0; n <= doc.size(); ++n) GuardHtml(doc.substr(0, n), {}, &out);
}

// The inputs that made gumbo quadratic (seconds for a few hundred KB) now parse, with every link.
TEST(HtmlGuardTest, PathologicalPagesKeepTheirLinks) {
  UrlCanonicalizer canonicalizer;
  LinkExtractor extractor(&canonicalizer, {});
  const std::string link = "<a href=/l>l</a>";
  for (const std::string& unit :
       {std::string("<div>"), std::string("<ul>"), std::string("<div></span>"),
        std::string("<b><div></b>"), std::string("<table><b>x"), std::string("<font>")}) {
    PageLinks page = extractor.Extract(Repeat(unit, 20000) + link, "http://example.com/");
    EXPECT_TRUE(page.guarded) << unit;
    EXPECT_EQ(page.links.size(), 1u) << unit;
  }
  std::string distinct;
  for (int i = 0; i < 20000; ++i) distinct += "<b id=" + std::to_string(i) + ">x";
  EXPECT_EQ(extractor.Extract(distinct + link, "http://example.com/").links.size(), 1u);
  std::string attrs = "<a ";
  // 'x' + s, not "x" + s: GCC 12 at -O3 warns -Wrestrict wrongly on a 1-char literal + string&&.
  for (int i = 0; i < 40000; ++i) attrs += 'x' + std::to_string(i) + "=1 ";
  PageLinks page = extractor.Extract(attrs + "href=/ok>ok</a>", "http://example.com/");
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_EQ(page.links[0].url, "http://example.com/ok");
}

// Random markup soup from hostile fragments, with limits so tight that most of it is flattened: the
// guard only ever turns bytes into spaces and keeps the length, and nothing crashes (run under
// ASan).
TEST(HtmlGuardTest, RandomSoupOnlyBlanks) {
  static const std::string kFragments[] = {"<div>",
                                           "</div>",
                                           "<span class=x>",
                                           "</span>",
                                           "<b id=1>",
                                           "</b>",
                                           "<i>",
                                           "<table>",
                                           "<tr><td>",
                                           "<p>",
                                           "<li>",
                                           "<a href=/a>",
                                           "<a href='/q?x=1&amp;y=2' rel=nofollow>",
                                           "</a>",
                                           "<area href=/area>",
                                           "<iframe src=/if>",
                                           "</iframe>",
                                           "<link rel=next href=/n>",
                                           "<base href=/base/>",
                                           "<meta http-equiv=refresh content='0;url=/r'>",
                                           "<script>",
                                           "</script>",
                                           "<style>",
                                           "<!--",
                                           "-->",
                                           "<",
                                           ">",
                                           "'",
                                           "\"",
                                           "=",
                                           "text ",
                                           "\xff\xfe",
                                           std::string("\0", 1),
                                           "<svg><a href=/s>",
                                           "<template>",
                                           "<select><option>",
                                           "<textarea>",
                                           "</textarea>",
                                           "<x y=z ",
                                           "<font color=red>",
                                           "<nobr>",
                                           "</p>",
                                           "<plaintext>",
                                           "<frame src=/fr>",
                                           "<a a a a a a href=/many>"};
  UrlCanonicalizer canonicalizer;
  LinkExtractor::Options tight;
  tight.guard.max_depth = 4;
  tight.guard.max_attributes = 2;
  LinkExtractor extractor(&canonicalizer, tight);
  uint64_t x = 88172645463325252ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int round = 0; round < 500; ++round) {
    std::string html;
    const int parts = static_cast<int>(next() % 200);
    for (int i = 0; i < parts; ++i) html += kFragments[next() % std::size(kFragments)];
    std::string out;
    if (GuardHtml(html, tight.guard, &out).changed) {
      ASSERT_EQ(out.size(), html.size());
      for (size_t i = 0; i < html.size(); ++i) {
        if (out[i] != html[i]) {
          ASSERT_EQ(out[i], ' ') << html;
        }
      }
    }
    extractor.Extract(html, "http://example.com/p");
  }
}

// Well-formed content buried under thousands of levels of wrappers (the shape of generated
// "infinite nesting" pages): every link is still found, with the same counts of drop reasons.
TEST(HtmlGuardTest, DeeplyWrappedContentKeepsEveryLink) {
  static const char* kWrappers[] = {"div",  "span", "b",          "i",      "section", "ul",
                                    "font", "em",   "blockquote", "center", "small"};
  UrlCanonicalizer canonicalizer;
  LinkExtractor::Options unguarded;
  unguarded.guard.max_depth = 1 << 30;
  LinkExtractor::Options guarded_options;
  guarded_options.guard.max_depth = 16;
  LinkExtractor reference(&canonicalizer, unguarded);
  LinkExtractor guarded(&canonicalizer, guarded_options);
  uint64_t x = 2463534242ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int round = 0; round < 40; ++round) {
    std::string html = "<html><head><base href='http://b.example/r/'></head><body>";
    std::vector<const char*> open;
    int links = 0;
    for (int step = 0; step < 400; ++step) {
      uint64_t r = next() % 10;
      if (r < 5) {
        open.push_back(kWrappers[next() % std::size(kWrappers)]);
        html += std::string("<") + open.back() + " class=w>";
      } else if (r < 7 && !open.empty()) {
        html += std::string("</") + open.back() + ">";
        open.pop_back();
      } else if (r < 8) {
        html += "<a href='/l" + std::to_string(links++) + "'>t</a>";
      } else if (r < 9) {
        html += "<iframe src='f" + std::to_string(links++) + "'></iframe><a href='mailto:m'>m</a>";
      } else {
        html += "<p>text <a rel=nofollow href='/nf'>n</a>";
      }
    }
    PageLinks a = reference.Extract(html, "http://example.com/p");
    PageLinks b = guarded.Extract(html, "http://example.com/p");
    ASSERT_TRUE(b.guarded);
    std::set<std::string> urls_a, urls_b;
    for (const ExtractedLink& l : a.links) urls_a.insert(l.url);
    for (const ExtractedLink& l : b.links) urls_b.insert(l.url);
    ASSERT_EQ(urls_a, urls_b) << html;
    ASSERT_EQ(urls_a.size(), static_cast<size_t>(links));
    ASSERT_EQ(a.base, b.base);
  }
}

}  // namespace
}  // namespace urlsieve
