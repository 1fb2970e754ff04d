#include "dedup/bloom_seen_set.h"

#include <filesystem>
#include <system_error>

#include "base/sqlite_db.h"
#include "dedup/bloom/bloom_delta_log.h"
#include "dedup/bloom/counting_bloom_filter.h"
#include "dedup/bloom/scalable_bloom_filter.h"
#include "dedup/exact_seen_set.h"
#include "dedup/generational_seen_set.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

std::string RebuildAdvice(bool exact) {
  return exact ? "; restore the files of one checkpoint, or rebuild the Bloom filter from the "
                 "exact store (--rebuild, rebuild_bloom)"
               : "; restore the files of one checkpoint (a Bloom-only state cannot be rebuilt)";
}

// A snapshot as loaded: the plain or the counting filter, as the state says.
struct LoadedFilter {
  std::unique_ptr<ScalableBloomFilter> plain;
  std::unique_ptr<CountingBloomFilter> counting;
};

Result<LoadedFilter> LoadFilter(const std::string& path, bool deletable, uint64_t* generation,
                                StateIdentity* identity) {
  LoadedFilter f;
  if (deletable) {
    auto loaded = CountingBloomFilter::Load(path, generation, identity);
    if (!loaded.ok()) return loaded.status();
    f.counting = std::move(*loaded);
  } else {
    auto loaded = ScalableBloomFilter::Load(path, generation, identity);
    if (!loaded.ok()) return loaded.status();
    f.plain = std::move(*loaded);
  }
  return f;
}

}  // namespace

Result<std::unique_ptr<StateSeenSet>> OpenStateSeenSet(StateDir* dir,
                                                       const StateSeenSetOptions& options,
                                                       std::vector<SeenNotice>* notices) {
  const StateParameters& p = dir->parameters();
  if (p.revisit_after_s > 0 && !p.exact) {
    auto generational = GenerationalSeenSet::Open(dir, options);
    if (!generational.ok()) return generational.status();
    return std::unique_ptr<StateSeenSet>(std::move(*generational));
  }
  std::unique_ptr<BloomSeenSet> set;
  if (p.exact) {
    set.reset(new ExactSeenSet(dir, options, p.capacity, p.fp_rate));
  } else {
    set.reset(new BloomSeenSet(dir, options, p.capacity, p.fp_rate, p.deletable));
  }
  URLSIEVE_RETURN_IF_ERROR(set->Load(notices));
  return std::unique_ptr<StateSeenSet>(std::move(set));
}

BloomSeenSet::BloomSeenSet(StateDir* dir, const StateSeenSetOptions& options, uint64_t capacity,
                           double fp_rate, bool deletable)
    : dir_(dir),
      options_(options),
      capacity_(capacity),
      fp_rate_(fp_rate),
      read_only_(dir != nullptr && dir->read_only()),
      deletable_(deletable) {}

BloomSeenSet::~BloomSeenSet() = default;

Result<std::unique_ptr<BloomSeenSet>> BloomSeenSet::InMemory(uint64_t capacity, double fp_rate,
                                                             bool deletable) {
  std::unique_ptr<BloomSeenSet> set(new BloomSeenSet(nullptr, {}, capacity, fp_rate, deletable));
  URLSIEVE_RETURN_IF_ERROR(set->NewBloom());
  return set;
}

Status BloomSeenSet::ReadOnlyError() const { return dir_->ReadOnlyError(); }

std::string BloomSeenSet::SnapshotPath() const { return dir_->FilePath("bloom.snap"); }
std::string BloomSeenSet::NextSnapshotPath() const { return dir_->FilePath("bloom.snap.next"); }
std::string BloomSeenSet::DeltaLogPath() const { return dir_->FilePath("bloom.delta"); }

Status BloomSeenSet::NewBloom() {
  if (deletable_) {
    auto counting = CountingBloomFilter::Create({capacity_, fp_rate_});
    if (!counting.ok()) return counting.status();
    counting_ = std::move(*counting);
  } else {
    auto bloom = ScalableBloomFilter::Create({capacity_, fp_rate_});
    if (!bloom.ok()) return bloom.status();
    bloom_ = std::move(*bloom);
  }
  snapshot_current_ = false;
  return Status::Ok();
}

Status BloomSeenSet::SaveFilter(const std::string& path, uint64_t generation) const {
  return deletable_ ? counting_->Save(path, generation, dir_->identity())
                    : bloom_->Save(path, generation, dir_->identity());
}

uint64_t BloomSeenSet::FilterBytes() const {
  return deletable_ ? counting_->bytes() : bloom_->bytes();
}

