#include "dedup/exact_seen_set.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "base/clock.h"
#include "base/sqlite_db.h"
#include "dedup/bloom/bloom_delta_log.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

// Per-thread buffers of one batch (no allocation per batch once warm).
struct ShardScratch {
  std::vector<uint32_t> order;  // key positions grouped by shard
  std::vector<uint32_t> start;  // shard s: order[start[s] .. start[s + 1])
  std::vector<uint32_t> deferred;
  std::vector<KeyHash> hashes;  // one shard's keys
  std::unique_ptr<bool[]> flags;
  size_t flags_size = 0;
  std::vector<ExactShard::Entry> entries;
  std::vector<uint8_t> inserted;

  bool* Flags(size_t n) {
    if (flags_size < n) {
      flags.reset(new bool[n]);
      flags_size = n;
    }
    return flags.get();
  }
};

ShardScratch& Scratch() {
  thread_local ShardScratch scratch;
  return scratch;
}

}  // namespace

ExactSeenSet::~ExactSeenSet() = default;

Status ExactSeenSet::OpenStore(bool refill, std::vector<SeenNotice>* notices) {
  std::function<void(const KeyHash&)> fill;
  if (refill) fill = [this](const KeyHash& hash) { bloom_->InsertIfNew(hash); };
  auto store = ExactStore::Open(dir_, dir_->checkpointed(), fill, notices);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  return Status::Ok();
}

int64_t ExactSeenSet::UnixNow() const {
  const Clock::WallTime now =
      options_.clock != nullptr ? options_.clock->WallNow() : std::chrono::system_clock::now();
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
}

int64_t ExactSeenSet::RenewAtOrBefore(int64_t now) const {
  const uint64_t revisit_after = dir_->parameters().revisit_after_s;
  return revisit_after == 0 ? ExactShard::kNeverRenew : now - static_cast<int64_t>(revisit_after);
}

uint64_t ExactSeenSet::PendingGeneration() const {
  // Checkpointed: the generation the next checkpoint commits. Standalone: the committed one (a
  // batch commits its rows at once, after SupersedeSnapshot moved the generation past bloom.snap).
  return dir_->checkpointed() ? dir_->generation() + 1 : dir_->generation();
}

Status ExactSeenSet::SupersedeSnapshot(std::shared_lock<std::shared_mutex>* lock) {
  if (dir_->checkpointed() || !snapshot_current_) return Status::Ok();
  lock->unlock();
  Status status;
  {
    std::unique_lock exclusive(mu_);
    if (snapshot_current_) {
      // Rows are about to be committed that bloom.snap lacks: retire its generation first, and
      // record which snapshot they supersede, so that a crash before the next Save rebuilds the
      // filter from the rows (LoadBloom).
      SqliteDb& db = dir_->db();
      const uint64_t generation = dir_->generation();
      status = db.Begin();
      if (status.ok()) status = dir_->WriteMeta("generation", std::to_string(generation + 1));
      if (status.ok()) {
        status = dir_->WriteMeta("superseded_snapshot", std::to_string(generation));
      }
      if (status.ok()) status = db.Commit();
      if (status.ok()) {
        superseded_snapshot_ = generation;
        dir_->SetCommittedGeneration(generation + 1);
        snapshot_current_ = false;
      } else {
        db.Rollback();
      }
    }
  }
  lock->lock();
  return status;
}

Status ExactSeenSet::InShard(
    uint32_t shard_number, std::span<const uint32_t> positions,
    const std::function<Status(ExactShard&, std::span<const uint32_t>)>& work) {
  ExactShard& shard = store_->shard(shard_number);
  // A failed batch leaves no row behind (its keys were not answered, so a row would make one
  // "seen" that nobody was told is new): standalone it is its own transaction; checkpointed, a
  // savepoint inside the open one. Index entries of rolled-back rows, and Bloom bits already set,
  // are harmless: those keys look "maybe seen" and the store, which lacks them, calls them new.
  const bool own_transaction = !dir_->checkpointed();
  URLSIEVE_RETURN_IF_ERROR(own_transaction ? shard.Begin() : shard.Savepoint());
  const uint64_t rows = shard.rows();
  Status status = work(shard, positions);
  if (status.ok()) status = own_transaction ? shard.Commit() : shard.Release();
  if (status.ok()) return status;
  if (own_transaction) {
    if (shard.InTransaction()) shard.Rollback();  // else SQLite rolled it back already
    shard.RestoreRows(rows);
  } else if (shard.InTransaction()) {
    if (shard.RollbackToSavepoint().ok()) shard.RestoreRows(rows);
  } else {
    // SQLite rolled the whole open transaction back (a full disk): rows of the pending
    // generation the set already answered for are gone.
    store_->SetBroken(status);
  }
  return status;
}

Status ExactSeenSet::ForEachShard(
    std::span<const KeyHash> hashes,
    const std::function<Status(ExactShard&, std::span<const uint32_t>)>& work) {
  ShardScratch& s = Scratch();
  const uint32_t shards = store_->shard_count();
  s.start.assign(shards + 1, 0);
  for (const KeyHash& hash : hashes) ++s.start[store_->ShardOf(hash) + 1];
  for (uint32_t i = 1; i <= shards; ++i) s.start[i] += s.start[i - 1];
  s.order.resize(hashes.size());
  {
    std::vector<uint32_t>& next = s.deferred;  // reused as the fill cursor
    next.assign(s.start.begin(), s.start.end() - 1);
    for (uint32_t i = 0; i < hashes.size(); ++i) s.order[next[store_->ShardOf(hashes[i])]++] = i;
  }
  // Copies of the spans' bounds: `work` reuses the scratch's other buffers.
  std::vector<uint32_t> busy;
  for (uint32_t shard = 0; shard < shards; ++shard) {
    if (s.start[shard] == s.start[shard + 1]) continue;
    std::unique_lock lock(store_->mutex(shard), std::try_to_lock);
    if (!lock.owns_lock()) {
      busy.push_back(shard);
      continue;
    }
    const std::span<const uint32_t> positions(s.order.data() + s.start[shard],
                                              s.start[shard + 1] - s.start[shard]);
    URLSIEVE_RETURN_IF_ERROR(InShard(shard, positions, work));
  }
  for (uint32_t shard : busy) {
    std::unique_lock lock(store_->mutex(shard));
    const std::span<const uint32_t> positions(s.order.data() + s.start[shard],
                                              s.start[shard + 1] - s.start[shard]);
    URLSIEVE_RETURN_IF_ERROR(InShard(shard, positions, work));
  }
  return Status::Ok();
}

