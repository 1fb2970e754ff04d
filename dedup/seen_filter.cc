#include "dedup/seen_filter.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <system_error>

#include "base/sqlite_db.h"
#include "dedup/bloom_delta_log.h"
#include "dedup/key_hash.h"
#include "dedup/scalable_bloom_filter.h"

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

// Per-thread buffers of the batch paths, so that a steady stream of batches allocates nothing.
struct Scratch {
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<KeyHash> hashes;
  std::vector<uint32_t> positions;
  std::unique_ptr<bool[]> is_new;
  size_t is_new_size = 0;
  bool* IsNew(size_t n) {
    if (n > is_new_size) {
      is_new.reset(new bool[n]);
      is_new_size = n;
    }
    return is_new.get();
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

SeenFilter::SeenFilter(const SeenFilterOptions& options)
    : options_(options), canonicalizer_(options.canonicalize) {}

SeenFilter::~SeenFilter() = default;

Result<std::unique_ptr<SeenFilter>> SeenFilter::Open(const SeenFilterOptions& options) {
  if (options.capacity == 0) return Status::InvalidArgument("capacity must be positive");
  if (!(options.fp_rate > 0 && options.fp_rate < 1)) {
    return Status::InvalidArgument("fp_rate must be in (0, 1)");
  }
  if (options.state_dir.empty() && (options.exact || options.checkpointed)) {
    return Status::InvalidArgument("exact and checkpointed modes need a state directory");
  }
  if (options.state_dir.empty() && (options.read_only || options.rebuild_bloom)) {
    return Status::InvalidArgument("read_only and rebuild_bloom need a state directory");
  }
  if (options.read_only && (options.checkpointed || options.rebuild_bloom)) {
    return Status::InvalidArgument("a read-only open cannot be checkpointed or rebuild the state");
  }
  std::unique_ptr<SeenFilter> filter(new SeenFilter(options));
  if (options.state_dir.empty()) {
    auto bloom = ScalableBloomFilter::Create({options.capacity, options.fp_rate});
    if (!bloom.ok()) return bloom.status();
    filter->bloom_ = std::move(*bloom);
    return filter;
  }
  URLSIEVE_RETURN_IF_ERROR(filter->OpenState(options));
  return filter;
}

Status SeenFilter::WriteMeta(std::string_view key, const std::string& value) {
  auto stmt = db_->Prepare("INSERT OR REPLACE INTO urlsieve_meta(key, value) VALUES(?, ?)");
  if (!stmt.ok()) return stmt.status();
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(1, key));
  URLSIEVE_RETURN_IF_ERROR(stmt->BindText(2, value));
  return stmt->Run();
}

namespace {

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

std::string RebuildAdvice(bool exact) {
  return exact ? "; restore the files of one checkpoint, or rebuild the Bloom filter from the "
                 "exact store (--rebuild, rebuild_bloom)"
               : "; restore the files of one checkpoint (a Bloom-only state cannot be rebuilt)";
}

}  // namespace

Status SeenFilter::ReadOnlyError() const {
  return Status::FailedPrecondition(options_.state_dir + " was opened read-only");
}

std::string SeenFilter::StateDbPath() const { return options_.state_dir + "/state.db"; }

Status SeenFilter::OpenState(const SeenFilterOptions& requested) {
  std::error_code ec;
  const std::string& dir = options_.state_dir;
  const std::string path = StateDbPath();
  if (options_.read_only) {
    if (!std::filesystem::exists(path, ec)) {
      return Status::NotFound("no state in " + dir + " (no state.db)");
    }
  } else {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  }
  auto lock = StateLock::Acquire(
      dir, options_.read_only ? StateLock::Mode::kShared : StateLock::Mode::kExclusive);
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);
  URLSIEVE_RETURN_IF_ERROR(CheckStateDbIsThere(dir, path));

  // Open without WAL first: switching the journal mode writes the file header, and a foreign
  // database must be left exactly as it was.
  SqliteDb::Options db_options;
  db_options.wal = false;
  db_options.read_only = options_.read_only;
  db_options.create_if_missing = !options_.read_only;
  db_options.no_other_writer = options_.read_only;  // the shared lock keeps writers out
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
  if (options_.read_only && !has_meta) {
    return Status::NotFound("no state in " + dir + " (state.db holds no urlsieve state)");
  }
  if (!options_.read_only) {
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", "switching to WAL mode"));
  }
  // The exact store's B-tree pages stay hot between batches.
  URLSIEVE_RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size=-65536"));

