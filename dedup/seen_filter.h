// SeenFilter: the URL-seen stage a crawler embeds
// (docs/features/seen-stage.md, "The seen stage (SeenSet)"). It canonicalizes a URL, hashes
// the key once (XXH3-128), and asks a SeenSet (seen_set.h) whether it is new: a scalable Bloom
// filter, and in exact mode every Bloom "maybe seen" confirmed against the exact store (one probe
// of its hash index, one row read from SQLite and a comparison of the full canonical URL), so no
// new URL is ever reported as seen. Exact mode costs ~13 bytes of RAM per stored key on top of the
// Bloom filter's ~2. Open() makes the filter and its set (and, persistent, the state directory);
// Over() puts the URL-level calls in front of a set someone else owns (the crawl's: CrawlState).
//
// Modes
//  - In memory (state_dir empty): a Bloom filter only; nothing persists.
//  - Persistent (state_dir set): the state lives in a directory (layout below) and survives
//    restarts. Standalone (checkpointed = false): each batch written to the exact store is its own
//    transaction. Checkpointed (`filter --exact`, and the crawl, whose CrawlState owns the state
//    and its checkpoints): writes accumulate in one long transaction on the state database and
//    become durable together (with the crawl's tables: the frontier's...) at the next checkpoint.
//  - Redis (redis_url and redis_name set): the set is a RedisSeenSet (redis_seen_set.h), shared by
//    every thread, process and machine that opens the same name on the same server; exactly one
//    of them is told "new" for a URL. No state directory, no checkpoints: each insert is in Redis
//    when it returns (Save and Checkpoint do nothing), and Redis's own persistence (AOF) decides
//    what survives a Redis crash: keys it forgets are reported new again, never lost. The first
//    open creates the set with the requested capacity, ε, exact flag and canonicalizer options;
//    later opens adopt the stored ones (a kStoredParameters notice when they differ), and
//    options() returns them. A Redis fault makes a call fail (kUnavailable when a retry may cure
//    it), never answer "seen". read_only opens an existing set for its stats.
//
// State directory layout (format version 2; the directory, its lock, state.db and its meta rows
// are StateDir, state_dir.h; the Bloom files BloomSeenSet, bloom_seen_set.h)
//   DIR/LOCK              flock(2)ed for as long as a SeenFilter has the state open (state_lock.h):
//                         exclusively by a writable open, which writes its pid there; shared by a
//                         read-only one. A second process is refused with the holder's pid.
//   DIR/state.db          SQLite. `urlsieve_meta(key TEXT PRIMARY KEY, value)`: format
//                         "urlsieve-state", version, identity (32 hex digits, state_identity.h),
//                         capacity, fp_rate, exact, canonicalizer options, generation, counters,
//                         `bloom_delta` (which part of bloom.delta is committed: "<snapshot
//                         generation> <bytes>").
//                         In exact mode also `exact_shards` (format version 3; format 1 of the
//                         exact store, table `seen_urls`, is migrated on the first writable open:
//                         exact_store_migration.h). In checkpointed mode other layers add tables.
//   DIR/seen-NN.db        Exact mode: the exact store's shards (exact_store.h, exact_shard.h),
//                         SQLite files of 128-bit fingerprints with their times, each stamped with
//                         the identity; a missing, empty, foreign or damaged one is an error.
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
//   DIR/bloom-gen-<index>.<checkpoint>.snap
//                         A state with revisit_after: one Bloom snapshot per live generation, named
//                         by urlsieve_meta `bloom_generations`, instead of bloom.snap/.delta (the
//                         rules: generational_seen_set.h).
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
// the same URL at once is told "new" (invariant 5, docs/architecture.md, "Invariants"): the set
// sees to it (bloom_seen_set.h, exact_seen_set.h); canonicalizing and hashing run before it takes
// any lock.
#ifndef URLSIEVE_DEDUP_SEEN_FILTER_H_
#define URLSIEVE_DEDUP_SEEN_FILTER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/seen_set.h"
#include "url/url_canonicalizer.h"

