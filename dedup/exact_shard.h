// ExactShard: one file of the exact store (exact_store.h), DIR/seen-NN.db: the 128-bit
// fingerprints (KeyHash) of the stored keys whose top bits pick this shard, with their times, found
// through an in-memory hash index (docs/features/exact-store.md, "The exact store").
//
// Table `seen(id INTEGER PRIMARY KEY, hi, lo, first_seen, last_fetched, gen, forgot)`: hi and lo
// are the fingerprint's halves (as signed int64), first_seen and last_fetched unix seconds (0:
// unknown / never), gen the generation the row was inserted in, forgot 0 or the generation it was
// forgotten in. Rows are appended in arrival order (the row id grows), so an insert writes only the
// table's last page and pages fill up completely: ~34 bytes per key on disk. Table `shard_meta`
// stamps the file: format, version, the state's identity, this shard's number and the shard count,
// so a file of another state, or of another slot, is refused (Corruption naming it).
//
// The index maps the fingerprint's low bits to row ids (open addressing, 8 bytes a slot: bits
// 32..63 of `lo` as a tag, which also picks the home slot, and a 32-bit row id), rebuilt from the
// table on open. A lookup is one index probe, then one read of the candidate row by id and a
// comparison of the whole 128-bit fingerprint. Why an in-memory index and not an SQL index on
// (hi, lo): batches of random fingerprints dirty one index page per key and, once the index
// outgrows the page cache, read one too (measured in v1: 74 s CPU against 22.5 s for 1e7 keys).
// An index entry whose row was rolled back or deleted is harmless: its id then holds no row or
// another fingerprint, and the comparison rejects it.
//
// Generations (the durability contract, seen_set.h): a row counts at committed generation C when
// gen <= C and not (forgot != 0 and forgot <= C). A writable open first deletes the rows above C
// and the rows forgotten at or below C, and clears the forgets above C, so that what a crash left
// between the shards' commits and state.db's COMMIT is undone; a read-only open only skips them.
//
// The shard never decides when to commit: its owner (ExactStore, ExactSeenSet) calls Begin/Commit.
// Thread-safety: none, like SqliteDb. The owner serializes all calls (the shard's mutex).
#ifndef URLSIEVE_DEDUP_EXACT_SHARD_H_
#define URLSIEVE_DEDUP_EXACT_SHARD_H_

#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/sqlite_db.h"
#include "base/status.h"
#include "dedup/bloom/key_hash_value.h"
#include "dedup/state/state_identity.h"

namespace urlsieve {

class ExactShard {
 public:
  struct Options {
    std::string path;
    StateIdentity identity;  // of the state: the file must carry it
    uint32_t number = 0;     // this shard's number, and the shard count: the file must carry them
    uint32_t count = 1;
    bool read_only = false;
    // A missing or empty file is created (and stamped) rather than refused.
    bool create = false;
    // Durable commits: fsync at each Commit (checkpointed states, whose shards commit only at a
    // checkpoint, before state.db's COMMIT); else synchronous=NORMAL, as state.db.
    bool sync_commits = false;
    uint64_t committed_generation = 0;  // state.db's
  };
  struct Entry {
    KeyHash hash;
    // False only when the caller knows the key is not stored (the Bloom filter, which holds every
    // stored key, said "new", and no earlier entry of the batch has the same key).
    bool maybe_present = true;
  };
  struct Times {
    int64_t first_seen = 0;    // unix seconds; 0 = unknown (a key migrated from a version-1 store)
    int64_t last_fetched = 0;  // unix seconds; 0 = never recorded
  };

  // Opens (or creates) the file, checks its stamp, repairs the rows of uncommitted generations
  // (writable) and loads the index; calls on_key(hash) for every row that counts (null: skip).
  static Result<std::unique_ptr<ExactShard>> Open(
      const Options& options, const std::function<void(const KeyHash&)>& on_key = nullptr);
  ~ExactShard();

