// SpillStore: the pending URLs that do not fit in the frontier's RAM budget, kept in a scratch
// SQLite file and paged back in per politeness key, in FIFO order.
//
// Why a file of its own rather than the crawl's state database: that database is the crawl's
// (CrawlState), which hands it to the frontier only inside a checkpoint or a restore, under the
// checkpoint gate, while the frontier spills and pages in at any time from fetcher threads; and
// the spill is not state — it is a cache of URLs that are also recorded, durably, by
// Frontier::Checkpoint. So the scratch file runs without journal or fsync, and an empty path
// makes SQLite create a temporary file that disappears on close.
//
// Thread-safety: none; the owning Frontier guards it.
#ifndef URLSIEVE_FRONTIER_SPILL_STORE_H_
#define URLSIEVE_FRONTIER_SPILL_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "frontier/url_queue.h"

namespace urlsieve {

class SpillStore {
 public:
  // `path` "" → an anonymous temporary file. An existing file is emptied: a spill never outlives
  // its frontier.
  static Result<std::unique_ptr<SpillStore>> Open(const std::string& path);

  // Appends `url` as number `seq` of `key`'s spilled URLs (seqs increase per key).
  Status Append(uint32_t key, uint64_t seq, const QueuedUrl& url);
  // Moves the spilled URLs of `key` numbered [from, from + count) to the back of *queue.
  Status Load(uint32_t key, uint64_t from, uint64_t count, UrlQueue* queue);
  // Bytes of the file (pages in use), for stats.
  int64_t FileBytes();

 private:
  explicit SpillStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  Status MaybeCommit();

  std::unique_ptr<SqliteDb> db_;
  SqliteStatement insert_;
  SqliteStatement select_;
  SqliteStatement erase_;
  uint32_t writes_since_commit_ = 0;
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_SPILL_STORE_H_
