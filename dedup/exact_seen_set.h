// ExactSeenSet: the SeenSet of a Bloom filter whose every "maybe seen" is confirmed against the
// exact store (exact_store.h): the 128-bit fingerprints of the stored keys, sharded over
// DIR/seen-NN.db. One probe of the shard's hash index, one row read and a comparison of the
// fingerprint, so no new key is ever reported as seen (up to the fingerprint collision bound,
// n^2 / 2^129). It costs ~13 bytes of RAM per stored key on top of the Bloom filter's ~2, and
// keeps each key's first-seen and last-fetched times (KeyTimesHashed, RecordFetchedHashed).
//
// Time-aware (a state with revisit_after T, docs/features/generational.md): a key first seen at
// or before now - T is new again, to the second. The Bloom filter still only says "surely new";
// a "maybe" is settled by the row's first-seen time, and a renewed row is first seen now. The
// filter keeps every key, aged or not, so a state of many expired keys probes the store more
// often than a generational Bloom filter would, but never forgets a key early.
//
// Why a subclass of BloomSeenSet rather than a decorator over any SeenSet: the store and the
// filter are one structure, not two layers. A key's Bloom test-and-set, confirmation and insert
// happen under one lock (below); a key goes into the filter's delta log only once the store has
// decided it is new; and the filter is rebuilt from the store's fingerprints when its snapshot is
// missing or behind. A decorator would have to reach into the filter for each.
//
// Transactions. In a checkpointed state (the crawl, `filter --exact`) every shard keeps a
// transaction open; the checkpoint's prepare step commits them (synced) just before state.db's
// COMMIT, rows tagged with the generation that COMMIT makes, so that a crash in between is undone
// on the next open (exact_shard.h). Standalone, each batch commits the shards it wrote: the first
// one after a checkpoint first commits generation g + 1 in state.db and records the snapshot it
// supersedes (`superseded_snapshot`), so that after a crash before the next Save the filter is
// rebuilt from the rows (seen_filter.h). ForgetHashed deletes the key's row (checkpointed: marks it
// forgotten in the pending generation, so a crash before the checkpoint brings it back).
//
// Thread-safety: as SeenSet. `mu_` is held shared by batches (exclusive by the checkpoint steps,
// the standalone generation bump), and each shard's mutex across the Bloom test-and-set, the
// confirmation and the insert of that shard's keys. Without it, thread A's Bloom "new" could set
// the bits, thread B's Bloom could then say "maybe" and probe the store before A wrote the row:
// both would be told "new". A key always falls in the same shard, so that cannot happen, while
// keys of different shards go on in parallel, each shard a separate SQLite file and connection
// (docs/architecture.md, "Invariants", 5).
#ifndef URLSIEVE_DEDUP_EXACT_SEEN_SET_H_
#define URLSIEVE_DEDUP_EXACT_SEEN_SET_H_

#include <memory>
#include <vector>

#include "dedup/bloom_seen_set.h"
#include "dedup/exact_store.h"

namespace urlsieve {

class ExactSeenSet final : public BloomSeenSet {
 public:
  ~ExactSeenSet() override;

  Status InsertHashedIfNew(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                           std::span<bool> is_new) override;
  Result<bool> InsertHashedKeyIfNew(std::string_view key, const KeyHash& hash) override {
    return SeenSet::InsertHashedKeyIfNew(key, hash);  // the batch path, under the locks
  }
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;
  Status ForgetHashed(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      std::span<bool> forgotten) override;
  Status RecordFetchedHashed(std::span<const std::string_view> keys,
                             std::span<const KeyHash> hashes, int64_t fetched_at) override;
  Result<std::optional<SeenKeyTimes>> KeyTimesHashed(std::string_view key,
                                                     const KeyHash& hash) const override;

  // For tests and benchmarks: the store (its shards and their files).
  ExactStore& store() { return *store_; }

 private:
  friend Result<std::unique_ptr<StateSeenSet>> OpenStateSeenSet(StateDir*,
                                                                const StateSeenSetOptions&,
                                                                std::vector<SeenNotice>*);
  using BloomSeenSet::BloomSeenSet;
  struct Batch;

  bool exact() const override { return true; }
  Status OpenStore(bool refill, std::vector<SeenNotice>* notices) override;
  uint64_t StoredKeysLocked() const override { return store_ == nullptr ? 0 : store_->rows(); }
  Status PrepareStoreLocked(uint64_t generation) override;

  // Standalone: commits generation g + 1 before the first rows after a snapshot (see above).
  Status SupersedeSnapshot(std::shared_lock<std::shared_mutex>* lock);
  // The generation new rows and forgets are tagged with.
  uint64_t PendingGeneration() const;
  // The wall clock (StateSeenSetOptions::clock), in unix seconds.
  int64_t UnixNow() const;
  // A time-aware state (revisit_after T): a key first seen at or before now - T is new again;
  // ExactShard::kNeverRenew otherwise.
  int64_t RenewAtOrBefore(int64_t now) const;
  // Runs `work(shard, positions)` for each shard that holds some of `hashes`, positions being
  // the indexes of its keys, under the shard's mutex and, standalone, in its own transaction.
  // Shards free at once are served first. Stops at the first error.
  Status ForEachShard(std::span<const KeyHash> hashes,
                      const std::function<Status(ExactShard&, std::span<const uint32_t>)>& work);
  Status InShard(uint32_t shard, std::span<const uint32_t> positions,
                 const std::function<Status(ExactShard&, std::span<const uint32_t>)>& work);

  std::unique_ptr<ExactStore> store_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_SEEN_SET_H_
