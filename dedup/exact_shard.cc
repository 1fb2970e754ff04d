#include "dedup/exact_shard.h"

#include <sqlite3.h>

#include <filesystem>
#include <limits>
#include <map>
#include <string_view>
#include <system_error>

namespace urlsieve {
namespace {

constexpr std::string_view kShardFormat = "urlsieve-seen-shard";
constexpr int64_t kShardVersion = 1;

int64_t AsInt(uint64_t v) { return static_cast<int64_t>(v); }

// shard_meta's rows: the stamp that says which state, and which shard of it, a file is.
using Stamp = std::map<std::string, std::string, std::less<>>;

// How many tables the database has, and whether shard_meta is one of them.
Status CountTables(SqliteDb& db, int64_t* table_count, bool* has_meta) {
  auto tables = db.Prepare(
      "SELECT count(*), sum(name = 'shard_meta') FROM sqlite_schema WHERE type = 'table'");
  if (!tables.ok()) return tables.status();
  auto row = tables->Step();
  if (!row.ok()) return row.status();
  *table_count = tables->ColumnInt64(0);
  *has_meta = tables->ColumnInt64(1) > 0;
  return Status::Ok();
}

Status InsertStamp(SqliteDb& db, const ExactShard::Options& options) {
  const std::pair<std::string_view, std::string> stamp[] = {
      {"format", std::string(kShardFormat)},     {"version", std::to_string(kShardVersion)},
      {"identity", options.identity.ToHex()},    {"shard", std::to_string(options.number)},
      {"shards", std::to_string(options.count)},
  };
  for (const auto& [key, value] : stamp) {
    auto insert = db.Prepare("INSERT INTO shard_meta(key, value) VALUES(?, ?)");
    if (!insert.ok()) return insert.status();
    URLSIEVE_RETURN_IF_ERROR(insert->BindText(1, key));
    URLSIEVE_RETURN_IF_ERROR(insert->BindText(2, value));
    URLSIEVE_RETURN_IF_ERROR(insert->Run());
  }
  return Status::Ok();
}

// Turns an empty database into a stamped shard with no keys, in one transaction.
Status CreateShard(SqliteDb& db, const ExactShard::Options& options) {
  URLSIEVE_RETURN_IF_ERROR(
      db.Exec("PRAGMA journal_mode=WAL", "switching the exact store to WAL mode"));
  URLSIEVE_RETURN_IF_ERROR(db.Begin("creating an exact-store shard"));
  Status status = db.Exec(
      "CREATE TABLE shard_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
      "CREATE TABLE seen(id INTEGER PRIMARY KEY, hi INTEGER NOT NULL, lo INTEGER NOT NULL, "
      "first_seen INTEGER NOT NULL, last_fetched INTEGER NOT NULL DEFAULT 0, "
      "gen INTEGER NOT NULL, forgot INTEGER NOT NULL DEFAULT 0)",
      "creating an exact-store shard");
  if (status.ok()) status = InsertStamp(db, options);
  if (status.ok()) status = db.Commit("creating an exact-store shard");
  if (!status.ok()) {
    db.Rollback();
    return status;
  }
  return Status::Ok();
}

Result<Stamp> ReadStamp(SqliteDb& db) {
  Stamp stamp;
  auto read = db.Prepare("SELECT key, CAST(value AS TEXT) FROM shard_meta");
  if (!read.ok()) return read.status();
  for (;;) {
    auto r = read->Step();
    if (!r.ok()) return r.status();
    if (!*r) break;
    stamp.emplace(std::string(read->ColumnText(0)), std::string(read->ColumnText(1)));
  }
  return stamp;
}

// The stamp must be of this format (at most this version), of this state, and of this shard.
Status CheckStamp(const Stamp& meta, const std::string& path, const ExactShard::Options& options) {
  auto value = [&meta](std::string_view key) {
    auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  if (value("format") != kShardFormat) {
    return Status::Corruption(path + ": not a urlsieve exact-store shard (format is not " +
                              std::string(kShardFormat) + ")");
  }
  if (std::strtoll(value("version").c_str(), nullptr, 10) > kShardVersion) {
    return Status::Unsupported(path + ": exact-store shard version " + value("version") +
                               " is newer than this build's " + std::to_string(kShardVersion));
  }
  const std::string identity = options.identity.ToHex();
  if (value("identity") != identity) {
    return Status::Corruption(path + " belongs to another state: its identity is " +
                              value("identity") + ", the state's is " + identity +
                              ". It was copied from another state directory or left over from "
                              "one; move it away (nothing was changed)");
  }
  if (value("shard") != std::to_string(options.number) ||
      value("shards") != std::to_string(options.count)) {
    return Status::Corruption(path + " is shard " + value("shard") + " of " + value("shards") +
                              ", but this slot holds shard " + std::to_string(options.number) +
                              " of " + std::to_string(options.count) +
                              ": the files were renamed or mixed up; restore them (nothing was "
                              "changed)");
  }
  return Status::Ok();
}

}  // namespace

ExactShard::~ExactShard() = default;

bool ExactShard::InTransaction() const { return sqlite3_get_autocommit(db_->raw()) == 0; }

Result<std::unique_ptr<ExactShard>> ExactShard::Open(
    const Options& options, const std::function<void(const KeyHash&)>& on_key) {
  std::error_code ec;
  if (!options.create && !std::filesystem::exists(options.path, ec)) {
    return Status::Corruption(options.path + " is missing: the exact store's shard " +
                              std::to_string(options.number) + " of " +
                              std::to_string(options.count) +
                              " (the state would forget every key it holds). Restore it from a "
                              "backup with the rest of the state, or move the state directory "
                              "away to start a new one");
  }
  std::unique_ptr<ExactShard> shard(new ExactShard(options));
  if (!options.create) {
    // Checked before SQLite opens it: opening an empty file would turn it into an empty database.
    const uintmax_t size = std::filesystem::file_size(options.path, ec);
    const uintmax_t wal = std::filesystem::exists(options.path + "-wal", ec)
                              ? std::filesystem::file_size(options.path + "-wal", ec)
                              : 0;
    if (!ec && size == 0 && wal == 0) return shard->EmptyError();
  }
  SqliteDb::Options db_options;
  db_options.create_if_missing = options.create && !options.read_only;
  db_options.read_only = options.read_only;
  db_options.no_other_writer = options.read_only;  // the state's lock excludes writers
  auto db = SqliteDb::Open(options.path, db_options);
  if (!db.ok()) return db.status();
  shard->db_ = std::move(*db);
  URLSIEVE_RETURN_IF_ERROR(shard->CreateOrCheckStamp());
  URLSIEVE_RETURN_IF_ERROR(shard->Prepare());
  URLSIEVE_RETURN_IF_ERROR(shard->LoadIndex(on_key));
  return shard;
}

Status ExactShard::EmptyError() const {
  return Status::Corruption(options_.path + " is empty, but the state says its exact store is " +
                            "there (shard " + std::to_string(options_.number) +
                            "): restore it from a backup with the rest of the state, or move the "
                            "state directory away to start a new one");
}

Status ExactShard::CreateOrCheckStamp() {
  int64_t table_count = 0;
  bool has_meta = false;
  URLSIEVE_RETURN_IF_ERROR(CountTables(*db_, &table_count, &has_meta));
  if (table_count > 0 && !has_meta) {
    return Status::Corruption(db_->path() +
                              ": not a urlsieve exact-store shard (no shard_meta table)");
  }
  if (table_count == 0) {
    if (!options_.create || options_.read_only) return EmptyError();
    URLSIEVE_RETURN_IF_ERROR(CreateShard(*db_, options_));
  }
  auto stamp = ReadStamp(*db_);
  if (!stamp.ok()) return stamp.status();
  return CheckStamp(*stamp, db_->path(), options_);
}

Status ExactShard::Prepare() {
  if (!options_.read_only) {
    URLSIEVE_RETURN_IF_ERROR(db_->Exec(options_.sync_commits
                                           ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL"
                                           : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                                       "switching the exact store to WAL mode"));
  }
  // The last pages (appends) and the upper B-tree levels (lookups by id) stay hot.
  URLSIEVE_RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size=-8192"));
  struct {
    SqliteStatement* statement;
    const char* sql;
  } statements[] = {
      {&insert_, "INSERT INTO seen(hi, lo, first_seen, gen) VALUES(?, ?, ?, ?)"},
      {&fetch_, "SELECT hi, lo, forgot, gen, first_seen, last_fetched FROM seen WHERE id = ?"},
      {&renew_, "UPDATE seen SET forgot = 0, first_seen = ?, gen = ? WHERE id = ?"},
      {&delete_, "DELETE FROM seen WHERE id = ?"},
      {&mark_forgotten_, "UPDATE seen SET forgot = ? WHERE id = ?"},
      {&set_fetched_, "UPDATE seen SET last_fetched = ? WHERE id = ?"},
  };
  for (auto& [statement, sql] : statements) {
    auto prepared = db_->Prepare(sql);
    if (!prepared.ok()) return prepared.status();
    *statement = std::move(*prepared);
  }
  return Status::Ok();
}

Status ExactShard::LoadIndex(const std::function<void(const KeyHash&)>& on_key) {
  slots_.assign(1024, Slot{0, 0});
  const uint64_t committed = options_.committed_generation;
  bool needs_repair = false;
  {
    auto scan = db_->Prepare("SELECT id, hi, lo, gen, forgot FROM seen");
    if (!scan.ok()) return scan.status();
    for (;;) {
      Result<bool> row = scan->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      const uint64_t generation = static_cast<uint64_t>(scan->ColumnInt64(3));
      const uint64_t forgot = static_cast<uint64_t>(scan->ColumnInt64(4));
      if (generation > committed || forgot != 0) needs_repair = true;
      if (generation > committed || (forgot != 0 && forgot <= committed)) continue;
      const KeyHash hash{static_cast<uint64_t>(scan->ColumnInt64(2)),
                         static_cast<uint64_t>(scan->ColumnInt64(1))};
      URLSIEVE_RETURN_IF_ERROR(AddToIndex(hash, scan->ColumnInt64(0)));
      ++rows_;
      if (on_key) on_key(hash);
    }
  }
  if (!needs_repair || options_.read_only) return Status::Ok();
  // Rows of generations state.db never committed go, and so do forgets it never committed; the
  // committed forgets are done for good (their rows only waited for this).
  const std::string c = std::to_string(committed);
  URLSIEVE_RETURN_IF_ERROR(db_->Begin("rolling the exact store back to generation " + c));
  Status status = db_->Exec("DELETE FROM seen WHERE gen > " + c +
                                "; DELETE FROM seen WHERE forgot != 0 AND forgot <= " + c +
                                "; UPDATE seen SET forgot = 0 WHERE forgot > " + c,
                            "rolling the exact store back to generation " + c);
  if (status.ok()) status = db_->Commit("rolling the exact store back to generation " + c);
  if (!status.ok()) db_->Rollback();
  return status;
}

void ExactShard::Place(Slot slot) {
  const size_t mask = slots_.size() - 1;
  size_t i = slot.tag & mask;
  while (slots_[i].id != 0) i = (i + 1) & mask;
  slots_[i] = slot;
}

Status ExactShard::AddToIndex(const KeyHash& hash, int64_t id) {
  if (id <= 0 || id > std::numeric_limits<uint32_t>::max()) {
    return Status::Unsupported(db_->path() + ": exact store row id " + std::to_string(id) +
                               " is outside the index's 32-bit range");
  }
  if ((used_ + 1) * 4 > slots_.size() * 3) {
    std::vector<Slot> old(slots_.size() * 2, Slot{0, 0});
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.id != 0) Place(s);
    }
  }
  Place(Slot{Tag(hash), static_cast<uint32_t>(id)});
  ++used_;
  return Status::Ok();
}

