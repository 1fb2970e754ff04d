#include "base/duration.h"

#include <gtest/gtest.h>

namespace urlsieve {
namespace {

TEST(DurationTest, ParsesEachUnit) {
  EXPECT_EQ(ParseDuration("0").value().count(), 0);
  EXPECT_EQ(ParseDuration("30s").value().count(), 30);
  EXPECT_EQ(ParseDuration("90m").value().count(), 5400);
  EXPECT_EQ(ParseDuration("12h").value().count(), 43200);
  EXPECT_EQ(ParseDuration("7d").value().count(), 604800);
  EXPECT_EQ(ParseDuration("2w").value().count(), 1209600);
}

TEST(DurationTest, RefusesWhatIsNotADuration) {
  for (const char* bad : {"", "d", "7", "-1d", "1.5h", "7x", "7 d", "99999999999999999999s",
                          "999999999999999w"}) {
    auto parsed = ParseDuration(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("bad duration"), std::string::npos) << bad;
  }
}

TEST(DurationTest, FormatsTheShortestExactSpelling) {
  EXPECT_EQ(FormatDuration(std::chrono::seconds(0)), "0");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(604800)), "7d");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(5400)), "90m");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(7200)), "2h");
  EXPECT_EQ(FormatDuration(std::chrono::seconds(61)), "61s");
}

}  // namespace
}  // namespace urlsieve
