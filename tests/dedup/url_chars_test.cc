#include "dedup/url_chars.h"

#include <gtest/gtest.h>

#include "dedup/idna_host.h"
#include "tests/dedup/uri_validator.h"

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
    EXPECT_FALSE(Is(c, url_chars::kHostLiteral)) << c;
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
    const Status status = DomainToAscii("-bad-\xc3\xbc.de", &out);
    EXPECT_EQ(status.message(), "invalid international host (IDN2_HYPHEN_STARTEND)");
  }
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