Result<ExactShard::Found> ExactShard::Lookup(const KeyHash& hash) {
  const uint32_t tag = Tag(hash);
  const size_t mask = slots_.size() - 1;
  for (size_t i = tag & mask; slots_[i].id != 0; i = (i + 1) & mask) {
    if (slots_[i].tag != tag) continue;
    // A candidate: another key may share the tag, so compare the whole fingerprint.
    URLSIEVE_RETURN_IF_ERROR(fetch_.BindInt64(1, slots_[i].id));
    Result<bool> row = fetch_.Step();
    Found found;
    if (row.ok() && *row && fetch_.ColumnInt64(0) == AsInt(hash.high) &&
        fetch_.ColumnInt64(1) == AsInt(hash.low)) {
      const uint64_t forgot = static_cast<uint64_t>(fetch_.ColumnInt64(2));
      found.id = slots_[i].id;
      found.forgot = forgot;
      // Writable, every forget counts (it is pending or committed); read-only, only a committed
      // one (the open skipped those, so a forgotten row here was forgotten later).
      found.forgotten =
          forgot != 0 && (!options_.read_only || forgot <= options_.committed_generation);
      found.generation = static_cast<uint64_t>(fetch_.ColumnInt64(3));
      found.times = {fetch_.ColumnInt64(4), fetch_.ColumnInt64(5)};
    }
    fetch_.Reset();
    if (!row.ok()) return row.status();
    if (found.id != 0) return found;
  }
  return Found();
}