Status ExactSeenSet::InsertHashedIfNew(std::span<const std::string_view> keys,
                                       std::span<const KeyHash> hashes, std::span<bool> is_new) {
  (void)keys;
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(store_->broken());
  URLSIEVE_RETURN_IF_ERROR(SupersedeSnapshot(&lock));
  const uint64_t generation = PendingGeneration();
  const int64_t now = UnixNow();
  const int64_t renew_at_or_before = RenewAtOrBefore(now);
  uint64_t maybes = 0;
  uint64_t false_positives = 0;
  Status status = ForEachShard(hashes, [&](ExactShard& shard, std::span<const uint32_t> positions) {
    ShardScratch& s = Scratch();
    const size_t n = positions.size();
    s.hashes.resize(n);
    for (size_t j = 0; j < n; ++j) s.hashes[j] = hashes[positions[j]];
    bool* bloom_new = s.Flags(n);
    // Under the shard's mutex: test-and-set, confirmation and insert are one step per key.
    bloom_->InsertIfNewBatch(s.hashes, bloom_new);
    s.entries.resize(n);
    for (size_t j = 0; j < n; ++j) {
      s.entries[j] = {s.hashes[j], /*maybe_present=*/!bloom_new[j]};
      maybes += bloom_new[j] ? 0 : 1;
    }
    s.inserted.resize(n);
    URLSIEVE_RETURN_IF_ERROR(
        shard.InsertIfAbsent(s.entries, generation, now, renew_at_or_before, s.inserted.data()));
    for (size_t j = 0; j < n; ++j) {
      false_positives += (!bloom_new[j] && s.inserted[j]) ? 1 : 0;
      is_new[positions[j]] = s.inserted[j] != 0;
      bloom_new[j] = s.inserted[j] != 0;
    }
    // Every key the store holds must stay in the Bloom filter, false positives included. (Were
    // the shard's transaction to fail now, the log would hold keys the store lacks: harmless.)
    delta_log_->Record(s.hashes, bloom_new);
    return Status::Ok();
  });
  maybe_lookups_ += maybes;
  false_positives_ += false_positives;
  return status;
}

Result<bool> ExactSeenSet::ContainsHashed(std::string_view key, const KeyHash& hash) const {
  auto times = KeyTimesHashed(key, hash);
  if (!times.ok()) return times.status();
  return times->has_value();
}

Status ExactSeenSet::ForgetHashed(std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  (void)keys;
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(store_->broken());
  const uint64_t generation = PendingGeneration();
  const bool defer = dir_->checkpointed();
  // The Bloom filter keeps the key's bits: it says "maybe", the store "no", and the key is new.
  return ForEachShard(hashes, [&](ExactShard& shard, std::span<const uint32_t> positions) {
    for (uint32_t i : positions) {
      Result<bool> found = shard.Forget(hashes[i], generation, defer);
      if (!found.ok()) return found.status();
      forgotten[i] = *found;
    }
    return Status::Ok();
  });
}

Status ExactSeenSet::RecordFetchedHashed(std::span<const std::string_view> keys,
                                         std::span<const KeyHash> hashes, int64_t fetched_at) {
  (void)keys;
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(store_->broken());
  return ForEachShard(hashes, [&](ExactShard& shard, std::span<const uint32_t> positions) {
    for (uint32_t i : positions) {
      Result<bool> found = shard.SetLastFetched(hashes[i], fetched_at);
      if (!found.ok()) return found.status();
    }
    return Status::Ok();
  });
}

Result<std::optional<SeenKeyTimes>> ExactSeenSet::KeyTimesHashed(std::string_view,
                                                                 const KeyHash& hash) const {
  if (!bloom_->MayContain(hash)) return std::optional<SeenKeyTimes>();
  std::shared_lock lock(mu_);
  URLSIEVE_RETURN_IF_ERROR(store_->broken());
  if (store_->empty()) return std::optional<SeenKeyTimes>();
  const uint32_t shard = store_->ShardOf(hash);
  std::lock_guard shard_lock(store_->mutex(shard));
  auto times = store_->shard(shard).GetTimes(hash);
  if (!times.ok()) return times.status();
  // An aged-out key (time-aware) is not in the set any more: it would be told new.
  if (!times->has_value() || (*times)->first_seen <= RenewAtOrBefore(UnixNow())) {
    return std::optional<SeenKeyTimes>();
  }
  return std::optional<SeenKeyTimes>(SeenKeyTimes{(*times)->first_seen, (*times)->last_fetched});
}

Status ExactSeenSet::PrepareStoreLocked(uint64_t) {
  // Checkpointed: the shards' rows of this generation become durable (synced) before state.db's
  // COMMIT decides whether they count. Standalone, every batch committed its own.
  if (!dir_->checkpointed()) return Status::Ok();
  return store_->CommitAll();
}

}  // namespace urlsieve