namespace urlsieve {

class Clock;
class StateDir;

// Keys a process remembers as in a Redis set, to answer repeats without a round trip (up to ~32
// bytes of memory each: 32 MiB by default; see redis_front_cache.h).
inline constexpr uint64_t kDefaultRedisFrontCacheKeys = uint64_t{1} << 20;
inline constexpr uint32_t kDefaultGenerations = 4;

struct SeenFilterOptions {
  uint64_t capacity = 10'000'000;  // keys at which the Bloom filter still meets fp_rate (it grows)
  double fp_rate = 1e-3;           // Bloom false-positive bound (ignored for answers in exact mode)
  std::string state_dir;           // empty: in memory only
  bool exact = false;              // SQLite confirms every Bloom "maybe" (needs state_dir)
  bool checkpointed = false;       // commit only at Checkpoint()
  CanonicalizeOptions canonicalize;
  // Exact mode: rebuild the Bloom filter from the exact store instead of loading bloom.snap (which
  // the next Save/Checkpoint then replaces). FailedPrecondition for a Bloom-only state. The only
  // way to get past a missing, stale or corrupt snapshot (see above).
  bool rebuild_bloom = false;
  // Open an existing state without writing anything (see above); inserts, Save and Checkpoint
  // are then FailedPrecondition. NotFound when the directory holds no state.db.
  bool read_only = false;
  // A seen set shared in Redis (redis_seen_set.h) instead of a local one: the server,
  // "redis://[[user]:password@]host:port[/db]", and the set's name there (both or neither).
  // state_dir must then be empty, and checkpointed and rebuild_bloom false (InvalidArgument
  // otherwise); exact needs no state_dir; read_only opens an existing set for its stats.
  std::string redis_url;
  std::string redis_name;
  uint64_t redis_front_cache_keys = kDefaultRedisFrontCacheKeys;  // answered locally; 0: none
  // Repair a set that lost data at open instead of failing (RedisSeenSetOptions::accept_loss).
  bool redis_accept_loss = false;
  // Time (docs/features/generational.md): a key told new longer ago than revisit_after is new
  // again; 0 = never. Bloom-only, the set is `generations` Bloom filters, each covering
  // revisit_after / generations (a key comes back at most one generation late), sized together
  // for `capacity` keys per revisit_after at fp_rate overall. Exact, the store's first-seen time
  // decides, to the second (`generations` unused). Stored with the state, like capacity.
  std::chrono::seconds revisit_after{0};
  uint32_t generations = kDefaultGenerations;
  // The clock that ages keys (tests pass a ManualClock); null = the system's wall clock.
  // Must outlive the filter.
  const Clock* clock = nullptr;
  // Bloom-only forgetting (docs/features/forgetting.md, "Forgetting"): the filter keeps 4-bit
  // saturating counters instead of bits (4x the memory), so that Forget() can remove a key. Stored.
  bool deletable = false;
};

enum class Verdict : uint8_t { kNew, kSeen, kInvalid };

struct SeenResult {
  Verdict verdict = Verdict::kSeen;
  Status error;  // the reason when verdict == kInvalid
};

// What SeenFilter::ForgetBatch did with one URL.
enum class ForgetOutcome : uint8_t { kForgotten, kNotThere, kInvalid };

struct ForgetResult {
  ForgetOutcome outcome = ForgetOutcome::kNotThere;
  Status error;  // the reason when outcome == kInvalid
};

class SeenFilter {
 public:
  // Opens or creates the filter. InvalidArgument for bad options (exact without state_dir or
  // Redis, capacity 0, fp_rate outside (0, 1), a malformed tracking exception, a bad redis_url,
  // redis_url without redis_name or the reverse, redis_url with state_dir, checkpointed or
  // rebuild_bloom; revisit_after < 0 or generations outside [1, 256]); FailedPrecondition when
  // another process has the state directory open (naming its pid), or for a missing snapshot;
  // Corruption for a foreign, mixed-up or damaged state; IoError. Over Redis, the errors of
  // RedisSeenSet::Open, naming the server: kUnavailable (no server), kFailedPrecondition (a wrong
  // password, a peer that is not Redis, a name holding another type), kUnsupported / kCorruption
  // (a set of another version or not ours), NotFound (read_only, no such set).
  static Result<std::unique_ptr<SeenFilter>> Open(const SeenFilterOptions& options);
  // The URL-level calls over `set`, which the caller owns and keeps alive (the crawl's seen set,
  // CrawlState). `options` are the set's stored parameters: options() returns them, and
  // options.canonicalize must be the rules the set's keys are made with. (Not read from
  // set->Stats(), which counts the filter's set bits: a pass over all of its memory.)
  static std::unique_ptr<SeenFilter> Over(SeenSet* set, const SeenFilterOptions& options);
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
  Status InsertKeysIfNew(std::span<const std::string_view> keys, std::vector<uint8_t>* is_new) {
    URLSIEVE_RETURN_IF_ERROR(CheckProcess());
    return set_->InsertKeysIfNew(keys, is_new);
  }

