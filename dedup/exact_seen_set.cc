#include "dedup/exact_seen_set.h"

#include <functional>
#include <mutex>

#include "base/sqlite_db.h"
#include "dedup/bloom_delta_log.h"
#include "dedup/key_hash.h"
#include "dedup/scalable_bloom_filter.h"
#include "dedup/state_dir.h"

namespace urlsieve {

ExactSeenSet::~ExactSeenSet() = default;

Status ExactSeenSet::OpenStore(bool refill) {
  std::function<void(std::string_view)> fill;
  if (refill) fill = [this](std::string_view key) { bloom_->InsertIfNew(HashKey(key)); };
  auto store = ExactStore::Open(&dir_->db(), fill);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  return Status::Ok();
}

Status ExactSeenSet::InsertHashedIfNew(std::span<const std::string_view> keys,
                                       std::span<const KeyHash> hashes, std::span<bool> is_new) {
  if (read_only_) return ReadOnlyError();
  std::unique_lock lock(mu_);
  return InsertLocked(keys, hashes, is_new.data());
}

Status ExactSeenSet::InsertLocked(std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, bool* is_new) {
  bloom_->InsertIfNewBatch(hashes, is_new);
  entries_.clear();
  uint64_t maybes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    entries_.push_back({hashes[i].low, keys[i], /*maybe_present=*/!is_new[i]});
    maybes += is_new[i] ? 0 : 1;
  }
  SqliteDb& db = dir_->db();
  const bool own_transaction = !dir_->checkpointed();
  if (own_transaction) URLSIEVE_RETURN_IF_ERROR(db.Begin());
  const uint64_t generation = dir_->generation();
  Status status;
  if (own_transaction && snapshot_current_) {
    // Rows are about to be committed that bloom.snap lacks: retire its generation in the same
    // transaction, and record which snapshot they supersede, so that a crash before the next Save
    // rebuilds the filter from the rows (LoadBloom).
    status = dir_->WriteMeta("generation", std::to_string(generation + 1));
    if (status.ok()) status = dir_->WriteMeta("superseded_snapshot", std::to_string(generation));
  }
  if (status.ok()) status = store_->InsertIfAbsent(entries_, &inserted_);
  if (status.ok() && own_transaction) status = db.Commit();
  if (!status.ok()) {
    // The Bloom bits already set are harmless: those keys now look "maybe seen" and the store,
    // which lacks them, will call them new.
    if (own_transaction) db.Rollback();
    return status;
  }
  if (own_transaction && snapshot_current_) {
    superseded_snapshot_ = generation;
    dir_->SetCommittedGeneration(generation + 1);
    snapshot_current_ = false;
  }
  uint64_t false_positives = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    false_positives += (!is_new[i] && inserted_[i]) ? 1 : 0;
    is_new[i] = inserted_[i] != 0;
  }
  // Every key the store now holds must stay in the Bloom filter, false positives included.
  delta_log_->Record(hashes, is_new);
  maybe_lookups_ += maybes;
  false_positives_ += false_positives;
  return Status::Ok();
}

Result<bool> ExactSeenSet::ContainsHashed(std::string_view key, const KeyHash& hash) const {
  if (!bloom_->MayContain(hash)) return false;
  std::unique_lock lock(mu_);
  return store_->Contains(hash.low, key);
}

}  // namespace urlsieve