std::unique_ptr<BloomDeltaLog> BloomSeenSet::DetachedLog() const {
  return deletable_ ? BloomDeltaLog::Detached(DeltaLogPath(), dir_->identity(), *counting_)
                    : BloomDeltaLog::Detached(DeltaLogPath(), dir_->identity(), *bloom_);
}

Status BloomSeenSet::OpenStore(bool, std::vector<SeenNotice>*) { return Status::Ok(); }

Status BloomSeenSet::Load(std::vector<SeenNotice>* notices) {
  maybe_lookups_ = dir_->StoredNumber("maybe_lookups").value_or(0);
  false_positives_ = dir_->StoredNumber("false_positives").value_or(0);
  superseded_snapshot_ = dir_->StoredNumber("superseded_snapshot");
  URLSIEVE_RETURN_IF_ERROR(LoadBloom(notices));
  if (!read_only_) {
    URLSIEVE_RETURN_IF_ERROR(dir_->Upgrade(notices));
    if (snapshot_unstamped_) {
      // The version-1 snapshot matches the database (LoadBloom checked): stamp it, atomically.
      URLSIEVE_RETURN_IF_ERROR(SaveFilter(SnapshotPath(), dir_->generation()));
      snapshot_unstamped_ = false;
      delta_log_.reset();  // a version-1 state has no log; the next checkpoint writes a snapshot
    }
  }
  // A filter not loaded from a snapshot (fresh, rebuilt, or just restamped by an upgrade) has no
  // log to extend: its first checkpoint writes a full snapshot.
  if (delta_log_ == nullptr) delta_log_ = DetachedLog();
  return Status::Ok();
}

Status BloomSeenSet::LoadBloom(std::vector<SeenNotice>* notices) {
  if (options_.rebuild_bloom) return RebuildFromStore(notices);
  bool use_next = false;  // read-only: the committed snapshot is .next, not bloom.snap
  URLSIEVE_RETURN_IF_ERROR(SettleNextSnapshot(&use_next));
  const std::string file = use_next ? NextSnapshotPath() : SnapshotPath();
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    const uint64_t generation = dir_->generation();
    if (generation > 0) {
      return Status::FailedPrecondition(file + " is missing but " + dir_->DbPath() +
                                        " is at generation " + std::to_string(generation) +
                                        RebuildAdvice(exact()));
    }
    // A fresh state, or one that never reached its first checkpoint or Save: in exact mode the
    // store holds every key there is, so filling the filter from it loses nothing.
    URLSIEVE_RETURN_IF_ERROR(NewBloom());
    return exact() ? OpenStore(/*refill=*/true, notices) : Status::Ok();
  }
  return LoadSnapshot(file, use_next, notices);
}

Status BloomSeenSet::RebuildFromStore(std::vector<SeenNotice>* notices) {
  if (!exact()) {
    return Status::FailedPrecondition(dir_->DbPath() +
                                      ": cannot rebuild the Bloom filter of a Bloom-only state "
                                      "(it has no exact store to rebuild it from)");
  }
  URLSIEVE_RETURN_IF_ERROR(NewBloom());
  URLSIEVE_RETURN_IF_ERROR(OpenStore(/*refill=*/true, notices));
  notices->push_back({SeenNotice::Kind::kRebuilt,
                      "rebuilt the Bloom filter from " + std::to_string(StoredKeysLocked()) +
                          " keys in the exact store, as requested; the next save replaces " +
                          SnapshotPath()});
  return Status::Ok();
}

Status BloomSeenSet::SettleNextSnapshot(bool* use_next) {
  // bloom.snap.next: the snapshot of a checkpoint that crashed around its COMMIT.
  namespace fs = std::filesystem;
  const std::string next = NextSnapshotPath();
  const uint64_t generation = dir_->generation();
  std::error_code ec;
  if (!fs::exists(next, ec)) return Status::Ok();
  uint64_t next_generation = 0;
  StateIdentity next_identity;
  auto loaded = LoadFilter(next, deletable_, &next_generation, &next_identity);
  if (!loaded.ok()) {
    return Status(loaded.status().code(),
                  loaded.status().message() + " (" + next +
                      " is the snapshot of an interrupted checkpoint; it cannot be told to "
                      "belong to this state: move it away)");
  }
  URLSIEVE_RETURN_IF_ERROR(dir_->CheckIdentity(next, next_identity, next_generation));
  if (next_generation == generation) {
    // The crash hit between a checkpoint's COMMIT and its rename: finish the rename.
    if (read_only_) {
      *use_next = true;
      return Status::Ok();
    }
    const std::string snap = SnapshotPath();
    fs::rename(next, snap, ec);
    if (ec) return Status::IoError("rename " + next + " to " + snap + ": " + ec.message());
    return Status::Ok();
  }
  if (next_generation == generation + 1) {
    // This state's snapshot of a checkpoint whose COMMIT never happened.
    if (!read_only_) fs::remove(next, ec);
    return Status::Ok();
  }
  return Status::Corruption(next + " is at generation " + std::to_string(next_generation) +
                            " but " + dir_->DbPath() + " is at generation " +
                            std::to_string(generation) +
                            ": they are not from one checkpoint; move it away");
}

