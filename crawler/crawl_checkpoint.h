// CrawlCheckpoint: what a crawl records in its state database beside the seen set and the pending
// frontier — the sizes its output files had at the checkpoint, so --resume can cut them back to
// agree with the restored state. Written inside the checkpoint's transaction.
// Thread-safety: none; called under the crawl's checkpoint gate.
#ifndef URLSIEVE_CRAWLER_CRAWL_CHECKPOINT_H_
#define URLSIEVE_CRAWLER_CRAWL_CHECKPOINT_H_

#include <cstdint>

#include "dedup/sqlite_db.h"
#include "dedup/status.h"

namespace urlsieve {

struct OutputSizes {
  uint64_t pages = 0;     // pages.jsonl
  uint64_t rejected = 0;  // rejected.jsonl
  uint64_t warc = 0;      // crawl.warc.gz (0 without --warc)
};

Status WriteOutputSizes(SqliteDb& db, const OutputSizes& sizes);
// NotFound when no checkpoint was ever written.
Result<OutputSizes> ReadOutputSizes(SqliteDb& db);

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_CRAWL_CHECKPOINT_H_
