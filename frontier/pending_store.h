// PendingStore: the frontier's durable pending set in the crawl's state database — its tables,
// their schema and its migration, the delta each checkpoint writes, and the rows Restore reads.
//
// Tables: frontier_pending(id INTEGER PRIMARY KEY, url TEXT NOT NULL, depth INTEGER NOT NULL,
// parent TEXT, kind INTEGER NOT NULL DEFAULT 0) — one row per URL queued or in flight, parent NULL
// for a seed, kind 1 for a sitemap (PendingKind; databases written before the parent or kind
// column existed get it on the next checkpoint) — and frontier_meta(name, value)
// with "checkpoint_seq" and "next_id" (the frontier's next URL id).
//
// A checkpoint writes only the changes since the previous one, inside the caller's transaction,
// which may roll back without the store being told (another part of the checkpoint failed). So
// each checkpoint stores a new checkpoint_seq, and the next one compares: when the database holds
// the number the store wrote, the earlier changes were committed and are forgotten; otherwise they
// are written again, before the new ones. Until a checkpoint commits, a store that did not Load
// from the database replaces the pending set there: a fresh crawl does not inherit the URLs an
// earlier crawl left in it.
//
// Thread-safety: none; the owning Frontier serializes Checkpoint and Restore.
#ifndef URLSIEVE_FRONTIER_PENDING_STORE_H_
#define URLSIEVE_FRONTIER_PENDING_STORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"

namespace urlsieve {

// What a pending URL is fetched as: the kind column's values.
enum class PendingKind : uint8_t {
  kPage = 0,
  kSitemap = 1,  // Lease::Kind::kSitemap; its depth is the sitemap's nesting level
};

// A URL that joined the pending set.
struct PendingRow {
  uint64_t id;
  std::string url;
  uint32_t depth;
  std::string parent;  // "" → NULL
  PendingKind kind = PendingKind::kPage;
};

// The frontier's changes since the previous checkpoint.
struct PendingDelta {
  std::vector<PendingRow> inserts;
  std::vector<uint64_t> deletes;  // ids that left the pending set (done or rejected)
  uint64_t next_id = 0;
};

class PendingStore {
 public:
  // Writes a checkpoint into `db`, on which the caller holds a write transaction: creates or
  // migrates the tables, then calls `take_delta` once and writes what it returns, after whatever
  // an earlier checkpoint wrote that was not committed. A failure before take_delta leaves the
  // frontier's changes with the frontier; a failure after it keeps them here, for the next
  // checkpoint to write again.
  Status Checkpoint(SqliteDb& db, const std::function<PendingDelta()>& take_delta);

  // Calls `row` for each pending URL of `db`, in id order, and returns the next_id stored with
  // them (0 if none); an empty pending set when the tables do not exist. Corruption for a row
  // whose depth or kind is out of range. Call it before any Checkpoint, at most once.
  using RowVisitor = std::function<void(uint64_t id, std::string_view url, uint32_t depth,
                                        std::string_view parent, PendingKind kind)>;
  Result<uint64_t> Load(SqliteDb& db, const RowVisitor& row);

  // Whether a Checkpoint has been written or a Load has succeeded.
  bool used() const { return used_; }

 private:
  bool used_ = false;
  bool replace_pending_set_ = true;  // until a checkpoint commits, unless loaded
  uint64_t checkpoint_seq_ = 0;
  // The changes of the last checkpoint, kept until a later one sees they were committed.
  std::vector<PendingRow> unconfirmed_inserts_;
  std::vector<uint64_t> unconfirmed_deletes_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_FRONTIER_PENDING_STORE_H_
