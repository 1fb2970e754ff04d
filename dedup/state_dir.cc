#include "dedup/state_dir.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "dedup/exact_store.h"

namespace urlsieve {
namespace {

constexpr std::string_view kFormat = "urlsieve-state";
// 2: an identity in urlsieve_meta and in every state file (dedup/state_identity.h).
constexpr int64_t kFormatVersion = 2;

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// The canonicalizer options as stored in the meta table: keys written under other options would
// never match, so they are part of the state's identity. So is the key version, written first
// from version 2 on: a build that predates it then refuses the state (it cannot parse the string)
// rather than keying it the old way; a string without it is a version 1 state.
std::string EncodeCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  if (o.key_version != 1) s += "key_version=" + std::to_string(o.key_version) + ",";
  s += "sort_query=" + std::to_string(o.sort_query);
  s += ",drop_empty_query=" + std::to_string(o.drop_empty_query);
  s += ",strip_session_ids=" + std::to_string(o.strip_session_ids);
  s += ",strip_www=" + std::to_string(o.strip_www);
  s += ",collapse_slashes=" + std::to_string(o.collapse_slashes);
  s += ",max_length=" + std::to_string(o.max_length);
  return s;
}

Result<CanonicalizeOptions> DecodeCanonicalize(const std::string& s) {
  CanonicalizeOptions o;
  unsigned sort_query, drop_empty, strip_sid, strip_www, collapse;
  unsigned long long max_length;
  int consumed = 0;
  o.key_version = 1;
  if (std::sscanf(s.c_str(), "key_version=%d,%n", &o.key_version, &consumed) == 1 &&
      (consumed == 0 || o.key_version < 2 || o.key_version > kCurrentKeyVersion)) {
    return Status::Unsupported("the state's keys are of canonicalizer version " +
                               std::to_string(o.key_version) + "; this build makes versions 1 to " +
                               std::to_string(kCurrentKeyVersion));
  }
  if (std::sscanf(s.c_str() + consumed,
                  "sort_query=%u,drop_empty_query=%u,strip_session_ids=%u,strip_www=%u,"
                  "collapse_slashes=%u,max_length=%llu",
                  &sort_query, &drop_empty, &strip_sid, &strip_www, &collapse, &max_length) != 6) {
    return Status::Corruption("unreadable canonicalizer options in state: '" + s + "'");
  }
  o.sort_query = sort_query != 0;
  o.drop_empty_query = drop_empty != 0;
  o.strip_session_ids = strip_sid != 0;
  o.strip_www = strip_www != 0;
  o.collapse_slashes = collapse != 0;
  o.max_length = static_cast<size_t>(max_length);
  return o;
}

// Why an older state's keys differ from what the requested options alone would make.
std::string KeyVersionNote(const CanonicalizeOptions& o) {
  if (o.key_version >= kCurrentKeyVersion) return "";
  return "; the state's keys are of canonicalizer version " + std::to_string(o.key_version) +
         " (' kept literal in queries), kept so that no key changes under it";
}

// A state.db that is missing or empty while the other state files exist means a damaged or half
// copied state: starting afresh would silently forget every URL those files remember.
Status CheckStateDbIsThere(const std::string& dir, const std::string& db_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(db_path, ec);
  const uintmax_t size = exists ? fs::file_size(db_path, ec) : 0;
  if (exists && (ec || size > 0)) return Status::Ok();
  const uintmax_t wal_size =
      fs::exists(db_path + "-wal", ec) ? fs::file_size(db_path + "-wal", ec) : 0;
  if (exists && !ec && wal_size > 0) return Status::Ok();  // every page is still in the WAL
  for (const char* name : {"bloom.snap", "bloom.snap.next"}) {
    const std::string other = dir + "/" + name;
    if (!fs::exists(other, ec)) continue;
    const std::string what = db_path + (exists ? " is empty (0 bytes)" : " is missing");
    return Status::Corruption(what + " but " + other + " exists: the state is damaged or " +
                              "incomplete, and starting afresh would forget every URL it holds. " +
                              "Restore state.db from a backup, or move " + dir +
                              " away to start a new state");
  }
  return Status::Ok();
}

}  // namespace

StateDir::StateDir(const Options& options)
    : path_(options.path),
      read_only_(options.read_only),
      checkpointed_(options.checkpointed),
      parameters_(options.requested) {}

StateDir::~StateDir() = default;

Result<std::unique_ptr<StateDir>> StateDir::Open(const Options& options,
                                                 std::vector<SeenNotice>* notices) {
  std::unique_ptr<StateDir> dir(new StateDir(options));
  URLSIEVE_RETURN_IF_ERROR(dir->OpenDb(notices));
  return dir;
}

Status StateDir::ReadOnlyError() const {
  return Status::FailedPrecondition(path_ + " was opened read-only");
}

Status StateDir::WriteMeta(std::string_view key, const std::string& value) {
  auto stmt = db_->Prepare("INSERT OR REPLACE INTO urlsieve_meta(key, value) VALUES(?, ?)");
  if (!stmt.ok()) return stmt.status();
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(1, key));
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(2, value));
  return stmt->Run();
}

