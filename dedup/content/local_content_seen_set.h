// LocalContentSeenSet: a ContentSeenSet in this process (docs/features/content-seen.md, "Local").
//
// The fingerprints live in an ExactContentIndex and a NearDuplicateIndex (about 14 + 34 bytes per
// page), whose values number the stored copies. The copies (id + data) of the pages stored since
// the last Checkpoint are in memory; Checkpoint(db) writes them, and the forgettings, into the
// table `content_seen` of the caller's database inside the caller's transaction (the crawl's
// checkpoint, so the set and the outputs that name its copies commit together), and drops them
// from memory; a verdict naming an older copy reads it from that database. Open(db) rebuilds the
// indexes from the table (one scan). Without a database (Open(nullptr, ...)) every copy stays in
// memory and Checkpoint is not used: an embedder's index.
// Table (created by Open when missing; docs/formats/state-directory.md, "content_seen"):
//   content_seen(value INTEGER PRIMARY KEY, digest INTEGER NOT NULL, simhash INTEGER, id TEXT,
//                data BLOB), simhash NULL when the page had none or was a near copy.
// Thread-safety: every method may be called concurrently (one mutex over the indexes and the
// copies in memory); the database is read under it, so the caller must not use `db` from another
// thread while Test or Forget runs, except inside Checkpoint (the crawl's gate ensures that).
#ifndef URLSIEVE_DEDUP_CONTENT_LOCAL_CONTENT_SEEN_SET_H_
#define URLSIEVE_DEDUP_CONTENT_LOCAL_CONTENT_SEEN_SET_H_

#include <memory>
#include <string_view>

#include "base/status.h"
#include "dedup/content/content_seen_set.h"

namespace urlsieve {

class SqliteDb;  // base/sqlite_db.h (internal: this header is installed, SqliteDb is not)

struct ContentSeenOptions {
  int max_distance = 3;  // k, 0 .. 7
  bool near = true;      // false: only the exact test (simhashes are ignored)
};

class LocalContentSeenSet : public ContentSeenSet {
 public:
  // `db` (may be null) must outlive the set.
  static Result<std::unique_ptr<LocalContentSeenSet>> Open(SqliteDb* db,
                                                           const ContentSeenOptions& options);
  ~LocalContentSeenSet() override;

  Result<ContentVerdict> Test(const ContentFingerprint& fingerprint,
                              const ContentCopy& page) override;
  Result<bool> Forget(const ContentFingerprint& fingerprint, std::string_view id) override;
  int max_distance() const override;
  uint64_t size() const override;

  // Inside the caller's transaction on the database given to Open.
  Status Checkpoint(SqliteDb& db);
  uint64_t memory_bytes() const;  // the indexes and the copies held in memory

 private:
  struct Impl;
  explicit LocalContentSeenSet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_CONTENT_LOCAL_CONTENT_SEEN_SET_H_
