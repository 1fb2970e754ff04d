#include "dedup/exact_store_migration.h"

#include <bit>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "dedup/bloom/key_hash.h"
#include "dedup/exact_shard.h"
#include "dedup/exact_store.h"
#include "dedup/state_dir.h"

namespace urlsieve {
namespace {

constexpr std::string_view kDoing = "migrating the exact store to 128-bit fingerprints";

// A shard file left by an interrupted migration: removed once shown to be this state's (a foreign
// file is refused by the stamp check, and nothing is removed).
Status RemoveLeftoverShard(const ExactShard::Options& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(options.path, ec)) return Status::Ok();
  {
    auto shard = ExactShard::Open(options);
    if (!shard.ok()) return shard.status();
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string file = options.path + suffix;
    fs::remove(file, ec);
    if (ec)
      return Status::IoError("remove " + file + " (" + std::string(kDoing) + "): " + ec.message());
  }
  return Status::Ok();
}

}  // namespace

Result<bool> HasFormat1ExactStore(SqliteDb& db) {
  auto tables =
      db.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'seen_urls'");
  if (!tables.ok()) return tables.status();
  auto row = tables->Step();
  if (!row.ok()) return row.status();
  return tables->ColumnInt64(0) > 0;
}

Status Format1ReadOnlyError(const StateDir& dir) {
  return Status::FailedPrecondition(
      dir.DbPath() + " holds an exact store of format 1 (URLs in seen_urls), which this build " +
      "reads only after converting it to 128-bit fingerprints in " + dir.path() +
      "/seen-NN.db; a read-only open cannot convert it. Convert it once with: urlsieve filter "
      "--state " +
      dir.path() + " < /dev/null");
}

Result<uint64_t> MigrateFormat1ExactStore(StateDir* dir, uint32_t shards,
                                          std::vector<SeenNotice>* notices) {
  const uint64_t generation = dir->generation();
  std::vector<std::unique_ptr<ExactShard>> files;
  for (uint32_t i = 0; i < shards; ++i) {
    ExactShard::Options options;
    options.path = ExactStore::ShardPath(dir->path(), i);
    options.identity = dir->identity();
    options.number = i;
    options.count = shards;
    options.create = true;
    options.committed_generation = generation;
    URLSIEVE_RETURN_IF_ERROR(RemoveLeftoverShard(options));
    auto shard = ExactShard::Open(options);
    if (!shard.ok()) return shard.status();
    URLSIEVE_RETURN_IF_ERROR((*shard)->Begin());
    files.push_back(std::move(*shard));
  }
  const uint32_t shift = 64 - static_cast<uint32_t>(std::countr_zero(shards));
  uint64_t keys = 0;
  {
    auto scan = dir->db().Prepare("SELECT url FROM seen_urls");
    if (!scan.ok()) return scan.status();
    for (;;) {
      Result<bool> row = scan->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      const KeyHash hash = HashKey(scan->ColumnText(0));
      const ExactShard::Entry entry{hash, /*maybe_present=*/true};
      uint8_t inserted = 0;
      ExactShard& shard = *files[shift >= 64 ? 0 : hash.high >> shift];
      URLSIEVE_RETURN_IF_ERROR(shard.InsertIfAbsent({&entry, 1}, generation, /*now=*/0,
                                                    ExactShard::kNeverRenew, &inserted));
      keys += inserted;
    }
  }
  for (auto& shard : files) {
    URLSIEVE_RETURN_IF_ERROR(shard->Commit());
    // Synced before state.db's COMMIT makes them the store.
    URLSIEVE_RETURN_IF_ERROR(
        shard->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)", "syncing the migrated exact store"));
  }
  files.clear();
  SqliteDb& db = dir->db();
  URLSIEVE_RETURN_IF_ERROR(db.Begin(kDoing));
  Status status = db.Exec("DROP TABLE seen_urls", kDoing);
  if (status.ok()) status = dir->WriteMeta(ExactStore::kMetaKey, std::to_string(shards));
  if (status.ok()) status = dir->WriteMeta("version", "3");
  if (status.ok()) status = db.Commit(kDoing);
  if (!status.ok()) {
    db.Rollback();
    return status;
  }
  // The dropped table's pages go back to the file system (best effort: a failure leaves them free
  // inside state.db, where the frontier reuses them).
  Status vacuum = db.Exec("VACUUM", "reclaiming the space of the format-1 exact store");
  notices->push_back(
      {SeenNotice::Kind::kUpgraded,
       "migrated the exact store of " + dir->path() +
           " to 128-bit fingerprints: " + std::to_string(keys) +
           " keys from state.db's seen_urls into " + ExactStore::ShardPath(dir->path(), 0) +
           " ... " + ExactStore::ShardPath(dir->path(), shards - 1) + " (state format version 3)" +
           (vacuum.ok() ? std::string()
                        : "; state.db keeps the freed space: " + vacuum.message())});
  return uint64_t{shards};
}

}  // namespace urlsieve
