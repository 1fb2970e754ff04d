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

std::string EncodeStoredCanonicalize(const CanonicalizeOptions& o) {
  std::string s;
  if (o.key_version != 1) s += "key_version=" + std::to_string(o.key_version) + ",";
  // "sort_query=0,drop_empty_query=0,...": the rules in table order, as existing states hold them.
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    if (&rule != &kCanonicalizeRules[0]) s += ',';
    s += rule.name;
    s += '=';
    s += std::to_string(static_cast<int>(o.*rule.member));
  }
  s += ",max_length=" + std::to_string(o.max_length);
  return s;
}

Result<CanonicalizeOptions> DecodeStoredCanonicalize(const std::string& s) {
  CanonicalizeOptions o;
  int consumed = 0;
  o.key_version = 1;
  if (std::sscanf(s.c_str(), "key_version=%d,%n", &o.key_version, &consumed) == 1 &&
      (consumed == 0 || o.key_version < 2 || o.key_version > kCurrentKeyVersion)) {
    return Status::Unsupported("the state's keys are of canonicalizer version " +
                               std::to_string(o.key_version) + "; this build makes versions 1 to " +
                               std::to_string(kCurrentKeyVersion));
  }
  // Field by field, as one sscanf over "sort_query=%u,...,max_length=%llu" read them: each name
  // matched literally, each value by %u (so trailing text after max_length is ignored, as before).
  auto unreadable = [&s] {
    return Status::Corruption("unreadable canonicalizer options in state: '" + s + "'");
  };
  std::string_view rest = std::string_view(s).substr(consumed);
  auto literal = [&rest](std::string_view text) {
    if (!rest.starts_with(text)) return false;
    rest.remove_prefix(text.size());
    return true;
  };
  for (const CanonicalizeRule& rule : kCanonicalizeRules) {
    unsigned value = 0;
    int n = 0;
    if ((&rule != &kCanonicalizeRules[0] && !literal(",")) || !literal(rule.name) ||
        !literal("=") || std::sscanf(rest.data(), "%u%n", &value, &n) != 1) {
      return unreadable();
    }
    rest.remove_prefix(n);
    o.*rule.member = value != 0;
  }
  unsigned long long max_length = 0;
  if (!literal(",max_length=") || std::sscanf(rest.data(), "%llu", &max_length) != 1) {
    return unreadable();
  }
  o.max_length = static_cast<size_t>(max_length);
  return o;
}

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
    URLSIEVE_RETURN_IF_ERROR(WriteMeta(
        "version", std::to_string(requested.exact ? kFormatVersion : kBloomOnlyFormatVersion)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("identity", identity->ToHex()));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("capacity", std::to_string(requested.capacity)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("fp_rate", FormatDouble(requested.fp_rate)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("exact", requested.exact ? "1" : "0"));
    URLSIEVE_RETURN_IF_ERROR(
        WriteMeta("canonicalize", EncodeStoredCanonicalize(requested.canonicalize)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
    if (requested.revisit_after_s > 0) {  // absent: a state without time, as before
      URLSIEVE_RETURN_IF_ERROR(
          WriteMeta("revisit_after", std::to_string(requested.revisit_after_s)));
      URLSIEVE_RETURN_IF_ERROR(WriteMeta("generations", std::to_string(requested.generations)));
    }
    // Only when set: a state without the row is a plain one, readable by older builds.
    if (requested.deletable) URLSIEVE_RETURN_IF_ERROR(WriteMeta("deletable", "1"));
    // An exact state's shards are created by the seen set, once this commit gave it an identity
    // (exact_store.h).
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
  auto canon_options = DecodeStoredCanonicalize(*canon);
  if (!canon_options.ok()) return canon_options.status();
  char* end = nullptr;
  parameters_.capacity = std::strtoull(capacity->c_str(), &end, 10);
  parameters_.fp_rate = std::strtod(fp_rate->c_str(), &end);
  parameters_.exact = *exact == "1";
  if (auto deletable = meta_.find("deletable"); deletable != meta_.end()) {
    if (deletable->second != "0" && deletable->second != "1") {
      return Status::Corruption(path + ": bad deletable '" + deletable->second +
                                "' in urlsieve_meta");
    }
    parameters_.deletable = deletable->second == "1";
  } else {
    parameters_.deletable = false;
  }
  parameters_.canonicalize = *canon_options;
  generation_ = std::strtoull(generation->c_str(), &end, 10);
  if (parameters_.capacity == 0 || !(parameters_.fp_rate > 0 && parameters_.fp_rate < 1)) {
    return Status::Corruption(path + ": bad capacity or fp_rate in urlsieve_meta");
  }
  parameters_.revisit_after_s = StoredNumber("revisit_after").value_or(0);
  parameters_.generations = static_cast<uint32_t>(StoredNumber("generations").value_or(0));
  if (meta_.contains("revisit_after") &&
      (parameters_.revisit_after_s == 0 || parameters_.generations == 0)) {
    return Status::Corruption(path + ": bad revisit_after or generations in urlsieve_meta");
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
  if (stored.revisit_after_s != requested.revisit_after_s ||
      (stored.revisit_after_s > 0 && stored.generations != requested.generations)) {
    // docs/features/generational.md, "The generational seen set": time is a stored parameter, like
    // capacity.
    const auto spell = [](const StateParameters& p) {
      return "revisit-after " + FormatDuration(std::chrono::seconds(p.revisit_after_s)) + " in " +
             std::to_string(p.generations) + " generations";
    };
    std::string text;
    if (stored.revisit_after_s == 0) {
      text =
          "the state was created without revisit-after, so its keys carry no time: they stay "
          "seen for good (a new state directory can revisit)";
    } else if (requested.revisit_after_s == 0) {
      text = "the state forgets with time: using its stored " + spell(stored);
    } else {
      text = "using the stored " + spell(stored) + " (requested " + spell(requested) + ")";
    }
    notices->push_back({SeenNotice::Kind::kStoredParameters, text});
  }
  if (stored.deletable != requested.deletable && !stored.exact) {
    notices->push_back({SeenNotice::Kind::kStoredParameters,
                        stored.deletable
                            ? "the state's Bloom filter counts (created with --deletable): staying "
                              "deletable"
                            : "the state's Bloom filter was created without --deletable, so it "
                              "cannot forget: staying plain"});
  }
  if (EncodeStoredCanonicalize(stored.canonicalize) !=
      EncodeStoredCanonicalize(requested.canonicalize)) {
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
