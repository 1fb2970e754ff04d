// The visible text LinkExtractor collects with Options::collect_text
// (docs/features/content-seen.md, "Fingerprints"): what is shown and what is not, how whitespace is
// joined, and that a hostile page still yields its text.
#include <gtest/gtest.h>

#include <string>

#include "crawler/page/link_extractor.h"

namespace urlsieve {
namespace {

class VisibleTextTest : public ::testing::Test {
 protected:
  std::string Text(const std::string& html) { return Extract(html).text; }
  PageLinks Extract(const std::string& html) {
    LinkExtractor::Options options;
    options.collect_text = true;
    LinkExtractor extractor(&canonicalizer_, options);
    return extractor.Extract(html, "http://example.com/");
  }

  UrlCanonicalizer canonicalizer_;
};

TEST_F(VisibleTextTest, OffByDefault) {
  LinkExtractor extractor(&canonicalizer_, {});
  EXPECT_EQ(extractor.Extract("<p>hello <a href=/x>world</a></p>", "http://example.com/").text, "");
}

TEST_F(VisibleTextTest, TitleAndBodyInDocumentOrder) {
  EXPECT_EQ(Text("<html><head><title>The title</title></head>"
                 "<body><h1>Head</h1><p>First <b>bold</b> para.</p><p>Second</p></body></html>"),
            "The title Head First bold para. Second");
}

TEST_F(VisibleTextTest, ScriptStyleTemplateAndFallbackContentAreNotText) {
  EXPECT_EQ(Text("<head><script>var hidden = 1;</script><style>p { color: red }</style>"
                 "</head>"
                 "<body>shown<script>document.write('no')</script>"
                 "<template><p>inert <b>content</b></p></template>"
                 "<noscript><p>no <i>script</i></p></noscript>"
                 "<iframe src=/f>iframe fallback</iframe>"
                 "<svg><script>svg code</script><text>drawn</text></svg> end</body>"),
            "shown drawn end");
}

// (A <noscript> in <head> is another matter: gumbo parses as a browser without scripting does, and
// text there closes the head and becomes body text.)
TEST_F(VisibleTextTest, LinksInsideHiddenElementsAreStillExtracted) {
  PageLinks page = Extract(
      "<p>text</p><noscript><a href=/fallback>fallback link</a></noscript>"
      "<template><a href=/templated>t</a></template>");
  EXPECT_EQ(page.text, "text");
  ASSERT_EQ(page.links.size(), 2u);
  EXPECT_EQ(page.links[0].url, "http://example.com/fallback");
  EXPECT_EQ(page.links[1].url, "http://example.com/templated");
}

TEST_F(VisibleTextTest, EntitiesAreDecoded) {
  EXPECT_EQ(Text("<p>Fish &amp; chips &lt;3 caf&eacute; &#x263A; &quot;q&quot;</p>"),
            "Fish & chips <3 caf\xC3\xA9 \xE2\x98\xBA \"q\"");
}

TEST_F(VisibleTextTest, WhitespaceCollapsesToOneSpace) {
  EXPECT_EQ(Text("<body>\n  <p>  a\t\tb \r\n c  </p>\n\n<div>d&nbsp;&nbsp;e</div>   </body>"),
            "a b c d e");
  // Text nodes are words apart, even with no whitespace between the elements.
  EXPECT_EQ(Text("<ul><li>one</li><li>two</li></ul><table><tr><td>x</td><td>y</td></table>"),
            "one two x y");
  EXPECT_EQ(Text("<p>a<!-- comment -->b</p>"), "a b");
}

TEST_F(VisibleTextTest, NestedElementsInOrder) {
  std::string html;
  for (int i = 0; i < 50; ++i) html += "<div>" + std::to_string(i) + " ";
  for (int i = 0; i < 50; ++i) html += "</div>" + std::to_string(100 + i) + " ";
  std::string expected;
  for (int i = 0; i < 50; ++i) expected += std::to_string(i) + " ";
  for (int i = 0; i < 50; ++i) expected += std::to_string(100 + i) + (i < 49 ? " " : "");
  EXPECT_EQ(Text(html), expected);
}

TEST_F(VisibleTextTest, HostilePageStillYieldsItsText) {
  // Nested far past HtmlGuardLimits::max_depth: the guard flattens it before the parse.
  std::string html = "<p>start</p>";
  for (int i = 0; i < 100'000; ++i) html += "<div>";
  html += "deep text";
  for (int i = 0; i < 100'000; ++i) html += "</div>";
  html += "<p>after</p>";
  PageLinks page = Extract(html);
  EXPECT_TRUE(page.guarded);
  EXPECT_EQ(page.text, "start deep text after");

  // Very many attributes on one tag.
  std::string attrs = "<p ";
  for (int i = 0; i < 10'000; ++i)
    attrs += 'a' + std::to_string(i) + "=1 ";  // 'a' + s: GCC 12 -Wrestrict
  attrs += ">attributed</p>";
  PageLinks many = Extract(attrs);
  EXPECT_TRUE(many.guarded);
  EXPECT_EQ(many.text, "attributed");
}

TEST_F(VisibleTextTest, EmptyPages) {
  EXPECT_EQ(Text(""), "");
  EXPECT_EQ(Text("<html><head><title></title></head><body>  \n </body></html>"), "");
  EXPECT_EQ(Text("<body><script>only code</script><!-- and a comment --></body>"), "");
}

}  // namespace
}  // namespace urlsieve