  if (!has_meta) {
    auto identity = StateIdentity::Random();
    if (!identity.ok()) return identity.status();
    URLSIEVE_RETURN_IF_ERROR(db_->Begin("creating the state"));
    URLSIEVE_RETURN_IF_ERROR(
        db_->Exec("CREATE TABLE urlsieve_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("format", std::string(kFormat)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("version", std::to_string(kFormatVersion)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("identity", identity->ToHex()));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("capacity", std::to_string(options_.capacity)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("fp_rate", FormatDouble(options_.fp_rate)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("exact", options_.exact ? "1" : "0"));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("canonicalize", EncodeCanonicalize(options_.canonicalize)));
    URLSIEVE_RETURN_IF_ERROR(WriteMeta("generation", "0"));
    if (options_.exact) {
      auto store = ExactStore::Open(db_.get());
      if (!store.ok()) return store.status();
    }
    URLSIEVE_RETURN_IF_ERROR(db_->Commit("creating the state"));
  }

  // Read back what is stored (also right after creating it: one code path).
  std::map<std::string, std::string, std::less<>> meta;
  {
    auto read = db_->Prepare("SELECT key, CAST(value AS TEXT) FROM urlsieve_meta");
    if (!read.ok()) return read.status();
    for (;;) {
      auto r = read->Step();
      if (!r.ok()) return r.status();
      if (!*r) break;
      meta.emplace(std::string(read->ColumnText(0)), std::string(read->ColumnText(1)));
    }
  }
  auto get = [&](std::string_view key) -> Result<std::string> {
    auto it = meta.find(key);
    if (it == meta.end()) {
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
  options_.capacity = std::strtoull(capacity->c_str(), &end, 10);
  options_.fp_rate = std::strtod(fp_rate->c_str(), &end);
  options_.exact = *exact == "1";
  options_.canonicalize = *canon_options;
  generation_ = std::strtoull(generation->c_str(), &end, 10);
  if (options_.capacity == 0 || !(options_.fp_rate > 0 && options_.fp_rate < 1)) {
    return Status::Corruption(path + ": bad capacity or fp_rate in urlsieve_meta");
  }
  auto counter = [&](std::string_view key) -> uint64_t {
    auto it = meta.find(key);
    return it == meta.end() ? 0 : std::strtoull(it->second.c_str(), &end, 10);
  };
  auto optional_generation = [&](std::string_view key) -> std::optional<uint64_t> {
    auto it = meta.find(key);
    if (it == meta.end()) return std::nullopt;
    return std::strtoull(it->second.c_str(), &end, 10);
  };
  if (auto it = meta.find(BloomDeltaLog::kMetaKey); it != meta.end()) delta_meta_ = it->second;
  maybe_lookups_ = counter("maybe_lookups");
  false_positives_ = counter("false_positives");
  upgraded_at_ = optional_generation("upgraded_at_generation");
  superseded_snapshot_ = optional_generation("superseded_snapshot");
  if (auto identity = meta.find("identity"); identity != meta.end()) {
    auto parsed = StateIdentity::FromHex(identity->second);
    if (!parsed.ok()) return Status::Corruption(path + ": " + parsed.status().message());
    identity_ = *parsed;
  } else if (version_number <= 1) {
    version1_ = true;
  } else {
    return Status::Corruption(path + ": urlsieve_meta lacks 'identity'");
  }
  canonicalizer_ = UrlCanonicalizer(options_.canonicalize);

  if (options_.capacity != requested.capacity || options_.fp_rate != requested.fp_rate) {
    notices_.push_back({SeenNotice::Kind::kStoredParameters,
                        "using the stored capacity " + std::to_string(options_.capacity) +
                            " and fp-rate " + FormatDouble(options_.fp_rate) + " (requested " +
                            std::to_string(requested.capacity) + ", " +
                            FormatDouble(requested.fp_rate) + ")"});
  }
  if (options_.exact != requested.exact) {
    notices_.push_back({SeenNotice::Kind::kStoredParameters,
                        options_.exact
                            ? "the state is exact (created with exact mode): staying exact"
                            : "the state was created without exact mode, so its store lacks the "
                              "earlier keys: staying Bloom-only"});
  }
  if (EncodeCanonicalize(options_.canonicalize) != EncodeCanonicalize(requested.canonicalize)) {
    notices_.push_back(
        {SeenNotice::Kind::kStoredParameters, "using the stored canonicalizer options (" + *canon +
                                                  ")" + KeyVersionNote(options_.canonicalize)});
  }

  URLSIEVE_RETURN_IF_ERROR(LoadBloom());
  if (!options_.read_only) URLSIEVE_RETURN_IF_ERROR(Upgrade());
  // A filter not loaded from a snapshot (fresh, rebuilt, or just restamped by an upgrade) has no
  // log to extend: its first checkpoint writes a full snapshot.
  if (delta_log_ == nullptr)
    delta_log_ = BloomDeltaLog::Detached(DeltaLogPath(), identity_, *bloom_);
  if (options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  return Status::Ok();
}

Status SeenFilter::Upgrade() {
  if (version1_) {
    auto identity = StateIdentity::Random();
    if (!identity.ok()) return identity.status();
    URLSIEVE_RETURN_IF_ERROR(db_->Begin("upgrading the state to format version 2"));
    Status status = WriteMeta("identity", identity->ToHex());
    if (status.ok()) status = WriteMeta("version", std::to_string(kFormatVersion));
    if (status.ok()) status = WriteMeta("upgraded_at_generation", std::to_string(generation_));
    if (status.ok()) status = db_->Commit("upgrading the state to format version 2");
    if (!status.ok()) {
      db_->Rollback();
      return status;
    }
    identity_ = *identity;
    version1_ = false;
    upgraded_at_ = generation_;
    notices_.push_back({SeenNotice::Kind::kUpgraded,
                        "upgraded " + options_.state_dir +
                            " to state format version 2: its identity is " + identity_.ToHex()});
  }
  if (snapshot_unstamped_) {
    // The version-1 snapshot matches the database (LoadBloom checked): stamp it, atomically.
    URLSIEVE_RETURN_IF_ERROR(bloom_->Save(SnapshotPath(), generation_, identity_));
    snapshot_unstamped_ = false;
    delta_log_.reset();  // a version-1 state has no log; the next checkpoint writes a snapshot
  }
  return Status::Ok();
}

std::string SeenFilter::SnapshotPath() const { return options_.state_dir + "/bloom.snap"; }
std::string SeenFilter::NextSnapshotPath() const { return options_.state_dir + "/bloom.snap.next"; }
std::string SeenFilter::DeltaLogPath() const { return options_.state_dir + "/bloom.delta"; }

Status SeenFilter::CheckIdentity(const std::string& file, const StateIdentity& file_identity,
                                 uint64_t file_generation) const {
  if (file_identity == identity_) return Status::Ok();  // also: both zero in a version-1 state
  // An unstamped (version-1) file of the state's own last version-1 checkpoint: only until the
  // first checkpoint after the upgrade.
  if (file_identity.IsZero() && upgraded_at_ && *upgraded_at_ == generation_ &&
      file_generation == generation_) {
    return Status::Ok();
  }
  const auto name = [](const StateIdentity& id) {
    return id.IsZero() ? std::string("none (a version-1 file)") : id.ToHex();
  };
  return Status::Corruption(file + " belongs to another state: its identity is " +
                            name(file_identity) + ", " + StateDbPath() + "'s is " +
                            name(identity_) +
                            ". It was copied from another state directory or left over from "
                            "one; move it away (nothing was changed)");
}

Status SeenFilter::LoadBloom() {
  namespace fs = std::filesystem;
  const std::string snap = SnapshotPath();
  const std::string next = NextSnapshotPath();
  const std::string db_path = StateDbPath();
  std::error_code ec;
  const auto new_bloom = [this]() -> Status {
    auto bloom = ScalableBloomFilter::Create({options_.capacity, options_.fp_rate});
    if (!bloom.ok()) return bloom.status();
    bloom_ = std::move(*bloom);
    snapshot_current_ = false;
    return Status::Ok();
  };
  if (options_.rebuild_bloom) {
    if (!options_.exact) {
      return Status::FailedPrecondition(db_path +
                                        ": cannot rebuild the Bloom filter of a Bloom-only state "
                                        "(it has no exact store to rebuild it from)");
    }
    URLSIEVE_RETURN_IF_ERROR(new_bloom());
    URLSIEVE_RETURN_IF_ERROR(OpenStore(/*refill=*/true));
    notices_.push_back({SeenNotice::Kind::kRebuilt,
                        "rebuilt the Bloom filter from " + std::to_string(store_->rows()) +
                            " keys in the exact store, as requested; the next save replaces " +
                            snap});
    return Status::Ok();
  }

  // bloom.snap.next: the snapshot of a checkpoint that crashed around its COMMIT.
  bool use_next = false;  // read-only: the committed snapshot is .next, not bloom.snap
  if (fs::exists(next, ec)) {
    uint64_t next_generation = 0;
    StateIdentity next_identity;
    auto loaded = ScalableBloomFilter::Load(next, &next_generation, &next_identity);
    if (!loaded.ok()) {
      return Status(loaded.status().code(),
                    loaded.status().message() + " (" + next +
                        " is the snapshot of an interrupted checkpoint; it cannot be told to "
                        "belong to this state: move it away)");
    }
    URLSIEVE_RETURN_IF_ERROR(CheckIdentity(next, next_identity, next_generation));
    if (next_generation == generation_) {
      // The crash hit between a checkpoint's COMMIT and its rename: finish the rename.
      if (options_.read_only) {
        use_next = true;
      } else {
        fs::rename(next, snap, ec);
        if (ec) return Status::IoError("rename " + next + " to " + snap + ": " + ec.message());
      }
    } else if (next_generation == generation_ + 1) {
      // This state's snapshot of a checkpoint whose COMMIT never happened.
      if (!options_.read_only) fs::remove(next, ec);
    } else {
      return Status::Corruption(next + " is at generation " + std::to_string(next_generation) +
                                " but " + db_path + " is at generation " +
                                std::to_string(generation_) +
                                ": they are not from one checkpoint; move it away");
    }
  }

  const std::string file = use_next ? next : snap;
  if (!fs::exists(file, ec)) {
    if (generation_ > 0) {
      return Status::FailedPrecondition(file + " is missing but " + db_path + " is at generation " +
                                        std::to_string(generation_) +
                                        RebuildAdvice(options_.exact));
    }
    // A fresh state, or one that never reached its first checkpoint or Save: in exact mode the
    // store holds every key there is, so filling the filter from it loses nothing.
    URLSIEVE_RETURN_IF_ERROR(new_bloom());
    return options_.exact ? OpenStore(/*refill=*/true) : Status::Ok();
  }
  uint64_t snap_generation = 0;
  StateIdentity snap_identity;
  auto loaded = ScalableBloomFilter::Load(file, &snap_generation, &snap_identity);
  if (!loaded.ok()) {
    if (loaded.status().code() != StatusCode::kCorruption) return loaded.status();
    return Status::Corruption(loaded.status().message() + RebuildAdvice(options_.exact));
  }
  URLSIEVE_RETURN_IF_ERROR(CheckIdentity(file, snap_identity, snap_generation));
  // The snapshot plus the committed records of the delta log since it (bloom_delta_log.h).
  auto log = BloomDeltaLog::OpenAndReplay(DeltaLogPath(), identity_, delta_meta_, file,
                                          snap_generation, loaded->get());
  if (!log.ok()) {
    if (log.status().code() != StatusCode::kCorruption) return log.status();
    return Status::Corruption(log.status().message() + RebuildAdvice(options_.exact));
  }
  const uint64_t bloom_generation = (*log)->generation();
  if (bloom_generation == generation_) {
    bloom_ = std::move(*loaded);
    delta_log_ = std::move(*log);
    snapshot_current_ = true;
    snapshot_unstamped_ = snap_identity.IsZero() && !use_next;
    return options_.exact ? OpenStore(/*refill=*/false) : Status::Ok();
  }
  if (options_.exact && superseded_snapshot_ && *superseded_snapshot_ == bloom_generation &&
      generation_ == bloom_generation + 1) {
    // Rows were committed after this snapshot and the database recorded so (a standalone exact
    // filter that was not saved): the rows are the truth, and the filter is refilled from them.
    URLSIEVE_RETURN_IF_ERROR(new_bloom());
    URLSIEVE_RETURN_IF_ERROR(OpenStore(/*refill=*/true));
    notices_.push_back({SeenNotice::Kind::kRebuilt,
                        "rebuilt the Bloom filter from " + std::to_string(store_->rows()) +
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
                            with_log + " but " + db_path + " is at generation " +
                            std::to_string(generation_) + ": they are not from one checkpoint" +
                            RebuildAdvice(options_.exact));
}

Status SeenFilter::OpenStore(bool refill) {
  std::function<void(std::string_view)> fill;
  if (refill) fill = [this](std::string_view key) { bloom_->InsertIfNew(HashKey(key)); };
  auto store = ExactStore::Open(db_.get(), fill);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  return Status::Ok();
}

Result<bool> SeenFilter::InsertIfNew(std::string_view url) {
  Scratch& s = ThreadScratch();
  if (s.keys.empty()) s.keys.emplace_back();
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &s.keys[0]));
  const std::string_view key = s.keys[0];
  const KeyHash hash = HashKey(key);
  if (options_.read_only) return ReadOnlyError();
  if (store_ == nullptr) {
    std::shared_lock lock(mu_);
    const bool is_new = bloom_->InsertIfNew(hash);
    if (is_new && delta_log_ != nullptr) delta_log_->Record(hash);
    return is_new;
  }
  bool is_new = false;
  URLSIEVE_RETURN_IF_ERROR(InsertHashed({&key, 1}, {&hash, 1}, &is_new));
  return is_new;
}

Status SeenFilter::InsertIfNewBatch(std::span<const std::string_view> urls,
                                    std::vector<SeenResult>* out) {
  Scratch& s = ThreadScratch();
  if (s.keys.size() < urls.size()) s.keys.resize(urls.size());
  s.views.clear();
  s.hashes.clear();
  s.positions.clear();
  out->resize(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    Status status = canonicalizer_.CanonicalizeTo(urls[i], &s.keys[i]);
    if (!status.ok()) {
      (*out)[i] = SeenResult{Verdict::kInvalid, std::move(status)};
      continue;
    }
    s.views.push_back(s.keys[i]);
    s.hashes.push_back(HashKey(s.keys[i]));
    s.positions.push_back(static_cast<uint32_t>(i));
  }
  bool* is_new = s.IsNew(s.views.size());
  URLSIEVE_RETURN_IF_ERROR(InsertHashed(s.views, s.hashes, is_new));
  for (size_t j = 0; j < s.positions.size(); ++j) {
    SeenResult& r = (*out)[s.positions[j]];
    r.verdict = is_new[j] ? Verdict::kNew : Verdict::kSeen;
    r.error = Status();
  }
  return Status::Ok();
}

Status SeenFilter::InsertKeysIfNew(std::span<const std::string_view> keys,
                                   std::vector<uint8_t>* is_new) {
  Scratch& s = ThreadScratch();
  s.hashes.clear();
  for (std::string_view key : keys) s.hashes.push_back(HashKey(key));
  bool* flags = s.IsNew(keys.size());
  URLSIEVE_RETURN_IF_ERROR(InsertHashed(keys, s.hashes, flags));
  is_new->assign(flags, flags + keys.size());
  return Status::Ok();
}

Status SeenFilter::InsertHashed(std::span<const std::string_view> keys,
                                std::span<const KeyHash> hashes, bool* is_new) {
  if (options_.read_only) return ReadOnlyError();
  if (store_ == nullptr) {
    std::shared_lock lock(mu_);
    bloom_->InsertIfNewBatch(hashes, is_new);
    if (delta_log_ != nullptr) delta_log_->Record(hashes, is_new);
    return Status::Ok();
  }
  std::unique_lock lock(mu_);
  return InsertExactLocked(keys, hashes, is_new);
}

Status SeenFilter::InsertExactLocked(std::span<const std::string_view> keys,
                                     std::span<const KeyHash> hashes, bool* is_new) {
  bloom_->InsertIfNewBatch(hashes, is_new);
  entries_.clear();
  uint64_t maybes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    entries_.push_back({hashes[i].low, keys[i], /*maybe_present=*/!is_new[i]});
    maybes += is_new[i] ? 0 : 1;
  }
  const bool own_transaction = !options_.checkpointed;
  if (own_transaction) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  Status status;
  if (own_transaction && snapshot_current_) {
    // Rows are about to be committed that bloom.snap lacks: retire its generation in the same
    // transaction, and record which snapshot they supersede, so that a crash before the next Save
    // rebuilds the filter from the rows (LoadBloom).
    status = WriteMeta("generation", std::to_string(generation_ + 1));
    if (status.ok()) status = WriteMeta("superseded_snapshot", std::to_string(generation_));
  }
  if (status.ok()) status = store_->InsertIfAbsent(entries_, &inserted_);
  if (status.ok() && own_transaction) status = db_->Commit();
  if (!status.ok()) {
    // The Bloom bits already set are harmless: those keys now look "maybe seen" and the store,
    // which lacks them, will call them new.
    if (own_transaction) db_->Rollback();
    return status;
  }
  if (own_transaction && snapshot_current_) {
    superseded_snapshot_ = generation_;
    ++generation_;
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

Result<bool> SeenFilter::Contains(std::string_view url) const {
  std::string key;
  URLSIEVE_RETURN_IF_ERROR(canonicalizer_.CanonicalizeTo(url, &key));
  const KeyHash hash = HashKey(key);
  if (!bloom_->MayContain(hash)) return false;
  if (store_ == nullptr) return true;
  std::unique_lock lock(mu_);
  return store_->Contains(hash.low, key);
}

SeenStats SeenFilter::Stats() const {
  SeenStats s;
  s.capacity = options_.capacity;
  s.fp_rate = options_.fp_rate;
  s.exact = store_ != nullptr;
  {
    std::shared_lock lock(mu_);
    s.generation = generation_;
    s.identity = identity_;
    if (store_ != nullptr) s.stored_keys = store_->rows();
  }
  const BloomStats b = bloom_->Stats();
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

Status SeenFilter::Save() {
  if (db_ == nullptr) return Status::Ok();
  if (options_.read_only) return ReadOnlyError();
  return Checkpoint();
}

Status SeenFilter::Checkpoint(const std::function<Status(SqliteDb&)>& write_more) {
  if (db_ == nullptr) return Status::FailedPrecondition("an in-memory SeenFilter has no state");
  if (options_.read_only) return ReadOnlyError();
  std::unique_lock lock(mu_);
  return CheckpointLocked(write_more);
}

Status SeenFilter::CheckpointLocked(const std::function<Status(SqliteDb&)>& write_more) {
  if (!options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  const uint64_t generation = generation_ + 1;
  Status status = write_more ? write_more(*db_) : Status::Ok();
  if (status.ok()) status = WriteMeta("generation", std::to_string(generation));
  if (status.ok()) status = WriteMeta("maybe_lookups", std::to_string(maybe_lookups_.load()));
  if (status.ok()) status = WriteMeta("false_positives", std::to_string(false_positives_.load()));
  // Usually the keys new since the last checkpoint go to the delta log; now and then (see
  // bloom_delta_log.h) the whole filter to a snapshot. Record or snapshot, then commit, then (a
  // snapshot) rename (see the header): whichever step a crash interrupts, the next open finds a
  // Bloom state that matches the committed generation, or rebuilds/reports it.
  const bool full_snapshot = delta_log_->NeedsSnapshot(generation);
  if (status.ok()) {
    status = WriteMeta(BloomDeltaLog::kMetaKey, full_snapshot
                                                    ? BloomDeltaLog::MetaAfterSnapshot(generation)
                                                    : delta_log_->MetaAfterAppend());
  }
  if (status.ok()) {
    status = full_snapshot ? bloom_->Save(NextSnapshotPath(), generation, identity_)
                           : delta_log_->Append(generation);
  }
  if (status.ok()) status = db_->Commit("committing a checkpoint");
  if (!status.ok()) {
    // Standalone: nothing of ours is lost by rolling back (batches committed on their own). In
    // checkpointed mode the transaction stays open, with its rows, for the next attempt.
    if (!options_.checkpointed) db_->Rollback();
    return status;
  }
  generation_ = generation;
  Status renamed;
  if (full_snapshot) {
    std::error_code ec;
    std::filesystem::rename(NextSnapshotPath(), SnapshotPath(), ec);
    // Until the rename is done the log must not extend the new snapshot: its chain still ends
    // before this generation, so the next checkpoint writes (and renames) a full snapshot again.
    // (Committed, bloom.snap.next is promoted by the next open anyway.)
    if (ec) {
      renamed = Status::IoError("rename " + NextSnapshotPath() + ": " + ec.message());
    } else {
      delta_log_->SnapshotCommitted(generation, *bloom_);
    }
  } else {
    delta_log_->AppendCommitted();
  }
  snapshot_current_ = true;
  // The commit happened: the next transaction starts whatever the rename did.
  if (options_.checkpointed) URLSIEVE_RETURN_IF_ERROR(db_->Begin());
  return renamed;
}

}  // namespace urlsieve