  // Has the URL been seen? (does not record it).
  Result<bool> Contains(std::string_view url) const;

  // Forgetting (docs/features/forgetting.md, "Forgetting"): removes the URL's canonical key
  // (canonicalized as for an insert), so that its next insert is told new. True when the key was in
  // the set (for a counting filter: tested present). InvalidArgument for a URL the canonicalizer
  // rejects; Unsupported (nothing changed) for a plain Bloom filter, naming exact mode and
  // deletable. Durable as inserts are: Save() / Checkpoint().
  Result<bool> Forget(std::string_view url);
  // One result per URL, in order; a rejected URL is kInvalid and does not stop the others. A
  // non-OK Status (Unsupported, a store failure) means nothing can be trusted of the batch.
  Status ForgetBatch(std::span<const std::string_view> urls, std::vector<ForgetResult>* out);

  // Empty stats in a fork() child (see CheckProcess).
  SeenStats Stats() const { return CheckProcess().ok() ? set_->Stats() : SeenStats(); }

  // Makes everything inserted so far durable: the set's Save (seen_set.h). A no-op for an
  // in-memory filter and over Redis.
  Status Save() {
    URLSIEVE_RETURN_IF_ERROR(CheckProcess());
    return set_->Save();
  }
  // The same, but FailedPrecondition for an in-memory filter (a no-op over Redis).
  Status Checkpoint();
  // What closing the filter saves (the Python, C and Node closes): a state directory's inserts
  // (Save); nothing in memory, over Redis, or in a fork() child, whose state is the parent's.
  Status SaveForClose() {
    if (options_.state_dir.empty() || !CheckProcess().ok()) return Status::Ok();
    return set_->Save();
  }

  // The options in effect (the stored ones when an existing state was reopened).
  const SeenFilterOptions& options() const { return options_; }
  const UrlCanonicalizer& canonicalizer() const { return canonicalizer_; }
  // The set the filter asks.
  SeenSet& seen_set() { return *set_; }
  const SeenSet& seen_set() const { return *set_; }
  // Notes from Open: stored parameters that override the requested ones, a Bloom filter rebuilt
  // from the exact store and why.
  const std::vector<SeenNotice>& notices() const { return notices_; }

 private:
  SeenFilter(const SeenFilterOptions& options);
  // Open() of the Redis mode (options checked).
  static Result<std::unique_ptr<SeenFilter>> OpenRedis(const SeenFilterOptions& options);
  // FailedPrecondition in a process that inherited the filter through fork(): its state and
  // connections stay the parent's (base/fork_generation.h). Every call checks it; the destructor
  // in such a child releases nothing the parent uses (no save, no close).
  Status CheckProcess() const;

  SeenFilterOptions options_;
  UrlCanonicalizer canonicalizer_;
  std::vector<SeenNotice> notices_;
  // Open(): the state directory (null in memory) and the set in it. Declared in this order so
  // that the set is closed before the directory's database and lock.
  std::unique_ptr<StateDir> dir_;
  std::unique_ptr<SeenSet> owned_set_;
  SeenSet* set_ = nullptr;
  const uint64_t fork_generation_;  // ForkGeneration() when the filter was made
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_SEEN_FILTER_H_
