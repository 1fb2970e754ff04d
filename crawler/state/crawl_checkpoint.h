// CrawlCheckpoint: what a crawl records in its state database beside the seen set and the pending
// frontier, inside the checkpoint's transaction:
//   - crawl_outputs: for each output file, its size and the XXH3-64 of its content up to that
//     size, so --resume can check the files (VerifyOutputs) and cut them back to agree with the
//     restored state;
//   - crawl_counters: the crawl's cumulative counters (CrawlStatsSnapshot) as of the same moment,
//     so stats.json after --resume describes everything the outputs record.
// Checkpoints written before checksums and counters existed have a crawl_outputs row without
// checksums (sizes are still checked) and no counters; both are reported as notices.
// Thread-safety: none; called under the crawl's checkpoint gate.
#ifndef URLSIEVE_CRAWLER_STATE_CRAWL_CHECKPOINT_H_
#define URLSIEVE_CRAWLER_STATE_CRAWL_CHECKPOINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "crawler/metrics/crawl_stats.h"
#include "crawler/output/output_checksum.h"

namespace urlsieve {

struct OutputMarks {
  OutputMark pages;     // pages.jsonl
  OutputMark rejected;  // rejected.jsonl
  OutputMark warc;      // crawl.warc.gz (size 0 without --warc)
};

Status WriteOutputMarks(SqliteDb& db, const OutputMarks& marks);
// NotFound when no checkpoint was ever written.
Result<OutputMarks> ReadOutputMarks(SqliteDb& db);

// Replaces the stored counters with `counters` (their duration_s and sessions included).
Status WriteCrawlCounters(SqliteDb& db, const CrawlStatsSnapshot& counters);
// NotFound when the checkpoint holds no counters (none yet, or written by an earlier version).
Result<CrawlStatsSnapshot> ReadCrawlCounters(SqliteDb& db);

// What the last checkpoint of a crawl recorded beside its seen set and frontier.
struct CrawlCheckpointRecord {
  OutputMarks marks;                           // all zero when no checkpoint was written
  std::optional<CrawlStatsSnapshot> counters;  // absent when none were recorded
};
// Reads both; a checkpoint with output marks but no counters (written by an earlier version) adds
// a notice that stats.json will count from this run on.
Result<CrawlCheckpointRecord> ReadCrawlCheckpoint(SqliteDb& db, std::vector<std::string>* notices);

// The outputs of a crawl being resumed, checked against its checkpoint.
struct VerifiedOutputs {
  std::optional<VerifiedPrefix> pages;  // each set when that output is enabled
  std::optional<VerifiedPrefix> rejected;
  std::optional<VerifiedPrefix> warc;
};

// The files of one crawl's outputs and which of them this run writes.
struct OutputFiles {
  std::string pages;  // empty: not written (e.g. output.jsonl off)
  std::string rejected;
  std::string warc;
};

// Checks every enabled output of `files` against `marks` before any of them is modified: the
// first error (a file missing, shorter than recorded, or whose content differs) is returned and
// no file has been touched. Marks without a checksum are checked for size only, with a notice
// appended to `notices`.
Result<VerifiedOutputs> VerifyOutputs(const OutputFiles& files, const OutputMarks& marks,
                                      std::vector<std::string>* notices);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_CRAWL_CHECKPOINT_H_
