#include "frontier/retry_after.h"

#include <gtest/gtest.h>

namespace urlsieve {
namespace {

using std::chrono::seconds;

// 1994-11-06T08:49:37Z, the date of the RFC 9110 §5.6.7 examples.
const std::chrono::system_clock::time_point kExampleDate(seconds(784111777));

TEST(RetryAfterTest, DeltaSeconds) {
  EXPECT_EQ(ParseRetryAfter("120", kExampleDate), seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", kExampleDate), seconds(0));
  EXPECT_FALSE(ParseRetryAfter("-5", kExampleDate).has_value());
  EXPECT_FALSE(ParseRetryAfter("1.5", kExampleDate).has_value());
  EXPECT_FALSE(ParseRetryAfter("", kExampleDate).has_value());
  EXPECT_GT(ParseRetryAfter("99999999999999999999999", kExampleDate)->count(), 1000000);
}

TEST(RetryAfterTest, AllThreeHttpDateForms) {
  const auto before = kExampleDate - seconds(90);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", before), seconds(90));
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", before), seconds(90));
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:37 1994", before), seconds(90));
}

TEST(RetryAfterTest, PastDateMeansNow) {
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", kExampleDate + seconds(5)),
            seconds(0));
}

TEST(RetryAfterTest, GarbageIsRejected) {
  for (const char* bad :
       {"soon", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "a b c d e f g h"}) {
    EXPECT_FALSE(ParseRetryAfter(bad, kExampleDate).has_value()) << bad;
  }
}

}  // namespace
}  // namespace urlsieve
