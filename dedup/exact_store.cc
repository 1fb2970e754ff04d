#include "dedup/exact_store.h"

#include <bit>
#include <cstdio>

#include "dedup/exact_store_migration.h"
#include "dedup/state_dir.h"

namespace urlsieve {

ExactStore::~ExactStore() = default;

std::string ExactStore::ShardPath(const std::string& dir, uint32_t shard) {
  char name[32];
  std::snprintf(name, sizeof(name), "/seen-%02u.db", shard);
  return dir + name;
}

Result<std::unique_ptr<ExactStore>> ExactStore::Open(
    StateDir* dir, bool checkpointed, const std::function<void(const KeyHash&)>& on_key,
    std::vector<SeenNotice>* notices) {
  std::unique_ptr<ExactStore> store(new ExactStore());
  std::optional<uint64_t> count = dir->StoredNumber(kMetaKey);
  bool create = false;
  if (!count) {
    auto format1 = HasFormat1ExactStore(dir->db());
    if (!format1.ok()) return format1.status();
    if (*format1) {
      if (dir->read_only()) return Format1ReadOnlyError(*dir);
      // The shards are stamped with the state's identity, so a version-1 state gets one first.
      URLSIEVE_RETURN_IF_ERROR(dir->Upgrade(notices));
      auto migrated = MigrateFormat1ExactStore(dir, kDefaultShards, notices);
      if (!migrated.ok()) return migrated.status();
      count = *migrated;
    } else if (dir->StoredNumber("version").value_or(0) < 3) {
      // Every exact state of format 2 or older has the table; without it the keys are gone.
      return Status::Corruption(dir->DbPath() +
                                ": an exact state without its exact store (no seen_urls table, "
                                "no exact_shards): restore state.db from a backup");
    } else if (dir->read_only()) {
      return store;  // a new state whose first open did not get as far as the shards: no keys
    } else {
      URLSIEVE_RETURN_IF_ERROR(dir->Upgrade(notices));
      count = kDefaultShards;
      create = true;  // a new state (or one whose creation was interrupted before the marker)
    }
  }
  if (*count == 0 || *count > 256 || !std::has_single_bit(*count)) {
    return Status::Corruption(dir->DbPath() + ": bad exact_shards " + std::to_string(*count) +
                              " in urlsieve_meta (a power of two up to 256)");
  }
  const uint32_t n = static_cast<uint32_t>(*count);
  store->shift_ = 64 - static_cast<uint32_t>(std::countr_zero(n));
  store->locks_.reset(new Lock[n]);
  for (uint32_t i = 0; i < n; ++i) {
    ExactShard::Options options;
    options.path = ShardPath(dir->path(), i);
    options.identity = dir->identity();
    options.number = i;
    options.count = n;
    options.read_only = dir->read_only();
    options.create = create;
    options.sync_commits = checkpointed;
    options.committed_generation = dir->generation();
    auto shard = ExactShard::Open(options, on_key);
    if (!shard.ok()) return shard.status();
    store->shards_.push_back(std::move(*shard));
  }
  if (create) {
    // Every shard exists and is stamped: from now on they are the store.
    SqliteDb& db = dir->db();
    URLSIEVE_RETURN_IF_ERROR(db.Begin("recording the exact store's shards"));
    Status status = dir->WriteMeta(kMetaKey, std::to_string(n));
    if (status.ok()) status = db.Commit("recording the exact store's shards");
    if (!status.ok()) {
      db.Rollback();
      return status;
    }
  }
  if (checkpointed && !dir->read_only()) URLSIEVE_RETURN_IF_ERROR(store->BeginAll());
  return store;
}

Status ExactStore::BeginAll() {
  for (auto& shard : shards_) {
    if (!shard->InTransaction()) URLSIEVE_RETURN_IF_ERROR(shard->Begin());
  }
  return Status::Ok();
}

Status ExactStore::broken() const {
  if (!is_broken_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard lock(broken_mu_);
  return broken_;
}

void ExactStore::SetBroken(Status status) {
  std::lock_guard lock(broken_mu_);
  if (!broken_.ok()) return;
  broken_ = Status(status.code(), status.message() +
                                      " (the exact store lost the keys of that transaction: "
                                      "reopen the state)");
  is_broken_.store(true, std::memory_order_release);
}

Status ExactStore::CommitAll() {
  URLSIEVE_RETURN_IF_ERROR(broken());
  for (auto& shard : shards_) {
    if (shard->InTransaction()) {
      Status status = shard->Commit();
      if (!status.ok()) {
        // SQLite rolls some failed COMMITs back (a full disk, an I/O error): those rows are gone
        // while the index and the Bloom filter still count them.
        if (!shard->InTransaction()) SetBroken(status);
        return status;
      }
    }
    URLSIEVE_RETURN_IF_ERROR(shard->Begin());
  }
  return Status::Ok();
}

uint64_t ExactStore::rows() const {
  uint64_t total = 0;
  for (const auto& shard : shards_) total += shard->rows();
  return total;
}

size_t ExactStore::index_bytes() const {
  size_t total = 0;
  for (const auto& shard : shards_) total += shard->index_bytes();
  return total;
}

}  // namespace urlsieve
