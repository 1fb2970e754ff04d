// SeenFilter: the URL-seen stage a crawler embeds (DESIGN.md §4). It canonicalizes a URL, hashes
// the key once (XXH3-128), and asks a scalable Bloom filter whether it is new; in exact mode every
// Bloom "maybe seen" is confirmed against the exact store (one probe of its hash index, one row
// read from SQLite and a comparison of the full canonical URL), so no new URL is ever reported as
// seen. Exact mode costs ~13 bytes of RAM per stored key on top of the Bloom filter's ~2.
//
// Modes
//  - In memory (state_dir empty): a Bloom filter only; nothing persists.
//  - Persistent (state_dir set): the state lives in a directory (layout below) and survives
//    restarts. Standalone (checkpointed = false): each batch written to the exact store is its own
//    transaction. Checkpointed (the crawl): writes accumulate in one long transaction on the shared
//    state database and become durable together with the caller's tables (the frontier's) at
//    Checkpoint().
//
// State directory layout (format version 2)
//   DIR/LOCK              flock(2)ed for as long as a SeenFilter has the state open (state_lock.h):
//                         exclusively by a writable open, which writes its pid there; shared by a
//                         read-only one. A second process is refused with the holder's pid.
//   DIR/state.db          SQLite. `urlsieve_meta(key TEXT PRIMARY KEY, value)`: format
//                         "urlsieve-state", version, identity (32 hex digits, state_identity.h),
//                         capacity, fp_rate, exact, canonicalizer options, generation, counters,
//                         `bloom_delta` (which part of bloom.delta is committed: "<snapshot
//                         generation> <bytes>").
//                         In exact mode also `seen_urls` (see exact_store.h). In checkpointed mode
//                         other layers add their own tables.
//   DIR/bloom.snap        The Bloom filter snapshot (bloom_snapshot.h), stamped with the state's
//                         identity and the generation of the database commit it matches.
//   DIR/bloom.delta       The Bloom delta log (bloom_delta_log.h): per checkpoint since bloom.snap,
//                         the hashes of the keys new in it, each record stamped with the identity
//                         and its generation. The Bloom filter is bloom.snap plus the committed
//                         records, replayed on open.
//   DIR/bloom.snap.next   Transient: the snapshot of a checkpoint whose commit may not have
//                         happened. Each Checkpoint writes it, COMMITs the new generation, then
//                         renames it over bloom.snap. On open, a .next of this identity whose
//                         generation equals the database's is promoted (the crash hit after the
//                         commit); one at the next generation is discarded (the commit never
//                         happened). Anything else is an error, and the file is left alone.
// A Checkpoint of generation g+1 usually appends the keys new since g to bloom.delta (and
// fdatasyncs it), then COMMITs g+1 with the log's new committed length: its cost is proportional
// to the keys new since the last checkpoint. A record past the committed length is a checkpoint
// that never committed and is ignored. Now and then (the first checkpoint, after a rebuild or an
// upgrade, when the log would pass a quarter of the filter's size, or after standalone exact-mode
// batches committed a generation of their own) it writes the whole filter instead:
// bloom.snap.next, COMMIT (with an empty log), rename over bloom.snap.
// The first open creates the directory, a random identity, and records the given capacity, ε,
// exact flag and canonicalizer options; later opens reuse the stored ones (notices() says when the
// caller asked for others).
//
// Nothing is ever silently reset, rebuilt, overwritten or deleted. On open these are errors that
// name the files, and leave every file as it was:
//  - a state.db that is missing or empty (0 bytes) while bloom.snap (or .next) exists (Corruption);
//  - a state.db shorter than its header says (sqlite_db.h), foreign, or damaged (Corruption);
//  - a snapshot of another identity: copied from another state directory (Corruption, naming both
//    files and both identities);
//  - a damaged, foreign or stale delta log (Corruption);
//  - a snapshot of another generation (stale, or newer than the database), a corrupt snapshot
//    (Corruption), or a missing one once the state has a generation > 0 (FailedPrecondition).
// In exact mode the Bloom filter can be rebuilt from the exact store, but only on request
// (rebuild_bloom, `--rebuild`); a Bloom-only state cannot be rebuilt at all. One rebuild happens
// by itself, because the database says it is due: a standalone exact filter commits rows with
// each batch and marks the snapshot they supersede in the same transaction (`superseded_snapshot`),
// so after a crash the snapshot of exactly that generation is known to be merely behind the rows.
//
// Version-1 states (before identities) are upgraded on their first writable open: the snapshot is
// checked by the version-1 rules, then an identity is committed to state.db (with the generation
// it was assigned at, `upgraded_at_generation`) and the snapshot is rewritten stamped with it (a
// kUpgraded notice says so). If a crash falls between the two, the next open accepts the unstamped
// snapshot once more, at that generation only. A read-only open of a version-1 state reads it as
// it is.
//
// Read-only opens (read_only, for `urlsieve stats`) take the shared lock, open state.db without
// creating anything (not even SQLite's -wal/-shm files when no WAL holds data), use a committed
// bloom.snap.next without promoting it, and never upgrade, rebuild on disk or delete anything.
//
// Durability: a Bloom-only filter is durable at Save()/Checkpoint(). An exact standalone filter
// commits each batch, so its rows survive a crash; the Bloom filter is then rebuilt from them. In
// checkpointed mode a crash returns the whole state (Bloom filter, rows, the caller's tables) to
// the last Checkpoint. The caller must not let a checkpoint fall between an insert told "new" and
// the caller's own record of that URL (the crawl: hold its own lock around insert + push).
//
// Thread-safety: every method may be called concurrently. Exactly one of several threads inserting
// the same URL at once is told "new" (DESIGN invariant 5):
//  - Bloom-only mode: by the Bloom filter's own per-key lock; inserts hold `mu_` shared, only to
//    keep Checkpoint() (exclusive) from snapshotting in the middle of a batch.
//  - Exact mode: a batch holds `mu_` exclusively across Bloom test-and-set, SQLite confirmation and
//    insert. Without it, thread A's Bloom "new" could set the bits, thread B's Bloom could then say
//    "maybe" and probe SQLite before A wrote the row: both would be told "new". SQLite has one
//    writer per database anyway, so the lock costs no parallelism there; canonicalizing and hashing
//    run before it is taken.
#ifndef URLSIEVE_DEDUP_SEEN_FILTER_H_
#define URLSIEVE_DEDUP_SEEN_FILTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/exact_store.h"
#include "dedup/state_identity.h"
#include "dedup/state_lock.h"
#include "dedup/url_canonicalizer.h"

