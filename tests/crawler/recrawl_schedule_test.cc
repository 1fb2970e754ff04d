// RecrawlSchedule (crawler/state/recrawl_schedule.h): the adaptive interval (x unchanged_factor,
// x changed_factor, clamped to [min, max]), the initial interval, due times and what a re-fetch
// found.
#include "crawler/state/recrawl_schedule.h"

#include <gtest/gtest.h>

namespace urlsieve {
namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 24 * kHour;

RecrawlScheduleOptions Defaults() { return RecrawlScheduleOptions(); }

TEST(RecrawlScheduleTest, UnchangedGrowsByOneAndAHalfChangedHalves) {
  const RecrawlSchedule schedule(Defaults());
  EXPECT_EQ(schedule.NextInterval(2 * kDay, RefetchResult::kUnchanged), 3 * kDay);
  EXPECT_EQ(schedule.NextInterval(2 * kDay, RefetchResult::kNotModified), 3 * kDay);
  EXPECT_EQ(schedule.NextInterval(2 * kDay, RefetchResult::kChanged), kDay);
}

TEST(RecrawlScheduleTest, StaysWithinMinAndMax) {
  const RecrawlSchedule schedule(Defaults());
  EXPECT_EQ(schedule.NextInterval(kHour, RefetchResult::kChanged), kHour);
  EXPECT_EQ(schedule.NextInterval(80 * kDay, RefetchResult::kUnchanged), 90 * kDay);
  int64_t interval = 7 * kDay;
  for (int i = 0; i < 50; ++i) interval = schedule.NextInterval(interval, RefetchResult::kChanged);
  EXPECT_EQ(interval, kHour);
  for (int i = 0; i < 50; ++i) {
    interval = schedule.NextInterval(interval, RefetchResult::kUnchanged);
  }
  EXPECT_EQ(interval, 90 * kDay);
}

TEST(RecrawlScheduleTest, FactorsAndBoundsAreConfigurable) {
  RecrawlScheduleOptions options;
  options.min_interval = std::chrono::seconds(10);
  options.max_interval = std::chrono::seconds(1000);
  options.unchanged_factor = 3;
  options.changed_factor = 0.1;
  const RecrawlSchedule schedule(options);
  EXPECT_EQ(schedule.NextInterval(100, RefetchResult::kUnchanged), 300);
  EXPECT_EQ(schedule.NextInterval(100, RefetchResult::kChanged), 10);
  EXPECT_EQ(schedule.NextInterval(400, RefetchResult::kUnchanged), 1000);
  EXPECT_EQ(schedule.NextInterval(50, RefetchResult::kChanged), 10);
}

TEST(RecrawlScheduleTest, ARecordWithoutAnIntervalStartsFromRevisitAfter) {
  RecrawlScheduleOptions options;
  options.revisit_after = std::chrono::seconds(2 * kDay);
  const RecrawlSchedule schedule(options);
  EXPECT_EQ(schedule.InitialInterval(), 2 * kDay);
  EXPECT_EQ(schedule.NextInterval(0, RefetchResult::kUnchanged), 3 * kDay);
  options.revisit_after = std::chrono::seconds(0);
  const RecrawlSchedule none(options);
  EXPECT_EQ(none.InitialInterval(), 0);
  EXPECT_EQ(none.NextInterval(0, RefetchResult::kChanged), 0);
  EXPECT_EQ(none.NextInterval(2 * kDay, RefetchResult::kChanged), kDay) << "its own interval";
  options.revisit_after = std::chrono::seconds(60);  // below min_interval: clamped
  EXPECT_EQ(RecrawlSchedule(options).InitialInterval(), kHour);
}

TEST(RecrawlScheduleTest, IsDue) {
  RecrawlScheduleOptions options;
  options.revisit_after = std::chrono::seconds(kDay);
  const RecrawlSchedule schedule(options);
  FetchRecord record;
  record.fetch_time = 1'000'000;
  record.interval_s = kHour;
  EXPECT_FALSE(schedule.IsDue(record, 1'000'000 + kHour - 1));
  EXPECT_TRUE(schedule.IsDue(record, 1'000'000 + kHour));
  record.interval_s = 0;  // none: revisit_after
  EXPECT_FALSE(schedule.IsDue(record, 1'000'000 + kHour));
  EXPECT_TRUE(schedule.IsDue(record, 1'000'000 + kDay));
  options.revisit_after = std::chrono::seconds(0);
  record.interval_s = 90 * kDay;
  EXPECT_TRUE(RecrawlSchedule(options).IsDue(record, 1'000'000)) << "0: every URL is due now";
}

TEST(RecrawlScheduleTest, Compare) {
  FetchRecord record;
  record.status = 200;
  record.payload_digest = "sha1:AAAA";
  EXPECT_EQ(RecrawlSchedule::Compare(record, 304, ""), RefetchResult::kNotModified);
  EXPECT_EQ(RecrawlSchedule::Compare(record, 200, "sha1:AAAA"), RefetchResult::kUnchanged);
  EXPECT_EQ(RecrawlSchedule::Compare(record, 200, "sha1:BBBB"), RefetchResult::kChanged);
  EXPECT_EQ(RecrawlSchedule::Compare(record, 404, "sha1:AAAA"), RefetchResult::kChanged);
  EXPECT_EQ(RefetchResultName(RefetchResult::kNotModified), "not_modified");
  EXPECT_EQ(RefetchResultName(RefetchResult::kUnchanged), "unchanged");
  EXPECT_EQ(RefetchResultName(RefetchResult::kChanged), "changed");
}

}  // namespace
}  // namespace urlsieve
