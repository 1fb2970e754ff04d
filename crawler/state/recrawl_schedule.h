// RecrawlSchedule: when a fetched URL is due again, and how a re-fetch's answer changes its
// interval (docs/features/recrawl.md, "Re-crawl").
//
// The interval adapts per URL as in Nutch's AdaptiveFetchSchedule: a re-fetch that finds the page
// unchanged (304 Not Modified, or the same status and payload digest) multiplies it by
// unchanged_factor (1.5), one that finds it changed by changed_factor (0.5), and the result is
// kept within [min_interval, max_interval]. A record without an interval (0) starts from
// revisit_after; when that is 0 too, the URL keeps no interval (it is due at every --recrawl).
//
// Thread-safety: immutable after construction; share it freely.
#ifndef URLSIEVE_CRAWLER_STATE_RECRAWL_SCHEDULE_H_
#define URLSIEVE_CRAWLER_STATE_RECRAWL_SCHEDULE_H_

#include <chrono>
#include <cstdint>
#include <string_view>

#include "crawler/state/fetch_record.h"

namespace urlsieve {

struct RecrawlScheduleOptions {
  std::chrono::seconds revisit_after{7 * 24 * 3600};  // 0: every fetched URL is due now
  std::chrono::seconds min_interval{3600};
  std::chrono::seconds max_interval{90 * 24 * 3600};
  double unchanged_factor = 1.5;
  double changed_factor = 0.5;
};

// What a re-fetch found, compared with the URL's record.
enum class RefetchResult : uint8_t {
  kNotModified,  // 304: the server says the stored copy is current
  kUnchanged,    // the same status and payload digest
  kChanged,      // anything else (another status, another payload)
};
std::string_view RefetchResultName(RefetchResult result);  // "not_modified", ...

class RecrawlSchedule {
 public:
  explicit RecrawlSchedule(const RecrawlScheduleOptions& options) : options_(options) {}

  const RecrawlScheduleOptions& options() const { return options_; }

  // The interval of a URL fetched for the first time: revisit_after, clamped (0 stays 0).
  int64_t InitialInterval() const;
  // The interval after a re-fetch found `result`, from the record's (0: revisit_after).
  int64_t NextInterval(int64_t interval_s, RefetchResult result) const;
  // Whether `record` is due at `now` (unix seconds), as FetchRecordStore::TakeDue selects.
  bool IsDue(const FetchRecord& record, int64_t now) const;

  // What a re-fetch answering `status` with a body of digest `payload_digest` found.
  static RefetchResult Compare(const FetchRecord& record, int status,
                               std::string_view payload_digest);

 private:
  int64_t Clamp(double seconds) const;

  const RecrawlScheduleOptions options_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_RECRAWL_SCHEDULE_H_