  // Records every entry that is not yet stored, tagged with `generation`, first seen at `now`.
  // inserted[i] becomes 1 when entries[i] was added, 0 when the shard already held it (or an
  // earlier entry of this batch added it). A forgotten row is revived, and a row first seen at or
  // before `renew_at_or_before` (a time-aware set's now - revisit_after; kNeverRenew otherwise)
  // is renewed: first seen now, inserted[i] = 1. Both retag the row with `generation` (unless it
  // was forgotten in that very generation), so that a crash before `generation` commits deletes
  // it: the key was not counted at the last committed generation either.
  static constexpr int64_t kNeverRenew = INT64_MIN;
  Status InsertIfAbsent(std::span<const Entry> entries, uint64_t generation, int64_t now,
                        int64_t renew_at_or_before, uint8_t* inserted);
  Result<bool> Contains(const KeyHash& hash);
  // Deletes the row; when `defer` (a checkpointed state) and the row is of an older generation
  // than `generation`, marks it forgotten in `generation` instead, so that a crash before the
  // checkpoint brings it back. True when the key was stored.
  Result<bool> Forget(const KeyHash& hash, uint64_t generation, bool defer);
  // Sets last_fetched; false when the key is not stored.
  Result<bool> SetLastFetched(const KeyHash& hash, int64_t unix_seconds);
  Result<std::optional<Times>> GetTimes(const KeyHash& hash);

  Status Begin() { return db_->Begin("starting a transaction of the exact store"); }
  Status Commit() { return db_->Commit("committing the exact store"); }
  Status Rollback() { return db_->Rollback(); }
  // A savepoint inside the open transaction (a checkpointed state's batch).
  Status Savepoint() { return db_->Exec("SAVEPOINT batch", "starting a batch of the exact store"); }
  Status Release() { return db_->Exec("RELEASE batch", "finishing a batch of the exact store"); }
  Status RollbackToSavepoint() {
    return db_->Exec("ROLLBACK TO batch; RELEASE batch", "undoing a batch of the exact store");
  }
  bool InTransaction() const;

  uint64_t rows() const {
    return rows_.load(std::memory_order_relaxed);
  }  // stored keys (any thread)
  // After a rollback: the count as it was before the rolled-back writes.
  void RestoreRows(uint64_t rows) { rows_.store(rows, std::memory_order_relaxed); }
  size_t index_bytes() const { return slots_.size() * sizeof(Slot); }
  const std::string& path() const { return db_->path(); }
  SqliteDb& db() { return *db_; }

 private:
  struct Slot {
    uint32_t tag;  // bits 32..63 of hash.low
    uint32_t id;   // row id; 0 marks an empty slot (SQLite row ids start at 1)
  };
  struct Found {
    int64_t id = 0;  // 0: not stored
    bool forgotten = false;
    uint64_t forgot = 0;  // the generation it was forgotten in (0: never)
    uint64_t generation = 0;
    Times times;
  };

  explicit ExactShard(const Options& options) : options_(options) {}
  Status CreateOrCheckStamp();
  Status EmptyError() const;
  Status Prepare();
  Status LoadIndex(const std::function<void(const KeyHash&)>& on_key);
  // The row holding `hash` (forgotten rows included, with `forgotten` set), or id 0.
  Result<Found> Lookup(const KeyHash& hash);
  Status AddToIndex(const KeyHash& hash, int64_t id);
  void Place(Slot slot);
  static uint32_t Tag(const KeyHash& hash) { return static_cast<uint32_t>(hash.low >> 32); }

  const Options options_;
  std::unique_ptr<SqliteDb> db_;
  SqliteStatement insert_;  // INSERT INTO seen(hi, lo, first_seen, gen)
  SqliteStatement fetch_;   // SELECT hi, lo, forgot, gen, first_seen, last_fetched ... WHERE id = ?
  SqliteStatement renew_;   // UPDATE seen SET forgot = 0, first_seen = ?, gen = ? WHERE id = ?
  SqliteStatement delete_;  // DELETE FROM seen WHERE id = ?
  SqliteStatement mark_forgotten_;  // UPDATE seen SET forgot = ? WHERE id = ?
  SqliteStatement set_fetched_;     // UPDATE seen SET last_fetched = ? WHERE id = ?
  std::vector<Slot> slots_;         // power-of-two size, linear probing, load <= 3/4
  uint64_t used_ = 0;               // slots in use (stale ones included)
  std::atomic<uint64_t> rows_{0};
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_SHARD_H_
