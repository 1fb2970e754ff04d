// ExactSeenSet: the SeenSet of a Bloom filter whose every "maybe seen" is confirmed against an
// SQLite exact store (exact_store.h) in the state database: one probe of its hash index, one row
// read and a comparison of the full canonical key, so no new key is ever reported as seen. It
// costs ~13 bytes of RAM per stored key on top of the Bloom filter's ~2.
//
// Why a subclass of BloomSeenSet rather than a decorator over any SeenSet: the store and the
// filter are one structure, not two layers. A batch holds the filter's lock across Bloom
// test-and-set, SQLite confirmation and insert (below); a key goes into the filter's delta log
// only once the store has decided it is new; and the filter is rebuilt from the store's rows when
// its snapshot is missing or behind. A decorator would have to reach into the filter for each.
//
// Transactions. In a checkpointed state (the crawl, `filter --exact`) the rows accumulate in the
// open transaction and commit with the checkpoint. Standalone, each batch is its own transaction:
// the first one after a checkpoint also commits generation g + 1 and records the snapshot it
// supersedes (`superseded_snapshot`), so that after a crash before the next Save the filter is
// rebuilt from the rows (seen_filter.h).
//
// Thread-safety: as SeenSet. A batch holds `mu_` exclusively across Bloom test-and-set, SQLite
// confirmation and insert. Without it, thread A's Bloom "new" could set the bits, thread B's Bloom
// could then say "maybe" and probe SQLite before A wrote the row: both would be told "new".
// SQLite has one writer per database anyway, so the lock costs no parallelism there.
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
    return SeenSet::InsertHashedKeyIfNew(key, hash);  // the batch path, under the lock
  }
  Result<bool> ContainsHashed(std::string_view key, const KeyHash& hash) const override;

 private:
  friend Result<std::unique_ptr<SeenSet>> OpenStateSeenSet(StateDir*, const StateSeenSetOptions&,
                                                           std::vector<SeenNotice>*);
  using BloomSeenSet::BloomSeenSet;

  bool exact() const override { return true; }
  Status OpenStore(bool refill) override;
  uint64_t StoredKeysLocked() const override { return store_ == nullptr ? 0 : store_->rows(); }
  Status InsertLocked(std::span<const std::string_view> keys, std::span<const KeyHash> hashes,
                      bool* is_new);

  std::unique_ptr<ExactStore> store_;
  std::vector<ExactStore::Entry> entries_;  // batch buffers, guarded by mu_
  std::vector<uint8_t> inserted_;
};

}  // namespace urlsieve

#endif  // URLSIEVE_DEDUP_EXACT_SEEN_SET_H_
