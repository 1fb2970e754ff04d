#include "url/url_chars.h"

#include <gtest/gtest.h>

#include "url/idna_host.h"
#include "tests/url/uri_validator.h"

namespace urlsieve {
namespace {

using url_chars::IsValidUtf8;

TEST(UrlCharsTest, Classes) {
  using url_chars::Is;
  for (char c : std::string_view("azAZ09-._~")) EXPECT_TRUE(Is(c, url_chars::kUnreserved)) << c;
  for (char c : std::string_view("!$&'()*+,;=")) EXPECT_TRUE(Is(c, url_chars::kSubDelim)) << c;
  for (char c : std::string_view(":@")) EXPECT_TRUE(Is(c, url_chars::kPathLiteral)) << c;
  for (char c : std::string_view("/?")) {
    EXPECT_FALSE(Is(c, url_chars::kPathLiteral)) << c;
    EXPECT_TRUE(Is(c, url_chars::kQueryLiteral)) << c;
  }
  for (char c : std::string_view(" \"#%<>[\\]^`{|}\x7f")) {
    EXPECT_FALSE(Is(c, url_chars::kQueryLiteral)) << c;
    EXPECT_FALSE(Is(c, url_chars::kSpecialQueryLiteral)) << c;
    EXPECT_FALSE(Is(c, url_chars::kHostLiteral)) << c;
  }
  // WHATWG special-query percent-encode set: the query set and '\''.
  EXPECT_TRUE(Is('\'', url_chars::kQueryLiteral));
  EXPECT_FALSE(Is('\'', url_chars::kSpecialQueryLiteral));
  for (char c : std::string_view("azAZ09-._~!$&()*+,;=:@/?")) {
    EXPECT_TRUE(Is(c, url_chars::kSpecialQueryLiteral)) << c;
  }
  EXPECT_FALSE(Is('\0', url_chars::kSubDelim));
  EXPECT_FALSE(Is('\x80', url_chars::kUnreserved));
}

TEST(UrlCharsTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x92\xa9\xf4\x8f\xbf\xbf"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation byte
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc1\xbf"));          // overlong 2-byte
  EXPECT_FALSE(IsValidUtf8("\xe0\x9f\xbf"));      // overlong 3-byte
  EXPECT_FALSE(IsValidUtf8("\xf0\x8f\xbf\xbf"));  // overlong 4-byte
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xf5\x80\x80\x80"));
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));
  EXPECT_FALSE(IsValidUtf8("\xe2\x28\xa1"));
}

TEST(IdnaHostTest, DomainToAscii) {
  std::string out;
  ASSERT_TRUE(DomainToAscii("B\xc3\xbc"
                            "cher.DE",
                            &out)
                  .ok());
  EXPECT_EQ(out, "xn--bcher-kva.de");
  ASSERT_TRUE(DomainToAscii("\xf0\x9f\x92\xa9.la", &out).ok());  // transitional fallback
  EXPECT_EQ(out, "xn--ls8h.la");
  EXPECT_FALSE(DomainToAscii("xn--zz.de", &out).ok());
  EXPECT_FALSE(DomainToAscii(std::string_view("a\0b.de", 6), &out).ok());
  // Twice, so the second answer comes from the cache.
  for (int i = 0; i < 2; ++i) {
    const Status status = DomainToAscii("a\xe2\x80\x8d.de", &out);  // ZWJ: CheckJoiners
    EXPECT_EQ(status.message(), "invalid international host (IDN2_CONTEXTJ)");
  }
}

TEST(IdnaHostTest, HyphensAnywhereAsUts46WithCheckHyphensFalse) {
  std::string out;
  ASSERT_TRUE(DomainToAscii("-bad-\xc3\xbc.de", &out).ok());
  EXPECT_EQ(out, "xn---bad--ova.de");
  // The fullwidth and small hyphen-minus map to '-' and count as hyphens too.
  ASSERT_TRUE(DomainToAscii("\xef\xbc\x8d"
                            "bad\xef\xb9\xa3\xc3\xbc.de",
                            &out)
                  .ok());
  EXPECT_EQ(out, "xn---bad--ova.de");
  // Known limit: a label with a '_' of its own and a hyphen in a place libidn2 refuses.
  EXPECT_EQ(DomainToAscii("a_--\xc3\xbc.de", &out).message(),
            "invalid international host (IDN2_2HYPHEN)");
  ASSERT_TRUE(DomainToAscii("a_-\xc3\xbc.de", &out).ok());  // hyphens libidn2 accepts: fine
  EXPECT_EQ(out, "xn--a_--joa.de");
  // The A-label of that form is accepted as it is.
  ASSERT_TRUE(DomainToAscii("xn---bad--ova.de", &out).ok());
  EXPECT_EQ(out, "xn---bad--ova.de");
}

TEST(IdnaHostTest, KeyVersionOneKeepsItsFormerConversion) {
  // Version 1 ran libidn2 on the whole domain and fell back to transitional processing, which
  // maps the sharp s of the first label to "ss" because of the emoji in the second.
  std::string out;
  ASSERT_TRUE(DomainToAscii("fa\xc3\x9f.\xf0\x9f\x92\xa9.la", &out, 1).ok());
  EXPECT_EQ(out, "fass.xn--ls8h.la");
  ASSERT_TRUE(DomainToAscii("fa\xc3\x9f.\xf0\x9f\x92\xa9.la", &out, 2).ok());
  EXPECT_EQ(out, "xn--fa-hia.xn--ls8h.la");
  // What version 1 rejected gets the current conversion.
  ASSERT_TRUE(DomainToAscii("ab--c.\xc3\x9f", &out, 1).ok());
  EXPECT_EQ(out, "ab--c.xn--zca");
}

TEST(UriValidatorTest, AcceptsAndRejects) {
  using testing::IsValidUriKey;
  EXPECT_TRUE(IsValidUriKey("http://a/"));
  EXPECT_TRUE(IsValidUriKey("https://u:p@[::1]:8080/a%20b;c=d/:@!$&'()*+,;=?q=/?:@"));
  EXPECT_TRUE(IsValidUriKey("http://a"));
  EXPECT_FALSE(IsValidUriKey("http:/a"));
  EXPECT_FALSE(IsValidUriKey("http://a/b c"));
  EXPECT_FALSE(IsValidUriKey("http://a/%zz"));
  EXPECT_FALSE(IsValidUriKey("http://a/%2"));
  EXPECT_FALSE(IsValidUriKey("http://a/#f"));
  EXPECT_FALSE(IsValidUriKey("http://a/\xc3\xa9"));
  EXPECT_FALSE(IsValidUriKey("http://a b/"));
  EXPECT_FALSE(IsValidUriKey("http://[::g]/"));
  EXPECT_FALSE(IsValidUriKey("http://a:8x/"));
  EXPECT_FALSE(IsValidUriKey("1http://a/"));
}

}  // namespace
}  // namespace urlsieve
