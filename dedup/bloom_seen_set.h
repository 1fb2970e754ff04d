// BloomSeenSet: the SeenSet (seen_set.h) of a scalable Bloom filter (scalable_bloom_filter.h),
// in memory or kept in a state directory (StateDir, state_dir.h): DIR/bloom.snap plus the delta
// log DIR/bloom.delta (bloom_delta_log.h), replayed on open, with bloom.snap.next for a
// checkpoint that writes the whole filter; the rules are in seen_filter.h. A "seen" answer may
// be a false positive (at most the filter's ε); "new" is always right. ExactSeenSet
// (exact_seen_set.h) derives from it to confirm every "maybe seen" in SQLite.
//
// Checkpoints (StateSeenSet's protocol): PrepareCheckpoint(g) writes the meta rows (`bloom_delta`,
// the exact counters) and either appends the keys new since the last checkpoint to bloom.delta
// (fdatasynced) or, now and then, the whole filter to bloom.snap.next; CheckpointCommitted(g)
// marks the record committed or renames bloom.snap.next over bloom.snap.
//
// Deletable (docs/features/forgetting.md, "Forgetting"): a Bloom-only set whose state has
// `deletable` keeps a counting filter (counting_bloom_filter.h, 4x the memory) instead of the plain
// one, and ForgetHashed removes keys from it; the snapshot is then a counting one
// (bloom_snapshot.h, version 3) and each delta-log record carries the keys forgotten in its
// checkpoint as well as the new ones (bloom_delta_log.h, "Removals"). A plain set's ForgetHashed is
// SeenSet's Unsupported error.
//
// Thread-safety: as SeenSet. Inserts hold `mu_` shared (the filter has its own per-key locks;
// `mu_` only keeps a checkpoint from snapshotting in the middle of a batch); the checkpoint steps
// hold it exclusively.
#ifndef URLSIEVE_DEDUP_BLOOM_SEEN_SET_H_
#define URLSIEVE_DEDUP_BLOOM_SEEN_SET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/state_seen_set.h"

namespace urlsieve {

class BloomDeltaLog;
class Clock;
class CountingBloomFilter;
class ScalableBloomFilter;
class StateDir;

struct StateSeenSetOptions {
  // Exact mode: rebuild the Bloom filter from the exact store instead of loading bloom.snap
  // (FailedPrecondition for a Bloom-only state).
  bool rebuild_bloom = false;
  // False: the state's owner (the crawl, CrawlState) checkpoints the set; Save() is then
  // FailedPrecondition.
  bool saves = true;
  // A time-aware state (revisit_after): the clock that ages its keys (generational_seen_set.h,
  // exact_seen_set.h); null = the system's wall clock.
  const Clock* clock = nullptr;
};

// The set kept in `dir` (which must outlive it): an ExactSeenSet when the state is exact, else a
// BloomSeenSet. Loads the Bloom filter (settling bloom.snap.next, replaying bloom.delta) or
// rebuilds it from the exact store when asked to or when the database says it is due, upgrades a
// version-1 state (StateDir::Upgrade) and restamps its snapshot. Notices (kRebuilt, kUpgraded)
// are appended to `notices`. Errors as SeenFilter::Open; on error no file has been changed.
// A Bloom-only state with a revisit_after gets a GenerationalSeenSet (generational_seen_set.h)
// instead; an exact one ages its keys in the store (exact_seen_set.h).
Result<std::unique_ptr<StateSeenSet>> OpenStateSeenSet(StateDir* dir,
                                                       const StateSeenSetOptions& options,
                                                       std::vector<SeenNotice>* notices);

class BloomSeenSet : public StateSeenSet {
 public:
  // Nothing persists: Save() does nothing, PrepareCheckpoint is FailedPrecondition.
  // `deletable`: a counting filter, so that ForgetHashed works.
  static Result<std::unique_ptr<BloomSeenSet>> InMemory(uint64_t capacity, double fp_rate,
                                                        bool deletable = false);
  ~BloomSeenSet() override;
  BloomSeenSet(const BloomSeenSet&) = delete;
  BloomSeenSet& operator=(const BloomSeenSet&) = delete;