Status BloomSeenSet::LoadSnapshot(const std::string& file, bool use_next,
                                  std::vector<SeenNotice>* notices) {
  const uint64_t generation = dir_->generation();
  uint64_t snap_generation = 0;
  StateIdentity snap_identity;
  auto loaded = LoadFilter(file, deletable_, &snap_generation, &snap_identity);
  if (!loaded.ok()) {
    if (loaded.status().code() != StatusCode::kCorruption) return loaded.status();
    return Status::Corruption(loaded.status().message() + RebuildAdvice(exact()));
  }
  URLSIEVE_RETURN_IF_ERROR(dir_->CheckIdentity(file, snap_identity, snap_generation));
  // The snapshot plus the committed records of the delta log since it (bloom_delta_log.h).
  const std::string committed = dir_->StoredMeta(BloomDeltaLog::kMetaKey).value_or("");
  auto log = deletable_
                 ? BloomDeltaLog::OpenAndReplay(DeltaLogPath(), dir_->identity(), committed, file,
                                                snap_generation, loaded->counting.get())
                 : BloomDeltaLog::OpenAndReplay(DeltaLogPath(), dir_->identity(), committed, file,
                                                snap_generation, loaded->plain.get());
  if (!log.ok()) {
    if (log.status().code() != StatusCode::kCorruption) return log.status();
    return Status::Corruption(log.status().message() + RebuildAdvice(exact()));
  }
  const uint64_t bloom_generation = (*log)->generation();
  if (bloom_generation == generation) {
    bloom_ = std::move(loaded->plain);
    counting_ = std::move(loaded->counting);
    delta_log_ = std::move(*log);
    snapshot_current_ = true;
    snapshot_unstamped_ = snap_identity.IsZero() && !use_next;
    return exact() ? OpenStore(/*refill=*/false, notices) : Status::Ok();
  }
  if (exact() && superseded_snapshot_ && *superseded_snapshot_ == bloom_generation &&
      generation == bloom_generation + 1) {
    // Rows were committed after this snapshot and the database recorded so (a standalone exact
    // filter that was not saved): the rows are the truth, and the filter is refilled from them.
    URLSIEVE_RETURN_IF_ERROR(NewBloom());
    URLSIEVE_RETURN_IF_ERROR(OpenStore(/*refill=*/true, notices));
    notices->push_back({SeenNotice::Kind::kRebuilt,
                        "rebuilt the Bloom filter from " + std::to_string(StoredKeysLocked()) +
                            " keys in the exact store: rows were committed after " + file +
                            " (generation " + std::to_string(snap_generation) +
                            ") and the filter was not saved since"});
    return Status::Ok();
  }
  const std::string with_log =
      bloom_generation == snap_generation
          ? std::string()
          : " (with " + DeltaLogPath() + ", " + std::to_string(bloom_generation) + ")";
  return Status::Corruption(file + " is at generation " + std::to_string(snap_generation) +
                            with_log + " but " + dir_->DbPath() + " is at generation " +
                            std::to_string(generation) + ": they are not from one checkpoint" +
                            RebuildAdvice(exact()));
}

Status BloomSeenSet::InsertHashedIfNew(std::span<const std::string_view>,
                                       std::span<const KeyHash> hashes, std::span<bool> is_new) {
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  if (deletable_) {
    counting_->InsertIfNewBatch(hashes, is_new.data());
  } else {
    bloom_->InsertIfNewBatch(hashes, is_new.data());
  }
  if (delta_log_ != nullptr) delta_log_->Record(hashes, is_new.data());
  return Status::Ok();
}

Result<bool> BloomSeenSet::InsertHashedKeyIfNew(std::string_view, const KeyHash& hash) {
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  const bool is_new = deletable_ ? counting_->InsertIfNew(hash) : bloom_->InsertIfNew(hash);
  if (is_new && delta_log_ != nullptr) delta_log_->Record(hash);
  return is_new;
}

Result<bool> BloomSeenSet::ContainsHashed(std::string_view, const KeyHash& hash) const {
  return deletable_ ? counting_->MayContain(hash) : bloom_->MayContain(hash);
}