std::optional<std::string> StateDir::StoredMeta(std::string_view key) const {
  auto it = meta_.find(key);
  if (it == meta_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint64_t> StateDir::StoredNumber(std::string_view key) const {
  auto it = meta_.find(key);
  if (it == meta_.end()) return std::nullopt;
  char* end = nullptr;
  return std::strtoull(it->second.c_str(), &end, 10);
}

Status StateDir::OpenDb(std::vector<SeenNotice>* notices) {
  std::error_code ec;
  const std::string& dir = path_;
  const std::string path = DbPath();
  if (read_only_) {
    if (!std::filesystem::exists(path, ec)) {
      return Status::NotFound("no state in " + dir + " (no state.db)");
    }
  } else {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  }
  auto lock =
      StateLock::Acquire(dir, read_only_ ? StateLock::Mode::kShared : StateLock::Mode::kExclusive);
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);
  URLSIEVE_RETURN_IF_ERROR(CheckStateDbIsThere(dir, path));

  // Open without WAL first: switching the journal mode writes the file header, and a foreign
  // database must be left exactly as it was.
  SqliteDb::Options db_options;
  db_options.wal = false;
  db_options.read_only = read_only_;
  db_options.create_if_missing = !read_only_;
  db_options.no_other_writer = read_only_;  // the shared lock keeps writers out
  auto db = SqliteDb::Open(path, db_options);
  if (!db.ok()) return db.status();
  db_ = std::move(*db);

  auto tables = db_->Prepare(
      "SELECT count(*), sum(name = 'urlsieve_meta') FROM sqlite_schema WHERE type = 'table'");
  if (!tables.ok()) return tables.status();
  auto row = tables->Step();
  if (!row.ok()) return row.status();
  const int64_t table_count = tables->ColumnInt64(0);
  const bool has_meta = tables->ColumnInt64(1) > 0;
  tables = SqliteStatement();
  if (table_count > 0 && !has_meta) {
    return Status::Corruption(path + ": not a urlsieve state database (no urlsieve_meta table)");
  }
  if (read_only_ && !has_meta) {
    return Status::NotFound("no state in " + dir + " (state.db holds no urlsieve state)");
  }
  if (!read_only_) {
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", "switching to WAL mode"));
  }
  // The exact store's B-tree pages stay hot between batches.
  URLSIEVE_RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size=-65536"));

  const StateParameters requested = parameters_;
  if (!has_meta) {
    auto identity = StateIdentity::Random();
    if (!identity.ok()) return identity.status();
    URLSIEVE_RETURN_IF_ERROR(db_->Begin("creating the state"));
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("CREATE TABLE urlsieve_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("format", std::string(kFormat)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("version", std::to_string(kFormatVersion)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("identity", identity->ToHex()));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("capacity", std::to_string(requested.capacity)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("fp_rate", FormatDouble(requested.fp_rate)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("exact", requested.exact ? "1" : "0"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("canonicalize", EncodeCanonicalize(requested.canonicalize)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
    if (requested.exact) {
      auto store = ExactStore::Open(db_.get());
      if (!store.ok()) return store.status();
    }
    URLSIEVE_RETURN_IF_ERROR(db_->Commit("creating the state"));
  }

  // Read back what is stored (also right after creating it: one code path).
  {
    auto read = db_->Prepare("SELECT key, CAST(value AS TEXT) FROM urlsieve_meta");
    if (!read.ok()) return read.status();
    for (;;) {
      auto r = read->Step();
      if (!r.ok()) return r.status();
      if (!*r) break;
      meta_.emplace(std::string(read->ColumnText(0)), std::string(read->ColumnText(1)));
    }
  }
  auto get = [&](std::string_view key) -> Result<std::string> {
    auto it = meta_.find(key);
    if (it == meta_.end()) {
      return Status::Corruption(path + ": urlsieve_meta lacks '" + std::string(key) + "'");
    }
    return it->second;
  };
  auto format = get("format");
  if (!format.ok() || *format != kFormat) {
    return Status::Corruption(path + ": not a urlsieve state database (format is not " +
                              std::string(kFormat) + ")");
  }
  auto version = get("version");
  if (!version.ok()) return version.status();
  const long long version_number = std::strtoll(version->c_str(), nullptr, 10);
  if (version_number > kFormatVersion) {
    return Status::Unsupported(path + ": state format version " + *version +
                               " is newer than this build's " + std::to_string(kFormatVersion));
  }
  auto capacity = get("capacity");
  auto fp_rate = get("fp_rate");
  auto exact = get("exact");
  auto canon = get("canonicalize");
  auto generation = get("generation");
  for (const auto* r : {&capacity, &fp_rate, &exact, &canon, &generation}) {
    if (!r->ok()) return r->status();
  }
  auto canon_options = DecodeCanonicalize(*canon);
  if (!canon_options.ok()) return canon_options.status();
  char* end = nullptr;
  parameters_.capacity = std::strtoull(capacity->c_str(), &end, 10);
  parameters_.fp_rate = std::strtod(fp_rate->c_str(), &end);
  parameters_.exact = *exact == "1";
  parameters_.canonicalize = *canon_options;
  generation_ = std::strtoull(generation->c_str(), &end, 10);
  if (parameters_.capacity == 0 || !(parameters_.fp_rate > 0 && parameters_.fp_rate < 1)) {
    return Status::Corruption(path + ": bad capacity or fp_rate in urlsieve_meta");
  }
  upgraded_at_ = StoredNumber("upgraded_at_generation");
  if (auto identity = meta_.find("identity"); identity != meta_.end()) {
    auto parsed = StateIdentity::FromHex(identity->second);
    if (!parsed.ok()) return Status::Corruption(path + ": " + parsed.status().message());
    identity_ = *parsed;
  } else if (version_number <= 1) {
    version1_ = true;
  } else {
    return Status::Corruption(path + ": urlsieve_meta lacks 'identity'");
  }

  const StateParameters& stored = parameters_;
  if (stored.capacity != requested.capacity || stored.fp_rate != requested.fp_rate) {
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        "using the stored capacity " + std::to_string(stored.capacity) +
                            " and fp-rate " + FormatDouble(stored.fp_rate) + " (requested " +
                            std::to_string(requested.capacity) + ", " +
                            FormatDouble(requested.fp_rate) + ")"});
  }
  if (stored.exact != requested.exact) {
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        stored.exact
                            ? "the state is exact (created with exact mode): staying exact"
                            : "the state was created without exact mode, so its store lacks the "
                              "earlier keys: staying Bloom-only"});
  }
  if (EncodeCanonicalize(stored.canonicalize) != EncodeCanonicalize(requested.canonicalize)) {
    notices->push_back(
        {SeenNotice::Kind::kStoredParameters, "using the stored canonicalizer options (" + *canon +
                                                  ")" + KeyVersionNote(stored.canonicalize)});
  }
  return Status::Ok();
}