namespace urlsieve {

class BloomDeltaLog;
class ScalableBloomFilter;
class SqliteDb;
struct KeyHash;

struct SeenFilterOptions {
  uint64_t capacity = 10'000'000;  // keys at which the Bloom filter still meets fp_rate (it grows)
  double fp_rate = 1e-3;           // Bloom false-positive bound (ignored for answers in exact mode)
  std::string state_dir;           // empty: in memory only
  bool exact = false;              // SQLite confirms every Bloom "maybe" (needs state_dir)
  bool checkpointed = false;       // crawl mode: commit only at Checkpoint()
  CanonicalizeOptions canonicalize;
  // Exact mode: rebuild the Bloom filter from the exact store instead of loading bloom.snap (which
  // the next Save/Checkpoint then replaces). FailedPrecondition for a Bloom-only state. The only
  // way to get past a missing, stale or corrupt snapshot (see above).
  bool rebuild_bloom = false;
  // Open an existing state without writing anything (see above); inserts, Save and Checkpoint
  // are then FailedPrecondition. NotFound when the directory holds no state.db.
  bool read_only = false;
};

enum class Verdict : uint8_t { kNew, kSeen, kInvalid };

// Something Open wants the caller to know; nothing here is an error.
struct SeenNotice {
  enum class Kind : uint8_t {
    kStoredParameters,  // the state's stored parameters override the requested ones
    kRebuilt,           // the Bloom filter was rebuilt from the exact store (and why)
    kUpgraded,          // a version-1 state was given an identity (format version 2)
  };
  Kind kind;
  std::string text;
};

struct SeenResult {
  Verdict verdict = Verdict::kSeen;
  Status error;  // the reason when verdict == kInvalid
};

struct SeenStats {
  uint64_t capacity = 0;  // as stored
  double fp_rate = 0;     // as stored
  bool exact = false;
  uint64_t generation = 0;  // of the last commit/checkpoint
  StateIdentity identity;   // of the state directory (zero: a version-1 state opened read-only)
  // The Bloom filter.
  uint64_t bloom_inserted = 0;
  uint64_t bloom_capacity = 0;
  uint32_t bloom_layers = 0;
  uint64_t bloom_bytes = 0;
  double bloom_fill_ratio = 0;
  double bloom_expected_fp_rate = 0;
  // The exact store (exact mode). The lookup counters are cumulative over the state's lifetime as
  // of the last checkpoint, plus this session.
  uint64_t stored_keys = 0;      // rows in seen_urls
  uint64_t maybe_lookups = 0;    // Bloom "maybe seen" answers confirmed in SQLite
  uint64_t false_positives = 0;  // ... of which the key was in fact new
};

class SeenFilter {
 public:
  // Opens or creates the filter. InvalidArgument for bad options (exact without state_dir,
  // capacity 0, fp_rate outside (0, 1)); FailedPrecondition when another process has the state
  // directory open (naming its pid), or for a missing snapshot; Corruption for a foreign,
  // mixed-up or damaged state; IoError.
  static Result<std::unique_ptr<SeenFilter>> Open(const SeenFilterOptions& options);
  ~SeenFilter();
  SeenFilter(const SeenFilter&) = delete;
  SeenFilter& operator=(const SeenFilter&) = delete;

