#include "base/strings.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace urlsieve {
namespace {

TEST(TrimTest, BlanksByDefault) {
  EXPECT_EQ(Trim(" \t a b \t "), "a b");
  EXPECT_EQ(Trim("\r\nx\r\n"), "\r\nx\r\n");  // line ends are not blanks
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(TrimLeft("  a  "), "a  ");
  EXPECT_EQ(TrimRight("  a  "), "  a");
}

TEST(TrimTest, NamedCharacters) {
  EXPECT_EQ(Trim("\r\n x \t\r\n", kBlanksAndLineEnds), "x");
  EXPECT_EQ(TrimRight(TrimLeft("\t v \r\n"), kBlanksAndLineEnds), "v");
  EXPECT_EQ(Trim("--x-y--", "-"), "x-y");
}

TEST(TrimTest, EmptyResultStaysInsideTheInput) {
  const std::string_view all_blank = "   ";
  EXPECT_EQ(TrimLeft(all_blank).data(), all_blank.data() + all_blank.size());
  EXPECT_EQ(TrimRight(all_blank).data(), all_blank.data());
}

TEST(AsciiCaseTest, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(AsciiLower('A'), 'a');
  EXPECT_EQ(AsciiLower('z'), 'z');
  EXPECT_EQ(AsciiLower('@'), '@');
  EXPECT_EQ(AsciiLower('['), '[');
  EXPECT_EQ(AsciiLowercase("Content-TYPE: \xC3\x89t\xC3\xA9"), "content-type: \xC3\x89t\xC3\xA9");
  EXPECT_EQ(AsciiLowercase(""), "");
}

TEST(AsciiCaseTest, EqualsAndStartsWith) {
  EXPECT_TRUE(EqualsIgnoreAsciiCase("Content-Length", "content-length"));
  EXPECT_TRUE(EqualsIgnoreAsciiCase("", ""));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("Content-Length", "content-lengths"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("\xC3\x89", "\xC3\xA9"));  // É and é: not ASCII
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("HTTPS://example.com", "https://"));
  EXPECT_TRUE(StartsWithIgnoreAsciiCase("x", ""));
  EXPECT_FALSE(StartsWithIgnoreAsciiCase("http", "https://"));
}

TEST(ParseIntTest, WholeTextDecimal) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("007"), 7);
  EXPECT_EQ(ParseInt64("-42"), -42);
  EXPECT_EQ(ParseInt64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseInt64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1x", "0x10", "1.0", "9223372036854775808",
                          "-9223372036854775809"}) {
    EXPECT_FALSE(ParseInt64(bad).has_value()) << bad;
  }
}

TEST(ParseIntTest, UnsignedTakesNoSign) {
  EXPECT_EQ(ParseUint64("18446744073709551615"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ParseUint64("00000000000000000000001"), 1u);
  for (const char* bad :
       {"", "-1", "-0", "+1", "18446744073709551616", "99999999999999999999", "1 "}) {
    EXPECT_FALSE(ParseUint64(bad).has_value()) << bad;
  }
}

TEST(FormatDoubleTest, SeventeenSignificantDigits) {
  // The spellings stored settings were written with: they must never change.
  EXPECT_EQ(FormatDouble(0.001), "0.001");
  EXPECT_EQ(FormatDouble(1e-5), "1.0000000000000001e-05");
  EXPECT_EQ(FormatDouble(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatDouble(0.9), "0.90000000000000002");
  EXPECT_EQ(FormatDouble(1), "1");
  EXPECT_EQ(FormatDouble(10'000'000), "10000000");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  for (double v : {0.001, 1e-5, 0.1, 1.0 / 3, 123456.789e100}) {
    EXPECT_EQ(std::stod(FormatDouble(v)), v);
  }
}

}  // namespace
}  // namespace urlsieve