Status ExactShard::InsertIfAbsent(std::span<const Entry> entries, uint64_t generation, int64_t now,
                                  int64_t renew_at_or_before, uint8_t* inserted) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    inserted[i] = 0;
    if (e.maybe_present) {
      Result<Found> found = Lookup(e.hash);
      if (!found.ok()) return found.status();
      if (found->id != 0) {
        const bool renew = found->forgotten || found->times.first_seen <= renew_at_or_before;
        if (!renew) continue;
        // Forgotten or aged out, and now seen again: the row counts again, first seen now. A
        // forget of this same pending generation and the renewal vanish together in a crash, so
        // the row keeps its generation; otherwise the row now belongs to `generation`.
        const bool forgot_now = found->forgotten && found->forgot == generation;
        URLSIEVE_RETURN_IF_ERROR(renew_.BindInt64(1, now));
        URLSIEVE_RETURN_IF_ERROR(
            renew_.BindInt64(2, AsInt(forgot_now ? found->generation : generation)));
        URLSIEVE_RETURN_IF_ERROR(renew_.BindInt64(3, found->id));
        URLSIEVE_RETURN_IF_ERROR(renew_.Run());
        if (found->forgotten) ++rows_;
        inserted[i] = 1;
        continue;
      }
    }
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(1, AsInt(e.hash.high)));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(2, AsInt(e.hash.low)));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(3, now));
    URLSIEVE_RETURN_IF_ERROR(insert_.BindInt64(4, AsInt(generation)));
    URLSIEVE_RETURN_IF_ERROR(insert_.Run());
    URLSIEVE_RETURN_IF_ERROR(AddToIndex(e.hash, db_->LastInsertRowId()));
    ++rows_;
    inserted[i] = 1;
  }
  return Status::Ok();
}