Status StateDir::Upgrade(std::vector<SeenNotice>* notices) {
  if (!version1_) return Status::Ok();
  auto identity = StateIdentity::Random();
  if (!identity.ok()) return identity.status();
  const uint64_t at = generation();
  URLSIEVE_RETURN_IF_ERROR(db_->Begin("upgrading the state to format version 2"));
  Status status = WriteMeta("identity", identity->ToHex());
  if (status.ok()) status = WriteMeta("version", std::to_string(kFormatVersion));
  if (status.ok()) status = WriteMeta("upgraded_at_generation", std::to_string(at));
  if (status.ok()) status = db_->Commit("upgrading the state to format version 2");
  if (!status.ok()) {
    db_->Rollback();
    return status;
  }
  identity_ = *identity;
  version1_ = false;
  upgraded_at_ = at;
  notices->push_back(
      {SeenNotice::Kind::kUpgraded,
       "upgraded " + path_ + " to state format version 2: its identity is " + identity_.ToHex()});
  return Status::Ok();
}

Status StateDir::OpenFirstTransaction() { return checkpointed_ ? db_->Begin() : Status::Ok(); }

Status StateDir::Checkpoint(const std::function<Status(SqliteDb&, uint64_t)>& prepare,
                            const std::function<Status(uint64_t)>& committed) {
  if (read_only_) return ReadOnlyError();
  if (!checkpointed_) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  const uint64_t next = generation() + 1;
  Status status = prepare(*db_, next);
  if (status.ok()) status = WriteMeta("generation", std::to_string(next));
  if (status.ok()) status = db_->Commit("committing a checkpoint");
  if (!status.ok()) {
    // Standalone: nothing of ours is lost by rolling back (batches committed on their own). In
    // checkpointed mode the transaction stays open, with its rows, for the next attempt.
    if (!checkpointed_) db_->Rollback();
    return status;
  }
  SetCommittedGeneration(next);
  Status finished = committed(next);
  // The commit happened: the next transaction starts whatever the rest did.
  if (checkpointed_) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  return finished;
}

Status StateDir::CheckIdentity(const std::string& file, const StateIdentity& file_identity,
                               uint64_t file_generation) const {
  if (file_identity == identity_) return Status::Ok();  // also: both zero in a version-1 state
  // An unstamped (version-1) file of the state's own last version-1 checkpoint: only until the
  // first checkpoint after the upgrade.
  const uint64_t current = generation();
  if (file_identity.IsZero() && upgraded_at_ && *upgraded_at_ == current &&
      file_generation == current) {
    return Status::Ok();
  }
  const auto name = [](const StateIdentity& id) {
    return id.IsZero() ? std::string("none (a version-1 file)") : id.ToHex();
  };
  return Status::Corruption(file + " belongs to another state: its identity is " +
                            name(file_identity) + ", " + DbPath() + "'s is " + name(identity_) +
                            ". It was copied from another state directory or left over from "
                            "one; move it away (nothing was changed)");
}

}  // namespace urlsieve
