#include "crawler/cli/line_excerpt.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve::cli {
namespace {

TEST(EscapedExcerptTest, PrintableTextAndValidUtf8StayAsTheyAre) {
  EXPECT_EQ(EscapedExcerpt("http://a.example/p?q=1"), "http://a.example/p?q=1");
  EXPECT_EQ(EscapedExcerpt("http://b\xc3\xbc"
                           "cher.de/\xe2\x82\xac"),
            "http://b\xc3\xbc"
            "cher.de/\xe2\x82\xac");
  EXPECT_EQ(EscapedExcerpt(""), "");
}

TEST(EscapedExcerptTest, ControlsDelBackslashAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(EscapedExcerpt("a\x1b[31mb\x07\xff\\"), "a\\x1B[31mb\\x07\\xFF\\x5C");
  EXPECT_EQ(EscapedExcerpt(std::string("\0\t\r\n\x7f", 5)), "\\x00\\x09\\x0D\\x0A\\x7F");
  EXPECT_EQ(EscapedExcerpt("\xc3"), "\\xC3");                    // truncated sequence
  EXPECT_EQ(EscapedExcerpt("\xc0\xaf"), "\\xC0\\xAF");           // overlong '/'
  EXPECT_EQ(EscapedExcerpt("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // surrogate
  // Valid UTF-8 that a terminal acts on or that reorders the text: C1 CSI, RIGHT-TO-LEFT OVERRIDE.
  EXPECT_EQ(EscapedExcerpt("\xc2\x9b"
                           "2J"),
            "\\xC2\\x9B2J");
  EXPECT_EQ(EscapedExcerpt("a\xe2\x80\xae"
                           "b"),
            "a\\xE2\\x80\\xAEb");
}

TEST(EscapedExcerptTest, LongTextIsCutAndSaysHowLongItWas) {
  const std::string line(10 << 20, 'x');
  const std::string excerpt = EscapedExcerpt(line);
  EXPECT_EQ(excerpt, std::string(200, 'x') + "... (10485760 bytes)");
  EXPECT_EQ(EscapedExcerpt(std::string(200, 'y')), std::string(200, 'y'));  // fits: not cut
  // Never half an escape or half a character.
  EXPECT_EQ(EscapedExcerpt("ab\x1b", 5), "ab... (3 bytes)");
  EXPECT_EQ(EscapedExcerpt("ab\xe2\x82\xac", 4), "ab... (5 bytes)");
  EXPECT_EQ(EscapedExcerpt(std::string(100, '\x01'), 10), "\\x01\\x01... (100 bytes)");
}

}  // namespace
}  // namespace urlsieve::cli