Status BloomSeenSet::ForgetHashed(std::span<const std::string_view> keys,
                                  std::span<const KeyHash> hashes, std::span<bool> forgotten) {
  if (!deletable_) return SeenSet::ForgetHashed(keys, hashes, forgotten);
  if (read_only_) return ReadOnlyError();
  std::shared_lock lock(mu_);
  counting_->RemoveBatch(hashes, forgotten.data());
  if (delta_log_ != nullptr) delta_log_->RecordRemoved(hashes, forgotten.data());
  return Status::Ok();
}

StateIdentity BloomSeenSet::identity() const {
  return dir_ == nullptr ? StateIdentity() : dir_->identity();
}

SeenStats BloomSeenSet::Stats() const {
  SeenStats s;
  s.capacity = capacity_;
  s.fp_rate = fp_rate_;
  s.exact = exact();
  s.deletable = deletable_;
  {
    std::shared_lock lock(mu_);
    if (dir_ != nullptr) {
      s.generation = dir_->generation();
      s.identity = dir_->identity();
      s.revisit_after_s = dir_->parameters().revisit_after_s;  // an exact state's (time-aware)
    }
    s.stored_keys = StoredKeysLocked();
  }
  const BloomStats b = deletable_ ? counting_->Stats().bloom : bloom_->Stats();
  s.bloom_inserted = b.inserted;
  s.bloom_capacity = b.capacity;
  s.bloom_layers = b.layers;
  s.bloom_bytes = b.bytes;
  s.bloom_fill_ratio = b.fill_ratio;
  s.bloom_expected_fp_rate = b.expected_fp_rate;
  s.maybe_lookups = maybe_lookups_;
  s.false_positives = false_positives_;
  return s;
}

Status BloomSeenSet::Save() {
  if (dir_ == nullptr) return Status::Ok();
  if (read_only_) return ReadOnlyError();
  if (!options_.saves) {
    return Status::FailedPrecondition(dir_->path() +
                                      ": this seen set is checkpointed by the state's owner");
  }
  std::unique_lock lock(mu_);
  return dir_->Checkpoint([this](SqliteDb&, uint64_t g) { return PrepareLocked(g); },
                          [this](uint64_t g) { return CommittedLocked(g); });
}

Status BloomSeenSet::PrepareCheckpoint(SqliteDb& db, uint64_t generation) {
  if (dir_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  if (read_only_) return ReadOnlyError();
  if (&db != &dir_->db()) {
    return Status::InvalidArgument("a checkpoint of " + dir_->path() +
                                   " must be in its own state database");
  }
  std::unique_lock lock(mu_);
  return PrepareLocked(generation);
}

Status BloomSeenSet::CheckpointCommitted(uint64_t generation) {
  if (dir_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  std::unique_lock lock(mu_);
  return CommittedLocked(generation);
}

Status BloomSeenSet::PrepareLocked(uint64_t generation) {
  Status status = PrepareStoreLocked(generation);
  if (status.ok()) status = dir_->WriteMeta("maybe_lookups", std::to_string(maybe_lookups_.load()));
  if (status.ok())
    status = dir_->WriteMeta("false_positives", std::to_string(false_positives_.load()));
  // Usually the keys new since the last checkpoint go to the delta log; now and then (see
  // bloom_delta_log.h) the whole filter to a snapshot. Record or snapshot, then commit, then (a
  // snapshot) rename (see seen_filter.h): whichever step a crash interrupts, the next open finds
  // a Bloom state that matches the committed generation, or rebuilds/reports it.
  full_snapshot_ = delta_log_->NeedsSnapshot(generation);
  if (status.ok()) {
    status = dir_->WriteMeta(BloomDeltaLog::kMetaKey,
                             full_snapshot_ ? BloomDeltaLog::MetaAfterSnapshot(generation)
                                            : delta_log_->MetaAfterAppend());
  }
  if (status.ok()) {
    status = full_snapshot_ ? SaveFilter(NextSnapshotPath(), generation)
                            : delta_log_->Append(generation);
  }
  return status;
}

Status BloomSeenSet::CommittedLocked(uint64_t generation) {
  Status renamed;
  if (full_snapshot_) {
    std::error_code ec;
    std::filesystem::rename(NextSnapshotPath(), SnapshotPath(), ec);
    // Until the rename is done the log must not extend the new snapshot: its chain still ends
    // before this generation, so the next checkpoint writes (and renames) a full snapshot again.
    // (Committed, bloom.snap.next is promoted by the next open anyway.)
    if (ec) {
      renamed = Status::IoError("rename " + NextSnapshotPath() + ": " + ec.message());
    } else {
      delta_log_->SnapshotCommitted(generation, FilterBytes());
    }
  } else {
    delta_log_->AppendCommitted();
  }
  snapshot_current_ = true;
  return renamed;
}

}  // namespace urlsieve
