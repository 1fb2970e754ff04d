#include "crawler/html_guard.h"

#include <gtest/gtest.h>

#include <string>

#include "crawler/link_extractor.h"

namespace urlsieve {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(HtmlGuardTest, OrdinaryPagesAreLeftAlone) {
  std::string out = "untouched";
  const std::string page =
      "<!DOCTYPE html><html><head><title>t</title><script>if (a < b) { x = '<div>'; }</script>"
      "</head><body><div class=a><p>para<p>para<ul><li>1<li>2</ul><table><tr><td>x<td>y</table>"
      "<a href=/x>x</a><img src=i.png><br></div><!-- <div><div> --></body></html>";
  EXPECT_FALSE(GuardHtml(page, {}, &out));
  EXPECT_EQ(out, "untouched");
}

TEST(HtmlGuardTest, FlattensPastMaxDepthKeepingLinkElements) {
  HtmlGuardLimits limits;
  limits.max_depth = 3;
  std::string out;
  ASSERT_TRUE(GuardHtml("<div><div><div><div><a href=/x>x</a><span>s</span>", limits, &out));
  EXPECT_EQ(out, "<div><div><div>     <a href=/x>x</a>      s</span>");
}

TEST(HtmlGuardTest, ClosedElementsDoNotAccumulate) {
  HtmlGuardLimits limits;
  limits.max_depth = 3;
  std::string out;
  EXPECT_FALSE(GuardHtml(Repeat("<div><span>x</span></div>", 1000), limits, &out));
  EXPECT_FALSE(GuardHtml(Repeat("<p>x<li>y<br><img src=a>", 1000), limits, &out));
}

TEST(HtmlGuardTest, StrayAndMisnestedEndTagsDoNotHideDepth) {
  HtmlGuardLimits limits;
  limits.max_depth = 10;
  std::string out;
  // "</span>" closes nothing in a browser, and "</b>" after "<div>" runs the adoption agency
  // algorithm, which leaves the stack as deep as before: neither may lower the estimate.
  EXPECT_TRUE(GuardHtml(Repeat("<div></span>", 100), limits, &out));
  EXPECT_TRUE(GuardHtml(Repeat("<b><div></b>", 100), limits, &out));
}

TEST(HtmlGuardTest, CapsAttributesButKeepsTheOnesLinksNeed) {
  HtmlGuardLimits limits;
  limits.max_attributes = 2;
  std::string out;
  ASSERT_TRUE(GuardHtml("<a x=1 y='2' z=\"3>\" href=/h rel=next href=/dup w>t</a>", limits, &out));
  EXPECT_EQ(out, "<a x=1 y='2'        href=/h rel=next            >t</a>");
}

TEST(HtmlGuardTest, RawTextIsNotMarkup) {
  HtmlGuardLimits limits;
  limits.max_depth = 2;
  std::string out;
  EXPECT_FALSE(
      GuardHtml("<script>" + Repeat("<div>", 100) + "</SCRIPT><div>x</div>", limits, &out));
  EXPECT_FALSE(GuardHtml("<plaintext>" + Repeat("<div>", 100), limits, &out));
  EXPECT_FALSE(GuardHtml("<!--" + Repeat("<div>", 100) + "-->", limits, &out));
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
  for (int i = 0; i < 40000; ++i) attrs += "x" + std::to_string(i) + "=1 ";
  PageLinks page = extractor.Extract(attrs + "href=/ok>ok</a>", "http://example.com/");
  ASSERT_EQ(page.links.size(), 1u);
  EXPECT_EQ(page.links[0].url, "http://example.com/ok");
}

}  // namespace
}  // namespace urlsieve