  // True if the URL's canonical key was never seen (and is now recorded). InvalidArgument for a
  // URL the canonicalizer rejects.
  Result<bool> InsertIfNew(std::string_view url);
  // One result per URL, in order; a URL repeated within the batch is new at most once (its first
  // occurrence). A non-OK Status means the exact store failed and no verdict can be trusted.
  Status InsertIfNewBatch(std::span<const std::string_view> urls, std::vector<SeenResult>* out);
  // For callers that already hold canonical keys (UrlCanonicalizer::CanonicalizeTo with the same
  // options as canonicalizer()): skips canonicalization. (*is_new)[i] is 1 for a new key.
  Status InsertKeysIfNew(std::span<const std::string_view> keys, std::vector<uint8_t>* is_new);

  // Has the URL been seen? (does not record it).
  Result<bool> Contains(std::string_view url) const;

  SeenStats Stats() const;

  // Makes everything inserted so far durable (a Checkpoint with nothing else to write). A no-op
  // for an in-memory filter.
  Status Save();
  // Under an exclusive lock (no insert runs): runs write_more(state_db) inside the current
  // transaction, records a new generation, appends the keys new since the last checkpoint to the
  // Bloom delta log (or now and then writes a full snapshot), COMMITs, and (checkpointed mode)
  // BEGINs the next transaction. FailedPrecondition for an in-memory filter.
  Status Checkpoint(const std::function<Status(SqliteDb&)>& write_more = nullptr);

  // The state database, shared with the crawl's other durable tables (null in memory). In
  // checkpointed mode a transaction is always open on it: use it only inside Checkpoint's
  // write_more, or while no insert runs.
  SqliteDb* state_db() { return db_.get(); }

  // The options in effect (the stored ones when an existing state was reopened).
  const SeenFilterOptions& options() const { return options_; }
  const UrlCanonicalizer& canonicalizer() const { return canonicalizer_; }
  // Notes from Open: stored parameters that override the requested ones, a Bloom filter rebuilt
  // from the exact store and why.
  const std::vector<SeenNotice>& notices() const { return notices_; }

 private:
  explicit SeenFilter(const SeenFilterOptions& options);

  Status OpenState(const SeenFilterOptions& requested);
  // Loads bloom.snap (after settling bloom.snap.next), or rebuilds the filter when asked to or
  // when the database says it is due, and opens the exact store.
  Status LoadBloom();
  // Ok when a state file stamped (identity, generation) may belong to this state; else
  // Corruption naming it, state.db and both identities.
  Status CheckIdentity(const std::string& file, const StateIdentity& file_identity,
                       uint64_t file_generation) const;
  // Opens the exact store; refills the (empty) Bloom filter from its rows when `refill`.
  Status OpenStore(bool refill);
  // A version-1 state gets an identity; its snapshot is stamped with it.
  Status Upgrade();
  std::string StateDbPath() const;
  Status ReadOnlyError() const;
  Status WriteMeta(std::string_view key, const std::string& value);
  // Decides, for keys already hashed, which are new. Takes mu_ itself.
  Status InsertHashed(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      bool* is_new);
  Status InsertExactLocked(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                           bool* is_new);
  Status CheckpointLocked(const std::function<Status(SqliteDb&)>& write_more);
  std::string SnapshotPath() const;
  std::string NextSnapshotPath() const;
  std::string DeltaLogPath() const;

  SeenFilterOptions options_;
  UrlCanonicalizer canonicalizer_;
  std::vector<SeenNotice> notices_;

  // Declared before db_, so it is released after the database is closed.
  std::unique_ptr<StateLock> lock_;  // null in memory
  StateIdentity identity_;           // zero while a version-1 state is not upgraded
  bool version1_ = false;            // the state has no identity yet (format version 1)
  bool snapshot_unstamped_ = false;  // bloom.snap is a version-1 file (zero identity)
  // From urlsieve_meta: the generation at which a version-1 state got its identity, and the
  // snapshot generation a standalone exact batch superseded (see the header comment).
  std::optional<uint64_t> upgraded_at_;
  std::optional<uint64_t> superseded_snapshot_;

  // Shared by Bloom-only inserts, exclusive for exact-mode batches, Contains in exact mode,
  // Checkpoint.
  mutable std::shared_mutex mu_;
  std::unique_ptr<ScalableBloomFilter> bloom_;
  std::unique_ptr<SqliteDb> db_;       // null in memory
  std::unique_ptr<ExactStore> store_;  // exact mode only
  // Persistent: the keys new since the last checkpoint, and bloom.delta (bloom_delta_log.h).
  std::unique_ptr<BloomDeltaLog> delta_log_;
  std::string delta_meta_;        // urlsieve_meta `bloom_delta` as opened (empty when absent)
  uint64_t generation_ = 0;       // guarded by mu_
  bool snapshot_current_ = true;  // bloom.snap matches the committed rows; guarded by mu_
  std::vector<ExactStore::Entry> entries_;  // exact-mode batch buffers, guarded by mu_
  std::vector<uint8_t> inserted_;
  std::atomic<uint64_t> maybe_lookups_{0};
  std::atomic<uint64_t> false_positives_{0};
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_SEEN_FILTER_H_
