#include "crawler/state/recrawl_schedule.h"

#include <algorithm>
#include <cmath>

namespace urlsieve {

std::string_view RefetchResultName(RefetchResult result) {
  switch (result) {
    case RefetchResult::kNotModified:
      return "not_modified";
    case RefetchResult::kUnchanged:
      return "unchanged";
    case RefetchResult::kChanged:
      return "changed";
  }
  return "changed";
}

int64_t RecrawlSchedule::Clamp(double seconds) const {
  const double low = static_cast<double>(options_.min_interval.count());
  const double high = static_cast<double>(options_.max_interval.count());
  return static_cast<int64_t>(std::llround(std::clamp(seconds, low, high)));
}

int64_t RecrawlSchedule::InitialInterval() const {
  const int64_t revisit_after = options_.revisit_after.count();
  return revisit_after == 0 ? 0 : Clamp(static_cast<double>(revisit_after));
}

int64_t RecrawlSchedule::NextInterval(int64_t interval_s, RefetchResult result) const {
  const int64_t base = interval_s > 0 ? interval_s : options_.revisit_after.count();
  if (base <= 0) return 0;
  const double factor =
      result == RefetchResult::kChanged ? options_.changed_factor : options_.unchanged_factor;
  return Clamp(static_cast<double>(base) * factor);
}

bool RecrawlSchedule::IsDue(const FetchRecord& record, int64_t now) const {
  const int64_t revisit_after = options_.revisit_after.count();
  if (revisit_after == 0) return true;
  const int64_t interval = record.interval_s > 0 ? record.interval_s : revisit_after;
  return record.fetch_time + interval <= now;
}

RefetchResult RecrawlSchedule::Compare(const FetchRecord& record, int status,
                                       std::string_view payload_digest) {
  if (status == 304) return RefetchResult::kNotModified;
  if (status == record.status && payload_digest == record.payload_digest) {
    return RefetchResult::kUnchanged;
  }
  return RefetchResult::kChanged;
}

}  // namespace urlsieve