  Status InsertHashedIfNew(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                           std::span<bool> is_new) override;
  Result<bool> InsertHashedKeyIfNew(std::string_view key, const KeyHash& hash) override;
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;
  // Deletable: removes the keys from the counting filter (forgotten[i]: it tested present).
  // Otherwise SeenSet's Unsupported error.
  Status ForgetHashed(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      std::span<bool> forgotten) override;
  SeenStats Stats() const override;
  StateIdentity identity() const override;
  Status Save() override;
  // `db` must be the database of the set's StateDir.
  Status PrepareCheckpoint(SqliteDb& db, uint64_t generation) override;
  Status CheckpointCommitted(uint64_t generation) override;

 protected:
  friend Result<std::unique_ptr<StateSeenSet>> OpenStateSeenSet(StateDir*,
                                                                const StateSeenSetOptions&,
                                                                std::vector<SeenNotice>*);
  // `dir` null: in memory.
  BloomSeenSet(StateDir* dir, const StateSeenSetOptions& options, uint64_t capacity, double fp_rate,
               bool deletable = false);

  // Exact mode (ExactSeenSet): opens the store, refilling the (empty) Bloom filter from its rows
  // when `refill` (notices: a migration); the rows it holds; its part of a checkpoint's prepare
  // step, before the Bloom filter's (mu_ held exclusively).
  virtual bool exact() const { return false; }
  virtual Status OpenStore(bool refill, std::vector<SeenNotice>* notices);
  virtual uint64_t StoredKeysLocked() const { return 0; }
  virtual Status PrepareStoreLocked(uint64_t generation) {
    (void)generation;
    return Status::Ok();
  }
  Status ReadOnlyError() const;

  StateDir* const dir_;  // null in memory
  const StateSeenSetOptions options_;
  const uint64_t capacity_;
  const double fp_rate_;
  const bool read_only_;
  const bool deletable_;  // counting_ instead of bloom_
  // Shared by Bloom-only inserts, exclusive for exact-mode batches, Contains in exact mode, and
  // the checkpoint steps.
  mutable std::shared_mutex mu_;
  std::unique_ptr<ScalableBloomFilter> bloom_;     // null when deletable_
  std::unique_ptr<CountingBloomFilter> counting_;  // deletable_ only
  // Persistent: the keys new since the last checkpoint, and bloom.delta (bloom_delta_log.h).
  std::unique_ptr<BloomDeltaLog> delta_log_;
  bool snapshot_current_ = true;  // bloom.snap matches the committed rows; guarded by mu_
  // From urlsieve_meta: the snapshot generation a standalone exact batch superseded (see
  // seen_filter.h).
  std::optional<uint64_t> superseded_snapshot_;
  std::atomic<uint64_t> maybe_lookups_{0};
  std::atomic<uint64_t> false_positives_{0};

 private:
  // Loads bloom.snap (after settling bloom.snap.next) plus the delta log, or rebuilds the filter
  // when asked to or when the database says it is due, and opens the exact store; then upgrades
  // a version-1 state.
  Status Load(std::vector<SeenNotice>* notices);
  Status LoadBloom(std::vector<SeenNotice>* notices);
  // --rebuild (exact mode only): a new filter filled from the store.
  Status RebuildFromStore(std::vector<SeenNotice>* notices);
  // bloom.snap.next, left by a checkpoint that crashed around its COMMIT: renamed over bloom.snap
  // (or, read-only, used in its place: *use_next), deleted, or an error, by its generation.
  Status SettleNextSnapshot(bool* use_next);
  // `file` plus the committed records of the delta log, at the database's generation (or, for a
  // standalone exact state whose rows are newer, the filter refilled from the store).
  Status LoadSnapshot(const std::string& file, bool use_next, std::vector<SeenNotice>* notices);
  Status NewBloom();
  // bloom_ or counting_, whichever the set keeps.
  Status SaveFilter(const std::string& path, uint64_t generation) const;
  uint64_t FilterBytes() const;
  std::unique_ptr<BloomDeltaLog> DetachedLog() const;
  Status PrepareLocked(uint64_t generation);
  Status CommittedLocked(uint64_t generation);
  std::string SnapshotPath() const;
  std::string NextSnapshotPath() const;
  std::string DeltaLogPath() const;

  bool snapshot_unstamped_ = false;  // bloom.snap is a version-1 file (zero identity)
  bool full_snapshot_ = false;       // the prepared checkpoint writes bloom.snap.next
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_BLOOM_SEEN_SET_H_
