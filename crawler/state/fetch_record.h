// FetchRecord and FetchRecordStore: what a crawl remembers of each URL it fetched, so that a later
// re-crawl can ask again conditionally and say what changed (docs/features/recrawl.md, "Re-crawl").
//
// The records live in the crawl's state.db (table crawl_fetch_records, one row per URL in fetch
// form) and are written in the checkpoint's transaction (Checkpoint(db), under the gate held
// exclusively), so after a crash they agree with the outputs and the frontier of the last
// checkpoint: a page cut from pages.jsonl by --resume has its record back as it was, and is
// fetched again.
//
// A re-crawl (--recrawl) takes the due records (TakeDue): each is marked `queued` (pending in the
// frontier as a re-fetch, written with the frontier's pending set at the next checkpoint) and kept
// in memory until its page is recorded (Put) or the frontier rejects it (Unqueue). --resume of a
// stopped re-crawl loads the queued ones again (LoadQueued): a queued record is never taken twice.
//
// Thread-safety: Find, Put and Unqueue may be called concurrently (one mutex); LoadQueued, TakeDue
// and Checkpoint are called with the database the checkpoint protocol lends (CrawlState::Restore
// or Checkpoint), under the gate held exclusively or before any fetcher runs.
#ifndef URLSIEVE_CRAWLER_STATE_FETCH_RECORD_H_
#define URLSIEVE_CRAWLER_STATE_FETCH_RECORD_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "crawler/output/warc_writer.h"

namespace urlsieve {

struct FetchRecord {
  std::string url;             // fetch form (the table's key)
  int status = 0;              // HTTP status of the last full answer (a 304 keeps the original's)
  std::string etag;            // the last ETag sent by the server ("" = none)
  std::string last_modified;   // the last Last-Modified sent by the server ("" = none)
  std::string payload_digest;  // "sha1:<base32>" of the last body kept ("" = no body)
  int64_t fetch_time = 0;      // unix seconds of the last fetch that answered
  int64_t interval_s = 0;      // seconds until it is due again; 0 = none (recrawl.revisit_after)
  uint32_t depth = 0;          // as first queued: a re-fetch keeps its depth and parent
  std::string parent;
  WarcRecordRef warc;   // the response record holding the payload (record_id "" = none)
  bool queued = false;  // pending in the frontier as a re-fetch (see above)
};

class FetchRecordStore {
 public:
  FetchRecordStore() = default;
  FetchRecordStore(const FetchRecordStore&) = delete;
  FetchRecordStore& operator=(const FetchRecordStore&) = delete;

  // Creates the table if the state has none (a crawl made before fetch records existed).
  static Status CreateTable(SqliteDb& db);

  // Loads the records queued for a re-fetch (a stopped re-crawl being resumed).
  Status LoadQueued(SqliteDb& db);
  // The records not queued yet that are due at `now` (unix seconds): fetch_time + interval <= now,
  // where a record without an interval takes revisit_after_s; every one when revisit_after_s is
  // 0 (--revisit-after 0); and those a sitemap gave a <lastmod> newer than their fetch_time
  // (SitemapStore). Each is marked queued (written at the next checkpoint) and kept for
  // Find. In order of fetch time, oldest first.
  Result<std::vector<FetchRecord>> TakeDue(SqliteDb& db, int64_t now, int64_t revisit_after_s);

  // A re-fetch handed to this crawl with its record (a cluster node reads it with its inbox
  // entry): kept for Find as a queued one, and written, like those, once Put or Unqueue.
  void Hold(FetchRecord record);
  // The queued record of `url` (a re-fetch), if any.
  std::optional<FetchRecord> Find(const std::string& url) const;
  // Records a fetch of record.url (queued = false), replacing its record at the next checkpoint.
  void Put(FetchRecord record);
  // A queued re-fetch the frontier rejected: its record stays as it was, no longer queued.
  void Unqueue(const std::string& url);
  size_t queued() const;

  // Writes every record changed since the last checkpoint into `db` (the checkpoint's open
  // transaction).
  Status Checkpoint(SqliteDb& db);

  // All the records of `db` (tests and tools).
  static Result<std::vector<FetchRecord>> ReadAll(SqliteDb& db);

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, FetchRecord> queued_;  // guarded by mu_
  std::unordered_map<std::string, FetchRecord> dirty_;   // guarded by mu_: to write
};

}  // namespace urlsieve

#endif  // URLSIEVE_CRAWLER_STATE_FETCH_RECORD_H_