Result<bool> ExactShard::Contains(const KeyHash& hash) {
  Result<Found> found = Lookup(hash);
  if (!found.ok()) return found.status();
  return found->id != 0 && !found->forgotten;
}

Result<bool> ExactShard::Forget(const KeyHash& hash, uint64_t generation, bool defer) {
  Result<Found> found = Lookup(hash);
  if (!found.ok()) return found.status();
  if (found->id == 0 || found->forgotten) return false;
  if (defer && found->generation < generation) {
    URLSIEVE_RETURN_IF_ERROR(mark_forgotten_.BindInt64(1, AsInt(generation)));
    URLSIEVE_RETURN_IF_ERROR(mark_forgotten_.BindInt64(2, found->id));
    URLSIEVE_RETURN_IF_ERROR(mark_forgotten_.Run());
  } else {
    // Its index slot stays behind, harmless (see the header).
    URLSIEVE_RETURN_IF_ERROR(delete_.BindInt64(1, found->id));
    URLSIEVE_RETURN_IF_ERROR(delete_.Run());
  }
  --rows_;
  return true;
}

Result<bool> ExactShard::SetLastFetched(const KeyHash& hash, int64_t unix_seconds) {
  Result<Found> found = Lookup(hash);
  if (!found.ok()) return found.status();
  if (found->id == 0 || found->forgotten) return false;
  URLSIEVE_RETURN_IF_ERROR(set_fetched_.BindInt64(1, unix_seconds));
  URLSIEVE_RETURN_IF_ERROR(set_fetched_.BindInt64(2, found->id));
  URLSIEVE_RETURN_IF_ERROR(set_fetched_.Run());
  return true;
}

Result<std::optional<ExactShard::Times>> ExactShard::GetTimes(const KeyHash& hash) {
  Result<Found> found = Lookup(hash);
  if (!found.ok()) return found.status();
  if (found->id == 0 || found->forgotten) return std::optional<Times>();
  return std::optional<Times>(found->times);
}

}  // namespace urlsieve
