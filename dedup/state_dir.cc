#include "dedup/state_dir.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "base/duration.h"
#include "base/strings.h"

namespace urlsieve {
namespace {

constexpr std::string_view kFormat = "urlsieve-state";
// 2: an identity in urlsieve_meta and in every state file (dedup/state/state_identity.h).
// 3: the exact store is 128-bit fingerprints sharded over seen-NN.db (dedup/exact_store.h), not
//    seen_urls; an exact state is created (or migrated) at 3, so that an older build refuses it
//    rather than finding no seen_urls and starting with an empty store. A Bloom-only state is
//    created at 2, which every build since identities reads.
constexpr int64_t kFormatVersion = 3;
constexpr int64_t kBloomOnlyFormatVersion = 2;

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
  for (const char* name : {"bloom.snap", "bloom.snap.next", "seen-00.db"}) {
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
  URLSIEVE_RETURN_IF_ERROR(LockDirectory());
  bool has_meta = false;
  URLSIEVE_RETURN_IF_ERROR(OpenDatabase(&has_meta));
  const StateParameters requested = parameters_;
  if (!has_meta) URLSIEVE_RETURN_IF_ERROR(CreateMeta());
  // Read back what is stored (also right after creating it: one code path).
  URLSIEVE_RETURN_IF_ERROR(ReadMeta());
  NoteStoredParameters(requested, notices);
  return Status::Ok();
}

Status StateDir::LockDirectory() {
  std::error_code ec;
  const std::string& dir = path_;
  if (read_only_) {
    if (!std::filesystem::exists(DbPath(), ec)) {
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
  return CheckStateDbIsThere(dir, DbPath());
}

Status StateDir::OpenDatabase(bool* has_meta) {
  const std::string path = DbPath();
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
  *has_meta = tables->ColumnInt64(1) > 0;
  tables = SqliteStatement();
  if (table_count > 0 && !*has_meta) {
    return Status::Corruption(path + ": not a urlsieve state database (no urlsieve_meta table)");
  }
  if (read_only_ && !*has_meta) {
    return Status::NotFound("no state in " + path_ + " (state.db holds no urlsieve state)");
  }
  if (!read_only_) {
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", "switching to WAL mode"));
  }
  // The exact store's B-tree pages stay hot between batches.
  return db_->Exec("PRAGMA cache_size=-65536");
}

Status StateDir::CreateMeta() {
  const StateParameters& requested = parameters_;
  auto identity = StateIdentity::Random();
  if (!identity.ok()) return identity.status();
  URLSIEVE_RETURN_IF_ERROR(db_->Begin("creating the state"));
  URLSIEVE_RETURN_IF_ERROR(
      db_->Exec("CREATE TABLE urlsieve_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID"));
  URLSIEVE_RETURN_IF_ERROR(WriteMeta("format", std::string(kFormat)));
  URLSIEVE_RETURN_IF_ERROR(WriteMeta(
      "version", std::to_string(requested.exact ? kFormatVersion : kBloomOnlyFormatVersion)));
  URLSIEVE_RETURN_IF_ERROR(WriteMeta("identity", identity->ToHex()));
  // The parameters, the generation between the core ones and the time rows (the order states were
  // always written in). The time rows only with time, deletable only when set: a state without
  // them is a plain one, readable by older builds.
  const FieldList parameters = EncodeStoredParameters(requested, StoredTimeFields::kEachWhenSet);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i == kStoredCoreFields) URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta(parameters[i].first, parameters[i].second));
  }
  if (parameters.size() == kStoredCoreFields) {
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
  }
  // An exact state's shards are created by the seen set, once this commit gave it an identity
  // (exact_store.h).
  return db_->Commit("creating the state");
}

Status StateDir::ReadMeta() {
  auto read = db_->Prepare("SELECT key, CAST(value AS TEXT) FROM urlsieve_meta");
  if (!read.ok()) return read.status();
  for (;;) {
    auto r = read->Step();
    if (!r.ok()) return r.status();
    if (!*r) break;
    meta_.emplace(std::string(read->ColumnText(0)), std::string(read->ColumnText(1)));
  }
  return AdoptMeta();
}

Status StateDir::AdoptMeta() {
  const std::string path = DbPath();
  auto lacks = [&path](std::string_view key) {
    return Status::Corruption(path + ": urlsieve_meta lacks '" + std::string(key) + "'");
  };
  auto format = StoredMeta("format");
  if (!format || *format != kFormat) {
    return Status::Corruption(path + ": not a urlsieve state database (format is not " +
                              std::string(kFormat) + ")");
  }
  auto version = StoredMeta("version");
  if (!version) return lacks("version");
  const long long version_number = std::strtoll(version->c_str(), nullptr, 10);
  if (version_number > kFormatVersion) {
    return Status::Unsupported(path + ": state format version " + *version +
                               " is newer than this build's " + std::to_string(kFormatVersion));
  }
  StoredParameterRules rules;
  rules.where = path + ": urlsieve_meta";
  rules.time = StoredTimeFields::kEachWhenSet;
  auto stored = DecodeStoredParameters(meta_, rules);
  if (!stored.ok()) return stored.status();
  parameters_ = *stored;
  auto generation = StoredNumber("generation");
  if (!generation) return lacks("generation");
  generation_ = *generation;
  upgraded_at_ = StoredNumber("upgraded_at_generation");
  if (auto identity = StoredMeta("identity"); identity) {
    auto parsed = StateIdentity::FromHex(*identity);
    if (!parsed.ok()) return Status::Corruption(path + ": " + parsed.status().message());
    identity_ = *parsed;
  } else if (version_number <= 1) {
    version1_ = true;
  } else {
    return lacks("identity");
  }
  return Status::Ok();
}

void StateDir::NoteStoredParameters(const StateParameters& requested,
                                    std::vector<SeenNotice>* notices) const {
  const StateParameters& stored = parameters_;
  auto note = [notices](std::string text) {
    notices->push_back({SeenNotice::Kind::kStoredParameters, std::move(text)});
  };
  if (stored.capacity != requested.capacity || stored.fp_rate != requested.fp_rate) {
    note("using the stored capacity " + std::to_string(stored.capacity) + " and fp-rate " +
         FormatStoredDouble(stored.fp_rate) + " (requested " + std::to_string(requested.capacity) +
         ", " + FormatStoredDouble(requested.fp_rate) + ")");
  }
  if (stored.exact != requested.exact) {
    note(stored.exact ? "the state is exact (created with exact mode): staying exact"
                      : "the state was created without exact mode, so its store lacks the "
                        "earlier keys: staying Bloom-only");
  }
  if (stored.revisit_after_s != requested.revisit_after_s ||
      (stored.revisit_after_s > 0 && stored.generations != requested.generations)) {
    // docs/features/generational.md, "The generational seen set": time is a stored parameter, like
    // capacity.
    const auto spell = [](const StateParameters& p) {
      return "revisit-after " + FormatDuration(std::chrono::seconds(p.revisit_after_s)) + " in " +
             std::to_string(p.generations) + " generations";
    };
    if (stored.revisit_after_s == 0) {
      note(
          "the state was created without revisit-after, so its keys carry no time: they stay "
          "seen for good (a new state directory can revisit)");
    } else if (requested.revisit_after_s == 0) {
      note("the state forgets with time: using its stored " + spell(stored));
    } else {
      note("using the stored " + spell(stored) + " (requested " + spell(requested) + ")");
    }
  }
  if (stored.deletable != requested.deletable && !stored.exact) {
    note(stored.deletable ? "the state's Bloom filter counts (created with --deletable): staying "
                            "deletable"
                          : "the state's Bloom filter was created without --deletable, so it "
                            "cannot forget: staying plain");
  }
  if (EncodeStoredCanonicalize(stored.canonicalize) !=
      EncodeStoredCanonicalize(requested.canonicalize)) {
    note("using the stored canonicalizer options (" + StoredMeta("canonicalize").value_or("") +
         ")" + KeyVersionNote(stored.canonicalize));
  }
}

Status StateDir::Upgrade(std::vector<SeenNotice>* notices) {
  if (!version1_) return Status::Ok();
  auto identity = StateIdentity::Random();
  if (!identity.ok()) return identity.status();
  const uint64_t at = generation();
  URLSIEVE_RETURN_IF_ERROR(db_->Begin("upgrading the state to format version 2"));
  Status status = WriteMeta("identity", identity->ToHex());
  // 2, not 3: an exact store still in seen_urls is migrated next, which sets 3 (exact_store.h).
  if (status.ok()) status = WriteMeta("version", std::to_string(kBloomOnlyFormatVersion));
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
